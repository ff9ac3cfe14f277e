import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError } from '../src/errors.js';
import {
  doubleToRational,
  sampleBernoulliExpRational,
  sampleDiscreteGaussian,
  sampleDiscreteLaplace,
  seededRng,
  type Rng,
} from '../src/random/index.js';
import {
  ALPHA,
  discreteChiSquare,
  formatResult,
  ksTest,
  meanZTest,
  normalCdf,
  proportionZTest,
  varianceZTest,
} from './helpers/stats.js';

const N = 200_000;

test('doubleToRational gives the exact reduced fraction of a double', () => {
  assert.deepEqual(doubleToRational(0), { num: 0n, den: 1n });
  assert.deepEqual(doubleToRational(-0), { num: 0n, den: 1n });
  assert.deepEqual(doubleToRational(3), { num: 3n, den: 1n });
  assert.deepEqual(doubleToRational(0.5), { num: 1n, den: 2n });
  assert.deepEqual(doubleToRational(-2.5), { num: -5n, den: 2n });
  assert.deepEqual(doubleToRational(1024), { num: 1024n, den: 1n });
  // 0.1 is 3602879701896397 / 2^55 (its 53-bit significand 0x1999999999999A, reduced by 2).
  assert.deepEqual(doubleToRational(0.1), { num: 3602879701896397n, den: 2n ** 55n });
  assert.deepEqual(doubleToRational(0.7), { num: 3152519739159347n, den: 2n ** 52n });
  assert.deepEqual(doubleToRational(Number.MIN_VALUE), { num: 1n, den: 2n ** 1074n });
  assert.deepEqual(doubleToRational(2 ** -1022 * 3), { num: 3n, den: 2n ** 1022n });
  assert.deepEqual(doubleToRational(Number.MAX_SAFE_INTEGER), { num: 2n ** 53n - 1n, den: 1n });
  assert.deepEqual(doubleToRational(Number.MAX_VALUE), { num: (2n ** 53n - 1n) << 971n, den: 1n });
  assert.deepEqual(doubleToRational(1e300).num, BigInt(1e300)); // BigInt(double) is exact too
  // Round trip: num / den converts back to the same double for arbitrary values.
  const rng = seededRng(1);
  for (let i = 0; i < 2000; i++) {
    const x = (rng.nextDouble() - 0.5) * 2 ** (Math.floor(rng.nextDouble() * 200) - 100);
    const { num, den } = doubleToRational(x);
    assert.equal(den & (den - 1n), 0n, 'denominator is a power of two');
    assert.ok(den === 1n || num % 2n !== 0n, 'fraction is reduced');
    assert.equal(Number(num) / Number(den), x);
  }
  for (const bad of [NaN, Infinity, -Infinity]) assert.throws(() => doubleToRational(bad), InvalidParameterError);
});

for (const [num, den] of [
  [0n, 1n],
  [3n, 10n],
  [5n, 2n],
  [40n, 1n],
  [1n, 1n],
  // gamma = 0.1 as the exact rational of the double 0.1: the denominator 2^55 exceeds 2^53 (BigInt path).
  [3602879701896397n, 2n ** 55n],
  // gamma = (2^80 + 1) / 2^81 + 1, a big numerator with an integer part.
  [2n ** 80n + 1n + 2n ** 81n, 2n ** 81n],
] as const) {
  test(`sampleBernoulliExpRational(${num}/${den}) succeeds with probability exp(-${num}/${den})`, () => {
    const rng = seededRng(Number(num % 1000n) + 17);
    const gamma = Number(num) / Number(den);
    const p = Math.exp(-gamma);
    let successes = 0;
    for (let i = 0; i < N; i++) if (sampleBernoulliExpRational(rng, num, den)) successes++;
    if (gamma === 0) assert.equal(successes, N);
    else if (gamma === 40) assert.equal(successes, 0); // expected 2e5 e^-40 = 8.5e-13 successes
    else assert.ok(proportionZTest(successes, N, p).pValue > ALPHA, `${successes} of ${N}, expected p ${p}`);
  });
}

/** An Rng replaying fixed 32-bit words, to drive the exact samplers down paths of probability 2^-53. */
function scriptedRng(words: number[]): Rng & { remaining: () => number } {
  let i = 0;
  const next = (): number => {
    if (i >= words.length) throw new Error('script exhausted');
    return words[i++];
  };
  return {
    secure: false,
    description: 'scripted',
    nextUint32: next,
    nextDouble: () => (next() * 2 ** 21 + (next() >>> 11)) * 2 ** -53,
    remaining: () => words.length - i,
  };
}

