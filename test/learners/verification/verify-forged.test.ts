/**
 * Red-team review of `dpfit verify`: files that claim more than their release had, and that
 * `verifyModel` accepted (`holds: true`, `dpfit verify` exit 0) before these checks. Each case is a
 * genuine file, which verifies as written, edited by hand; the edit now does not hold, for the
 * reason named, and `dpfit verify` exits 4 with one line.
 *   - the neighbouring relation: a replace-one release (DP-GD, output perturbation of either kind,
 *     plain shuffled SGD, RGM, tuned DP-GD, one-vs-rest over DP-GD, a federated node) relabelled
 *     add/remove-one;
 *   - one-vs-rest: an event that accounts fewer runs than the file has models;
 *   - sub-claims: privacy.rdp, privacy.pld and privacy.comparisons below the headline or edited;
 *   - fields dpfit does not write, anywhere in the file (the embedded schema included), and a
 *     malformed privacy.datasetSize.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { DpEvent } from '../../../src/accounting/events/types.js';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { neighboringRelationOf } from '../../../src/accounting/neighboring.js';
import { gaussianCompositionEpsilon } from '../../../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { InMemoryLedger } from '../../../src/accounting/budget/rule.js';
import { federate } from '../../../src/federated/coordinator.js';
import { inProcessClient } from '../../../src/federated/in-process.js';
import { FederatedNode } from '../../../src/federated/node.js';
import { toDpfitJson } from '../../../src/json-numbers.js';
import { trainOneVsRest } from '../../../src/learners/composite/one-vs-rest.js';
import { train, type TrainOptions } from '../../../src/learners/train.js';
import { tuneGradientMethodHonestly } from '../../../src/learners/composite/tune-gradient-method.js';
import { releaseRelation, verifyModel } from '../../../src/learners/verification/verify-model.js';
import { sampleGaussian } from '../../../src/random/continuous.js';
import { seededRng } from '../../../src/random/rng.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';
import { peopleFixture, runCli } from '../../helpers/people.js';
import { nodeRows } from '../../helpers/node-rows.js';

// Any JSON model file, edited freely.
type ModelJson = any;

const data = makeLogisticData(300, 4, 41);
const common = { epsilon: 1, delta: 1e-5 };

/** A model file as `dpfit train --out` writes it (seeded: the same file every run). */
function modelFile(options: TrainOptions, on: Parameters<typeof train>[0] = data): ModelJson {
  const { model } = train(on, options);
  assert.ok(model !== undefined, options.method);
  return JSON.parse(toDpfitJson(model));
}

/** Ridge data on which RGM's Propose-Test-Release test passes (n = 20000, Gaussian features). */
function rgmData(): { x: Float64Array; y: Float64Array; n: number; d: number } {
  const rng = seededRng(41);
  const n = 20000;
  const x = new Float64Array(2 * n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[2 * i] = sampleGaussian(rng);
    x[2 * i + 1] = sampleGaussian(rng);
    y[i] = x[2 * i] - 0.5 * x[2 * i + 1] + 0.3 * sampleGaussian(rng);
  }
  return { x, y, n, d: 2 };
}


async function federatedFile(method: 'dpgd' | 'rgm'): Promise<ModelJson> {
  const n = method === 'rgm' ? 20000 : 2000;
  const clients = ['a', 'b'].map((name, i) => inProcessClient(new FederatedNode(nodeRows(n, 60 + i), new InMemoryLedger({ epsilon: 2, delta: 1e-5 }), { name, rng: seededRng(70 + i) })));
  const options = method === 'rgm'
    ? { method, steps: 10, regularization: 0.03, featureClip: 0.5, bClip: 0.5, rho: 0.02, epsilon: 1, delta: 1e-6 } as const
    : { method, steps: 5, regularization: 0.03, clipNorm: 0.5, epsilon: 1, delta: 1e-6 } as const;
  const result = await federate(clients, options);
  assert.equal(result.status, 'trained', result.message);
  return JSON.parse(toDpfitJson(result.model));
}

