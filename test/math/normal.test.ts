import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { InvalidParameterError } from '../../src/errors.js';
import {
  normalCdf,
  normalLogCdf,
  normalLogPdf,
  normalLogSf,
  normalQuantile,
  normalQuantileOfLog,
  normalSf,
} from '../../src/math/normal.js';
import { assertClose } from '../helpers/assert-close.js';

// Reference values: mpmath 1.3, mp.dps=50, logcdf(x) = log(ncdf(x)) for x < 0 and
// log1p(-ncdf(-x)) for x >= 0.
const LOG_CDF: [number, number][] = [
  [-1000, -500007.82669481216],
  [-40, -804.6084420137538],
  [-37, -689.0305855768906],
  [-10, -53.23128515051247],
  [-1.5, -2.7059444008238898],
  [-0.5, -1.1759117615936185],
  [0, -0.6931471805599453],
  [1, -0.17275377902344988],
  [5, -2.866516129637636e-7],
  [10, -7.619853024160525e-24],
  [30, -4.906713927148187e-198],
  [37, -5.725571222524577e-300],
];

test('normalLogCdf deep in both tails', () => {
  for (const [x, expected] of LOG_CDF) assertClose(normalLogCdf(x), expected, 1e-14, 0, `normalLogCdf(${x})`);
  // The brief's 1e-12 requirement at -1000 and -40, stated explicitly:
  assertClose(normalLogCdf(-1000), -500007.82669481216, 1e-12);
  assertClose(normalLogCdf(-40), -804.6084420137538, 1e-12);
  // log Phi(40) = -3.6e-350 underflows: the closest double is (negative) zero.
  assert.ok(normalLogCdf(40) === 0);
  assert.equal(normalLogCdf(-Infinity), -Infinity);
  assert.ok(normalLogCdf(Infinity) === 0);
  assert.equal(normalLogCdf(-1e200), -Infinity); // -5e399 is below -Number.MAX_VALUE
  assert.throws(() => normalLogCdf(NaN), InvalidParameterError);
});

test('normalLogSf is the mirror image of normalLogCdf', () => {
  for (const [x, expected] of LOG_CDF) assertClose(normalLogSf(-x), expected, 1e-14, 0, `normalLogSf(${-x})`);
  fc.assert(
    fc.property(fc.double({ min: -1e4, max: 1e4, noNaN: true }), (x) => {
      assert.equal(normalLogSf(x), normalLogCdf(-x));
    }),
  );
});

test('normalCdf and normalSf in the tails', () => {
  // mpmath 1.3, mp.dps=50: ncdf(x)
  const cases: [number, number][] = [
    [-37, 5.725571222524577e-300],
    [-20, 2.7536241186062337e-89],
    [-5, 2.866515718791939e-7],
    [-1.5, 0.06680720126885807],
    [-0.3, 0.3820885778110474],
    [0, 0.5],
    [2, 0.9772498680518208],
    [8, 0.9999999999999993],
  ];
  for (const [x, expected] of cases) {
    assertClose(normalCdf(x), expected, 2e-15, 0, `normalCdf(${x})`);
    assertClose(normalSf(-x), expected, 2e-15, 0, `normalSf(${-x})`);
  }
  // mpmath 1.3, mp.dps=50: ncdf(-10), ncdf(-30)
  assertClose(normalSf(10), 7.619853024160525e-24, 2e-15);
  assertClose(normalSf(30), 4.906713927148187e-198, 2e-15);
  assert.equal(normalCdf(-Infinity), 0);
  assert.equal(normalCdf(Infinity), 1);
  assert.equal(normalCdf(-40), 0); // 3.6e-350 underflows
});

test('normalLogPdf', () => {
  // mpmath 1.3, mp.dps=50: log(npdf(3))
  assertClose(normalLogPdf(3), -5.418938533204673, 1e-15);
  assert.equal(normalLogPdf(Infinity), -Infinity);
});

