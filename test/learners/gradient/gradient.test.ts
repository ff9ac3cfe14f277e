import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gaussianCompositionEpsilon } from '../../../src/accounting/gaussian/gaussian-composition.js';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { trainDpGd } from '../../../src/learners/gradient/dp-gd.js';
import { createClippedGradientPool, shareGlmData } from '../../../src/learners/glm/parallel/parallel-clipped-sum.js';
import { trainDpSgd } from '../../../src/learners/gradient/dp-sgd.js';
import { glmObjective } from '../../../src/learners/glm/objective.js';
import { logisticLoss } from '../../../src/learners/glm/losses/logistic.js';
import { toSignedLabels } from '../../../src/learners/glm/constants.js';
import { evaluate } from '../../../src/learners/models/model.js';
import { lbfgs } from '../../../src/math/lbfgs.js';
import { seededRng } from '../../../src/random/rng.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';


test('DP-GD with zero noise and no clipping reaches the non-private optimum (to 1e-6 in loss)', () => {
  const data = makeLogisticData(300, 4, 1);
  const reg = 0.05;
  // Non-private optimum of (1/n) sum l + reg/2 |theta|^2 by L-BFGS on n times that objective.
  const signed = { ...data, y: toSignedLabels(data.y) };
  const objective = glmObjective(logisticLoss, signed, { regularization: reg * data.n });
  const optimum = lbfgs(objective, new Float64Array(data.d), { gradTolerance: 1e-10 });
  assert.ok(optimum.converged);
  const result = trainDpGd(data, { noiseMultiplier: 0, delta: 1e-5, clipNorm: Infinity, steps: 3000, learningRate: 1, regularization: reg, rng: seededRng(2) });
  const value = objective(Float64Array.from(result.model.theta), new Float64Array(data.d)) / data.n;
  assert.ok(Math.abs(value - optimum.value / data.n) < 1e-6, `DP-GD ${value} vs L-BFGS ${optimum.value / data.n}`);
  assert.equal(result.privacy.epsilon, Infinity);
  assert.match(result.privacy.warnings.join(' '), /NOT private/);
});

test('DP-GD calibrated for a target: its event re-accounts to at most the target', () => {
  const data = makeLogisticData(2000, 4, 3);
  for (const epsilon of [0.5, 2]) {
    const result = trainDpGd(data, { epsilon, delta: 1e-5, clipNorm: 1, steps: 50, learningRate: 1, rng: seededRng(4) });
    const event = parseEvent(result.privacy.event);
    const exact = gaussianCompositionEpsilon(event, 1e-5);
    assert.ok(exact !== undefined && exact.epsilon <= epsilon, `exact ${exact?.epsilon}`);
    assert.ok(result.privacy.epsilon <= epsilon);
    assert.equal(result.privacy.neighboringRelation, 'replaceOne');
    // RDP is valid but looser; basic composition (002 Claim 2.3) needs far more noise.
    assert.ok(rdpEpsilon(event, 1e-5).epsilon >= exact.epsilon);
    if (epsilon <= 1) assert.ok((result.privacy.comparisons?.basicComposition?.noiseMultiplier ?? 0) > 3 * result.diagnostics.noiseMultiplier);
    assert.ok((result.privacy.comparisons?.rdpCalibration?.noiseMultiplier ?? 0) > result.diagnostics.noiseMultiplier);
  }
});

test('DP-SGD: true Poisson batches, calibrated noise, reproducible with a seed, useful accuracy', () => {
  const data = makeLogisticData(4000, 4, 5);
  const options = { epsilon: 1, delta: 1e-5, clipNorm: 1, batchSize: 200, epochs: 5, learningRate: 2, rng: seededRng(6) } as const;
  const a = trainDpSgd(data, options);
  const b = trainDpSgd(data, { ...options, rng: seededRng(6) });
  assert.deepEqual(a.model.theta, b.model.theta);
  assert.ok(a.privacy.epsilon <= 1);
  assert.ok(rdpEpsilon(parseEvent(a.privacy.event), 1e-5).epsilon <= 1);
  assert.equal(a.privacy.neighboringRelation, 'addOrRemoveOne');
  assert.match(a.privacy.randomness, /seeded/);
  assert.ok(a.privacy.warnings.some((w) => /seeded/.test(w)));
  const metrics = evaluate(a.model, data);
  assert.ok((metrics.accuracy ?? 0) > 0.7, `accuracy ${metrics.accuracy}`);
  // Empty batches are allowed (q tiny): the run still completes.
  const tiny = trainDpSgd(makeLogisticData(50, 2, 7), { noiseMultiplier: 1, delta: 1e-5, clipNorm: 1, samplingProbability: 0.01, steps: 100, learningRate: 0.1, rng: seededRng(8) });
  assert.ok((tiny.diagnostics.emptyBatches as number) > 0);
});

test('degenerate inputs get clear errors naming the problem', () => {
  const data = makeLogisticData(100, 3, 9);
  const empty = { x: new Float64Array(0), y: new Float64Array(0), n: 0, d: 3 };
  const notClasses = { ...data, y: new Float64Array(100).fill(2) };
  const cases: [() => unknown, string][] = [
    [() => trainDpGd(empty, { epsilon: 1, delta: 1e-5, clipNorm: 1, steps: 10, learningRate: 1 }), 'data.n'],
    [() => trainDpGd(notClasses, { epsilon: 1, delta: 1e-5, clipNorm: 1, steps: 10, learningRate: 1 }), 'labels'],
    [() => trainDpGd(data, { epsilon: -1, delta: 1e-5, clipNorm: 1, steps: 10, learningRate: 1 }), 'epsilon'],
    [() => trainDpGd(data, { epsilon: 1, delta: 1, clipNorm: 1, steps: 10, learningRate: 1 }), 'delta'],
    [() => trainDpSgd(data, { epsilon: 1, delta: 1e-5, clipNorm: 1, batchSize: 500, steps: 10, learningRate: 1 }), 'batchSize'],
    [() => trainDpSgd(data, { epsilon: 1, delta: 1e-5, clipNorm: 0, batchSize: 10, steps: 10, learningRate: 1 }), 'clipNorm'],
  ];
  for (const [fn, param] of cases) {
    assert.throws(fn, (e: unknown) => e instanceof InvalidParameterError && e.param === param, `expected an error naming ${param}`);
  }
  // Data holding one class train, with the event of two-class data (a refusal that one record decides would leak that record).
  const oneClass = trainDpGd({ ...data, y: new Float64Array(100).fill(1) }, { epsilon: 1, delta: 1e-5, clipNorm: 1, steps: 10, learningRate: 1 });
  assert.deepEqual(oneClass.privacy.event, trainDpGd(data, { epsilon: 1, delta: 1e-5, clipNorm: 1, steps: 10, learningRate: 1 }).privacy.event);
});

test('DP-GD on the worker pool gives the same model bit for bit as the serial sums (same seed)', async () => {
  const data = makeLogisticData(70_000, 5, 3);
  const options = { clipNorm: 0.5, steps: 3, learningRate: 1, epsilon: 1, delta: 1e-5 };
  const serial = trainDpGd(data, { ...options, rng: seededRng(1) });
  const pool = await createClippedGradientPool({ threads: 2 });
  try {
    const parallel = trainDpGd(data, { ...options, rng: seededRng(1), gradientSummer: { prepare: shareGlmData, sum: pool.sumClippedGradients.bind(pool) } });
    assert.deepEqual(parallel.model.theta, serial.model.theta);
    assert.equal(parallel.diagnostics.clippedFraction, serial.diagnostics.clippedFraction);
  } finally {
    await pool.close();
  }
});