const rng = () => seededRng(5);
const classes = { ...data, y: Float64Array.from(data.y, (v, i) => (i % 5 === 0 ? 2 : v)) };
const files: Record<string, ModelJson> = {
  dpgd: modelFile({ method: 'dpgd', ...common, steps: 10, clipNorm: 1, learningRate: 1, rng: rng() }),
  dpsgd: modelFile({ method: 'dpsgd', ...common, epochs: 2, batchSize: 50, clipNorm: 1, learningRate: 1, rng: rng() }),
  // The lattice iteration's last iterate (shuffledLastIterate), plain composition (a learning rate
  // too large for the lattice's conditions), both over whole epochs (fraction 1; train()'s default is
  // one record a step), and one record per epoch (sampledWithoutReplacement).
  shuffled: modelFile({ method: 'shuffled', ...common, epochs: 2, fraction: 1, clipNorm: 1, learningRate: 0.5, rowNormBound: 1, rng: rng() }),
  shuffledPlain: modelFile({ method: 'shuffled', ...common, epochs: 2, fraction: 1, clipNorm: 1, learningRate: 100, rowNormBound: 1, rng: rng() }),
  shuffledOneRecord: modelFile({ method: 'shuffled', ...common, epochs: 2, fraction: 0.005, clipNorm: 1, learningRate: 100, rowNormBound: 1, rng: rng() }),
  output: modelFile({ method: 'output', ...common, regularization: 0.05, rowNormBound: 1, rng: rng() }),
  outputSgd: modelFile({ method: 'outputSgd', ...common, regularization: 0.05, epochs: 2, rowNormBound: 1, rng: rng() }),
  amp: modelFile({ method: 'amp', ...common, clipNorm: 1, rng: rng() }),
  objpert: modelFile({ method: 'objpert', ...common, acceptNoGuarantee: true, rng: rng() }),
  rgm: modelFile({ method: 'rgm', epsilon: 2, delta: 1e-6, steps: 20, regularization: 0.03, featureClip: 2, bClip: 6, rng: rng() }, rgmData()),
  zeroDpsgd: modelFile({ method: 'dpsgd', noiseMultiplier: 0, delta: 1e-5, epochs: 1, batchSize: 50, clipNorm: 1, learningRate: 1, rng: rng() }),
  ovr: JSON.parse(toDpfitJson(trainOneVsRest(classes, { classes: ['a', 'b', 'c'], base: { method: 'dpgd', steps: 10, clipNorm: 1, learningRate: 1 }, epsilon: 2, delta: 1e-5, rng: rng() }).model)),
  ovrDpsgd: JSON.parse(toDpfitJson(trainOneVsRest(classes, { classes: ['a', 'b', 'c'], base: { method: 'dpsgd', epochs: 1, batchSize: 50, clipNorm: 1, learningRate: 1 }, epsilon: 2, delta: 1e-5, rng: rng() }).model)),
  tuned: (() => {
    const tuned = tuneGradientMethodHonestly(data, {
      base: { method: 'dpgd', steps: 5, clipNorm: 1, learningRate: 1 },
      learningRates: [0.5, 1],
      distribution: { kind: 'poisson', mean: 3 },
      ...common,
      publicValidation: makeLogisticData(100, 4, 7),
      rng: seededRng(3),
    });
    assert.ok(tuned.model !== undefined, 'the tuned run released a model (K > 0)');
    return JSON.parse(toDpfitJson(tuned.model));
  })(),
  federatedDpgd: await federatedFile('dpgd'),
  federatedRgm: await federatedFile('rgm'),
};

const edit = (file: ModelJson, change: (f: ModelJson) => void): ModelJson => {
  const copy = structuredClone(file);
  change(copy);
  return copy;
};

/** Asserts the file verifies as written and that the edit does not, for the expected reason. */
function refused(file: ModelJson, change: (f: ModelJson) => void, problem: RegExp, what: string): void {
  const asWritten = verifyModel(file);
  assert.equal(asWritten.holds, true, `${what}: the file as written holds (${asWritten.problems.join(' | ')})`);
  const result = verifyModel(edit(file, change));
  assert.equal(result.holds, false, `${what}: the edit must not hold`);
  assert.ok(result.problems.some((p) => problem.test(p)), `${what}: ${result.problems.join(' | ')}`);
}

/** `dpfit verify` on each forged file: exit 4, one line on stderr naming the problem. */
async function cliRefuses(cases: readonly [string, ModelJson, RegExp][]): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-verify-forged-'));
  for (const [name, file, problem] of cases) {
    const path = join(dir, name);
    writeFileSync(path, JSON.stringify(file));
    const { code, stderr } = await runCli('verify', path);
    assert.equal(code, 4, `${name}: ${stderr}`);
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /the privacy claim does not hold: /);
    assert.match(stderr, problem, name);
  }
}

