/**
 * Distributed discrete Gaussian noise (`src/mechanisms/distributed-gaussian-grid.ts`): the lemma
 * that makes the sum of shares accountable, the plan's grid and share, and its accounted epsilon.
 *
 * Reference values: an independent python3/scipy recomputation of the plan (the power-of-two grid,
 * the sensitivity in grid steps, the smallest integer share s whose floor(sqrt(m) s) event meets the
 * target after the coupling's factor sqrt(1 - 64/S^2)) and of the exact epsilon of T such Gaussian
 * releases (delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), mu = sqrt(T)/z_eff, solved by
 * brentq at 1e-15), run once:
 *   sens 1, z 10, d 4, K 5, m 4, T 50, delta 1e-6: g = 2^-15, s = 163851, S = 327702, eps = 3.30757821082
 *   sens 2, z 3,  d 3, K 8, m 5, T 20, delta 1e-5: g = 2^-14, s = 43966,  S = 98310,  eps = 6.99915829288
 *   sens 1, z 10, d 4, K 5, m 1, T 50, delta 1e-6: g = 2^-15, s = 327701 (one share: local noise), eps = 3.30758946723
 * The lemma itself was checked the same way at 60 digits (mpmath convolution of the exact pmfs):
 * s = 1, m = 2: worst |log ratio| 1.035e-4 against the bound Xi = 2.069e-4; the test below redoes it
 * in double precision for m = 2..5.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selfComposeEvent } from '../../src/accounting/events/constructors.js';
import { gaussianCompositionEpsilon } from '../../src/accounting/gaussian/gaussian-composition.js';
import { InvalidParameterError } from '../../src/errors.js';
import { planDistributedGaussianGrid } from '../../src/mechanisms/distributed-gaussian-grid.js';
import { planGaussianGrid } from '../../src/mechanisms/grid-noise.js';

const CASES = [
  { sensitivity: 1, noiseMultiplier: 10, dimension: 4, shares: 5, countedShares: 4, steps: 50, delta: 1e-6, granularity: 2 ** -15, s: 163851, S: 327702, epsilon: 3.30757821082 },
  { sensitivity: 2, noiseMultiplier: 3, dimension: 3, shares: 8, countedShares: 5, steps: 20, delta: 1e-5, granularity: 2 ** -14, s: 43966, S: 98310, epsilon: 6.99915829288 },
  { sensitivity: 1, noiseMultiplier: 10, dimension: 4, shares: 5, countedShares: 1, steps: 50, delta: 1e-6, granularity: 2 ** -15, s: 327701, S: 327701, epsilon: 3.30758946723 },
];

test('the plan and its epsilon equal the independent python recomputation (file comment)', () => {
  for (const c of CASES) {
    const plan = planDistributedGaussianGrid({ sensitivity: c.sensitivity, noiseMultiplier: c.noiseMultiplier, dimension: c.dimension, shares: c.shares, countedShares: c.countedShares });
    assert.equal(plan.granularity, c.granularity);
    assert.equal(plan.shareNoiseStd, c.s);
    assert.equal(plan.event.gridNoiseStd, c.S);
    const epsilon = gaussianCompositionEpsilon(selfComposeEvent(plan.event, c.steps), c.delta)?.epsilon as number;
    assert.ok(Math.abs(epsilon - c.epsilon) <= 1e-9 * c.epsilon, `${epsilon} vs ${c.epsilon}`);
    // The sum's std in the query's units: g sqrt(K) s.
    assert.equal(plan.sumNoiseStd, c.granularity * Math.sqrt(c.shares) * c.s);
  }
});

test('one counted share is exactly the single-release plan; m shares need about 1/sqrt(m) of it each', () => {
  const single = planGaussianGrid({ sensitivity: 1, noiseMultiplier: 10, dimension: 4 });
  const one = planDistributedGaussianGrid({ sensitivity: 1, noiseMultiplier: 10, dimension: 4, shares: 5, countedShares: 1 });
  assert.equal(one.granularity, single.granularity);
  assert.equal(one.shareNoiseStd, single.gridNoiseStd);
  assert.deepEqual(one.event, single.event);
  assert.deepEqual(one.shareEvent, one.event);
  for (const m of [2, 3, 9, 100]) {
    const plan = planDistributedGaussianGrid({ sensitivity: 1, noiseMultiplier: 10, dimension: 4, shares: m + 1, countedShares: m });
    const ratio = (plan.shareNoiseStd * plan.granularity) / (single.gridNoiseStd * single.granularity);
    assert.ok(Math.abs(ratio * Math.sqrt(m) - 1) < 1e-4, `m = ${m}: ratio ${ratio}`);
    // The accounted multiplier meets the target; the share alone is weaker.
    assert.ok(plan.event.noiseMultiplier >= 10 && plan.shareEvent.noiseMultiplier < 10);
  }
});

test('the lemma: the exact pmf of a sum of m discrete Gaussians D_s lies within e^{+-Xi_m} of D_{sqrt(m) s} (double precision, s = 1)', () => {
  const R = 60;
  const dg = (t: number, r: number) => {
    const w = Array.from({ length: 2 * r + 1 }, (_, i) => Math.exp(-((i - r) ** 2) / (2 * t * t)));
    const z = w.reduce((a, b) => a + b, 0);
    return w.map((v) => v / z);
  };
  const e = (t: number) => 2 * [1, 2, 3].reduce((a, k) => a + Math.exp(-2 * Math.PI ** 2 * t * t * k * k), 0);
  const xi = (t: number) => Math.log((1 + e(t)) / (1 - e(t)));
  const s = 1;
  const base = dg(s, R);
  let sum = base;
  for (let m = 2; m <= 5; m++) {
    const next = new Array(sum.length + base.length - 1).fill(0);
    for (let i = 0; i < sum.length; i++) for (let j = 0; j < base.length; j++) next[i + j] += sum[i] * base[j];
    sum = next;
    const r = (sum.length - 1) / 2;
    const target = dg(Math.sqrt(m) * s, r);
    let worst = 0;
    for (let x = 0; x < sum.length; x++) if (Math.abs(x - r) <= 8 * Math.sqrt(m)) worst = Math.max(worst, Math.abs(Math.log(sum[x] / target[x])));
    let bound = 0;
    for (let k = 1; k < m; k++) bound += xi(s * Math.sqrt(k / (k + 1)));
    assert.ok(worst <= bound, `m = ${m}: worst log ratio ${worst} > Xi ${bound}`);
    assert.ok(worst > 0, 'the sum is not exactly a discrete Gaussian');
  }
});

test('parameters out of range are refused by name', () => {
  const base = { sensitivity: 1, noiseMultiplier: 1, dimension: 2, shares: 3, countedShares: 2 };
  for (const [key, value] of [['countedShares', 4], ['countedShares', 0], ['shares', 0], ['shares', 2 ** 16 + 1], ['dimension', 0], ['noiseMultiplier', -1]] as const) {
    assert.throws(() => planDistributedGaussianGrid({ ...base, [key]: value }), (err: unknown) => err instanceof InvalidParameterError && err.message.includes(key));
  }
  assert.throws(() => planDistributedGaussianGrid({ ...base, extra: 1 } as never), InvalidParameterError);
});