test('normalQuantile from 1e-300 to 1 - 1e-16', () => {
  // mpmath 1.3, mp.dps=50: -sqrt(2)*erfinv(1 - 2p), or for p < 1e-30 findroot of log(ncdf(x)) = log(p)
  const cases: [number, number][] = [
    [1e-300, -37.0470962993612],
    [1e-200, -30.20559417957964],
    [1e-20, -9.262340089798407],
    [1e-5, -4.264890793922825],
    [0.025, -1.9599639845400543],
    [0.3, -0.5244005127080408],
    [1e-320, -38.26912534303265], // subnormal p (the double nearest 1e-320)
    // p near 1: the reference uses the exact 1 - p of the double p (mpmath: 1 - mpf(p)).
    [1 - 1e-10, 6.361340889697422],
    [1 - 1e-16, 8.209536151601387],
    [0.975, 1.9599639845400538],
  ];
  for (const [p, expected] of cases) assertClose(normalQuantile(p), expected, 1e-15, 0, `normalQuantile(${p})`);
  assert.equal(normalQuantile(0.5), 0);
  assert.equal(normalQuantile(0), -Infinity);
  assert.equal(normalQuantile(1), Infinity);
  for (const bad of [-1e-300, 1 + 1e-15, NaN, Infinity]) assert.throws(() => normalQuantile(bad), InvalidParameterError);
});

test('normalQuantileOfLog for probabilities far below the double range', () => {
  // mpmath 1.3, mp.dps=50: findroot(log(ncdf(x)) - logP), or sqrt(2)*erfinv(1 - 2(1 - exp(logP))) for logP > log(1/2)
  const cases: [number, number][] = [
    [-1e4, -141.37983987312717],
    [-1e5, -447.1978936785251],
    [-690, -37.02617205029431],
    [-3, -1.6469217205277147],
    [-0.1, 1.3096177994584932],
    [-1e-30, 11.464024688443615],
  ];
  for (const [logP, expected] of cases) assertClose(normalQuantileOfLog(logP), expected, 1e-15, 0, `normalQuantileOfLog(${logP})`);
  assert.equal(normalQuantileOfLog(0), Infinity);
  assert.equal(normalQuantileOfLog(-Infinity), -Infinity);
  assert.ok(Number.isFinite(normalQuantileOfLog(-1e300)) && normalQuantileOfLog(-1e300) < -1.4e150);
  assert.throws(() => normalQuantileOfLog(1e-3), InvalidParameterError);
  assert.throws(() => normalQuantileOfLog(NaN), InvalidParameterError);
});

test('property: normalQuantile inverts normalCdf and normalSf', () => {
  fc.assert(
    fc.property(fc.double({ min: -37, max: 0, noNaN: true }), (x) => {
      assertClose(normalQuantile(normalCdf(x)), x, 1e-13, 1e-15);
      assertClose(-normalQuantile(normalSf(-x)), -x, 1e-13, 1e-15);
    }),
    { numRuns: 500 },
  );
});

test('property: log Phi(normalQuantile(p)) = log p for p log-uniform in [1e-300, 1)', () => {
  fc.assert(
    fc.property(fc.double({ min: -300, max: -1e-12, noNaN: true }), (e) => {
      const p = 10 ** e;
      // Phi(x) has condition number ~x^2 in x, log Phi only ~2: compare in log space.
      assertClose(normalLogCdf(normalQuantile(p)), Math.log(p), 1e-13, 1e-15);
    }),
    { numRuns: 500 },
  );
});

test('property: normalLogCdf(normalQuantileOfLog(logP)) = logP for logP in [-1e5, -1e-300]', () => {
  fc.assert(
    fc.property(fc.double({ min: -5, max: 300, noNaN: true }), (e) => {
      const logP = -(10 ** -e);
      assertClose(normalLogCdf(normalQuantileOfLog(logP)), logP, 1e-12);
    }),
    { numRuns: 500 },
  );
});