/**
 * The headline and sub-claims of a file re-accounted for its (edited) event with dpfit's own
 * accountants, as a forger would: the claim is then what the named accountant gives.
 */
function reaccount(f: ModelJson): void {
  const event = parseEvent(f.privacy.event);
  const rdp = rdpEpsilon(event, f.privacy.delta);
  const exact = gaussianCompositionEpsilon(event, f.privacy.delta);
  f.privacy.rdp = { epsilon: rdp.epsilon, order: rdp.order };
  if (f.privacy.pld !== undefined) f.privacy.pld = { epsilon: (exact as { epsilon: number }).epsilon };
  f.privacy.epsilon = f.privacy.accountant === 'rdp' ? rdp.epsilon : (exact as { epsilon: number }).epsilon;
}

/** The event of a linear or one-vs-rest file, or of each node of a federated one. */
function eventsOf(file: ModelJson): { event: DpEvent; relation: string }[] {
  const blocks = file.format === 'dpfit-federated-model/1' ? file.privacy.nodes.map((n: ModelJson) => n.privacy) : [file.privacy];
  return blocks.map((p: ModelJson) => ({ event: parseEvent(p.event), relation: p.neighboringRelation }));
}

describe('verify: the neighbouring relation is the one the event implies', () => {
  const replaceOne = ['dpgd', 'shuffled', 'shuffledPlain', 'shuffledOneRecord', 'output', 'outputSgd', 'rgm', 'ovr', 'tuned'];

  it("every genuine file's relation is the one its event implies, and the accountants' agree where the event carries one", () => {
    for (const [name, file] of Object.entries(files)) {
      for (const { event, relation } of eventsOf(file)) {
        const implied = releaseRelation(event);
        if (name === 'zeroDpsgd') assert.equal(implied, undefined, 'a nonPrivate event: either relation (epsilon is infinite)');
        else assert.equal(implied, relation, name);
        const carried = neighboringRelationOf(event);
        assert.ok(carried === 'relativeToSensitivity' || carried === implied, `${name}: the accountants say ${carried}`);
      }
    }
    // The three events of shuffled SGD are the ones the fixtures say.
    assert.deepEqual([files.shuffled, files.shuffledPlain, files.shuffledOneRecord].map((f) => f.privacy.event.event.kind), ['shuffledLastIterate', 'gaussian', 'sampledWithoutReplacement']);
    for (const name of ['dpsgd', 'amp', 'objpert', 'ovrDpsgd']) assert.equal(files[name].privacy.neighboringRelation, 'addOrRemoveOne', name);
    for (const name of replaceOne) assert.equal(files[name].privacy.neighboringRelation, 'replaceOne', name);
    // The events that carry a relation, alone and under every wrapper: the accountants agree with the rule.
    const gaussian = { kind: 'gaussian', noiseMultiplier: 2, discrete: true };
    const carriers = [
      { kind: 'poissonSampled', samplingProbability: 0.1, event: gaussian },
      { kind: 'objectivePerturbation', noiseStd: 5, lipschitz: 1, smoothness: 0.25, regularization: 1 },
      { kind: 'sampledWithoutReplacement', sourceDatasetSize: 100, sampleSize: 1, event: gaussian },
      { kind: 'shuffledLastIterate', datasetSize: 100, stepsPerEpoch: 100, noiseMultiplier: 4, shiftGrowth: 0 },
      { kind: 'shuffledSgdConjecture', datasetSize: 100, noiseMultiplier: 4, epochs: 1, fraction: 0.5, constant: 16 },
      { kind: 'randomizedResponse', noiseParameter: 0.5, numBuckets: 2 },
    ];
    for (const carrier of carriers) {
      for (const wrapped of [carrier, { kind: 'selfCompose', count: 3, event: carrier }, { kind: 'compose', events: [gaussian, carrier] }, { kind: 'repeatAndSelect', event: carrier, mean: 3, shape: Infinity }]) {
        const event = parseEvent(wrapped);
        assert.equal(neighboringRelationOf(event), releaseRelation(event), JSON.stringify(wrapped));
      }
    }
  });

  it('a replace-one release relabelled addOrRemoveOne: refused, naming both relations (linear, one-vs-rest, tuned, rgm, federated nodes)', () => {
    const problem = /^privacy\.neighboringRelation = 'addOrRemoveOne' but the event's release holds under 'replaceOne'/;
    for (const name of replaceOne) refused(files[name], (f) => void (f.privacy.neighboringRelation = 'addOrRemoveOne'), problem, name);
    for (const name of ['federatedDpgd', 'federatedRgm']) {
      // (The summary sentence does not name a node's relation: it says "replace-one neighbours within the node" for all.)
      refused(files[name], (f) => void (f.privacy.nodes[0].privacy.neighboringRelation = 'addOrRemoveOne'), /^node a: privacy\.neighboringRelation = 'addOrRemoveOne' but the event's release holds under 'replaceOne'/, name);
    }
    // The other way round was already refused: poissonSampled and objectivePerturbation carry their relation.
    for (const name of ['dpsgd', 'amp']) refused(files[name], (f) => void (f.privacy.neighboringRelation = 'replaceOne'), /neighboringRelation = 'replaceOne'/, name);
    // Zero noise (epsilon Infinity, guarantee none): either relation holds.
    for (const relation of ['replaceOne', 'addOrRemoveOne']) {
      assert.equal(verifyModel(edit(files.zeroDpsgd, (f) => void (f.privacy.neighboringRelation = relation))).holds, true, relation);
    }
  });

  it('dpfit verify: exit 4, one line naming the field, the stated and the derived relation; the untouched files exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpfit-verify-relation-'));
    for (const name of ['dpgd', 'shuffledOneRecord', 'dpsgd']) {
      const path = join(dir, `${name}.json`);
      writeFileSync(path, JSON.stringify(files[name]));
      const { code, stderr } = await runCli('verify', path);
      assert.equal(code, 0, `${name}: ${stderr}`);
    }
    await cliRefuses([
      ['dpgd-relation.json', edit(files.dpgd, (f) => void (f.privacy.neighboringRelation = 'addOrRemoveOne')), /neighboringRelation = 'addOrRemoveOne' but the event's release holds under 'replaceOne'/],
      ['rgm-relation.json', edit(files.rgm, (f) => void (f.privacy.neighboringRelation = 'addOrRemoveOne')), /neighboringRelation = 'addOrRemoveOne' but the event's release holds under 'replaceOne'/],
      // sampling without replacement of one record per step (shuffled SGD): its event carries replace-one
      ['wor-relation.json', edit(files.shuffledOneRecord, (f) => void (f.privacy.neighboringRelation = 'addOrRemoveOne')), /neighboringRelation = 'addOrRemoveOne' but the event's release holds under 'replaceOne'/],
      // the other way: DP-SGD (Poisson sampling, accounted add/remove-one) relabelled replace-one
      ['dpsgd-relation.json', edit(files.dpsgd, (f) => void (f.privacy.neighboringRelation = 'replaceOne')), /neighboringRelation = 'replaceOne' but the event's release holds under 'addOrRemoveOne'/],
    ]);
  });
});

describe('verify: a one-vs-rest event accounts one run per class', () => {
  it('an event of fewer runs than models (the count edited, the epsilon re-accounted to match), or of another shape: refused', () => {
    assert.equal(files.ovr.models.length, 3);
    assert.equal(files.ovr.privacy.event.kind, 'selfCompose');
    assert.equal(files.ovr.privacy.event.count, 3);
    for (const name of ['ovr', 'ovrDpsgd']) {
      const file = files[name];
      for (const count of [1, 2]) {
        refused(file, (f) => {
          f.privacy.event.count = count;
          reaccount(f);
        }, /^privacy\.event is selfCompose\(run, [12]\), not 3 runs: a one-vs-rest release of 3 models is selfCompose\(run, 3\)/, `${name}, ${count} run(s)`);
      }
      // The same steps in one selfCompose cost the same, but the file cannot show they are 3 runs: dpfit never writes it.
      refused(file, (f) => void (f.privacy.event = { kind: 'selfCompose', count: 3 * f.privacy.event.event.count, event: f.privacy.event.event.event }), /^privacy\.event is selfCompose\(run, \d+\), not 3 runs/, `${name}, flattened`);
    }
    // An event that releases nothing at all, claimed epsilon 0.
    refused(files.ovr, (f) => {
      f.privacy.event = { kind: 'noOp' };
      f.privacy.epsilon = 0;
      f.privacy.rdp = { epsilon: 0 };
      delete f.privacy.pld;
      f.privacy.accountant = 'rdp';
    }, /^privacy\.event is a noOp event, not 3 runs/, 'ovr, noOp');
    // Zero noise: the event is nonPrivate (epsilon Infinity), which holds for any number of models.
    const zero = JSON.parse(toDpfitJson(trainOneVsRest(classes, { classes: ['a', 'b', 'c'], base: { method: 'dpgd', steps: 2, clipNorm: 1, learningRate: 1 }, noiseMultiplier: 0, delta: 1e-5, rng: rng() }).model));
    assert.equal(verifyModel(zero).holds, true, verifyModel(zero).problems.join(' | '));
  });

  it('dpfit verify: exit 4, one line naming the field, the stated and the derived relation; the untouched files exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpfit-verify-relation-'));
    for (const name of ['dpgd', 'shuffledOneRecord', 'dpsgd']) {
      const path = join(dir, `${name}.json`);
      writeFileSync(path, JSON.stringify(files[name]));
      const { code, stderr } = await runCli('verify', path);
      assert.equal(code, 0, `${name}: ${stderr}`);
    }
    await cliRefuses([['ovr-one-run.json', edit(files.ovr, (f) => {
      f.privacy.event.count = 1;
      reaccount(f);
    }), /privacy\.event is selfCompose\(run, 1\), not 3 runs/]]);
  });
});