test('Bernoulli(exp(-r/d)) with d > 2^53 resolves ties of the first 53 bits exactly', () => {
  // gamma = r/d = 2049 / 2^64, so r/d = (1 + 2^-11) 2^-53: its first 53 bits are h = 1, the rest 2^-11.
  // Algorithm 1 starts with Bernoulli(gamma): U = (x1 + (x2 + ...) 2^-53) 2^-53 < r/d?
  // x1 = uint53(0, 2048) = 1 = h ties; then x2 = uint53(0, 0) = 0 < 2^42 = 2^-11 2^53: success, K = 2;
  // then Bernoulli(1/2) from the word 2^31 + 5 is uniformBelow(2) = 1, a failure: K = 2 is even, false.
  const a = scriptedRng([0, 2048, 0, 0, 2 ** 31 + 5]);
  assert.equal(sampleBernoulliExpRational(a, 2049n, 2n ** 64n), false);
  assert.equal(a.remaining(), 0);
  // Same tie, then x2 = 2^43 > 2^42: Bernoulli(gamma) fails at K = 1 (odd): true.
  const b = scriptedRng([0, 2048, 2 ** 22, 0]);
  assert.equal(sampleBernoulliExpRational(b, 2049n, 2n ** 64n), true);
  assert.equal(b.remaining(), 0);
  // Tie again at x2 = 2^42 with nothing left over: U >= r/d exactly, so Bernoulli(gamma) fails: true.
  const c = scriptedRng([0, 2048, 2 ** 21, 0]);
  assert.equal(sampleBernoulliExpRational(c, 2049n, 2n ** 64n), true);
  assert.equal(c.remaining(), 0);
});

test('sampleBernoulliExpRational: exp(-1)^k structure at gamma = 3 (many draws)', () => {
  const rng = seededRng(3);
  let successes = 0;
  const trials = 1_000_000;
  for (let i = 0; i < trials; i++) if (sampleBernoulliExpRational(rng, 3n, 1n)) successes++;
  assert.ok(proportionZTest(successes, trials, Math.exp(-3)).pValue > ALPHA);
});

const discreteLaplacePmf = (scale: number) => {
  const norm = Math.tanh(1 / (2 * scale)); // (1 - e^{-1/s}) / (1 + e^{-1/s})
  return (k: number): number => norm * Math.exp(-Math.abs(k) / scale);
};

for (const scale of [0.7, 5, 1e4]) {
  test(`sampleDiscreteLaplace(${scale}) matches the exact pmf (chi-square), mean 0`, () => {
    const rng = seededRng(Math.round(scale * 10));
    const xs = new Float64Array(N);
    for (let i = 0; i < N; i++) xs[i] = sampleDiscreteLaplace(rng, scale);
    assert.ok(xs.every((x) => Number.isSafeInteger(x) && !Object.is(x, -0)));
    const result = discreteChiSquare(xs, discreteLaplacePmf(scale), 0);
    assert.ok(result.pValue > ALPHA, formatResult(result));
    // Variance of the discrete Laplace: 2 e^{-1/s} / (1 - e^{-1/s})^2.
    const e = Math.exp(-1 / scale);
    assert.ok(meanZTest(xs, 0, (2 * e) / (1 - e) ** 2).pValue > ALPHA, 'mean');
  });
}

test('sampleDiscreteLaplace at a tiny scale is almost always 0, and symmetric', () => {
  const rng = seededRng(8);
  let nonzero = 0;
  for (let i = 0; i < 20_000; i++) if (sampleDiscreteLaplace(rng, 1e-300) !== 0) nonzero++;
  assert.equal(nonzero, 0); // P(x != 0) = 2 e^{-1e300} / (1 + ...) = 0
  // scale 0.1 (BigInt-free path with a 2^55 denominator): P(x != 0) = 2 e^-10 / (1 + e^-10).
  const p = (2 * Math.exp(-10)) / (1 + Math.exp(-10));
  let count = 0;
  for (let i = 0; i < N; i++) if (sampleDiscreteLaplace(rng, 0.1) !== 0) count++;
  assert.ok(proportionZTest(count, N, p).pValue > ALPHA, `${count}`);
});

