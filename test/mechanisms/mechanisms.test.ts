import assert from 'node:assert/strict';
import { test } from 'node:test';
import { couplingReducedNoise } from '../../src/accounting/discrete-coupling.js';
import { gaussianDelta } from '../../src/accounting/gaussian/gaussian-profile.js';
import { relativeGaussianEpsilon } from '../../src/accounting/rdp/relative-gaussian.js';
import { CalibrationError, InvalidParameterError } from '../../src/errors.js';
import { gaussianMechanism } from '../../src/mechanisms/gaussian.js';
import { laplaceMechanism } from '../../src/mechanisms/laplace.js';
import { randomizedResponse, randomizedResponseEpsilon, randomizedResponseNoiseParameter } from '../../src/mechanisms/randomized-response.js';
import { relativeGaussianMechanism } from '../../src/mechanisms/relative-gaussian.js';
import { seededRng } from '../../src/random/rng.js';
import { assertClose } from '../helpers/assert-close.js';

/** z-score of an observed mean of n draws with known std. */
function zScore(mean: number, expected: number, std: number, n: number): number {
  return Math.abs(mean - expected) / (std / Math.sqrt(n));
}
// |z| > 5.33 has two-sided probability 1e-7 < 1e-6: the significance level of docs/design.md.
const Z_CRITICAL = 5.33;

test('Gaussian mechanism: calibrated noise, its event, and the right noise distribution', () => {
  const rng = seededRng(1);
  const n = 20000;
  const value = new Float64Array(n).fill(10);
  const result = gaussianMechanism(value, { sensitivity: 2, targetEpsilon: 1, delta: 1e-5, rng });
  // Balle & Wang's analytic multiplier at (1, 1e-5) is 3.7306316348159418 (scipy brentq); the
  // grid's rounding and integer noise add less than 1e-4 on top (mechanisms/grid-noise.ts).
  const analytic = 3.7306316348159418139;
  assert.ok(result.noiseMultiplier >= analytic && result.noiseMultiplier <= analytic * (1 + 1e-4), `${result.noiseMultiplier}`);
  assert.ok(result.noiseStd >= 2 * analytic && result.noiseStd <= 2 * analytic * (1 + 1e-4), `${result.noiseStd}`);
  const g = result.granularity as number;
  assert.deepEqual(result.event, { kind: 'gaussian', noiseMultiplier: result.noiseMultiplier, discrete: true, gridNoiseStd: result.noiseStd / g });
  assert.ok(Number.isInteger(result.noiseStd / g) && result.noiseStd / g >= 1024);
  // The accountants' multiplier (the smoothing coupling's z sqrt(1 - 64 / s^2)) still meets the target.
  assert.ok(gaussianDelta(1, couplingReducedNoise(result.event.noiseMultiplier, result.event.gridNoiseStd as number)) <= 1e-5);
  let sum = 0;
  let sumSq = 0;
  for (const v of result.value) {
    sum += v - 10;
    sumSq += (v - 10) ** 2;
  }
  assert.ok(zScore(sum / n, 0, result.noiseStd, n) < Z_CRITICAL);
  // Variance of a sample variance of normals: 2 sigma^4 / n.
  const variance = sumSq / n;
  assert.ok(Math.abs(variance - result.noiseStd ** 2) / (Math.SQRT2 * result.noiseStd ** 2 / Math.sqrt(n)) < Z_CRITICAL);
  // The input is not modified; a number in gives a number out.
  assert.equal(value[0], 10);
  assert.equal(typeof gaussianMechanism(3, { sensitivity: 1, noiseMultiplier: 1, rng }).value, 'number');
});

test('same seed, same release; explicit noise is accepted as given', () => {
  const a = gaussianMechanism([1, 2, 3], { sensitivity: 1, noiseMultiplier: 2, rng: seededRng(42) });
  const b = gaussianMechanism([1, 2, 3], { sensitivity: 1, noiseMultiplier: 2, rng: seededRng(42) });
  assert.deepEqual(a.value, b.value);
  assert.ok(a.event.noiseMultiplier >= 2 && a.event.noiseMultiplier <= 2 * (1 + 1e-4));
  // Opting out of the grid gives the requested multiplier exactly, and a continuous event.
  const c = gaussianMechanism([1, 2, 3], { sensitivity: 1, noiseMultiplier: 2, continuous: true, rng: seededRng(42) });
  assert.deepEqual(c.event, { kind: 'gaussian', noiseMultiplier: 2 });
  assert.equal(c.granularity, undefined);
});