describe('verify: privacy.rdp, privacy.pld and privacy.comparisons', () => {
  it('a PLD (or exact Gaussian) epsilon below the headline, or not what the accountant gives: refused', () => {
    // The learners' pld is the exact Gaussian composition (DP-GD, output, one-vs-rest, a federated node), or the PLD accountant (AMP, objpert).
    for (const name of ['dpgd', 'output', 'outputSgd', 'shuffledPlain', 'ovr', 'amp', 'objpert']) {
      assert.equal(typeof files[name].privacy.pld?.epsilon, 'number', name);
      refused(files[name], (f) => void (f.privacy.pld.epsilon = 0.001), /^privacy\.pld\.epsilon = 0\.001 is below privacy\.epsilon = [\d.]+: the headline is the smaller of the RDP and PLD bounds/, name);
      refused(files[name], (f) => void (f.privacy.pld.epsilon *= 1.5), /^privacy\.pld\.epsilon = [\d.]+ is not what the (exact Gaussian composition|PLD) accountant gives for the event/, `${name}, raised`);
    }
    refused(files.federatedDpgd, (f) => void (f.privacy.nodes[1].privacy.pld.epsilon = 0.001), /^node b: privacy\.pld\.epsilon = 0\.001 is below privacy\.epsilon/, 'federated node');
    // AMP's epsilonLower: at most its epsilon, and the PLD accountant's.
    refused(files.amp, (f) => void (f.privacy.pld.epsilonLower = f.privacy.pld.epsilon * 2), /^privacy\.pld\.epsilonLower = [\d.]+ is not a lower bound of privacy\.pld\.epsilon/, 'amp, lower above');
    refused(files.amp, (f) => void (f.privacy.pld.epsilonLower /= 2), /^privacy\.pld\.epsilonLower = [\d.]+ is not what the PLD accountant gives/, 'amp, lower edited');
  });

  it('an RDP epsilon above what the accountant gives, another order, or a finite RDP epsilon for a zero-noise release: refused', () => {
    for (const name of ['dpgd', 'dpsgd', 'rgm', 'tuned', 'shuffled']) {
      refused(files[name], (f) => void (f.privacy.rdp.epsilon *= 1.5), /^privacy\.rdp\.epsilon = [\d.]+ is not what the RDP accountant gives for the event/, name);
      refused(files[name], (f) => void (f.privacy.rdp.order += 1), /^privacy\.rdp\.order = [\d.]+ is not the order at which the RDP accountant attains its bound/, `${name}, order`);
    }
    // Zero noise: epsilon Infinity, and no accountant bounds the event, so rdp.epsilon = 0.5 was taken as it stood.
    assert.equal(files.zeroDpsgd.privacy.epsilon, 'Infinity');
    refused(files.zeroDpsgd, (f) => void (f.privacy.rdp.epsilon = 0.5), /^privacy\.rdp\.epsilon = 0\.5 is below privacy\.epsilon = Infinity/, 'zero noise');
    // Below the headline was refused before too (below the RDP accountant's).
    refused(files.dpgd, (f) => void (f.privacy.rdp.epsilon = 0.5), /^privacy\.rdp\.epsilon = 0\.5 is below privacy\.epsilon/, 'dpgd, below');
  });

  it('comparisons: a bound of the release below the headline, another delta, a negative epsilon, a name dpfit does not write: refused', () => {
    // Shuffled SGD on the lattice: the bound not used for the headline (plain composition here, lastIterate otherwise) is the larger.
    assert.deepEqual(Object.keys(files.shuffled.privacy.comparisons), ['plainComposition']);
    refused(files.shuffled, (f) => void (f.privacy.comparisons.plainComposition.epsilon = 0.1), /^privacy\.comparisons\.plainComposition\.epsilon = 0\.1 is below privacy\.epsilon/, 'shuffled, plain composition');
    // DP-GD with a target: what basic composition and the RDP calibration would need; their epsilon is the target's.
    assert.deepEqual(Object.keys(files.dpgd.privacy.comparisons).sort(), ['basicComposition', 'rdpCalibration']);
    refused(files.dpgd, (f) => void (f.privacy.comparisons.basicComposition.delta = 0.5), /^privacy\.comparisons\.basicComposition\.delta = 0\.5 is not privacy\.delta/, 'dpgd, delta');
    refused(files.dpgd, (f) => void (f.privacy.comparisons.rdpCalibration.epsilon = -1), /^privacy\.comparisons\.rdpCalibration\.epsilon = -1 is not an epsilon/, 'dpgd, negative');
    refused(files.dpgd, (f) => void (f.privacy.comparisons.rdpCalibration.noiseMultiplier = 0), /^privacy\.comparisons\.rdpCalibration\.noiseMultiplier = 0 is not a noise multiplier/, 'dpgd, noise multiplier');
    refused(files.dpgd, (f) => void (f.privacy.comparisons.tightest = { epsilon: 0.01, delta: 1e-5 }), /^privacy\.comparisons\.tightest is not a comparison dpfit writes/, 'dpgd, unknown');
  });

  it('dpfit verify: exit 4, one line naming the field, the stated and the derived relation; the untouched files exit 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpfit-verify-relation-'));
    for (const name of ['dpgd', 'shuffledOneRecord', 'dpsgd']) {
      const path = join(dir, `${name}.json`);
      writeFileSync(path, JSON.stringify(files[name]));
      const { code, stderr } = await runCli('verify', path);
      assert.equal(code, 0, `${name}: ${stderr}`);
    }
    await cliRefuses([
      ['pld.json', edit(files.dpgd, (f) => void (f.privacy.pld.epsilon = 0.001)), /privacy\.pld\.epsilon = 0\.001 is below privacy\.epsilon/],
      ['amp-pld.json', edit(files.amp, (f) => void (f.privacy.pld.epsilon = 0.001)), /privacy\.pld\.epsilon = 0\.001 is below privacy\.epsilon/],
      ['comparison.json', edit(files.shuffled, (f) => void (f.privacy.comparisons.plainComposition.epsilon = 0.1)), /privacy\.comparisons\.plainComposition\.epsilon = 0\.1 is below/],
    ]);
  });
});

