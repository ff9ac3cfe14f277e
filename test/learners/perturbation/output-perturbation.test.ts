import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { gaussianCompositionEpsilon } from '../../../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { solveSpd } from '../../../src/math/linear-algebra.js';
import { sampleGaussian } from '../../../src/random/continuous.js';
import { seededRng } from '../../../src/random/rng.js';
import { trainOutputPerturbation } from '../../../src/learners/perturbation/output-perturbation.js';
import { sgdOutputSensitivity, trainOutputPerturbationSgd } from '../../../src/learners/perturbation/output-perturbation-sgd.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';

function distance(a: readonly number[], b: readonly number[]): number {
  return Math.sqrt(a.reduce((s, v, j) => s + (v - b[j]) ** 2, 0));
}

/** A copy of data with row i replaced by x (norm <= 1) and label y. */
function replaceRow(data: { x: Float64Array; y: Float64Array; n: number; d: number }, i: number, x: number[], y: number) {
  const copy = { x: data.x.slice(), y: data.y.slice(), n: data.n, d: data.d };
  copy.x.set(x, i * data.d);
  copy.y[i] = y;
  return copy;
}

describe('output perturbation of the ERM minimiser (Chaudhuri et al. 2011)', () => {
  it('without noise returns the ridge minimiser (X^T X / n + lambda I)^{-1} X^T y / n (closed form, no clipping active)', () => {
    const rng = seededRng(3);
    const n = 60;
    const d = 4;
    const x = new Float64Array(n * d);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < d; j++) x[i * d + j] = sampleGaussian(rng) / 3;
      y[i] = x[i * d] - 2 * x[i * d + 1] + 0.1 * sampleGaussian(rng);
    }
    const lambda = 0.05;
    const a = new Float64Array(d * d);
    const b = new Float64Array(d);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < d; j++) {
        b[j] += (x[i * d + j] * y[i]) / n;
        for (let k = 0; k < d; k++) a[j * d + k] += (x[i * d + j] * x[i * d + k]) / n;
      }
    }
    for (let j = 0; j < d; j++) a[j * d + j] += lambda;
    const expected = solveSpd(a, d, b);
    // clipNorm 1e6 exceeds every |residual| ||x|| here, so the clipped-gradient loss is the squared loss.
    const result = trainOutputPerturbation({ x, y, n, d }, { loss: 'squared', regularization: lambda, clipNorm: 1e6, noiseMultiplier: 0, delta: 1e-5 });
    for (let j = 0; j < d; j++) assert.ok(Math.abs(result.model.theta[j] - expected[j]) < 1e-9, `theta[${j}]`);
    assert.equal(result.privacy.epsilon, Infinity);
  });

  it('the minimisers on replace-one neighbours are within the sensitivity 2L/(n lambda) + 2 tau/lambda (logistic, R = 1)', () => {
    const rng = seededRng(11);
    for (let trial = 0; trial < 10; trial++) {
      const data = makeLogisticData(40, 3, 100 + trial);
      const lambda = 0.01 + 0.2 * rng.nextDouble();
      const options = { regularization: lambda, rowNormBound: 1, noiseMultiplier: 0, delta: 1e-5 };
      const base = trainOutputPerturbation(data, options);
      // An adversarial replacement: a unit row against the current model's direction, flipped label.
      const theta = base.model.theta;
      const norm = Math.hypot(...theta) || 1;
      const i = trial % data.n;
      const neighbour = replaceRow(data, i, theta.map((t) => -t / norm), data.y[i] === 1 ? 0 : 1);
      const other = trainOutputPerturbation(neighbour, options);
      const bound = (2 * 1) / (data.n * lambda) + (2 * (1e-6 / data.n)) / lambda;
      const gap = distance(base.model.theta, other.model.theta);
      assert.ok(gap <= bound, `trial ${trial}: ${gap} > ${bound}`);
      assert.ok(gap > 0, `trial ${trial}: the replacement should move the minimiser`);
    }
  });

  it('calibrates the Gaussian noise exactly: the event re-accounted gives epsilon <= target, and the noise has the reported std', () => {
    const data = makeLogisticData(200, 3, 7);
    for (const epsilon of [0.1, 1, 8]) {
      const result = trainOutputPerturbation(data, { regularization: 0.1, rowNormBound: 1, epsilon, delta: 1e-5, rng: seededRng(1) });
      const event = parseEvent(result.privacy.event);
      assert.equal(event.kind, 'gaussian');
      const exact = gaussianCompositionEpsilon(event, 1e-5);
      assert.ok(exact !== undefined && exact.epsilon <= epsilon, `exact ${exact?.epsilon} > ${epsilon}`);
      // Tight: the grid and the integer noise cost < 1e-4 of epsilon (module comment of mechanisms/grid-noise.ts).
      assert.ok(exact.epsilon > epsilon * (1 - 1e-3), `calibration should be tight: ${exact.epsilon}`);
      assert.ok(rdpEpsilon(event, 1e-5).epsilon >= exact.epsilon);
      assert.equal(result.privacy.neighboringRelation, 'replaceOne');
      const sensitivity = result.diagnostics.sensitivity as number;
      assert.ok(sensitivity >= 2 / (200 * 0.1));
      // The noise is the calibrated multiplier times the sensitivity, rounded up to whole grid steps (at most 1e-4 more).
      const requested = result.diagnostics.noiseMultiplier * sensitivity;
      assert.ok(result.diagnostics.noiseStd >= requested && result.diagnostics.noiseStd <= requested * (1 + 1e-3), `${result.diagnostics.noiseStd} vs ${requested}`);
      assert.ok(result.privacy.granularity !== undefined && result.model.theta.every((v) => Number.isInteger(v / (result.privacy.granularity as number))));
    }
    // The released point minus the exact minimiser is N(0, noiseStd^2 I): 300 draws x 3 coordinates.
    const exact = trainOutputPerturbation(data, { regularization: 0.1, rowNormBound: 1, noiseMultiplier: 0, delta: 1e-5 }).model.theta;
    const rng = seededRng(5);
    let sum = 0;
    let sumSquares = 0;
    let std = 0;
    for (let r = 0; r < 300; r++) {
      const result = trainOutputPerturbation(data, { regularization: 0.1, rowNormBound: 1, epsilon: 1, delta: 1e-5, rng });
      std = result.diagnostics.noiseStd;
      for (let j = 0; j < 3; j++) {
        const e = (result.model.theta[j] - exact[j]) / std;
        sum += e;
        sumSquares += e * e;
      }
    }
    // 900 standard normals: mean within 4/sqrt(900), variance within 4 sqrt(2/900) of 1.
    assert.ok(Math.abs(sum / 900) < 4 / 30);
    assert.ok(Math.abs(sumSquares / 900 - 1) < 4 * Math.sqrt(2 / 900));
  });

  it('refuses what the theorem does not cover, naming the condition', () => {
    const data = makeLogisticData(30, 2, 1);
    assert.throws(() => trainOutputPerturbation(data, { regularization: 0, rowNormBound: 1, epsilon: 1, delta: 1e-5 }), InvalidParameterError);
    assert.throws(() => trainOutputPerturbation(data, { regularization: 0.1, epsilon: 1, delta: 1e-5 }), /rowNormBound/);
    assert.throws(() => trainOutputPerturbation(data, { regularization: 0.1, rowNormBound: 0.1, epsilon: 1, delta: 1e-5 }), /every row norm/);
    assert.throws(() => trainOutputPerturbation({ ...data, y: data.y.map((v) => v * 3) }, { loss: 'squared', regularization: 0.1, rowNormBound: 1, epsilon: 1, delta: 1e-5 }), /clipNorm/);
    assert.throws(() => trainOutputPerturbation(data, { regularization: 0.1, rowNormBound: 1, epsilon: 1, delta: 2 }), /delta/);
    // A tolerance below the gradient test's floating-point floor (public: n is public here) is refused before training.
    const big = makeLogisticData(500, 30, 2);
    assert.throws(
      () => trainOutputPerturbation(big, { regularization: 1e-4, rowNormBound: 1, epsilon: 1, delta: 1e-5, gradTolerance: 1e-18 }),
      (error: unknown) => error instanceof InvalidParameterError && error.param === 'gradTolerance' && /floor/.test(error.message),
    );
  });

  it('an optimiser cap no longer releases nothing: the certified fallback reaches the tolerance', () => {
    const big = makeLogisticData(500, 30, 2);
    const options = { regularization: 1e-4, rowNormBound: 1, noiseMultiplier: 0, delta: 1e-5 };
    const capped = trainOutputPerturbation(big, { ...options, maxIterations: 1 });
    const free = trainOutputPerturbation(big, options);
    assert.ok(['checked', 'theorem'].includes(String(capped.diagnostics.certificate)));
    // Both points are within tau / lambda of the same minimiser.
    const tau = capped.diagnostics.gradTolerance as number;
    assert.ok(distance(capped.model.theta, free.model.theta) <= (2 * tau) / 1e-4, `${distance(capped.model.theta, free.model.theta)}`);
  });
});

