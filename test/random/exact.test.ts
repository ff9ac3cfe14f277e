import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError } from '../../src/errors.js';
import { exactFallbackCount, sampleDiscreteGaussianUsing } from '../../src/random/exact.js';
import {
  doubleToRational,
  fillDiscreteGaussian,
  sampleBernoulliExpRational,
  sampleDiscreteGaussian,
  sampleDiscreteGaussianVariance,
  sampleDiscreteLaplace,
  seededRng,
  type Rng,
} from '../../src/random/index.js';
import {
  ALPHA,
  chiSquareTest,
  discreteChiSquare,
  formatResult,
  ksTest,
  meanZTest,
  normalCdf,
  proportionZTest,
  varianceZTest,
} from '../helpers/stats.js';

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

// 1 + 2^-52 is the rational (2^52 + 1) / 2^52: t = 2^52 + 1 > 2^52 draws its sign separately.
for (const scale of [0.7, 5, 1e4, 1 + 2 ** -52]) {
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
  test(`sampleDiscreteGaussian(${sigma}) (fast path): mean, variance and shape`, () => {
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

// ---------------------------------------------------------------------------------------------
// The fast path of the discrete Gaussian's acceptance step (doubles with a proven error bound)
// against the all-BigInt reference, the variance-parameter entry point and the bulk fill.
// ---------------------------------------------------------------------------------------------

/** An Rng that counts the 32-bit words drawn from `inner` (every draw of the exact samplers is a word). */
function countingRng(inner: Rng): Rng & { words: () => number } {
  let words = 0;
  return {
    secure: false,
    description: 'counting',
    nextUint32: () => {
      words++;
      return inner.nextUint32();
    },
    nextDouble: () => {
      words += 2;
      return inner.nextDouble();
    },
    words: () => words,
  };
}

/** sigma^2 as the exact rational num/den of the double sigma. */
function squareOf(sigma: number): [bigint, bigint] {
  const { num, den } = doubleToRational(sigma);
  return [num * num, den * den];
}

// Integers (5001 is on the plain path in `sampleDiscreteGaussian`, the others are not), a dyadic
// fraction, non-dyadic doubles (53-bit significands: sigma^2 has ~106 bits) and non-square rationals.
const FAST_VERSUS_BIGINT: [string, bigint, bigint][] = [
  ['sigma 5001', ...squareOf(5001)],
  ['sigma 1e5', ...squareOf(1e5)],
  ['sigma 123456789', ...squareOf(123456789)],
  ['sigma 2^40', ...squareOf(2 ** 40)],
  ['sigma 12345.5', ...squareOf(12345.5)],
  ['sigma 3.7e5 + 0.3', ...squareOf(3.7e5 + 0.3)],
  ['sigma 3.7', ...squareOf(3.7)],
  ['sigma^2 7/3', 7n, 3n],
  ['sigma^2 (10^17 + 3)/7', 10n ** 17n + 3n, 7n],
];

for (const [name, num, den] of FAST_VERSUS_BIGINT) {
  test(`discrete Gaussian, ${name}: fast path == BigInt reference, sample by sample and word by word`, () => {
    const seed = Number((num + den) % 100_000n) + 7;
    const fast = countingRng(seededRng(seed));
    const big = countingRng(seededRng(seed));
    for (let i = 0; i < 20_000; i++) {
      const x = sampleDiscreteGaussianUsing(fast, num, den, 'fast');
      const y = sampleDiscreteGaussianUsing(big, num, den, 'bigint');
      if (x !== y || fast.words() !== big.words()) {
        assert.fail(`sample ${i}: fast ${x} after ${fast.words()} words, BigInt ${y} after ${big.words()} words`);
      }
    }
  });
}

test('sampleDiscreteGaussian and fillDiscreteGaussian are the fast path itself above the plain range', () => {
  for (const sigma of [1e5, 123456789, 2 ** 40, 3.7e5 + 0.3]) {
    const [num, den] = squareOf(sigma);
    const a = seededRng(31);
    const b = seededRng(31);
    const filled = fillDiscreteGaussian(a, new Float64Array(5000), sigma);
    for (let i = 0; i < filled.length; i++) assert.equal(filled[i], sampleDiscreteGaussianUsing(b, num, den, 'bigint'), `sigma ${sigma}, sample ${i}`);
    assert.equal(a.nextUint32(), b.nextUint32(), 'same position in the stream');
  }
});

test('fillDiscreteGaussian equals repeated sampleDiscreteGaussian (plain path too) and validates sigma', () => {
  for (const sigma of [0.5, 3.7, 1000, 1e5]) {
    const a = seededRng(41);
    const b = seededRng(41);
    const out = new Float64Array(3000);
    assert.equal(fillDiscreteGaussian(a, out, sigma), out);
    for (let i = 0; i < out.length; i++) assert.equal(out[i], sampleDiscreteGaussian(b, sigma));
  }
  assert.equal(fillDiscreteGaussian(seededRng(1), new Float64Array(0), 5).length, 0);
  for (const bad of [0, -1, NaN, Infinity, 2 ** 46 * 1.5]) {
    assert.throws(() => fillDiscreteGaussian(seededRng(1), new Float64Array(1), bad), InvalidParameterError, `sigma ${bad}`);
  }
});

// Scripted words. `uniformBelow(n)` for n <= 2^21 (bits.ts, Lemire) maps a word w to floor(w n / 2^32)
// when (w n) mod 2^32 >= n; `uint53` is hi 2^21 + (lo >>> 11).

/** A word for which `uniformBelow(n)` (n <= 2^21) returns r without a rejection. */
function wordFor(n: number, r: number): number {
  for (let w = Math.ceil((r * 2 ** 32) / n); ; w++) {
    assert.equal(Math.floor((w * n) / 2 ** 32), r, 'no word found');
    if ((w * n) % 2 ** 32 >= n) return w;
  }
}

/** The two words from which `uint53` builds x. */
function wordsFor53(x: number): number[] {
  return [Math.floor(x / 2 ** 21), (x % 2 ** 21) * 2 ** 11];
}

const FACTORIAL_9 = 362880;
/** Bernoulli(exp(-1)) (one word w below 9!): w in [1, 133496] succeeds (src/random/exact.ts). */
const EXP_MINUS_ONE_SUCCESS = wordFor(FACTORIAL_9, 1);
const EXP_MINUS_ONE_FAILURE = wordFor(FACTORIAL_9, FACTORIAL_9 - 1);

/**
 * Words making the discrete Laplace proposal of scale t (2t <= 2^21) return +(u + t v): one draw
 * below 2t gives U = u and the sign (+ for values below t); exp(-u/t) accepts at its first trial
 * (a draw below t of t - 1 >= u); v Bernoulli(exp(-1)) successes, then a failure.
 */
function proposalWords(t: number, u: number, v: number): number[] {
  const words = [wordFor(2 * t, u)];
  if (u !== 0) words.push(wordFor(t, t - 1));
  for (let i = 0; i < v; i++) words.push(EXP_MINUS_ONE_SUCCESS);
  words.push(EXP_MINUS_ONE_FAILURE);
  return words;
}

/**
 * The exact integer part and the first 53 fraction bits of gamma = c^2 / D at |y| = a, for sigma^2 =
 * sn (an integer) and t, and the next 53 bits (the tie's continuation), as `acceptBig` computes them.
 */
function gammaBits(sn: bigint, t: bigint, a: bigint): { integer: bigint; h: number; h2: number } {
  const c = a * t - sn;
  const den = 2n * sn * t * t;
  const scaled = (c * c) << 53n;
  const head = scaled / den;
  const rest = scaled - head * den;
  return { integer: head >> 53n, h: Number(head & ((1n << 53n) - 1n)), h2: Number((rest << 53n) / den) };
}

/** Runs one sample on a script with the given arithmetic; returns it with the words left and the fallbacks taken. */
function runScript(words: number[], sn: bigint, arithmetic: 'fast' | 'bigint'): { sample: number; left: number; fallbacks: number } {
  const rng = scriptedRng(words);
  const before = exactFallbackCount();
  const sample = sampleDiscreteGaussianUsing(rng, sn, 1n, arithmetic);
  return { sample, left: rng.remaining(), fallbacks: exactFallbackCount() - before };
}

test('fast path: 53 bits inside the ambiguity window go to the exact comparison and agree with BigInt', () => {
  // sigma = 1e5 (sigma^2 = 10^10, t = 100001, 2t <= 2^21). The proposal y = 150000 (u = 150000 - t,
  // v = 1) has gamma = (150000 t - 10^10)^2 / (2 10^10 t^2) ~ 0.125: integer part 0, fraction bits h.
  const sn = 10n ** 10n;
  const t = 100001;
  const y = 150000;
  const { integer, h, h2 } = gammaBits(sn, BigInt(t), BigInt(y));
  assert.equal(integer, 0n);
  const proposal = proposalWords(t, y - t, 1);
  // A rejected proposal (Algorithm 1 stops at K = 2: Bernoulli(1/2) is the word 2^31, i.e. 1) is
  // followed by the proposal 0 (u = 0, v = 0), accepted by x = 2^53 - 1 (gamma ~ 0.5 there).
  const rejectThenZero = [2 ** 31, ...proposalWords(t, 0, 0), ...wordsFor53(2 ** 53 - 1)];
  const cases: { name: string; words: number[]; sample: number; fallbacks: number }[] = [
    // x = h: a tie on 53 bits. The next 53 bits below h2 mean U < f (trial 1 succeeds, then K = 2:
    // rejected); above h2, U > f (K = 1: accepted). Either way the exact continuation draws 2 words.
    { name: 'tie, then below', words: [...proposal, ...wordsFor53(h), ...wordsFor53(h2 - 1), ...rejectThenZero], sample: 0, fallbacks: 1 },
    { name: 'tie, then above', words: [...proposal, ...wordsFor53(h), ...wordsFor53(h2 + 1)], sample: y, fallbacks: 1 },
    // x = h - 1 and h + 1 lie inside the window (half-width >= 16 gamma + 8 |d| / t ~ 6 units of 2^-53):
    // decided by the exact h without further words.
    { name: 'just below h', words: [...proposal, ...wordsFor53(h - 1), ...rejectThenZero], sample: 0, fallbacks: 1 },
    { name: 'just above h', words: [...proposal, ...wordsFor53(h + 1)], sample: y, fallbacks: 1 },
    // Far from h: decided by the error bound alone.
    { name: 'far below h', words: [...proposal, ...wordsFor53(h - 1000), ...rejectThenZero], sample: 0, fallbacks: 0 },
    { name: 'far above h', words: [...proposal, ...wordsFor53(h + 1000)], sample: y, fallbacks: 0 },
  ];
  for (const c of cases) {
    const fast = runScript(c.words, sn, 'fast');
    const big = runScript(c.words, sn, 'bigint');
    assert.deepEqual(fast, { sample: c.sample, left: 0, fallbacks: c.fallbacks }, c.name);
    assert.deepEqual(big, { sample: c.sample, left: 0, fallbacks: 0 }, c.name);
  }
});

test('fast path: a fraction with no bits (gamma = 0) and an ambiguous integer part (gamma = 1) are exact', () => {
  // gamma = 0: sigma^2 = t (t - 1) with t = 100001 (t = isqrt(sigma^2) + 1 indeed), |y| = t - 1 gives
  // c = (t - 1) t - sigma^2 = 0. The fast bracket is [0, 2^-100]: x = 0 is ambiguous and the exact
  // tie has nothing left (U >= f = 0): Bernoulli(f) fails, K = 1, accepted. x = 1 is decided directly.
  {
    const t = 100001;
    const sn = BigInt(t) * BigInt(t - 1);
    assert.deepEqual(gammaBits(sn, BigInt(t), BigInt(t - 1)), { integer: 0n, h: 0, h2: 0 });
    for (const [x, fallbacks] of [[0, 1], [1, 0]]) {
      const words = [...proposalWords(t, t - 1, 0), ...wordsFor53(x)];
      assert.deepEqual(runScript(words, sn, 'fast'), { sample: t - 1, left: 0, fallbacks }, `x = ${x}`);
      assert.deepEqual(runScript(words, sn, 'bigint'), { sample: t - 1, left: 0, fallbacks: 0 }, `x = ${x}`);
    }
  }
  // gamma = 1 exactly: sigma^2 = 2 m^2 with m = 235416 (so 2 sigma^2 = (2m)^2), t = 332929, and
  // |y| = 2m + 2m^2/t = 803760 (t divides 2 m^2): c = 2 m t, c^2 = D. (Found by a search over m for
  // t | 2 m^2.) The double bracket straddles 1, so the whole step is the BigInt one: one
  // Bernoulli(exp(-1)) for the integer part, then a fraction of 0 (x = 5 fails at once).
  {
    const sn = 2n * 235416n ** 2n;
    const t = 332929;
    const y = 803760;
    assert.deepEqual(gammaBits(sn, BigInt(t), BigInt(y)), { integer: 1n, h: 0, h2: 0 });
    const proposal = proposalWords(t, y - 2 * t, 2);
    const accepted = [...proposal, EXP_MINUS_ONE_SUCCESS, ...wordsFor53(5)];
    // Integer part fails: rejected; then the proposal 0 (gamma = sigma^2 / (2 t^2) ~ 0.5) is accepted.
    const rejected = [...proposal, EXP_MINUS_ONE_FAILURE, ...proposalWords(t, 0, 0), ...wordsFor53(2 ** 53 - 1)];
    for (const [words, sample] of [[accepted, y], [rejected, 0]] as const) {
      assert.deepEqual(runScript(words, sn, 'fast'), { sample, left: 0, fallbacks: 1 });
      assert.deepEqual(runScript(words, sn, 'bigint'), { sample, left: 0, fallbacks: 0 });
    }
  }
});

for (const [sigma, seed] of [
  [1e5, 51],
  [2 ** 30, 52],
] as const) {
  test(`sampleDiscreteGaussian(${sigma}): variance and binned shape against the normal distribution`, () => {
    // Reference: for sigma >= 6 the discrete Gaussian's normaliser is sigma sqrt(2 pi) up to a factor
    // 1 + 2 sum_k exp(-2 pi^2 sigma^2 k^2) (Poisson summation), i.e. within 1e-300, and so is its
    // variance sigma^2. The probability of an integer bin [a, b) equals the normal probability of
    // [a - 1/2, b - 1/2) up to the midpoint rule's error, sum_x max |g''| / 24 over the cells with
    // g(x) = phi(x / sigma) / sigma, i.e. <= (int |phi''| / 24) / sigma^2 = 4 phi(1) / 24 / sigma^2
    // < 0.05 / sigma^2 in total (5e-12 at sigma = 1e5): not 1e-300, but far below the 1e-3 that
    // 2e5 samples resolve.
    const rng = seededRng(seed);
    const n = 200_000;
    const xs = fillDiscreteGaussian(rng, new Float64Array(n), sigma);
    assert.ok(xs.every((x) => Number.isSafeInteger(x)));
    assert.ok(meanZTest(xs, 0, sigma * sigma).pValue > ALPHA, 'mean');
    assert.ok(varianceZTest(xs, sigma * sigma).pValue > ALPHA, 'variance');
    // Bins with edges round(z sigma) for z = -3.5, -3.25, ..., 3.5, plus the two tails (>= 46 expected each).
    const edges: number[] = [];
    for (let z = -3.5; z <= 3.5; z += 0.25) edges.push(Math.round(z * sigma));
    const observed = new Float64Array(edges.length + 1);
    for (const x of xs) {
      let j = 0;
      while (j < edges.length && x >= edges[j]) j++;
      observed[j]++;
    }
    const cdf = edges.map((b) => normalCdf((b - 0.5) / sigma));
    const expected = observed.map((_, j) => n * ((j < edges.length ? cdf[j] : 1) - (j > 0 ? cdf[j - 1] : 0)));
    const result = chiSquareTest(observed, expected);
    assert.ok(result.pValue > ALPHA, formatResult(result));
  });
}

test('sampleDiscreteGaussianVariance(sigma^2) is sampleDiscreteGaussian(sigma) on the same words', () => {
  // Both reduce to the same sigma^2 = sn/sd and t = floor(sigma) + 1, hence the same arithmetic
  // (plain for 3, 2.5, 1000 and 8191, fast above) and identical outputs, reduced or not.
  for (const sigma of [3, 2.5, 3.7, 1000, 8191, 8192, 1e5, 123456789, 2 ** 40, 3.7e5 + 0.3]) {
    const [num, den] = squareOf(sigma);
    const a = seededRng(61);
    const b = seededRng(61);
    const c = seededRng(61);
    for (let i = 0; i < 2000; i++) {
      const x = sampleDiscreteGaussian(a, sigma);
      assert.equal(sampleDiscreteGaussianVariance(b, num, den), x, `sigma ${sigma}, sample ${i}`);
      assert.equal(sampleDiscreteGaussianVariance(c, 6n * num, 6n * den), x, `sigma ${sigma}, unreduced, sample ${i}`);
    }
  }
});

test('sampleDiscreteGaussianVariance(7/3) matches the exact pmf (chi-square), and its variance', () => {
  // Reference pmf: exp(-x^2 / (2 * 7/3)) = exp(-3 x^2 / 14), normalised by its sum over |x| <= 60
  // (the rest is below exp(-771)).
  let z = 0;
  for (let k = -60; k <= 60; k++) z += Math.exp((-3 * k * k) / 14);
  const pmf = (k: number): number => Math.exp((-3 * k * k) / 14) / z;
  let variance = 0;
  for (let k = -60; k <= 60; k++) variance += k * k * pmf(k);
  const rng = seededRng(71);
  const xs = new Float64Array(N);
  for (let i = 0; i < N; i++) xs[i] = sampleDiscreteGaussianVariance(rng, 7n, 3n);
  const result = discreteChiSquare(xs, pmf, 0);
  assert.ok(result.pValue > ALPHA, formatResult(result));
  assert.ok(varianceZTest(xs, variance).pValue > ALPHA, 'variance');
  // A huge non-square rational (fast path): sigma^2 = (10^17 + 3) / 7, the variance matches.
  const big = new Float64Array(50_000);
  for (let i = 0; i < big.length; i++) big[i] = sampleDiscreteGaussianVariance(rng, 10n ** 17n + 3n, 7n);
  assert.ok(varianceZTest(big, (1e17 + 3) / 7).pValue > ALPHA, 'variance (10^17 + 3) / 7');
});

test('sampleDiscreteGaussianVariance validates its parameters', () => {
  const rng = seededRng(81);
  for (const [num, den] of [
    [0n, 1n],
    [-1n, 1n],
    [1n, 0n],
    [1n, -2n],
    [1 as unknown as bigint, 1n],
    [1n, 1 as unknown as bigint],
    [(1n << 92n) + 1n, 1n],
    [(3n << 92n) + 1n, 3n],
  ] as const) {
    assert.throws(() => sampleDiscreteGaussianVariance(rng, num, den), InvalidParameterError, `${num}/${den}`);
  }
  // The largest (sigma = 2^46) and tiny variances work; a tiny one is almost always 0.
  assert.ok(Number.isSafeInteger(sampleDiscreteGaussianVariance(rng, 1n << 92n, 1n)));
  assert.ok(Number.isSafeInteger(sampleDiscreteGaussianVariance(rng, 3n << 92n, 3n)));
  assert.equal(sampleDiscreteGaussianVariance(rng, 1n, 10n ** 400n), 0);
});
