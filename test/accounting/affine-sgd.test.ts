/**
 * `004` Sec. 3.4 (`src/accounting/gaussian/affine-sgd.ts`): the Gaussian recursions of Props. 3.2-3.3 checked
 * against simulation of the noisy SGD they describe, the exact last-iterate privacy of a shift pair,
 * and Sec. 3.4.3's effect: noise feedback cancels most of the noise, and the privacy with it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { affineSgdLastIterate, gaussianShiftEpsilon, gaussianShiftMu, type AffineStep } from '../../src/accounting/gaussian/affine-sgd.js';
import { gaussianDelta } from '../../src/accounting/gaussian/gaussian-profile.js';
import { InvalidParameterError } from '../../src/errors.js';
import { symmetricEigen } from '../../src/math/symmetric-eigen.js';
import { fillGaussian } from '../../src/random/continuous.js';
import { seededRng } from '../../src/random/rng.js';

const D = 2;
/** Linear regression records: alpha = x x^T, beta = -y x. */
function steps(records: readonly { x: number[]; y: number }[]): AffineStep[] {
  return records.map(({ x, y }) => ({ alpha: Float64Array.from({ length: D * D }, (_, k) => x[Math.floor(k / D)] * x[k % D]), beta: Float64Array.from(x, (v) => -y * v) }));
}
const RECORDS = Array.from({ length: 12 }, (_, t) => ({ x: [Math.cos(t), 0.5 * Math.sin(2 * t) + 0.3], y: Math.sin(t) }));

test('Prop. 3.2 and the noise-feedback recursion (derived: Prop. 3.3 as printed disagrees) are the mean and covariance of the simulated noisy SGD (20 000 runs)', () => {
  const gamma = 0.4;
  const sigma = 0.3;
  const rng = seededRng(34);
  for (const noiseFeedback of [false, true]) {
    const exact = affineSgdLastIterate(steps(RECORDS), { d: D, stepSize: gamma, noiseStd: sigma, noiseFeedback });
    const runs = 20_000;
    const sum = new Float64Array(D);
    const sumSq = new Float64Array(D * D);
    const eta = new Float64Array(D);
    const fresh = new Float64Array(D);
    for (let r = 0; r < runs; r++) {
      const theta = new Float64Array(D);
      eta.fill(0);
      for (const { x, y } of RECORDS) {
        const residual = x[0] * theta[0] + x[1] * theta[1] - y;
        fillGaussian(rng, fresh, sigma);
        for (let i = 0; i < D; i++) {
          theta[i] -= gamma * residual * x[i];
          // Prop. 3.2: + noise; Prop. 3.3: - eta_{t+1} + eta_t.
          theta[i] += noiseFeedback ? -fresh[i] + eta[i] : fresh[i];
        }
        eta.set(fresh);
      }
      for (let i = 0; i < D; i++) {
        sum[i] += theta[i];
        for (let j = 0; j < D; j++) sumSq[i * D + j] += theta[i] * theta[j];
      }
    }
    for (let i = 0; i < D; i++) {
      const mean = sum[i] / runs;
      const sd = Math.sqrt(exact.covariance[i * D + i]);
      assert.ok(Math.abs(mean - exact.mean[i]) < 5 * sd / Math.sqrt(runs) + 1e-12, `mean[${i}] ${mean} vs ${exact.mean[i]} (feedback ${noiseFeedback})`);
      for (let j = 0; j < D; j++) {
        const cov = sumSq[i * D + j] / runs - (sum[i] / runs) * (sum[j] / runs);
        const expected = exact.covariance[i * D + j];
        const scale = Math.sqrt(exact.covariance[i * D + i] * exact.covariance[j * D + j]);
        assert.ok(Math.abs(cov - expected) < 0.05 * scale, `cov[${i},${j}] ${cov} vs ${expected} (feedback ${noiseFeedback})`);
      }
    }
  }
});

