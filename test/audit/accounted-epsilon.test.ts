/**
 * The epsilon an audit holds a run to (`src/audit/accounted-epsilon.ts`): the smaller of the
 * learner's report and the PLD accountant's epsilon of the same event, never below what the
 * mechanism provably spends (the independent optimistic composition of
 * `subsampled-gaussian-bound.ts`, the audit's own code, not the accountants').
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEvent } from '../../src/accounting/events/json.js';
import { pldEpsilon } from '../../src/accounting/pld/accountant.js';
import { accountedEpsilon } from '../../src/audit/accounted-epsilon.js';
import { subsampledGaussianEpsilonLower } from '../../src/audit/bounds/subsampled-gaussian-bound.js';
import { trainDpGd } from '../../src/learners/gradient/dp-gd.js';
import { trainDpSgd } from '../../src/learners/gradient/dp-sgd.js';
import { seededRng } from '../../src/random/rng.js';

function data(n: number, d: number) {
  const rng = seededRng(5);
  const x = new Float64Array(n * d);
  for (let i = 0; i < x.length; i++) x[i] = (rng.nextDouble() * 2 - 1) / Math.sqrt(d);
  return { x, y: Float64Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 1 : -1)), n, d };
}

test('DP-SGD: the audit holds the run to the PLD epsilon of its event (below the RDP report), and that is above the exact mechanism\'s optimistic epsilon', () => {
  for (const epsilon of [2, 4]) {
    const run = trainDpSgd(data(101, 3), { loss: 'squared', clipNorm: 1, learningRate: 0.5, epsilon, delta: 1e-5, steps: 20, samplingProbability: 10 / 101, optimizer: 'sgd', rng: seededRng(1) });
    const accounted = accountedEpsilon(run.privacy);
    const pld = pldEpsilon(parseEvent(run.privacy.event), 1e-5);
    assert.equal(run.privacy.accountant, 'rdp');
    assert.ok(accounted.epsilon < run.privacy.epsilon, `${accounted.epsilon} < RDP's ${run.privacy.epsilon}`);
    assert.equal(accounted.epsilon, pld.epsilon);
    assert.equal(accounted.accountant, pld.accountant);
    // The run's mechanism along one coordinate: shift C = 1 with probability q, noise std z C.
    const z = run.diagnostics.noiseMultiplier as number;
    const lower = subsampledGaussianEpsilonLower({ shift: 1, rate: 10 / 101, std: z }, 20, 1e-5);
    assert.ok(lower <= accounted.epsilon && lower > 0.97 * accounted.epsilon, `optimistic ${lower} <= accounted ${accounted.epsilon}, within 3 %`);
  }
});

test('DP-GD: the report already gives the exact Gaussian composition; the audit keeps it unless the PLD is smaller', () => {
  const run = trainDpGd(data(50, 3), { loss: 'squared', clipNorm: 1, learningRate: 0.5, epsilon: 2, delta: 1e-5, steps: 10, rng: seededRng(2) });
  const accounted = accountedEpsilon(run.privacy);
  assert.ok(accounted.epsilon <= run.privacy.epsilon);
  assert.ok(accounted.epsilon >= 0.999 * run.privacy.epsilon, `${accounted.epsilon} vs ${run.privacy.epsilon}`);
});
