import assert from 'node:assert/strict';
import { test } from 'node:test';
import gammaln from '@stdlib/math-base-special-gammaln';
import { InvalidParameterError } from '../../src/errors.js';
import {
  poissonSubsampleIndices,
  poissonSubsampleMask,
  randomPermutation,
  sampleBernoulli,
  sampleBinomial,
  samplePoisson,
  seededRng,
  shuffleInPlace,
} from '../../src/random/index.js';
import { shufflePrefixInPlace } from '../../src/random/discrete.js';
import { btrs, ptrs, type TransformedRejection } from '../../src/random/transformed-rejection.js';
import {
  ALPHA,
  chiSquareSurvival,
  chiSquareTest,
  discreteChiSquare,
  formatResult,
  meanZTest,
  proportionZTest,
  varianceZTest,
} from '../helpers/stats.js';

const N = 200_000;

// Reference pmfs from @stdlib's log-gamma (independent of the samplers' own log-pmf code).
const poissonPmf = (lambda: number) => (k: number): number =>
  k < 0 ? 0 : Math.exp(k * Math.log(lambda) - lambda - gammaln(k + 1));
const binomialPmf = (n: number, p: number) => (k: number): number =>
  k < 0 || k > n
    ? 0
    : Math.exp(gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1) + k * Math.log(p) + (n - k) * Math.log1p(-p));

test('sampleBernoulli(p) succeeds with probability p; p = 0 and 1 are certain', () => {
  const rng = seededRng(1);
  let successes = 0;
  for (let i = 0; i < N; i++) if (sampleBernoulli(rng, 0.3)) successes++;
  assert.ok(proportionZTest(successes, N, 0.3).pValue > ALPHA);
  for (let i = 0; i < 1000; i++) {
    assert.equal(sampleBernoulli(rng, 0), false);
    assert.equal(sampleBernoulli(rng, 1), true);
  }
});

for (const lambda of [0.5, 7, 10.5, 1e4]) {
  test(`samplePoisson(${lambda}) matches the Poisson pmf (chi-square) and its mean and variance`, () => {
    const rng = seededRng(Math.round(lambda * 100));
    const xs = new Float64Array(N);
    for (let i = 0; i < N; i++) xs[i] = samplePoisson(rng, lambda);
    assert.ok(xs.every((x) => Number.isInteger(x) && x >= 0));
    const result = discreteChiSquare(xs, poissonPmf(lambda), Math.floor(lambda), [0, Infinity]);
    assert.ok(result.pValue > ALPHA, formatResult(result));
    assert.ok(meanZTest(xs, lambda, lambda).pValue > ALPHA, 'mean');
    assert.ok(varianceZTest(xs, lambda).pValue > ALPHA, 'variance');
  });
}

test('samplePoisson at huge lambda (1e12) has the right mean and variance', () => {
  const rng = seededRng(12);
  const lambda = 1e12;
  const xs = Float64Array.from({ length: 50_000 }, () => samplePoisson(rng, lambda));
  assert.ok(xs.every((x) => Number.isSafeInteger(x)));
  assert.ok(meanZTest(xs, lambda, lambda).pValue > ALPHA, 'mean');
  assert.ok(varianceZTest(xs, lambda).pValue > ALPHA, 'variance');
});

for (const [n, p] of [
  [20, 0.3],
  [1e6, 1e-3],
  [1000, 0.7],
  [37, 0.5],
] as const) {
  test(`sampleBinomial(${n}, ${p}) matches the binomial pmf (chi-square), mean and variance`, () => {
    const rng = seededRng(n + Math.round(p * 1000));
    const xs = new Float64Array(N);
    for (let i = 0; i < N; i++) xs[i] = sampleBinomial(rng, n, p);
    assert.ok(xs.every((x) => Number.isInteger(x) && x >= 0 && x <= n));
    const result = discreteChiSquare(xs, binomialPmf(n, p), Math.floor((n + 1) * p), [0, n]);
    assert.ok(result.pValue > ALPHA, formatResult(result));
    assert.ok(meanZTest(xs, n * p, n * p * (1 - p)).pValue > ALPHA, 'mean');
    assert.ok(varianceZTest(xs, n * p * (1 - p)).pValue > ALPHA, 'variance');
  });
}

