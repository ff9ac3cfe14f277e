/**
 * The one-run audit (`src/audit/one-run.ts`, `one-run-bound.ts`; Steinke, Nasr & Jagielski 2023):
 * the p-value and epsilon bound against an independent mpmath evaluation of the theorem's
 * right-hand side (binomial tails and bands summed term by term at 30 digits, bisection), and a
 * one-run audit of a seeded DP-SGD run on loaded CSV data that finds a positive lower bound below
 * the accountant's epsilon and releases nothing but the audit's numbers.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oneRunAudit } from '../../src/audit/one-run.js';
import { oneRunEpsilonLower, oneRunPValue } from '../../src/audit/bounds/one-run-bound.js';
import { loadDataset, readSchemaFile } from '../../src/data/node/read.js';
import { seededRng } from '../../src/random/rng.js';
import { assertClose } from '../helpers/assert-close.js';
import { peopleFixture } from '../helpers/people.js';

test('the one-run bound matches mpmath (m, r, v, delta, confidence -> epsilon_lower; p-value at epsilon 1)', () => {
  const cases: [number, number, number, number, number, number, number][] = [
    [1000, 100, 75, 1e-5, 0.95, 0.699466813163407, 0.384505131974977],
    [1000, 1000, 600, 1e-5, 0.95, 0.297226953718775, 1],
    [1000, 200, 200, 0, 0.95, 4.193629987171, 6.17213680814131e-28],
    [100, 10, 10, 1e-5, 0.95, 1.04823705912912, 0.0440611861135554],
    [1000, 100, 60, 1e-5, 0.95, 0.0495486606448466, 0.998458763483245],
  ];
  for (const [m, r, v, delta, confidence, epsilon, pAtOne] of cases) {
    const e = oneRunEpsilonLower(m, r, v, delta, confidence);
    assert.ok(e <= epsilon && e > epsilon * (1 - 1e-7), `(${m}, ${r}, ${v}): ${e} vs ${epsilon}`);
    const p = oneRunPValue(m, r, v, 1, delta);
    assert.ok(p >= pAtOne * (1 - 1e-12), `p-value (${m}, ${r}, ${v}) at 1: ${p} vs ${pAtOne}`);
    assertClose(p, pAtOne, 1e-8);
  }
  assert.equal(oneRunEpsilonLower(1000, 100, 50, 1e-5, 0.95), 0); // a coin flip's accuracy proves nothing
});

test('a one-run audit of DP-SGD on loaded data: a positive bound below the accountant, the audit numbers only', { timeout: 120_000 }, async () => {
  const fixture = peopleFixture('dpfit-one-run-', 3000, 5);
  const prepared = await loadDataset(fixture.data, await readSchemaFile(fixture.schema), { droppedRows: 'zeroRows' });
  const result = oneRunAudit(prepared, { method: 'dpsgd', epsilon: 8, delta: 1e-5, canaries: 400, threatModel: 'accountant', rng: seededRng(8), training: { epochs: 10, batchSize: 300 } });
  assert.deepEqual(Object.keys(result).sort(), ['canaries', 'confidence', 'correct', 'delta', 'epsilonAccounted', 'epsilonClaimed', 'epsilonLower', 'guesses', 'method', 'threatModel', 'violated']);
  assert.equal(result.guesses, 80);
  assert.ok(result.epsilonLower > 0 && result.epsilonLower < result.epsilonAccounted, JSON.stringify(result));
  assert.ok(result.correct > 40, JSON.stringify(result));
  const gd = oneRunAudit(prepared, { method: 'dpgd', epsilon: 8, delta: 1e-5, canaries: 200, rng: seededRng(9), claimedEpsilon: 0.1, training: { steps: 30 } });
  assert.ok(gd.violated && gd.epsilonLower > 0.1 && gd.epsilonLower < gd.epsilonAccounted, JSON.stringify(gd));
  assert.throws(() => oneRunAudit(prepared, { method: 'dpsgd', epsilon: 8, delta: 1e-5, canaries: 100, guesses: 7 }), /guesses.*even/);
  assert.throws(() => oneRunAudit(prepared, { method: 'dpsgd', epsilon: 8, delta: 1e-5, canaries: 100, training: { epsilon: 1 } }), /training\.epsilon/);
  assert.throws(() => oneRunAudit(prepared, { method: 'dpsgd', epsilon: 8, delta: 1e-5, canaries: 100, threatModel: 'accountant', training: { optimizer: 'adam' } }), /optimizer/);
});

test('dpfit audit --one-run: the JSON numbers, exit 4 on a refuted claim, flags of the other mode refused', { timeout: 120_000 }, async () => {
  const { runCli } = await import('../helpers/people.js');
  const fixture = peopleFixture('dpfit-one-run-cli-', 2000, 6);
  const common = ['audit', '--one-run', '--method', 'dpgd', '--epsilon', '8', '--delta', '1e-5', '--data', fixture.data, '--schema', fixture.schema, '--canaries', '200', '--steps', '30'];
  const refuted = await runCli(...common, '--claimed-epsilon', '0.01', '--json');
  assert.equal(refuted.code, 4, refuted.stderr);
  assert.equal(refuted.stderr.trim().split('\n').length, 1);
  const json = JSON.parse(refuted.stdout);
  assert.deepEqual(Object.keys(json).sort(), ['canaries', 'confidence', 'correct', 'delta', 'epsilonAccounted', 'epsilonClaimed', 'epsilonLower', 'guesses', 'method', 'oneRun', 'threatModel', 'violated']);
  assert.ok(json.violated && json.epsilonLower > 0.01 && json.guesses === 40);
  const text = await runCli(...common);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /one training with 200 canaries/);
  for (const [argv, message] of [
    [['--runs', '50'], /--runs must be absent with --one-run/],
    [['--guesses', '3'], /--guesses must be an even number/],
  ] as const) {
    const bad = await runCli(...common, ...argv);
    assert.equal(bad.code, 2, bad.stderr);
    assert.match(bad.stderr, message);
  }
  const noData = await runCli('audit', '--one-run', '--method', 'dpsgd', '--epsilon', '8', '--delta', '1e-5', '--canaries', '10');
  assert.equal(noData.code, 2);
  assert.match(noData.stderr, /--data is required/);
  const stray = await runCli('audit', '--method', 'dpsgd', '--epsilon', '8', '--delta', '1e-5', '--canaries', '10');
  assert.equal(stray.code, 2);
  assert.match(stray.stderr, /--canaries must be given only with --one-run/);
});

test('neighbour test: a one-run audit on neighbouring data differs only in the post-processed noisy numbers', { timeout: 120_000 }, async () => {
  const { assertIndistinguishable } = await import('../helpers/neighbour-diff.js');
  const { writeFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const fixture = peopleFixture('dpfit-one-run-nb-', 1500, 7);
  const schema = await readSchemaFile(fixture.schema);
  const [header, first, ...rest] = fixture.lines;
  const replaced = join(fixture.dir, 'replaced.csv');
  writeFileSync(replaced, `${[header, '79,1,yes', ...rest].join('\n')}\n`);
  const removed = join(fixture.dir, 'removed.csv');
  writeFileSync(removed, `${[header, ...rest].join('\n')}\n`);
  assert.ok(first !== '79,1,yes');
  const released = { released: ['epsilonLower', 'correct', 'violated'] };
  const audit = async (file: string, method: 'dpgd' | 'dpsgd', training: Record<string, unknown>) =>
    oneRunAudit(await loadDataset(file, schema, { droppedRows: 'zeroRows' }), { method, epsilon: 4, delta: 1e-5, canaries: 100, rng: seededRng(3), training });
  // DP-GD, replace-one: one row replaced.
  assertIndistinguishable(await audit(fixture.data, 'dpgd', { steps: 10 }), await audit(replaced, 'dpgd', { steps: 10 }), released, 'one-run audit, dpgd, a row replaced');
  // DP-SGD, add/remove-one with a declared size (the records read would be public otherwise): one row removed.
  const sgd = { datasetSize: 1500, epochs: 2, batchSize: 100 };
  assertIndistinguishable(await audit(fixture.data, 'dpsgd', sgd), await audit(removed, 'dpsgd', sgd), released, 'one-run audit, dpsgd, a row removed');
});
