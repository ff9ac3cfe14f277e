/**
 * `verify` must not vouch for a claim that does not hold: files the old `verifyModel` accepted
 * and that do not hold.
 *   - a doubled grid: exactly where the event implies the grid (objective perturbation's b, AMP's
 *     objective grid: noiseStd / gridNoiseStd), through theta where theta is the grid value
 *     (output perturbation, AMP's output grid);
 *   - theta moved off the stated grid by one ulp and by half a grid step (output perturbation, AMP);
 *   - a federated model with one node's block removed (its summary and node list still name it).
 * Every edit passed verify before (`holds: true`); now `holds: false`, and `dpfit verify` exits 4
 * with one line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { InMemoryLedger } from '../../../src/accounting/budget/rule.js';
import { federate } from '../../../src/federated/coordinator.js';
import { inProcessClient } from '../../../src/federated/in-process.js';
import { FederatedNode } from '../../../src/federated/node.js';
import { toDpfitJson } from '../../../src/json-numbers.js';
import { train, type TrainOptions } from '../../../src/learners/train.js';
import { verifyModel } from '../../../src/learners/verification/verify-model.js';
import { seededRng } from '../../../src/random/rng.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';
import { runCli } from '../../helpers/people.js';
import { nodeRows } from '../../helpers/node-rows.js';

// Any JSON model file, edited freely.
type ModelJson = any;

/** The next double above x (one ulp). */
function nextUp(x: number): number {
  const bits = new BigInt64Array(Float64Array.of(x).buffer);
  if (x === 0) return Number.MIN_VALUE;
  bits[0] += x > 0 ? 1n : -1n;
  return new Float64Array(bits.buffer)[0];
}

const data = makeLogisticData(300, 4, 41);

/** A model file as `dpfit train --out` writes it (seeded: the same file every run). */
function modelFile(options: TrainOptions): ModelJson {
  return JSON.parse(toDpfitJson(train(data, options).model));
}

const edit = (file: ModelJson, change: (f: ModelJson) => void): ModelJson => {
  const copy = structuredClone(file);
  change(copy);
  return copy;
};

/** Asserts the file verifies as written and that the edit does not, for the expected reason. */
function refused(file: ModelJson, change: (f: ModelJson) => void, problem: RegExp, what: string): void {
  assert.equal(verifyModel(file).holds, true, `${what}: the file as written holds (${verifyModel(file).problems.join(' | ')})`);
  const result = verifyModel(edit(file, change));
  assert.equal(result.holds, false, `${what}: the edit must not hold`);
  assert.ok(result.problems.some((p) => problem.test(p)), `${what}: ${result.problems.join(' | ')}`);
}

const common = { epsilon: 1, delta: 1e-5, rng: seededRng(5) };
const output = modelFile({ method: 'output', ...common, regularization: 0.05, rowNormBound: 1 });
const amp = modelFile({ method: 'amp', ...common, clipNorm: 1 });
const objpert = modelFile({ method: 'objpert', ...common, acceptNoGuarantee: true });

