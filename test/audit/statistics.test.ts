/**
 * The audit's statistics against independent computations (python3 with numpy/scipy run once,
 * mpmath for the composition; the values are pasted below with the expressions that gave them):
 * the Gaussian trade-off curve and GDP's epsilon in closed form, the bound on mu, the composed
 * piecewise-linear trade-off (randomised response, whose composition is a binomial sum), and the
 * coverage of each bound on simulated data at fixed seeds.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { clopperPearsonLower, clopperPearsonUpper } from '../../src/audit/bounds/clopper-pearson.js';
import { composedEpsilonLower, tradeOffMinorant } from '../../src/audit/bounds/composed-trade-off.js';
import { gaussianDpEpsilonLower, gaussianShiftMuLower, gaussianTradeOff } from '../../src/audit/bounds/gaussian-dp-bound.js';
import { splitThresholdBound } from '../../src/audit/bounds/split-threshold.js';
import { fillGaussian } from '../../src/random/continuous.js';
import { seededRng } from '../../src/random/rng.js';
import { assertClose } from '../helpers/assert-close.js';

test('Clopper-Pearson for large counts (the incomplete beta path) matches scipy: beta.ppf(1 - a, k + 1, n - k), beta.ppf(a, k, n - k + 1)', () => {
  const cases: [number, number, number, number, number][] = [
    [908, 1000, 0.025, 0.9251915548221445, 0.8883642274816803],
    [100, 20000, 0.004, 0.006478302428935861, 0.0037766143457953045],
    [5000, 20000, 0.01, 0.25719697629163435, 0.24290201921565918],
    [19990, 20000, 0.05, 0.9997287054684337, 0.9991520366561334],
    [65, 1000, 0.025, 0.08210106992137102, 0.050520309689617925],
  ];
  for (const [k, n, a, upper, lower] of cases) {
    const u = clopperPearsonUpper(k, n, a);
    const l = clopperPearsonLower(k, n, a);
    assert.ok(u >= upper && u - upper < 1e-9, `upper(${k}, ${n}, ${a}) = ${u}, scipy ${upper}`);
    assert.ok(l <= lower && lower - l < 1e-9, `lower(${k}, ${n}, ${a}) = ${l}, scipy ${lower}`);
  }
});

test('the Gaussian trade-off curve G_mu(a) = Phi(Phi^-1(1 - a) - mu) matches scipy (norm.cdf(norm.ppf(1 - a) - mu))', () => {
  const cases: [number, number, number][] = [
    [1, 0.05, 0.7404889771585558],
    [0.5, 0.01, 0.9661010608771572],
    [2, 0.3, 0.07002572143054626],
    [3, 1e-4, 0.7639346188496041],
  ];
  for (const [mu, a, expected] of cases) assertClose(gaussianTradeOff(mu, a), expected, 1e-13);
  assert.equal(gaussianTradeOff(0, 0.3), 0.7); // mu = 0: the diagonal, 1 - a
  assert.equal(gaussianTradeOff(1, 0), 1);
});

test('GDP epsilon at delta, rounded down: scipy brentq on Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2) = delta (xtol 1e-14)', () => {
  const cases: [number, number, number][] = [
    [0.925, 1e-5, 4.000344189844734],
    [0.5, 1e-5, 1.9930914044151173],
    [1.666, 1e-5, 7.999822454117411],
    [2, 1e-3, 7.581279924570115],
    [0.2, 0.01, 0.2632312097740825],
  ];
  for (const [mu, delta, expected] of cases) {
    const e = gaussianDpEpsilonLower(mu, delta);
    assert.ok(e <= expected && e > expected * (1 - 1e-7), `mu ${mu}, delta ${delta}: ${e} vs ${expected}`);
  }
  assert.equal(gaussianDpEpsilonLower(0, 1e-5), 0);
  assert.equal(gaussianDpEpsilonLower(0.01, 0.5), 0); // TV = 2 Phi(mu/2) - 1 < delta: epsilon 0
});

test('the lower confidence bound on mu matches scipy (alpha shared 1:4: chi2.ppf(0.01, nu), norm.ppf(0.96)) on fixed data', () => {
  const inside = [1.2, 0.7, 2.1, 1.5, 0.9, 1.8, 1.1, 1.4];
  const outside = [0.1, -0.3, 0.4, 0.2, -0.5, 0.0, 0.3, -0.1];
  const bound = gaussianShiftMuLower(inside, outside, 0.95);
  assertClose(bound.muEstimate, 3.3830881181794106, 1e-12);
  assert.ok(bound.muLower <= 1.076577155712277 && bound.muLower > 1.076577155712277 * (1 - 1e-8), String(bound.muLower));
});

test('coverage at fixed seeds: mu_lower exceeds the true mu in at most 5 % of 400 simulated audits', () => {
  const rng = seededRng(2026);
  const runs = 500;
  const mu = 0.9;
  let misses = 0;
  for (let s = 0; s < 400; s++) {
    const inside = fillGaussian(rng, new Float64Array(runs)).map((v) => v + mu);
    const outside = fillGaussian(rng, new Float64Array(runs));
    if (gaussianShiftMuLower(inside, outside, 0.95).muLower > mu) misses++;
  }
  // Binomial(400, 0.05) exceeds 35 with probability < 1e-3; the union bound makes the true rate lower still.
  assert.ok(misses <= 35, `${misses} misses of 400`);
});

test('the split-sample bound never exceeds the truth at fixed seeds, and refutes a claim 10x too small', () => {
  // A Gaussian shift with mu = 0.925 (epsilon 4.0003 at delta 1e-5), 2000 runs of each world.
  const rng = seededRng(7);
  const mu = 0.925;
  for (let s = 0; s < 40; s++) {
    const inside = fillGaussian(rng, new Float64Array(2000)).map((v) => v + mu);
    const outside = fillGaussian(rng, new Float64Array(2000));
    const bound = splitThresholdBound(inside, outside, 1e-5, 0.95);
    assert.equal(bound.evaluated, 1000);
    assert.ok(bound.epsilonLower <= 4.0003 && bound.epsilonLower > 0.4, `seed ${s}: ${bound.epsilonLower}`);
  }
});

test('composing a piecewise-linear curve: T-fold randomised response exactly (mpmath binomial sum), rounded down', () => {
  // The curve of randomised response with epsilon0 has one kink at a = b = 1 / (1 + e^epsilon0);
  // its T-fold loss is (2k - T) epsilon0 with k ~ Bin(T, e^e0 / (1 + e^e0)) (mpmath, dps 40, bisection).
  const cases: [number, number, number, number][] = [
    [0.5, 10, 1e-5, 4.9988541204123691],
    [0.1, 50, 1e-5, 2.8446671521766596],
    [1.0, 1, 1e-3, 0.99863118415772581],
    [0.3, 200, 1e-6, 27.711152355953089],
  ];
  for (const [e0, steps, delta, expected] of cases) {
    const kink = 1 / (1 + Math.exp(e0));
    const e = composedEpsilonLower([{ alpha: kink, beta: kink }], steps, delta);
    assert.ok(e <= expected && e > expected * (1 - 1e-6), `RR(${e0})^${steps}: ${e} vs ${expected}`);
  }
});

test('the minorant is the lower convex hull, and points on or above G_mu never bound above the exact GDP epsilon', () => {
  const hull = tradeOffMinorant([{ alpha: 0.1, beta: 0.5 }, { alpha: 0.2, beta: 0.45 }, { alpha: 0.3, beta: 0.2 }, { alpha: 0.5, beta: 0.9 }]);
  assert.deepEqual(hull.map((p) => [p.alpha, p.beta]), [[0, 1], [0.1, 0.5], [0.3, 0.2], [1, 0]]);
  fc.assert(
    fc.property(fc.double({ min: 0.05, max: 1.5, noNaN: true }), fc.array(fc.double({ min: 1e-4, max: 0.9, noNaN: true }), { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 30 }), (mu, alphas, steps) => {
      const points = alphas.map((alpha) => ({ alpha, beta: Math.min(1, gaussianTradeOff(mu, alpha) * (1 + 1e-12)) }));
      const bound = composedEpsilonLower(points, steps, 1e-5);
      // T-fold mu-GDP is sqrt(T) mu-GDP (DRS Cor. 3.3); the exact epsilon is at most 1e-7 above the rounded-down value.
      return bound <= gaussianDpEpsilonLower(Math.sqrt(steps) * mu, 1e-5) * (1 + 1e-7) + 1e-12;
    }),
    { seed: 26, numRuns: 60 },
  );
});