test('discrete Gaussian and Laplace outputs lie exactly on the grid, with the rounding paid in sensitivity', () => {
  const rng = seededRng(3);
  const g = 2 ** -7; // a chosen grid must be a power of two: then every release g (k + K) is an exact double
  const result = gaussianMechanism([0.123456, 5.5], { sensitivity: 1, noiseMultiplier: 1, granularity: g, rng });
  for (const v of result.value) assert.ok(Number.isInteger(v / g), `${v}`);
  assertClose(result.sensitivity, 1 + g * Math.SQRT2, 1e-14);
  assert.ok(result.sensitivity >= 1 + g * Math.SQRT2);
  assert.equal(result.event.discrete, true);
  assert.equal(result.granularity, g);
  const laplace = laplaceMechanism([1, 2, 3], { sensitivity: 1, epsilon: 0.5, granularity: g, rng });
  for (const v of laplace.value) assert.ok(Number.isInteger(v / g), `${v}`);
  assertClose(laplace.sensitivity, 1 + 3 * g, 1e-14);
  assert.ok(laplace.epsilon <= 0.5);
  // The default grid is far finer: 2^-14 of the sensitivity per sqrt(d) (L2) or per d (L1), a power of two.
  const auto = gaussianMechanism([0.1, 0.2, 0.3, 0.4], { sensitivity: 1, noiseMultiplier: 1, rng });
  assert.equal(auto.granularity, 2 ** -15);
  assert.equal(laplaceMechanism([1, 2, 3, 4], { sensitivity: 1, epsilon: 1, rng }).granularity, 2 ** -16);
});

test('Laplace mechanism: scale = sensitivity / epsilon and Laplace-distributed noise', () => {
  const rng = seededRng(4);
  const n = 20000;
  const result = laplaceMechanism(new Float64Array(n), { sensitivity: 3, epsilon: 0.5, rng });
  // b = sensitivity / epsilon = 6, plus the grid's rounding (< 2^-14 of the sensitivity per coordinate... here d = 20000, so g d <= 2^-14 * 3).
  assert.ok(result.scale >= 6 && result.scale <= 6 * (1 + 1e-4), `${result.scale}`);
  assert.ok(result.event.noiseMultiplier >= 2 && result.event.noiseMultiplier <= 2 * (1 + 1e-4));
  assert.equal(result.event.discrete, true);
  assert.ok(result.epsilon <= 0.5);
  // E|X| = b for Laplace(b); Var|X| = b^2.
  let sumAbs = 0;
  for (const v of result.value) sumAbs += Math.abs(v);
  assert.ok(zScore(sumAbs / n, 6, 6, n) < Z_CRITICAL);
});