test('sampleBinomial(1e9, p) is fast and has the right mean and variance', () => {
  const rng = seededRng(9);
  for (const p of [0.5, 1e-8]) {
    const n = 1e9;
    const xs = Float64Array.from({ length: 50_000 }, () => sampleBinomial(rng, n, p));
    assert.ok(meanZTest(xs, n * p, n * p * (1 - p)).pValue > ALPHA, `mean at p = ${p}`);
    assert.ok(varianceZTest(xs, n * p * (1 - p)).pValue > ALPHA, `variance at p = ${p}`);
  }
});

/**
 * Exact check of the conditions under which transformed rejection is exact (proof note in
 * src/random/transformed-rejection.ts), for every k in [kLo, kHi]: on k's u-interval
 * [X^-1(k), X^-1(k+1)) the ratio target(k) (a/us^2 + b) / hat is decreasing in us, so its maximum
 * is at the smallest us and its minimum at the largest.
 */
function checkHat(s: TransformedRejection, kLo: number, kHi: number): { maxRatio: number; minSqueezeMargin: number; maxQuickExcess: number } {
  const x = (u: number): number => ((2 * s.a) / (0.5 - Math.abs(u)) + s.b) * u + s.shift;
  const inverse = (target: number): number => {
    let lo = -0.5;
    let hi = 0.5;
    for (let i = 0; i < 60; i++) {
      const mid = (lo + hi) / 2;
      if (x(mid) < target) lo = mid;
      else hi = mid;
    }
    return (lo + hi) / 2;
  };
  let maxRatio = 0;
  let minSqueezeMargin = Infinity;
  let maxQuickExcess = -Infinity;
  let uLeft = inverse(kLo);
  for (let k = kLo; k <= kHi; k++) {
    const uRight = inverse(k + 1);
    const usMin = 0.5 - Math.max(Math.abs(uLeft), Math.abs(uRight));
    const usMax = 0.5 - (uLeft <= 0 && uRight >= 0 ? 0 : Math.min(Math.abs(uLeft), Math.abs(uRight)));
    uLeft = uRight;
    const logTarget = s.logTarget(k);
    const ratio = (us: number): number => Math.exp(logTarget + Math.log(s.a / (us * us) + s.b) - s.logHat);
    if (usMin > 0) maxRatio = Math.max(maxRatio, ratio(usMin));
    if (usMax >= 0.07) minSqueezeMargin = Math.min(minSqueezeMargin, ratio(usMax) - s.vr);
    if (s.quickReject && usMin > 0 && usMin < 0.013) maxQuickExcess = Math.max(maxQuickExcess, ratio(usMin) - usMin);
  }
  return { maxRatio, minSqueezeMargin, maxQuickExcess };
}

test('PTRS hat dominates the Poisson pmf and its squeeze and quick rejection are inside (exact check)', () => {
  for (let lambda = 10; lambda <= 1e6; lambda *= lambda < 40 ? 1.01 : 1.5) {
    const sd = Math.sqrt(lambda);
    const r = checkHat(ptrs(lambda), Math.max(0, Math.floor(lambda - 14 * sd - 10)), Math.ceil(lambda + 14 * sd + 10));
    assert.ok(r.maxRatio <= 0.99, `lambda ${lambda}: hat ratio ${r.maxRatio}`);
    assert.ok(r.minSqueezeMargin >= 0.005, `lambda ${lambda}: squeeze margin ${r.minSqueezeMargin}`);
    assert.ok(r.maxQuickExcess <= 0, `lambda ${lambda}: quick rejection excess ${r.maxQuickExcess}`);
  }
});

test('BTRS hat dominates the binomial pmf and its squeeze is inside (exact check)', () => {
  for (let np = 10; np <= 1e6; np *= np < 40 ? 1.02 : 2) {
    for (const p of [0.5, 0.4, 0.25, 0.1, 0.01, 1e-4]) {
      const n = Math.round(np / p);
      if (n * p < 10) continue;
      const sd = Math.sqrt(n * p * (1 - p));
      const r = checkHat(btrs(n, p), Math.max(0, Math.floor(n * p - 14 * sd - 10)), Math.min(n, Math.ceil(n * p + 14 * sd + 10)));
      assert.ok(r.maxRatio <= 0.99, `n ${n}, p ${p}: hat ratio ${r.maxRatio}`);
      assert.ok(r.minSqueezeMargin >= 0.01, `n ${n}, p ${p}: squeeze margin ${r.minSqueezeMargin}`);
    }
  }
});

