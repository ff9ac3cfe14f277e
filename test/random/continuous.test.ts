import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError } from '../../src/errors.js';
import { zigguratTopLayerMismatch } from '../../src/random/ziggurat.js';
import { fillGaussian, sampleExponential, sampleGaussian, sampleLaplace, seededRng } from '../../src/random/index.js';
import { ALPHA, formatResult, ksTest, normalCdf, proportionZTest, varianceZTest } from '../helpers/stats.js';

const N = 200_000;

test('Ziggurat tables are consistent: the top layer has the common area to 1e-12', () => {
  assert.ok(zigguratTopLayerMismatch() < 1e-12, String(zigguratTopLayerMismatch()));
});

test('sampleGaussian(mean, std) is N(mean, std^2) (KS against Phi)', () => {
  const rng = seededRng(1);
  const xs = Float64Array.from({ length: N }, () => sampleGaussian(rng, 3, 2));
  const result = ksTest(xs, (x) => normalCdf((x - 3) / 2));
  assert.ok(result.pValue > ALPHA, formatResult(result));
  assert.ok(varianceZTest(xs, 4).pValue > ALPHA);
});

test('fillGaussian is N(0, std^2) (KS), fills in place and returns its argument', () => {
  const rng = seededRng(2);
  const out = new Float64Array(N);
  assert.equal(fillGaussian(rng, out, 0.5), out);
  const result = ksTest(out, (x) => normalCdf(x / 0.5));
  assert.ok(result.pValue > ALPHA, formatResult(result));
  assert.ok(varianceZTest(out, 0.25).pValue > ALPHA);
});

test('fillGaussian tail beyond the Ziggurat base (|z| > 3.654) has the right mass and shape', () => {
  // 2 Phi(-3.6541528853610088) = 2.58e-4 of all samples come from the tail algorithm.
  const rng = seededRng(3);
  const r = 3.6541528853610088;
  const out = new Float64Array(2_000_000);
  fillGaussian(rng, out);
  const tail = out.filter((x) => Math.abs(x) > r);
  const p = 2 * normalCdf(-r);
  assert.ok(proportionZTest(tail.length, out.length, p).pValue > ALPHA, `${tail.length} tail samples`);
  // Conditional law of |z| given |z| > r: P(|z| <= x | |z| > r) = 1 - Phi(-x) / Phi(-r).
  const result = ksTest(tail.map(Math.abs), (x) => (x <= r ? 0 : 1 - normalCdf(-x) / normalCdf(-r)));
  assert.ok(result.pValue > ALPHA, formatResult(result));
  const negatives = out.filter((x) => x < 0).length;
  assert.ok(proportionZTest(negatives, out.length, 0.5).pValue > ALPHA);
});

test('sampleLaplace(scale) has density exp(-|x|/scale) / (2 scale) (KS)', () => {
  const rng = seededRng(4);
  const scale = 1.5;
  const xs = Float64Array.from({ length: N }, () => sampleLaplace(rng, scale));
  const cdf = (x: number): number => (x < 0 ? 0.5 * Math.exp(x / scale) : 1 - 0.5 * Math.exp(-x / scale));
  const result = ksTest(xs, cdf);
  assert.ok(result.pValue > ALPHA, formatResult(result));
});

test('sampleExponential(rate) has CDF 1 - exp(-rate x) (KS), default rate 1', () => {
  const rng = seededRng(5);
  for (const rate of [1, 0.01]) {
    const xs = Float64Array.from({ length: N / 2 }, () => (rate === 1 ? sampleExponential(rng) : sampleExponential(rng, rate)));
    assert.ok(xs.every((x) => x >= 0 && Number.isFinite(x)));
    const result = ksTest(xs, (x) => (x <= 0 ? 0 : -Math.expm1(-rate * x)));
    assert.ok(result.pValue > ALPHA, `rate ${rate}: ${formatResult(result)}`);
  }
});

test('continuous samplers are deterministic under a seed', () => {
  const draw = (seed: number): number[] => {
    const rng = seededRng(seed);
    const out = new Float64Array(100);
    fillGaussian(rng, out);
    return [...out, sampleGaussian(rng), sampleLaplace(rng, 1), sampleExponential(rng, 2)];
  };
  assert.deepEqual(draw(11), draw(11));
  assert.notDeepEqual(draw(11), draw(12));
});

test('continuous samplers validate their parameters', () => {
  const rng = seededRng(6);
  for (const bad of [0, -1, NaN, Infinity]) {
    assert.throws(() => sampleGaussian(rng, 0, bad), InvalidParameterError);
    assert.throws(() => fillGaussian(rng, new Float64Array(2), bad), InvalidParameterError);
    assert.throws(() => sampleLaplace(rng, bad), InvalidParameterError);
    assert.throws(() => sampleExponential(rng, bad), InvalidParameterError);
  }
  assert.throws(() => sampleGaussian(rng, NaN), InvalidParameterError);
  assert.throws(() => sampleGaussian(rng, Infinity), InvalidParameterError);
  assert.throws(() => fillGaussian(rng, [0, 0] as unknown as Float64Array), InvalidParameterError);
});