const discreteGaussianPmf = (sigma: number) => {
  const half = Math.ceil(40 * sigma) + 10;
  let z = 0;
  for (let k = -half; k <= half; k++) z += Math.exp(-(k * k) / (2 * sigma * sigma));
  return (k: number): number => Math.exp(-(k * k) / (2 * sigma * sigma)) / z;
};

// 0.5 and 3 use plain numbers, 3.7 (a 52-bit significand) exercises the BigInt path at small
// sigma, 2000 mostly plain numbers with BigInt for |y| beyond ~25 sigma.
for (const sigma of [0.5, 3, 3.7, 2000]) {
  test(`sampleDiscreteGaussian(${sigma}) matches the exact pmf (chi-square)`, () => {
    const rng = seededRng(Math.round(sigma * 10) + 1);
    const xs = new Float64Array(N);
    for (let i = 0; i < N; i++) xs[i] = sampleDiscreteGaussian(rng, sigma);
    assert.ok(xs.every((x) => Number.isSafeInteger(x) && !Object.is(x, -0)));
    const pmf = discreteGaussianPmf(sigma);
    const result = discreteChiSquare(xs, pmf, 0);
    assert.ok(result.pValue > ALPHA, formatResult(result));
    let variance = 0;
    for (let k = -Math.ceil(40 * sigma) - 10; k <= Math.ceil(40 * sigma) + 10; k++) variance += k * k * pmf(k);
    assert.ok(meanZTest(xs, 0, variance).pValue > ALPHA, 'mean');
    assert.ok(varianceZTest(xs, variance).pValue > ALPHA, 'variance');
  });
}

for (const sigma of [1e5, 1e8, 123456789.123]) {
  test(`sampleDiscreteGaussian(${sigma}) (BigInt arithmetic): mean, variance and shape`, () => {
    // For sigma >= 1 the discrete Gaussian's variance equals sigma^2 up to a relative error of order
    // sigma^2 e^{-2 pi^2 sigma^2} (Poisson summation), and its CDF at an integer x is
    // Phi((x + 1/2) / sigma) up to O(1 / sigma^2), far below what 5e4 samples can resolve.
    const rng = seededRng(Math.round(Math.log(sigma) * 1000));
    const n = 50_000;
    const xs = new Float64Array(n);
    for (let i = 0; i < n; i++) xs[i] = sampleDiscreteGaussian(rng, sigma);
    assert.ok(xs.every((x) => Number.isSafeInteger(x)));
    assert.ok(meanZTest(xs, 0, sigma * sigma).pValue > ALPHA, 'mean');
    assert.ok(varianceZTest(xs, sigma * sigma).pValue > ALPHA, 'variance');
    const result = ksTest(xs, (x) => normalCdf((x + 0.5) / sigma));
    assert.ok(result.pValue > ALPHA, formatResult(result));
  });
}

test('exact samplers are deterministic under a seed', () => {
  const draw = (seed: number): number[] => {
    const rng = seededRng(seed);
    const out: number[] = [];
    for (let i = 0; i < 50; i++) {
      out.push(sampleDiscreteGaussian(rng, 3.7), sampleDiscreteGaussian(rng, 1e6), sampleDiscreteLaplace(rng, 0.7));
      out.push(sampleBernoulliExpRational(rng, 7n, 3n) ? 1 : 0);
    }
    return out;
  };
  assert.deepEqual(draw(21), draw(21));
  assert.notDeepEqual(draw(21), draw(22));
});

test('exact samplers validate their parameters', () => {
  const rng = seededRng(6);
  for (const bad of [0, -1, NaN, Infinity, 2 ** 46 * 1.5]) {
    assert.throws(() => sampleDiscreteLaplace(rng, bad), InvalidParameterError, `scale ${bad}`);
    assert.throws(() => sampleDiscreteGaussian(rng, bad), InvalidParameterError, `sigma ${bad}`);
  }
  assert.throws(() => sampleBernoulliExpRational(rng, -1n, 2n), InvalidParameterError);
  assert.throws(() => sampleBernoulliExpRational(rng, 1n, 0n), InvalidParameterError);
  assert.throws(() => sampleBernoulliExpRational(rng, 1n, -3n), InvalidParameterError);
  assert.throws(() => sampleBernoulliExpRational(rng, 1 as unknown as bigint, 2n), InvalidParameterError);
  // The largest accepted sigma and scale work.
  assert.ok(Number.isSafeInteger(sampleDiscreteGaussian(rng, 2 ** 46)));
  assert.ok(Number.isSafeInteger(sampleDiscreteLaplace(rng, 2 ** 46)));
});
