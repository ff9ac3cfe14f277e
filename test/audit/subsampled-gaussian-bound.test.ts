/**
 * DP-SGD's accountant-model statistic (`src/audit/bounds/subsampled-gaussian-bound.ts`): its optimistic
 * privacy-loss distribution is never above, and within a few % of, an independent computation and
 * dpfit's own PLD accountant; the monotonicity it assumes (epsilon non-decreasing in c at a fixed
 * c q) holds on a grid; its region covers the true parameters of seeded samples.
 *
 * Reference values: an independent python3/scipy computation run once (scipy 1.x, numpy): the
 * hockey-stick divergence of the pair (1 - q) N(c, s^2) + ... against N(0, s^2) in closed form at
 * T = 1 (the likelihood ratio is monotone in y, so the optimal region is a half-line: delta =
 * S_P(y*) - e^eps S_Q(y*)), and at T = 2 as scipy.integrate.quad over the first coordinate of
 * p(x) times that closed form for the second at e^{eps - L(x)} (limit 500, epsabs 1e-14, epsrel
 * 1e-10); epsilon at delta = 1e-5 by scipy.optimize.brentq (xtol 1e-12), the larger order.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { selfComposeEvent, poissonSampledEvent, gaussianEvent } from '../../src/accounting/events/constructors.js';
import { pldEpsilon } from '../../src/accounting/pld/accountant.js';
import { subsampledGaussianBound, subsampledGaussianDeltaLower, subsampledGaussianEpsilonLower, subsampledGaussianRegion } from '../../src/audit/bounds/subsampled-gaussian-bound.js';
import { InvalidParameterError } from '../../src/errors.js';
import { fillGaussian } from '../../src/random/continuous.js';
import { seededRng } from '../../src/random/rng.js';

const Q = 0.099009900990099;
/** [c, q, s, order, T, epsilon, reference delta] from the scipy computation (file comment). */
const DELTAS: readonly [number, number, number, 'remove' | 'add', number, number, number][] = [
  [1, Q, 1.4760894775390625, 'remove', 1, 0.5, 7.0826700455137e-5],
  [1, Q, 1.4760894775390625, 'remove', 1, 1, 5.055899597295397e-7],
  [1, Q, 1.4760894775390625, 'remove', 2, 1, 1.7271277941763285e-6],
  [1, Q, 1.4760894775390625, 'add', 1, 0.05, 0.004024716856659533],
  [1, Q, 1.4760894775390625, 'add', 2, 0.1, 0.002831287357607118],
  [1, 0.3, 1, 'remove', 1, 1, 0.007682927989029292],
  [1, 0.3, 1, 'remove', 1, 2, 0.0003341102928869353],
  [1, 0.3, 1, 'remove', 2, 1, 0.020219171800738137],
  [1, 0.3, 1, 'add', 1, 0.05, 0.0869113480673902],
  [1, 0.3, 1, 'add', 2, 0.1, 0.12011492356283911],
  [0.7, Q, 1.0234375, 'remove', 1, 0.5, 7.891958622471991e-5],
  [0.7, Q, 1.0234375, 'remove', 2, 1, 2.0873273447361695e-6],
  [0.7, Q, 1.0234375, 'add', 2, 0.1, 0.002945667118981081],
];
/** [c, q, s, T, reference epsilon at delta 1e-5]. */
const EPSILONS: readonly [number, number, number, number, number][] = [
  [1, Q, 1.4760894775390625, 1, 0.6936392917178307],
  [1, Q, 1.4760894775390625, 2, 0.8151117078982533],
  [1, 0.3, 1, 1, 2.9215106572867935],
  [1, 0.3, 1, 2, 3.7007418061953268],
  [0.7, Q, 1.0234375, 1, 0.7084863933279049],
  [0.7, Q, 1.0234375, 2, 0.8317591713028821],
];

test('delta_lower is below the independent (scipy) hockey-stick divergence, within 5 % of it at the default loss step and 1 % at a 10x finer one, both orders, T = 1 and 2', () => {
  // The default step h = 1e-3 rounds losses that lie within ~0.05 of epsilon (the add order at
  // epsilon 0.05) by a few %: the bound's only slack besides the dropped 12-sigma tails.
  for (const [shift, rate, std, order, steps, epsilon, reference] of DELTAS) {
    const lower = subsampledGaussianDeltaLower({ shift, rate, std }, steps, epsilon, order);
    assert.ok(lower <= reference && lower >= 0.95 * reference, `${shift} ${rate} ${std} ${order} T=${steps} eps=${epsilon}: ${lower} vs ${reference}`);
    const finer = subsampledGaussianDeltaLower({ shift, rate, std }, steps, epsilon, order, 1e-4);
    assert.ok(finer <= reference && finer >= 0.99 * reference && finer >= lower, `h = 1e-4: ${finer} vs ${reference}`);
  }
});