test('Sec. 3.4.3: with noise feedback the covariance is far smaller (Loewner order) and the last iterate far less private', () => {
  const gamma = 0.4;
  const sigma = 0.5;
  const other = RECORDS.map((r, t) => (t === 3 ? { ...r, y: r.y + 1 } : r)); // a neighbour: record 3's target changed
  const epsilonOf = (noiseFeedback: boolean) => {
    const a = affineSgdLastIterate(steps(RECORDS), { d: D, stepSize: gamma, noiseStd: sigma, noiseFeedback });
    const b = affineSgdLastIterate(steps(other), { d: D, stepSize: gamma, noiseStd: sigma, noiseFeedback });
    return { a, epsilon: gaussianShiftEpsilon(gaussianShiftMu(a, b), 1e-5) };
  };
  const plain = epsilonOf(false);
  const feedback = epsilonOf(true);
  assert.ok(Math.min(...symmetricEigen(plain.a.covariance, D).values) >= sigma * sigma * (1 - 1e-12));
  const difference = plain.a.covariance.map((v, k) => v - feedback.a.covariance[k]);
  assert.ok(Math.min(...symmetricEigen(difference, D).values) > 0, 'Sigma_plain - Sigma_feedback is positive definite');
  assert.ok(feedback.epsilon > 1.5 * plain.epsilon, `feedback ${feedback.epsilon} vs plain ${plain.epsilon}`);
});

test('the shift pair is exactly the Gaussian mechanism: delta(epsilon) matches 003 eq. B.1, and a later differing record costs more (less noise after it)', () => {
  const gamma = 0.3;
  const sigma = 0.4;
  const epsilonWhen = (t: number) => {
    const other = RECORDS.map((r, s) => (s === t ? { ...r, y: r.y + 1 } : r));
    const a = affineSgdLastIterate(steps(RECORDS), { d: D, stepSize: gamma, noiseStd: sigma });
    const b = affineSgdLastIterate(steps(other), { d: D, stepSize: gamma, noiseStd: sigma });
    return gaussianShiftMu(a, b);
  };
  const mu = epsilonWhen(5);
  const epsilon = gaussianShiftEpsilon(mu, 1e-5);
  // At the reported epsilon the Gaussian profile of multiplier 1/mu gives delta <= 1e-5 (and just above at 0.999 epsilon).
  assert.ok(gaussianDelta(epsilon, 1 / mu) <= 1e-5 * (1 + 1e-9));
  assert.ok(gaussianDelta(epsilon * 0.999, 1 / mu) > 1e-5);
  // The last record's change is seen through one step of noise only; the first's through all of them.
  assert.ok(epsilonWhen(0) < epsilonWhen(RECORDS.length - 1), `${epsilonWhen(0)} vs ${epsilonWhen(RECORDS.length - 1)}`);
});

test('edge cases: a shift outside the covariance range is Infinity; neighbours with different x are refused by name', () => {
  // No noise: Sigma = 0, any shift is infinitely distinguishable.
  const one = steps([{ x: [1, 0], y: 0 }]);
  const moved = steps([{ x: [1, 0], y: 0 }]).map((s) => ({ ...s, beta: Float64Array.of(0, 1) }));
  const a = affineSgdLastIterate(one, { d: D, stepSize: 0.5, noiseStd: 0 });
  const b = affineSgdLastIterate(moved, { d: D, stepSize: 0.5, noiseStd: 0 });
  assert.equal(gaussianShiftMu(a, b), Infinity);
  // Different x at the second step: its M_t propagates the first step's noise differently.
  const c = affineSgdLastIterate(steps([{ x: [0.5, 0.5], y: 1 }, { x: [0, 1], y: 0 }]), { d: D, stepSize: 0.5, noiseStd: 1 });
  const e = affineSgdLastIterate(steps([{ x: [0.5, 0.5], y: 1 }, { x: [1, 1], y: 0 }]), { d: D, stepSize: 0.5, noiseStd: 1 });
  assert.throws(() => gaussianShiftMu(c, e), (err: unknown) => err instanceof InvalidParameterError && /covariances must be equal/.test(err.message));
});
