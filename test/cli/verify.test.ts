/**
 * `dpfit verify` and the honesty of what `dpfit train` releases: a trained model's
 * claim verifies; every edit of the claim (epsilon, event, guarantee, the privacy block itself)
 * is caught with exit 4; malformed files exit 3; evaluate/predict show the verified guarantee;
 * seeds, zero noise, suggested schemas and validation data that overlap the training data give
 * guarantee none; train --json is exactly the release and --diagnostics holds the rest.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseEvent } from '../../src/accounting/events/json.js';
import { rdpEpsilon } from '../../src/accounting/rdp/accountant.js';
import { SUGGESTED_PROVENANCE } from '../../src/data/schema/types.js';
import { parseModel } from '../../src/learners/models/model.js';
import { verifyModel } from '../../src/learners/verification/verify-model.js';
import { sampleGaussian } from '../../src/random/continuous.js';
import { defaultRng, seededRng } from '../../src/random/rng.js';
import { DataFormatError } from '../../src/errors.js';
import { PEOPLE_SCHEMA, peopleFixture, runCli } from '../helpers/people.js';

const run = runCli;

const SCHEMA = PEOPLE_SCHEMA;

/** 600 seeded people rows and their public schema, in a fresh temp dir (`helpers/people.ts`). */
function fixture(): { dir: string; data: string; schema: string; lines: string[] } {
  return peopleFixture('dpfit-verify-', 600, 7);
}

const FAST = ['--batch-size', '100', '--epochs', '2'];

/** A model trained with the secure generator (guarantee proven), and its parsed file. */
async function trainedModel(): Promise<{ dir: string; data: string; schema: string; out: string; file: Record<string, any> }> {
  const f = fixture();
  const out = join(f.dir, 'model.json');
  const trained = await run('train', '--data', f.data, '--schema', f.schema, '--epsilon', '1', ...FAST, '--out', out, '--json');
  assert.equal(trained.code, 0, trained.stderr);
  return { ...f, out, file: JSON.parse(readFileSync(out, 'utf8')) };
}

function edited(dir: string, name: string, file: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof file === 'string' ? file : JSON.stringify(file));
  return path;
}