test('Poisson and binomial edge cases', () => {
  const rng = seededRng(3);
  assert.equal(samplePoisson(rng, 0), 0);
  assert.equal(sampleBinomial(rng, 0, 0.5), 0);
  assert.equal(sampleBinomial(rng, 10, 0), 0);
  assert.equal(sampleBinomial(rng, 10, 1), 10);
  assert.equal(sampleBinomial(rng, 2 ** 53 - 1, 1), 2 ** 53 - 1);
});

test('shuffleInPlace makes all 24 orders of 4 elements equally likely (chi-square)', () => {
  const rng = seededRng(4);
  const counts = new Map<string, number>();
  const trials = 120_000;
  for (let i = 0; i < trials; i++) {
    const key = shuffleInPlace(rng, ['a', 'b', 'c', 'd']).join('');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  assert.equal(counts.size, 24);
  const result = chiSquareTest([...counts.values()], new Array(24).fill(trials / 24));
  assert.ok(result.pValue > ALPHA, formatResult(result));
});

test('shuffleInPlace works on typed arrays and returns its argument; randomPermutation is a permutation', () => {
  const rng = seededRng(5);
  const typed = Float64Array.from([1, 2, 3, 4, 5]);
  assert.equal(shuffleInPlace(rng, typed), typed);
  assert.deepEqual([...typed].sort(), [1, 2, 3, 4, 5]);
  assert.deepEqual(shuffleInPlace(rng, []), []);
  const perm = randomPermutation(rng, 1000);
  assert.ok(perm instanceof Uint32Array);
  assert.deepEqual([...perm].sort((a, b) => a - b), Array.from({ length: 1000 }, (_, i) => i));
  assert.equal(randomPermutation(rng, 0).length, 0);
  // Position of element 0 over many permutations of 10 is uniform.
  const counts = new Float64Array(10);
  for (let i = 0; i < 50_000; i++) counts[randomPermutation(rng, 10).indexOf(0)]++;
  assert.ok(chiSquareTest(counts, new Float64Array(10).fill(5000)).pValue > ALPHA);
});

test('shufflePrefixInPlace: the first m entries of a REUSED array are a uniform ordered sample of m without replacement (chi-square), in O(m) draws', () => {
  const rng = seededRng(6);
  // One array reused across draws, as shuffled SGD's partial epochs reuse it: whatever order the
  // previous draw left, each of the 5 x 4 = 20 ordered pairs of 5 entries is equally likely.
  const array = Uint32Array.from([0, 1, 2, 3, 4]);
  const counts = new Map<string, number>();
  const trials = 100_000;
  for (let i = 0; i < trials; i++) {
    const key = `${shufflePrefixInPlace(rng, array, 2)[0]}${array[1]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  assert.equal(counts.size, 20);
  const result = chiSquareTest([...counts.values()], new Array(20).fill(trials / 20));
  assert.ok(result.pValue > ALPHA, formatResult(result));
  assert.deepEqual([...array].sort(), [0, 1, 2, 3, 4], 'still a permutation of its entries');
  // m draws: the prefix of one entry of 10^6 costs one index (a word or two), not a pass over the array.
  const counting = seededRng(7);
  let draws = 0;
  const wrapped = { nextUint32: () => (draws++, counting.nextUint32()), nextDouble: () => counting.nextDouble(), secure: false, description: 'counting' };
  shufflePrefixInPlace(wrapped, new Uint32Array(1_000_000), 1);
  assert.ok(draws >= 1 && draws <= 4, `${draws} words drawn for one index below 10^6`);
  assert.deepEqual([...shufflePrefixInPlace(rng, [7, 8], 0)], [7, 8]);
  assert.throws(() => shufflePrefixInPlace(rng, [1, 2], 3), /m must be/);
});

for (const q of [0.01, 0.5]) {
  test(`poissonSubsampleMask(n, ${q}): counts ~ Binomial(n, q), every index equally likely`, () => {
    const rng = seededRng(Math.round(q * 1000));
    const n = 1000;
    const trials = 4000;
    const counts = new Float64Array(trials);
    const perIndex = new Float64Array(n);
    for (let t = 0; t < trials; t++) {
      const mask = poissonSubsampleMask(rng, n, q);
      assert.equal(mask.length, n);
      for (let i = 0; i < n; i++) {
        assert.ok(mask[i] === 0 || mask[i] === 1);
        counts[t] += mask[i];
        perIndex[i] += mask[i];
      }
    }
    const result = discreteChiSquare(counts, binomialPmf(n, q), Math.floor(n * q), [0, n]);
    assert.ok(result.pValue > ALPHA, `counts: ${formatResult(result)}`);
    // Each index is selected Binomial(trials, q) times, independently across indices, so
    // sum_i (c_i - trials q)^2 / (trials q (1 - q)) is approximately chi-square with n degrees of freedom.
    let statistic = 0;
    for (let i = 0; i < n; i++) statistic += (perIndex[i] - trials * q) ** 2 / (trials * q * (1 - q));
    const upper = chiSquareSurvival(statistic, n);
    assert.ok(upper > ALPHA && 1 - upper > ALPHA, `per-index statistic ${statistic}, P(chi2_${n} > it) = ${upper}`);
  });
}

test('poissonSubsampleIndices: sorted distinct indices; same stream as the mask', () => {
  for (const q of [0.003, 0.3]) {
    const indices = poissonSubsampleIndices(seededRng(77), 100_000, q);
    const mask = poissonSubsampleMask(seededRng(77), 100_000, q);
    assert.ok(indices instanceof Uint32Array);
    assert.deepEqual([...indices], [...mask.keys()].filter((i) => mask[i] === 1));
    for (let i = 1; i < indices.length; i++) assert.ok(indices[i] > indices[i - 1]);
    assert.ok(proportionZTest(indices.length, 100_000, q).pValue > ALPHA);
  }
  assert.equal(poissonSubsampleIndices(seededRng(1), 50, 0).length, 0);
  assert.deepEqual([...poissonSubsampleIndices(seededRng(1), 5, 1)], [0, 1, 2, 3, 4]);
  assert.deepEqual([...poissonSubsampleMask(seededRng(1), 3, 1)], [1, 1, 1]);
  assert.deepEqual([...poissonSubsampleMask(seededRng(1), 3, 0)], [0, 0, 0]);
});

test('discrete samplers are deterministic under a seed', () => {
  const draw = (seed: number): number[] => {
    const rng = seededRng(seed);
    return [
      samplePoisson(rng, 3),
      samplePoisson(rng, 1e6),
      sampleBinomial(rng, 100, 0.2),
      sampleBinomial(rng, 1e9, 0.4),
      ...randomPermutation(rng, 20),
      ...poissonSubsampleIndices(rng, 1000, 0.05),
    ];
  };
  assert.deepEqual(draw(8), draw(8));
  assert.notDeepEqual(draw(8), draw(9));
});

test('discrete samplers validate their parameters', () => {
  const rng = seededRng(6);
  for (const bad of [-0.1, 1.1, NaN]) {
    assert.throws(() => sampleBernoulli(rng, bad), InvalidParameterError);
    assert.throws(() => sampleBinomial(rng, 10, bad), InvalidParameterError);
    assert.throws(() => poissonSubsampleMask(rng, 10, bad), InvalidParameterError);
    assert.throws(() => poissonSubsampleIndices(rng, 10, bad), InvalidParameterError);
  }
  for (const bad of [-1, NaN, Infinity, 2 ** 53]) assert.throws(() => samplePoisson(rng, bad), InvalidParameterError);
  for (const bad of [-1, 1.5, NaN, 2 ** 53]) assert.throws(() => sampleBinomial(rng, bad, 0.5), InvalidParameterError);
  for (const bad of [-1, 1.5, 2 ** 32]) {
    assert.throws(() => randomPermutation(rng, bad), InvalidParameterError);
    assert.throws(() => poissonSubsampleMask(rng, bad, 0.5), InvalidParameterError);
  }
  assert.throws(() => shuffleInPlace(rng, null as unknown as number[]), InvalidParameterError);
});