test('randomized response: epsilon formula, calibration, and answer frequencies', () => {
  // epsilon = log(1 + k (1-p)/p): p = 0.5, k = 2 -> log 3.
  assertClose(randomizedResponseEpsilon(0.5, 2), Math.log(3), 1e-15);
  const p = randomizedResponseNoiseParameter(1, 4);
  assertClose(p, 4 / (Math.E + 3), 1e-14);
  assert.ok(randomizedResponseEpsilon(p, 4) <= 1);
  const rng = seededRng(5);
  const n = 40000;
  let truthful = 0;
  for (let i = 0; i < n; i++) if (randomizedResponse(2, { numBuckets: 4, noiseParameter: 0.4, rng }).value === 2) truthful++;
  // P(answer = truth) = 1 - p + p/k = 0.7.
  assert.ok(zScore(truthful / n, 0.7, Math.sqrt(0.7 * 0.3), n) < Z_CRITICAL);
  assert.throws(() => randomizedResponse(4, { numBuckets: 4, epsilon: 1 }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'trueBucket');
});

test('RGM: noise std is sqrt(gamma |R(x)|^2 + sigma^2) and its event accounts for it', () => {
  const rng = seededRng(6);
  const d = 4000;
  const value = new Float64Array(d).fill(3); // |R(x)|^2 = 9 d
  const result = relativeGaussianMechanism(value, { eta: 0.01, rRel: 0.5, gamma: 0.001, rng });
  // Default sigma = sqrt(gamma) R_rel / eta (valid at every order of 000 Thm. 1), for the rounded
  // query's (eta', R_rel'), a little larger than the query's (relative-gaussian-grid.ts).
  const sigma = (Math.sqrt(0.001) * 0.5) / 0.01;
  assert.ok(result.baselineStd >= sigma && result.baselineStd <= sigma * (1 + 1e-3), `${result.baselineStd}`);
  assertClose(result.noiseStd, Math.sqrt(0.001 * 9 * d + result.baselineStd ** 2), 1e-12);
  assert.ok(result.event.discrete === true && result.event.eta >= 0.01 && result.event.eta <= 0.01 * (1 + 1e-3));
  for (const v of result.value) assert.ok(Number.isInteger(v / (result.granularity as number)));
  let sumSq = 0;
  for (const v of result.value) sumSq += (v - 3) ** 2;
  assert.ok(Math.abs(sumSq / d - result.noiseStd ** 2) / (Math.SQRT2 * result.noiseStd ** 2 / Math.sqrt(d)) < Z_CRITICAL);
  assert.equal(result.event.kind, 'relativeGaussian');
  assert.equal(result.event.dimension, d);
  // Calibrated for a target: the event it returns re-accounts below the target.
  const calibrated = relativeGaussianMechanism([1, 2, 3], { eta: 1e-3, rRel: 0.1, targetEpsilon: 1, delta: 1e-8, rng });
  assert.ok(relativeGaussianEpsilon(calibrated.event, 1e-8).epsilon <= 1);
});

test('mechanisms refuse bad input, naming the parameter', () => {
  const cases: [() => unknown, string][] = [
    [() => gaussianMechanism(1, { sensitivity: 0, noiseMultiplier: 1 }), 'sensitivity'],
    [() => gaussianMechanism(1, { sensitivity: 1, noiseMultiplier: -1 }), 'noiseMultiplier'],
    [() => gaussianMechanism(1, { sensitivity: 1 }), 'noiseMultiplier'],
    [() => gaussianMechanism(1, { sensitivity: 1, targetEpsilon: 1, delta: 2 }), 'delta'],
    [() => gaussianMechanism(1, { sensitivity: 1, targetEpsilon: 2, delta: 1e-5, calibration: 'classical' }), 'targetEpsilon'],
    [() => gaussianMechanism([1, NaN], { sensitivity: 1, noiseMultiplier: 1 }), 'value[1]'],
    [() => gaussianMechanism([], { sensitivity: 1, noiseMultiplier: 1 }), 'value'],
    [() => laplaceMechanism(1, { sensitivity: 1, epsilon: 0 }), 'epsilon'],
    [() => laplaceMechanism(1, { sensitivity: 1, epsilon: 1, granularity: -1 }), 'granularity'],
    [() => laplaceMechanism(1, { sensitivity: 1, epsilon: 1, granularity: 0.01 }), 'granularity'],
    [() => gaussianMechanism(1, { sensitivity: 1, noiseMultiplier: 1, granularity: 1 }), 'granularity'],
    [() => gaussianMechanism(1, { sensitivity: 1, noiseMultiplier: 1, granularity: 2 ** -8, continuous: true }), 'granularity'],
    [() => relativeGaussianMechanism([1], { eta: 0.1, rRel: 0, gamma: 1 }), 'baselineStd'],
    [() => relativeGaussianMechanism([1], { eta: 0.1, rRel: 1, gamma: 1, baselineStd: 1e-9 }), 'baselineStd'],
  ];
  for (const [fn, param] of cases) {
    assert.throws(fn, (e: unknown) => e instanceof InvalidParameterError && e.param === param, `expected an error naming ${param}`);
  }
  // A target below RGM's floor is not a bad parameter but an impossible calibration (exit 4 in the CLI), naming targetEpsilon and the floor.
  assert.throws(
    () => relativeGaussianMechanism([1, 2], { eta: 0.1, rRel: 1, targetEpsilon: 1e-3, delta: 1e-5 }),
    (e: unknown) => e instanceof CalibrationError && /^targetEpsilon 0\.001 cannot be reached: .* above \d/.test(e.message),
  );
});