describe('output perturbation of SGD by contraction (004 Sec. 3.2.2)', () => {
  it('the sensitivity formula: one epoch is 2 gamma L / b; many epochs sum the geometric series rho^{jm}', () => {
    const one = sgdOutputSensitivity({ lipschitz: 1, learningRate: 0.5, batchSize: 4, rho: 0.9, stepsPerEpoch: 10, epochs: 1 });
    assert.ok(Math.abs(one - 0.25) < 1e-14 && one >= 0.25);
    const many = sgdOutputSensitivity({ lipschitz: 1, learningRate: 0.5, batchSize: 4, rho: 0.9, stepsPerEpoch: 10, epochs: 3 });
    const r = 0.9 ** 10;
    assert.ok(Math.abs(many - 0.25 * (1 + r + r * r)) < 1e-14);
    // rho^m close to 1 is summed term by term: no cancellation.
    const slow = sgdOutputSensitivity({ lipschitz: 1, learningRate: 1, batchSize: 1, rho: 1 - 1e-15, stepsPerEpoch: 1, epochs: 5 });
    assert.ok(Math.abs(slow - 10) < 1e-12 && slow >= 10 * (1 - 1e-14));
  });

  it('two noiseless runs on replace-one neighbours with the same permutations end within the sensitivity', () => {
    for (let trial = 0; trial < 8; trial++) {
      const data = makeLogisticData(50, 3, 200 + trial);
      const i = (7 * trial) % data.n;
      const neighbour = replaceRow(data, i, [1, 0, 0], data.y[i] === 1 ? 0 : 1);
      const options = { regularization: 0.5, rowNormBound: 1, epochs: 1 + (trial % 4), batchSize: 1 + (trial % 3), learningRate: 1.2, noiseMultiplier: 0, delta: 1e-5 };
      const a = trainOutputPerturbationSgd(data, { ...options, rng: seededRng(trial) });
      const b = trainOutputPerturbationSgd(neighbour, { ...options, rng: seededRng(trial) });
      const bound = a.diagnostics.sensitivity as number;
      assert.ok(distance(a.model.theta, b.model.theta) <= bound, `trial ${trial}`);
    }
  });

  it('refuses a step size beyond 2/(beta + 2 mu) and calibrates to the target', () => {
    const data = makeLogisticData(50, 3, 3);
    // logistic, R = 1: beta = 1/4; mu = 0.5 -> beta' = 0.75, bound 2 / 1.25 = 1.6.
    assert.throws(() => trainOutputPerturbationSgd(data, { regularization: 0.5, rowNormBound: 1, epochs: 1, learningRate: 1.7, epsilon: 1, delta: 1e-5 }), /learningRate/);
    assert.throws(() => trainOutputPerturbationSgd(data, { regularization: 0.5, epochs: 1, epsilon: 1, delta: 1e-5 }), /rowNormBound/);
    assert.throws(() => trainOutputPerturbationSgd(data, { regularization: 0.5, rowNormBound: 1, epochs: 1, batchSize: 51, epsilon: 1, delta: 1e-5 }), /batchSize/);
    const result = trainOutputPerturbationSgd(data, { regularization: 0.5, rowNormBound: 1, epochs: 3, batchSize: 5, epsilon: 1, delta: 1e-5, rng: seededRng(2) });
    const exact = gaussianCompositionEpsilon(parseEvent(result.privacy.event), 1e-5);
    assert.ok(exact !== undefined && exact.epsilon <= 1);
    assert.equal(result.diagnostics.learningRate, 1 / 0.75);
  });
});