describe('verify: a file holds only what dpfit writes', () => {
  it('every kind of file dpfit writes verifies as written, privacy.datasetSize included', () => {
    for (const [name, file] of Object.entries(files)) {
      const result = verifyModel(file);
      assert.equal(result.holds, true, `${name}: ${result.problems.join(' | ')}`);
      assert.ok(result.warnings.every((w) => !/field/.test(w)), `${name}: ${result.warnings.join(' | ')}`);
    }
    // train() states which n is public: the replace-one learners and DP-SGD the count, objective perturbation and AMP none.
    assert.deepEqual(files.dpgd.privacy.datasetSize.source, 'records');
    assert.equal(files.dpgd.privacy.datasetSize.value, 300);
    assert.deepEqual(Object.keys(files.amp.privacy.datasetSize).sort(), ['note', 'source']);
    assert.equal(files.amp.privacy.datasetSize.source, 'unused');
  });

  it('a field dpfit does not write, anywhere (even a number where numbers are read): refused, naming it', () => {
    const extra = (path: string) => new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')} is not a field dpfit writes \\(`);
    const cases: [string, (f: ModelJson) => void, RegExp][] = [
      ['dpgd', (f) => void (f.secret = 'anything'), extra('secret')],
      ['dpgd', (f) => void (f.privacy.secret = 1), extra('privacy.secret')],
      ['dpgd', (f) => void (f.privacy.rdp.secret = 123456789), extra('privacy.rdp.secret')],
      ['dpgd', (f) => void (f.privacy.pld.secret = 123456789), extra('privacy.pld.secret')],
      ['dpgd', (f) => void (f.privacy.comparisons.basicComposition.secret = 123456789), extra('privacy.comparisons.basicComposition.secret')],
      ['dpgd', (f) => void (f.privacy.datasetSize.secret = 'anything'), extra('privacy.datasetSize.secret')],
      ['dpgd', (f) => void (f.loss.secret = 'anything'), extra('loss.secret')],
      ['dpgd', (f) => void (f.loss.parameters.secret = 123456789), extra('loss.parameters.secret')],
      // A power-of-two value under a grid name dpfit does not write passes the grid check.
      ['amp', (f) => void (f.privacy.granularities.secret = 2 ** -20), extra('privacy.granularities.secret')],
      ['rgm', (f) => void (f.privacy.ptr.secret = 123456789), extra('privacy.ptr.secret')],
      ['rgm', (f) => void (f.privacy.deltaComponents.secret = 123456789), extra('privacy.deltaComponents.secret')],
      ['ovr', (f) => void (f.models[1].secret = 'anything'), extra('models[1].secret')],
      ['ovr', (f) => void (f.models[0].schema = f.schema ?? {}), extra('models[0].schema')],
      ['ovr', (f) => void (f.models[2].loss.parameters.secret = 1), extra('models[2].loss.parameters.secret')],
      ['federatedDpgd', (f) => void (f.secret = 'anything'), extra('secret')],
      ['federatedDpgd', (f) => void (f.privacy.secret = 'anything'), extra('privacy.secret')],
      ['federatedDpgd', (f) => void (f.privacy.nodes[0].secret = 'anything'), extra('privacy.nodes[0].secret')],
      ['federatedDpgd', (f) => void (f.loss.secret = 'anything'), extra('loss.secret')],
      ['federatedRgm', (f) => void (f.privacy.nodes[1].privacy.secret = 1), /^node b: privacy\.secret is not a field dpfit writes \(/],
      ['federatedRgm', (f) => void (f.privacy.nodes[1].privacy.ptr.secret = 1), /^node b: privacy\.ptr\.secret is not a field dpfit writes \(/],
    ];
    for (const [name, change, problem] of cases) refused(files[name], change, problem, `${name}: ${problem.source}`);
  });

  it('privacy.datasetSize: its shape, and "unused" exactly for objective perturbation and AMP', () => {
    refused(files.dpgd, (f) => void (f.privacy.datasetSize.source = 'guessed'), /^privacy\.datasetSize\.source = "guessed" is not one of 'records', 'declared', 'unused'/, 'source');
    refused(files.dpgd, (f) => void (f.privacy.datasetSize.value = -5), /^privacy\.datasetSize\.value = -5 is not a positive integer/, 'negative');
    refused(files.dpsgd, (f) => void (f.privacy.datasetSize.value = 300.5), /^privacy\.datasetSize\.value = 300\.5 is not a positive integer/, 'fraction');
    refused(files.dpgd, (f) => void delete f.privacy.datasetSize.value, /^privacy\.datasetSize\.value = missing is not a positive integer/, 'missing value');
    refused(files.dpgd, (f) => void (f.privacy.datasetSize.note = 5), /^privacy\.datasetSize\.note = 5 is not a string/, 'note');
    refused(files.dpgd, (f) => void (f.privacy.datasetSize = 'public'), /^privacy\.datasetSize = "public" is not \{value, source, note\}/, 'not an object');
    // "unused" says n stays private: false for a release that divides by n, and no count may sit beside it.
    refused(files.dpgd, (f) => {
      f.privacy.datasetSize.source = 'unused';
      delete f.privacy.datasetSize.value;
    }, /^privacy\.datasetSize\.source = 'unused', but this release depends on n/, 'unused for dpgd');
    refused(files.amp, (f) => void (f.privacy.datasetSize.value = 300), /^privacy\.datasetSize\.value is given, but source 'unused'/, 'a count beside unused');
    refused(files.amp, (f) => void (f.privacy.datasetSize = { value: 300, source: 'records', note: 'n' }), /^privacy\.datasetSize\.source = 'records', but objective perturbation and AMP .* use no n/, 'records for amp');
  });

  it("the accountant's name, PTR's outcome, a federated node's extraDelta and label: what dpfit writes", () => {
    refused(files.dpgd, (f) => void (f.privacy.accountant = 'oracle'), /^privacy\.accountant = "oracle" is not an accountant dpfit reports/, 'accountant');
    refused(files.rgm, (f) => void (f.privacy.ptr.passed = false), /^privacy\.ptr\.passed = false, but a model is released only when the Propose-Test-Release test passes/, 'ptr.passed');
    assert.deepEqual(files.federatedRgm.privacy.nodes.map((n: ModelJson) => n.extraDelta), files.federatedRgm.privacy.nodes.map((n: ModelJson) => n.privacy.deltaComponents.ptr));
    refused(files.federatedRgm, (f) => void (f.privacy.nodes[0].extraDelta = 0.123456789), /^privacy\.nodes\[0\]\.extraDelta = 0\.123456789 is not the node's PTR delta/, 'extraDelta rgm');
    refused(files.federatedDpgd, (f) => void (f.privacy.nodes[1].extraDelta = 1e-300), /^privacy\.nodes\[1\]\.extraDelta = 1e-300 is not the node's PTR delta \(0/, 'extraDelta dpgd');
    refused(files.federatedDpgd, (f) => void (f.privacy.nodes[1].label = 123456789), /^privacy\.nodes\[1\]\.label = 123456789 is not a string/, 'label');
  });

  it("the embedded schema as dpfit reads it: a field it does not know, in a file dpfit train wrote", async () => {
    const { dir, data: csv, schema } = peopleFixture('dpfit-verify-schema-', 300, 7);
    const out = join(dir, 'model.json');
    const trained = await runCli('train', '--data', csv, '--schema', schema, '--method', 'dpgd', '--steps', '5', '--epsilon', '1', '--out', out);
    assert.equal(trained.code, 0, trained.stderr);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(file.privacy.datasetSize.source, 'records');
    const verified = await runCli('verify', out, '--json');
    assert.equal(verified.code, 0, verified.stderr);
    assert.deepEqual(JSON.parse(verified.stdout).warnings, [], 'no warning about privacy.datasetSize any more');
    refused(file, (f) => void (f.schema.columns[0].secret = 123456789), /^the embedded schema: column 'age': unknown field "secret"/, 'a column field');
    refused(file, (f) => void (f.schema.secret = 'anything'), /^the embedded schema: unknown field "secret"/, 'a schema field');
    await cliRefuses([['schema.json', edit(file, (f) => void (f.schema.columns[2].secret = 'anything')), /the embedded schema: column 'label': unknown field "secret"/]]);
  });

  it('dpfit verify: exit 4, one line (each was a warning and exit 0 before)', async () => {
    await cliRefuses([
      ['top.json', edit(files.dpgd, (f) => void (f.secret = 'anything')), /secret is not a field dpfit writes/],
      ['privacy.json', edit(files.dpgd, (f) => void (f.privacy.secret = 1)), /privacy\.secret is not a field dpfit writes/],
      ['rdp.json', edit(files.dpgd, (f) => void (f.privacy.rdp.secret = 123456789)), /privacy\.rdp\.secret is not a field dpfit writes/],
      ['dataset-size.json', edit(files.dpgd, (f) => void (f.privacy.datasetSize.source = 'guessed')), /privacy\.datasetSize\.source = "guessed"/],
      ['federated.json', edit(files.federatedDpgd, (f) => void (f.privacy.nodes[0].secret = 'anything')), /privacy\.nodes\[0\]\.secret is not a field dpfit writes/],
    ]);
  });
});