test('epsilon_lower at delta 1e-5 is below the independent (scipy) epsilon and within 1 % of it, T = 1 and 2', () => {
  for (const [shift, rate, std, steps, reference] of EPSILONS) {
    const lower = subsampledGaussianEpsilonLower({ shift, rate, std }, steps, 1e-5);
    assert.ok(lower <= reference && lower >= 0.99 * reference, `${shift} ${rate} ${std} T=${steps}: ${lower} vs ${reference}`);
  }
});

test("epsilon_lower is below dpfit's own PLD accountant for the same q, sigma, T and within 3 % of it (the audit's default shape)", { timeout: 120_000 }, () => {
  for (const [std, steps] of [[1.4760894775390625, 20], [1.0234375, 20], [2.2790374755859375, 20]] as const) {
    const lower = subsampledGaussianEpsilonLower({ shift: 1, rate: Q, std }, steps, 1e-5);
    const upper = pldEpsilon(selfComposeEvent(poissonSampledEvent(Q, gaussianEvent(std)), steps), 1e-5).epsilon;
    assert.ok(lower <= upper && lower >= 0.97 * upper, `sigma ${std}, T ${steps}: ${lower} vs PLD ${upper}`);
  }
});

test('epsilon is non-decreasing in c at a fixed product c q (the monotonicity (d) the region corner uses), on a grid', { timeout: 120_000 }, () => {
  for (const m of [0.02, 0.05, 0.1]) {
    for (const steps of [1, 5, 20]) {
      let previous = 0;
      for (const c of [0.1, 0.2, 0.3, 0.5, 0.7, 1, 1.5, 2, 3]) {
        if (m / c > 1) continue;
        const epsilon = subsampledGaussianEpsilonLower({ shift: c, rate: m / c, std: 1 }, steps, 1e-5);
        // The grid's rounding (T h = steps x 1e-3 at most) is the only slack allowed.
        assert.ok(epsilon >= previous - steps * 1e-3, `m ${m}, T ${steps}, c ${c}: ${epsilon} < ${previous}`);
        previous = Math.max(previous, epsilon);
      }
    }
  }
});

test('the region covers the true parameters of a seeded sample, and the bound is below the true pair\'s epsilon', { timeout: 120_000 }, () => {
  const rng = seededRng(7);
  const n = 40_000;
  const [c, q, s, steps] = [1, Q, 1.2, 20];
  const inside = fillGaussian(rng, new Float64Array(n), s);
  const outside = fillGaussian(rng, new Float64Array(n), s);
  for (let i = 0; i < n; i++) if (rng.nextDouble() < q) inside[i] += c;
  const region = subsampledGaussianRegion(inside, outside, 0.95);
  assert.ok(region.stdUpper >= s && region.meanLower <= c * q && c * q <= region.meanUpper && region.excessLower <= c * c * q, JSON.stringify(region));
  const bound = subsampledGaussianBound(inside, outside, steps, 1e-5, 0.95);
  const truth = subsampledGaussianEpsilonLower({ shift: c, rate: q, std: s }, steps, 1e-5);
  assert.ok(bound.epsilonLower > 0 && bound.epsilonLower <= truth, `${bound.epsilonLower} vs ${truth}`);
  // A stricter confidence, a wider region, a smaller bound.
  assert.ok(subsampledGaussianBound(inside, outside, steps, 1e-5, 0.9995).epsilonLower <= bound.epsilonLower);
  // No canary effect: the bound is 0 (m_lo <= 0).
  assert.equal(subsampledGaussianBound(outside.subarray(0, n / 2), outside.subarray(n / 2), steps, 1e-5, 0.95).epsilonLower, 0);
  // A mean shift without any excess second moment (v_lo <= 0): the corner is c = m_lo, q = 1, a Gaussian shift.
  const shifted = Float64Array.from(outside.subarray(0, n / 2), (y) => y + 0.05);
  const gaussian = subsampledGaussianBound(shifted, outside.subarray(n / 2), steps, 1e-5, 0.95);
  assert.ok(gaussian.region.excessLower <= 0.05 ** 2 && (gaussian.pair?.rate ?? 0) > 0.999 && gaussian.epsilonLower > 0, JSON.stringify(gaussian));
});

test('bad parameters are refused with the parameter named', () => {
  assert.throws(() => subsampledGaussianEpsilonLower({ shift: 1, rate: 1.5, std: 1 }, 1, 1e-5), (e: unknown) => e instanceof InvalidParameterError && /rate/.test(e.message));
  assert.throws(() => subsampledGaussianEpsilonLower({ shift: 1, rate: 0.1, std: 1 }, 0, 1e-5), /steps/);
  assert.throws(() => subsampledGaussianRegion([1], [1, 2], 0.95), /runs/);
});