describe('dpfit verify', () => {
  it('a freshly trained model: exit 0, holds, the verified epsilon is at most the claimed one', async () => {
    const { out, file } = await trainedModel();
    assert.equal(file.privacy.guarantee, 'proven');
    const verified = await run('verify', out, '--json');
    assert.equal(verified.code, 0, verified.stderr);
    assert.equal(verified.stderr, '');
    const result = JSON.parse(verified.stdout);
    assert.deepEqual(Object.keys(result).sort(), ['claimed', 'file', 'format', 'holds', 'problems', 'verified', 'warnings']);
    assert.equal(result.holds, true);
    assert.deepEqual(result.problems, []);
    assert.ok(result.verified.epsilon <= result.claimed.epsilon);
    assert.equal(result.claimed.epsilon, file.privacy.epsilon);
    assert.equal(result.verified.guarantee, 'proven');
    assert.equal(result.verified.neighboringRelation, 'addOrRemoveOne');
    const human = await run('verify', out);
    assert.equal(human.code, 0);
    assert.match(human.stdout, /the privacy claim HOLDS/);
  });

  it('an edited epsilon, a replaced event, a deleted privacy block, a raised guarantee: exit 4, one line on stderr', async () => {
    const { dir, data, file } = await trainedModel();
    const clone = () => JSON.parse(JSON.stringify(file));
    const smaller = clone();
    smaller.privacy.epsilon = 0.001;
    const moreNoise = clone();
    // The event of a run with twice the noise (which would cost much less than the claimed epsilon).
    moreNoise.privacy.event.event.event.noiseMultiplier *= 2;
    moreNoise.privacy.event.event.event.gridNoiseStd *= 2;
    const noBlock = clone();
    delete noBlock.privacy;
    const relation = clone();
    relation.privacy.neighboringRelation = 'replaceOne';
    const cases: [string, unknown, RegExp][] = [
      ['epsilon.json', smaller, /privacy\.epsilon = 0\.001 is below/],
      ['event.json', moreNoise, /is not the one this epsilon was computed for/],
      ['no-privacy.json', noBlock, /no privacy block/],
      ['relation.json', relation, /neighboringRelation/],
    ];
    for (const [name, model, problem] of cases) {
      const path = edited(dir, name, model);
      const { code, stdout, stderr } = await run('verify', path, '--json');
      assert.equal(code, 4, `${name}: ${stderr}`);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
      assert.match(stderr, /does not hold/);
      const result = JSON.parse(stdout);
      assert.equal(result.holds, false, name);
      assert.ok(result.problems.some((p: string) => problem.test(p)), `${name}: ${result.problems.join(' | ')}`);
    }
    // evaluate and predict still work on the file without a privacy block, and say so loudly.
    const noBlockPath = join(dir, 'no-privacy.json');
    for (const command of ['evaluate', 'predict']) {
      const human = await run(command, '--model', noBlockPath, '--data', data);
      assert.equal(human.code, 0, human.stderr);
      assert.match(human.stderr, /WARNING: .*no privacy block/);
      const json = await run(command, '--model', noBlockPath, '--data', data, '--json');
      assert.equal(json.code, 0, json.stderr);
      assert.match(json.stderr, /WARNING/);
      assert.equal(JSON.parse(json.stdout).privacy.holds, false);
    }
  });

  it('a seeded model claimed proven: exit 4 (the guarantee is none); as written it holds with none', async () => {
    const f = fixture();
    const out = join(f.dir, 'seeded.json');
    const trained = await run('train', '--data', f.data, '--schema', f.schema, '--epsilon', '1', ...FAST, '--seed', '3', '--out', out, '--json');
    assert.equal(trained.code, 0, trained.stderr);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(file.privacy.guarantee, 'none');
    const asWritten = JSON.parse((await run('verify', out, '--json')).stdout);
    assert.equal(asWritten.holds, true);
    assert.equal(asWritten.verified.guarantee, 'none');
    file.privacy.guarantee = 'proven';
    const raised = await run('verify', edited(f.dir, 'raised.json', file), '--json');
    assert.equal(raised.code, 4, raised.stderr);
    assert.ok(JSON.parse(raised.stdout).problems.some((p: string) => /stronger than what holds \('none'\)/.test(p)));
    // Also caught with the randomness string made to look secure: the seed warning stays in the report.
    file.privacy.randomness = defaultRng().description;
    const disguised = await run('verify', edited(f.dir, 'disguised.json', file), '--json');
    assert.equal(disguised.code, 4, disguised.stderr);
  });

  it('malformed files: not JSON, wrong format, theta NaN-as-string, an event that does not parse, a missing file -> exit 3', async () => {
    const { dir, out, file } = await trainedModel();
    const clone = () => JSON.parse(JSON.stringify(file));
    const wrongFormat = clone();
    wrongFormat.format = 'dpfit-linear-model/9';
    const nanTheta = clone();
    nanTheta.theta[0] = 'NaN';
    const badEvent = clone();
    badEvent.privacy.event = { kind: 'gaussian', noiseMultiplier: -1 };
    const badEpsilon = clone();
    badEpsilon.privacy.epsilon = 'a lot';
    const cases: [string, unknown][] = [
      ['not-json.json', '{"format": "dpfit-linear-model/1", '],
      ['format.json', wrongFormat],
      ['nan.json', nanTheta],
      ['event.json', badEvent],
      ['epsilon.json', badEpsilon],
      ['array.json', [1, 2]],
    ];
    for (const [name, model] of cases) {
      const { code, stdout, stderr } = await run('verify', edited(dir, name, model), '--json');
      assert.equal(code, 3, `${name}: ${stderr}`);
      assert.equal(stdout, '', name);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
      assert.match(stderr, /^dpfit: /);
    }
    const missing = await run('verify', join(dir, 'nope.json'));
    assert.equal(missing.code, 3);
    // The saved file round-trips: "Infinity" strings are read back as numbers.
    assert.equal(parseModel(file).privacy?.epsilon, file.privacy.epsilon);
    assert.ok(existsSync(out));
  });

  it('rgm (Propose-Test-Release), one-vs-rest and objective perturbation files: their own checks', async () => {
    const { dir, data, schema } = fixture();
    // rgm: ridge on Gaussian features, n large enough for the test to pass.
    const rng = seededRng(41);
    const rows = ['a,b,y'];
    for (let i = 0; i < 20000; i++) {
      const a = Math.max(-4, Math.min(4, sampleGaussian(rng)));
      const b = Math.max(-4, Math.min(4, sampleGaussian(rng)));
      rows.push(`${a},${b},${(a - 0.5 * b + 0.3 * sampleGaussian(rng)).toFixed(4)}`);
    }
    const rgmData = edited(dir, 'rgm.csv', `${rows.join('\n')}\n`);
    const rgmSchema = edited(dir, 'rgm.schema.json', {
      version: 1,
      columns: [
        { name: 'a', type: 'numeric', lower: -4, upper: 4, scale: 'none' },
        { name: 'b', type: 'numeric', lower: -4, upper: 4, scale: 'none' },
        { name: 'y', type: 'label', lower: -10, upper: 10 },
      ],
    });
    const rgmOut = join(dir, 'rgm.json');
    const rgm = await run('train', '--data', rgmData, '--schema', rgmSchema, '--loss', 'squared', '--method', 'rgm', '--epsilon', '2', '--delta', '1e-6', '--steps', '20', '--out', rgmOut, '--json');
    assert.equal(rgm.code, 0, rgm.stderr);
    const rgmFile = JSON.parse(readFileSync(rgmOut, 'utf8'));
    assert.notEqual(JSON.parse(rgm.stdout).model, null, 'PTR passed');
    assert.equal((await run('verify', rgmOut)).code, 0);
    const threshold = JSON.parse(JSON.stringify(rgmFile));
    threshold.privacy.ptr.threshold /= 2;
    const lowered = await run('verify', edited(dir, 'rgm-threshold.json', threshold), '--json');
    assert.equal(lowered.code, 4);
    assert.ok(JSON.parse(lowered.stdout).problems.some((p: string) => /ptr\.threshold/.test(p)));
    const components = JSON.parse(JSON.stringify(rgmFile));
    components.privacy.deltaComponents.rdp *= 2;
    assert.equal((await run('verify', edited(dir, 'rgm-delta.json', components))).code, 4);
    // The gradient grid is implied by the event (baselineStd / gridBaselineStd): a doubled one does not hold.
    const grid = JSON.parse(JSON.stringify(rgmFile));
    grid.privacy.granularity *= 2;
    grid.privacy.granularities.gradient *= 2;
    const doubled = await run('verify', edited(dir, 'rgm-grid.json', grid), '--json');
    assert.equal(doubled.code, 4);
    assert.ok(JSON.parse(doubled.stdout).problems.some((p: string) => /privacy\.granularities\.gradient = .* is not the grid of RGM's gradient noise the event implies/.test(p)));
    // one-vs-rest: one privacy block for the whole release; a per-class block is refused.
    const classes = edited(dir, 'classes.schema.json', { ...SCHEMA, columns: [SCHEMA.columns[0], SCHEMA.columns[1], { name: 'label', type: 'label', classes: ['yes', 'no'] }] });
    const ovrOut = join(dir, 'ovr.json');
    assert.equal((await run('train', '--data', data, '--schema', classes, '--method', 'dpgd', '--steps', '10', '--epsilon', '2', '--out', ovrOut)).code, 0);
    assert.equal((await run('verify', ovrOut)).code, 0);
    const ovr = JSON.parse(readFileSync(ovrOut, 'utf8'));
    ovr.models[0].privacy = ovr.privacy;
    assert.equal((await run('verify', edited(dir, 'ovr-per-class.json', ovr))).code, 4);
    // objective perturbation (no output noise, its research opt-in): none, and claiming "proven" does not hold.
    const objOut = join(dir, 'objpert.json');
    assert.equal((await run('train', '--data', data, '--schema', schema, '--method', 'objpert', '--accept-no-guarantee', '--epsilon', '1', '--out', objOut)).code, 0);
    const objpert = JSON.parse(readFileSync(objOut, 'utf8'));
    assert.equal(objpert.privacy.guarantee, 'none');
    assert.equal((await run('verify', objOut)).code, 0);
    objpert.privacy.warnings = [];
    for (const claim of ['proven', 'conjecture']) {
      // 'conjecture' is what such files used to claim: it does not hold either (the grid inversion, test/learners/perturbation/grid-inversion.test.ts).
      objpert.privacy.guarantee = claim;
      const raised = await run('verify', edited(dir, `objpert-${claim}.json`, objpert), '--json');
      assert.equal(raised.code, 4, claim);
      assert.equal(JSON.parse(raised.stdout).verified.guarantee, 'none', claim);
    }
  });

  it('--help explains the checks and gives an example', async () => {
    const help = await run('verify', '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Example/);
    assert.match(help.stdout, /Exit status/);
  });
});

describe('verifyModel (library)', () => {
  it('throws DataFormatError for malformed input and reads "Infinity" back', () => {
    assert.throws(() => verifyModel('text', { source: 'x.json' }), DataFormatError);
    assert.throws(() => verifyModel({ format: 'other' }), DataFormatError);
    const zero = verifyModel({
      format: 'dpfit-linear-model/1',
      loss: { name: 'logistic', parameters: {} },
      task: 'classification',
      theta: [0.5],
      privacy: { epsilon: 'Infinity', delta: 0, accountant: 'none', event: { kind: 'nonPrivate' }, neighboringRelation: 'replaceOne', guarantee: 'none', randomness: defaultRng().description, warnings: [] },
    });
    assert.equal(zero.holds, true);
    assert.equal(zero.verified?.epsilon, Infinity);
    assert.equal(zero.verified?.guarantee, 'none');
    // The same block claiming "proven" does not hold: epsilon Infinity guarantees nothing.
    const proven = verifyModel({
      format: 'dpfit-linear-model/1',
      loss: { name: 'logistic', parameters: {} },
      task: 'classification',
      theta: [0.5],
      privacy: { epsilon: 'Infinity', delta: 0, accountant: 'none', event: { kind: 'nonPrivate' }, neighboringRelation: 'replaceOne', guarantee: 'proven', randomness: defaultRng().description, warnings: [] },
    });
    assert.equal(proven.holds, false);
  });

  it('continuous floating-point noise (no "discrete": true) or no grid: guarantee none', () => {
    const base = {
      format: 'dpfit-linear-model/1',
      loss: { name: 'logistic', parameters: {} },
      task: 'classification',
      theta: [0.5],
    };
    // The claim is what the RDP accountant gives for the event (the verifier checks that it is).
    const epsilon = rdpEpsilon(parseEvent({ kind: 'gaussian', noiseMultiplier: 1, discrete: true }), 1e-5).epsilon;
    const privacy = { epsilon, delta: 1e-5, accountant: 'rdp', neighboringRelation: 'replaceOne', randomness: defaultRng().description, warnings: [] };
    const continuous = verifyModel({ ...base, privacy: { ...privacy, event: { kind: 'gaussian', noiseMultiplier: 1 }, guarantee: 'proven', granularity: 2 ** -20 } });
    assert.equal(continuous.holds, false);
    assert.ok(continuous.problems.some((p) => /floating-point/.test(p)), continuous.problems.join(' | '));
    const noGrid = verifyModel({ ...base, privacy: { ...privacy, event: { kind: 'gaussian', noiseMultiplier: 1, discrete: true }, guarantee: 'proven' } });
    assert.equal(noGrid.holds, false);
    const gridded = verifyModel({ ...base, privacy: { ...privacy, event: { kind: 'gaussian', noiseMultiplier: 1, discrete: true }, guarantee: 'proven', granularity: 2 ** -20 } });
    assert.equal(gridded.holds, true, gridded.problems.join(' | '));
    assert.ok((gridded.verified?.epsilon ?? Infinity) <= epsilon);
  });

  it('the suggested provenance the verifier looks for is the data layer\'s', () => {
    assert.equal(SUGGESTED_PROVENANCE, 'suggested-from-private-data');
  });
});

describe('evaluate and predict show the verified guarantee', () => {
  it('one line on stderr, a privacy field with --json, predictions alone on stdout', async () => {
    const { out, data } = await trainedModel();
    const evaluated = await run('evaluate', '--model', out, '--data', data);
    assert.equal(evaluated.code, 0, evaluated.stderr);
    assert.match(evaluated.stderr, /^dpfit: privacy: \(epsilon = [\d.]+, delta = 0\.00001\) proven — verified\n$/);
    const json = JSON.parse((await run('evaluate', '--model', out, '--data', data, '--json')).stdout);
    assert.ok(json.accuracy > 0.6);
    assert.equal(json.privacy.holds, true);
    const predicted = await run('predict', '--model', out, '--data', data);
    assert.equal(predicted.code, 0);
    assert.equal(predicted.stdout.trim().split('\n').length, 600, 'stdout is the data');
    // A logistic model: the schema's label value, a tab, the probability of the positive class.
    assert.ok(predicted.stdout.trim().split('\n').every((line) => /^(yes|no)\t(0|1|0?\.\d+(e-\d+)?)$/.test(line) && (line.startsWith('yes') === Number(line.split('\t')[1]) >= 0.5)), predicted.stdout.slice(0, 200));
    assert.match(predicted.stderr, /verified/);
    const edited = JSON.parse(readFileSync(out, 'utf8'));
    edited.privacy.epsilon = 0.001;
    writeFileSync(out, JSON.stringify(edited));
    const warned = await run('predict', '--model', out, '--data', data);
    assert.equal(warned.code, 0);
    assert.match(warned.stderr, /WARNING: the model's privacy claim .* DOES NOT HOLD/);
  });
});

describe('dpfit train: the release is honest', () => {
  it('--json prints exactly {model, privacy} (and modelFile); --diagnostics writes the private rest', async () => {
    const { dir, data, schema } = fixture();
    const plain = JSON.parse((await run('train', '--data', data, '--schema', schema, '--epsilon', '1', ...FAST, '--json')).stdout);
    assert.deepEqual(Object.keys(plain).sort(), ['model', 'privacy']);
    const out = join(dir, 'model.json');
    const diagnostics = join(dir, 'diagnostics.json');
    const trained = await run('train', '--data', data, '--schema', schema, '--epsilon', '1', ...FAST, '--out', out, '--diagnostics', diagnostics, '--json');
    assert.equal(trained.code, 0, trained.stderr);
    const result = JSON.parse(trained.stdout);
    assert.deepEqual(Object.keys(result).sort(), ['model', 'modelFile', 'privacy']);
    assert.equal(result.modelFile, out);
    assert.deepEqual(Object.keys(result.model).sort(), ['featureNames', 'format', 'loss', 'privacy', 'schema', 'task', 'theta']);
    const file = JSON.parse(readFileSync(diagnostics, 'utf8'));
    assert.deepEqual(Object.keys(file).sort(), ['diagnostics', 'metrics', 'note']);
    assert.ok(file.metrics.training.accuracy > 0.6);
    assert.equal(file.diagnostics.method, 'dpsgd');
    assert.match(file.note, /NOT covered by the privacy guarantee/);
    // Human mode: the release on stdout, the training metrics on stderr under the private heading.
    const human = await run('train', '--data', data, '--schema', schema, '--epsilon', '1', ...FAST);
    assert.equal(human.code, 0);
    assert.doesNotMatch(human.stdout, /accuracy|rows/);
    assert.match(human.stderr, /private diagnostics[^\n]*NOT covered by the privacy guarantee[^\n]*\n(.*\n)*  training accuracy/);
    // Bad output paths: one line naming the flag, nothing written; a clash of flags is a bad
    // parameter (exit 2), a directory that does not exist a file-system problem (exit 3).
    const clash = await run('train', '--data', data, '--schema', schema, '--epsilon', '1', '--out', join(dir, 'm2.json'), '--diagnostics', join(dir, 'm2.json'));
    assert.equal(clash.code, 2);
    assert.match(clash.stderr, /--diagnostics/);
    const nowhere = await run('train', '--data', data, '--schema', schema, '--epsilon', '1', '--diagnostics', join(dir, 'missing-dir', 'd.json'));
    assert.equal(nowhere.code, 3);
    assert.match(nowhere.stderr, /^dpfit: --diagnostics/);
    assert.ok(!existsSync(join(dir, 'm2.json')));
  });

  it('--seed: guarantee none, said on stderr, and no seed anywhere in the file', async () => {
    const { dir, data, schema } = fixture();
    const out = join(dir, 'seeded.json');
    const trained = await run('train', '--data', data, '--schema', schema, '--epsilon', '1', ...FAST, '--seed', '987654321', '--out', out);
    assert.equal(trained.code, 0, trained.stderr);
    assert.match(trained.stderr, /WARNING: --seed .* NOT private/);
    assert.match(trained.stdout, /NONE: this model is NOT private/);
    const text = readFileSync(out, 'utf8');
    assert.equal(JSON.parse(text).privacy.guarantee, 'none');
    assert.doesNotMatch(text, /987654321/);
    assert.doesNotMatch(text, /seed \d/);
  });

  it('a schema suggested from the private data: guarantee none in the file, and stderr says why', async () => {
    const { dir, data } = fixture();
    const schema = join(dir, 'suggested.schema.json');
    writeFileSync(schema, JSON.stringify({ ...SCHEMA, provenance: 'suggested-from-private-data' }));
    const out = join(dir, 'model.json');
    const trained = await run('train', '--data', data, '--schema', schema, '--epsilon', '1', ...FAST, '--out', out, '--json');
    assert.equal(trained.code, 0, trained.stderr);
    assert.match(trained.stderr, /suggested by READING THE PRIVATE DATA/);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(file.privacy.guarantee, 'none');
    assert.ok(file.privacy.warnings.some((w: string) => /suggested-from-private-data/.test(w)));
    // The verifier agrees, and catches the guarantee raised back to proven (from the schema's provenance).
    assert.equal((await run('verify', out)).code, 0);
    file.privacy.guarantee = 'proven';
    file.privacy.warnings = [];
    assert.equal((await run('verify', edited(dir, 'raised.json', file))).code, 4);
  });

  it('zero noise: a privacy block with epsilon Infinity and guarantee none (gradient methods, rgm, one-vs-rest)', async () => {
    const { dir, data, schema } = fixture();
    const out = join(dir, 'zero.json');
    const trained = await run('train', '--data', data, '--schema', schema, '--noise-multiplier', '0', ...FAST, '--out', out, '--json');
    assert.equal(trained.code, 0, trained.stderr);
    const file = JSON.parse(readFileSync(out, 'utf8'));
    assert.equal(file.privacy.epsilon, 'Infinity');
    assert.equal(file.privacy.guarantee, 'none');
    const verified = JSON.parse((await run('verify', out, '--json')).stdout);
    assert.equal(verified.holds, true);
    assert.equal(verified.verified.epsilon, 'Infinity');
    for (const extra of [['--method', 'dpgd', '--steps', '5'], ['--method', 'output', '--regularization', '0.1']]) {
      const other = JSON.parse((await run('train', '--data', data, '--schema', schema, '--noise-multiplier', '0', ...extra, '--json')).stdout);
      assert.equal(other.privacy.epsilon, 'Infinity', extra.join(' '));
      assert.equal(other.model.privacy.guarantee, 'none', extra.join(' '));
    }
    // One-vs-rest: one block for the whole release.
    const classes = join(dir, 'classes.schema.json');
    writeFileSync(classes, JSON.stringify({ ...SCHEMA, columns: [SCHEMA.columns[0], SCHEMA.columns[1], { name: 'label', type: 'label', classes: ['yes', 'no'] }] }));
    const ovrOut = join(dir, 'ovr.json');
    const ovr = await run('train', '--data', data, '--schema', classes, '--method', 'dpgd', '--steps', '5', '--noise-multiplier', '0', '--out', ovrOut, '--json');
    assert.equal(ovr.code, 0, ovr.stderr);
    const ovrFile = JSON.parse(readFileSync(ovrOut, 'utf8'));
    assert.equal(ovrFile.format, 'dpfit-one-vs-rest-model/1');
    assert.equal(ovrFile.privacy.epsilon, 'Infinity');
    assert.equal(ovrFile.privacy.guarantee, 'none');
    assert.ok(ovrFile.models.every((m: Record<string, unknown>) => m.privacy === undefined));
    assert.equal((await run('verify', ovrOut)).code, 0);
    // --tune never runs without noise: an explicit multiplier is refused.
    const tuned = await run('train', '--data', data, '--schema', schema, '--epsilon', '1', '--noise-multiplier', '0', '--tune', '2', '--validation', data);
    assert.equal(tuned.code, 2);
    assert.match(tuned.stderr, /--noise-multiplier/);
  });

  it('--tune with --validation that overlaps the training data: guarantee none (same file, same content, shared rows)', async () => {
    const { dir, data, schema, lines } = fixture();
    const copy = join(dir, 'copy.csv');
    writeFileSync(copy, readFileSync(data));
    const some = join(dir, 'some-rows.csv');
    // 50 training rows among fresh ones, in another order and with another header spacing: caught row by row.
    const fresh = fixture().lines.slice(1, 101);
    writeFileSync(some, `${['age,hours,label', ...fresh, ...lines.slice(200, 250)].join('\n')}\n`);
    const disjoint = join(dir, 'disjoint.csv');
    const rng = seededRng(99);
    const rows = ['age,hours,label'];
    // Training values are whole numbers; these are not: only the rows 40 + 4.938, 40 - 7.037 (3 of
    // 100) come within the schema's resolution (0.08 of age and of hours) of a whole-number pair,
    // below the 5 % of shared rows that makes the data not disjoint.
    for (let i = 0; i < 100; i++) rows.push(`${40 + ((i % 7) + 1) * 1.234567},${40 - ((i % 5) + 1) * 2.345671},${rng.nextDouble() < 0.5 ? 'yes' : 'no'}`);
    writeFileSync(disjoint, `${rows.join('\n')}\n`);
    const tune = (validation: string, out: string) =>
      run('train', '--data', data, '--schema', schema, '--method', 'dpgd', '--steps', '5', '--epsilon', '1', '--tune', '3', '--tune-learning-rates', '0.5,1', '--validation', validation, '--out', out, '--json');
    for (const [name, validation] of [['same', data], ['copy', copy], ['rows', some]]) {
      const out = join(dir, `${name}.json`);
      const trained = await tune(validation, out);
      assert.equal(trained.code, 0, trained.stderr);
      const result = JSON.parse(trained.stdout);
      assert.equal(result.privacy.guarantee, 'none', name);
      assert.ok(result.privacy.warnings.some((w: string) => /not disjoint/.test(w)), name);
      assert.doesNotMatch(JSON.stringify(result), /overlappingRows|validationOverlap/, `${name}: no overlap count in the release`);
      assert.ok(result.privacy.warnings.every((w: string) => !/\b50\b/.test(w)), `${name}: no overlap count in the warnings`);
      if (result.model !== null) assert.equal(JSON.parse(readFileSync(out, 'utf8')).privacy.guarantee, 'none');
    }
    const clean = JSON.parse((await tune(disjoint, join(dir, 'clean.json'))).stdout);
    assert.equal(clean.privacy.guarantee, 'proven');
  });
});
