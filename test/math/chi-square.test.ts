/**
 * The regularised incomplete gamma function and chi-square lower quantiles against scipy 1.x
 * (`scipy.special.gammainc(a, x)` and `scipy.stats.chi2.ppf(p, df)`, run once with python3; the
 * values are pasted below).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError } from '../../src/errors.js';
import { chiSquareCdf, chiSquareLowerQuantile, regularizedLowerGamma } from '../../src/math/chi-square.js';
import { assertClose } from '../helpers/assert-close.js';

test('P(a, x) matches scipy.special.gammainc on both expansions', () => {
  const cases: [number, number, number][] = [
    [0.5, 0.1, 0.34527915398142317],
    [1, 2, 0.8646647167633873],
    [10, 3, 0.0011024881301154815],
    [10, 20, 0.9950045876916924],
    [1000, 950, 0.055054686230738045],
    [1999, 1900, 0.012402645760788707],
    [1e5, 1.01e5, 0.9991915784870744],
  ];
  for (const [a, x, expected] of cases) assertClose(regularizedLowerGamma(a, x), expected, 1e-11);
  assert.equal(regularizedLowerGamma(3, 0), 0);
  assertClose(chiSquareCdf(2, 2), 1 - Math.exp(-1), 1e-14); // chi^2_2 is exponential with mean 2
  assert.throws(() => regularizedLowerGamma(0, 1), InvalidParameterError);
  assert.throws(() => chiSquareCdf(-1, 3), InvalidParameterError);
});

test('chi-square lower quantiles match scipy.stats.chi2.ppf and are rounded down', () => {
  const cases: [number, number, number][] = [
    [0.025, 3998, 3824.641252746582],
    [0.025, 10, 3.2469727802368413],
    [0.05, 1, 0.003932140000019522],
    [0.001, 200, 143.8427949900008],
    [0.5, 7, 6.345811195521515],
  ];
  for (const [p, df, expected] of cases) {
    const x = chiSquareLowerQuantile(p, df);
    assert.ok(x <= expected * (1 + 1e-12) && x >= expected * (1 - 1e-9), `chi2.ppf(${p}, ${df}) = ${expected}, got ${x}`);
    assert.ok(chiSquareCdf(x, df) <= p, 'the quantile is on the conservative side');
  }
  assert.throws(() => chiSquareLowerQuantile(0.7, 3), /lower quantile/);
});