describe('verify: the stated grid', () => {
  it('a doubled grid: objective perturbation and AMP against the grid their event implies, output perturbation and AMP through theta', () => {
    refused(objpert, (f) => void (f.privacy.granularity *= 2), /privacy\.granularity = .* is not the grid of the objective noise b the event implies/, 'objpert, doubled granularity');
    refused(amp, (f) => void (f.privacy.granularities.objective *= 2), /privacy\.granularities\.objective = .* is not the grid of the objective noise b/, 'amp, doubled objective grid');
    // Gaussian events do not fix their grid: theta does, unless every coordinate is an even number of steps (2^-d of the time; not in these files).
    for (const [name, file, key] of [['output', output, 'granularity'], ['amp', amp, 'output']] as const) {
      const g = key === 'output' ? file.privacy.granularities.output : file.privacy.granularity;
      assert.ok(file.theta.some((t: number) => (t / g) % 2 !== 0), `${name}: some coordinate is an odd number of steps`);
      refused(file, (f) => {
        f.privacy.granularity *= 2;
        if (key === 'output') f.privacy.granularities.output *= 2;
      }, /theta\[\d\] = .* is not on the stated grid/, `${name}, doubled grid`);
    }
    // AMP's headline grid is its output grid.
    refused(amp, (f) => void (f.privacy.granularity *= 2), /privacy\.granularity = .* is not privacy\.granularities\.output/, 'amp, granularity apart from the output grid');
  });

  it('theta one ulp or half a grid step off the stated grid: output perturbation and AMP', () => {
    for (const [name, file, g] of [['output', output, output.privacy.granularity], ['amp', amp, amp.privacy.granularities.output]] as const) {
      refused(file, (f) => void (f.theta[1] = nextUp(f.theta[1])), /theta\[1\] = .* is not on the stated grid/, `${name}, one ulp`);
      refused(file, (f) => void (f.theta[0] += g / 2), /theta\[0\] = .* is not on the stated grid/, `${name}, half a step`);
    }
  });

  it('dpfit verify: exit 4, one line, for a doubled grid and an off-grid theta', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dpfit-verify-grid-'));
    const cases: [string, ModelJson][] = [
      ['objpert-doubled.json', edit(objpert, (f) => void (f.privacy.granularity *= 2))],
      ['amp-ulp.json', edit(amp, (f) => void (f.theta[2] = nextUp(f.theta[2])))],
    ];
    for (const [name, file] of cases) {
      const path = join(dir, name);
      writeFileSync(path, JSON.stringify(file));
      const { code, stderr } = await runCli('verify', path);
      assert.equal(code, 4, `${name}: ${stderr}`);
      assert.equal(stderr.trim().split('\n').length, 1, stderr);
      assert.match(stderr, /the privacy claim does not hold: .*(grid)/);
    }
  });
});


describe('verify: a federated model carries every node its description names', () => {
  it('one node\'s block removed: refused by the node list and by the summary (files written before the list too); dpfit verify exits 4', async () => {
    const clients = ['a', 'b', 'c'].map((name, i) => inProcessClient(new FederatedNode(nodeRows(2000, 60 + i), new InMemoryLedger({ epsilon: 2, delta: 1e-5 }), { name, rng: seededRng(70 + i) })));
    const result = await federate(clients, { method: 'dpgd', steps: 5, regularization: 0.03, clipNorm: 0.5, epsilon: 1, delta: 1e-6 });
    assert.equal(result.status, 'trained', result.message);
    const file: ModelJson = JSON.parse(toDpfitJson(result.model));
    assert.deepEqual(file.privacy.nodeNames, ['a', 'b', 'c']);
    assert.equal(verifyModel(file).holds, true, verifyModel(file).problems.join(' | '));

    const removed = edit(file, (f) => void f.privacy.nodes.splice(1, 1));
    const verdict = verifyModel(removed);
    assert.equal(verdict.holds, false);
    assert.ok(verdict.problems.some((p) => /^privacy\.nodeNames lists node b, but privacy\.nodes has no block for it/.test(p)), verdict.problems.join(' | '));
    assert.ok(verdict.problems.some((p) => /^privacy\.summary does not describe privacy\.nodes/.test(p)), verdict.problems.join(' | '));
    // A file without the node list (as written before it existed): its summary still names b.
    const older = edit(removed, (f) => void delete f.privacy.nodeNames);
    assert.deepEqual(verifyModel(edit(file, (f) => void delete f.privacy.nodeNames)).problems, [], 'the complete older file holds');
    assert.equal(verifyModel(older).holds, false);
    // Removed from the list too, but the summary still names it; and an edited summary alone.
    assert.equal(verifyModel(edit(removed, (f) => void f.privacy.nodeNames.splice(1, 1))).holds, false);
    assert.equal(verifyModel(edit(file, (f) => void (f.privacy.summary = f.privacy.summary.replace(/; b: [^;]*/, '')))).holds, false);

    const path = join(mkdtempSync(join(tmpdir(), 'dpfit-verify-nodes-')), 'federated.json');
    writeFileSync(path, JSON.stringify(removed));
    const cli = await runCli('verify', path);
    assert.equal(cli.code, 4, cli.stderr);
    assert.equal(cli.stderr.trim().split('\n').length, 1, cli.stderr);
    assert.match(cli.stderr, /privacy\.nodeNames lists node b, but privacy\.nodes has no block for it/);
  });
});
