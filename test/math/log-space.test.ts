import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError } from '../../src/errors.js';
import { log1mExp, log1pExp, logAddExp, logSubExp, logSumExp } from '../../src/math/log-space.js';
import { assertClose } from '../helpers/assert-close.js';

test('logSumExp: empty, -Infinity and +Infinity inputs', () => {
  assert.equal(logSumExp([]), -Infinity);
  assert.equal(logSumExp(new Float64Array(0)), -Infinity);
  assert.equal(logSumExp([-Infinity, -Infinity]), -Infinity);
  assert.equal(logSumExp([1, Infinity, -Infinity]), Infinity);
  assert.equal(logSumExp([-Infinity, 5]), 5);
  assert.throws(() => logSumExp([1, NaN]), InvalidParameterError);
});

test('logSumExp: huge and tiny values without overflow or loss', () => {
  // mpmath 1.3, mp.dps=50: 1000 + log(2)
  assertClose(logSumExp([1000, 1000]), 1000.6931471805599, 1e-15);
  // mpmath 1.3, mp.dps=50: log(exp(-1000) + exp(-1001) + exp(-1002))
  assertClose(logSumExp([-1000, -1001, -1002]), -999.5923940355556, 1e-15);
  // mpmath 1.3, mp.dps=50: log(1 + exp(-40)) (the small term must survive log1p)
  assertClose(logSumExp([0, -40]), 4.248354255291589e-18, 1e-14);
  // mpmath 1.3, mp.dps=50: 1e308 + log(2) rounds to 1e308 (and must not overflow)
  assert.equal(logSumExp([1e308, 1e308]), 1e308);
  // mpmath 1.3, mp.dps=50: log(e^3 + e^1 + e^2)
  assertClose(logSumExp(new Float64Array([3, 1, -Infinity, 2])), 3.40760596444438, 1e-15);
});

test('logAddExp', () => {
  // mpmath 1.3, mp.dps=50: log(exp(-1e-3) + exp(5))
  assertClose(logAddExp(-1e-3, 5), 5.006708658961129, 1e-15);
  assertClose(logAddExp(5, -1e-3), 5.006708658961129, 1e-15);
  assert.equal(logAddExp(-Infinity, -Infinity), -Infinity);
  assert.equal(logAddExp(-Infinity, 3), 3);
  assert.equal(logAddExp(Infinity, 3), Infinity);
  assert.throws(() => logAddExp(NaN, 0), InvalidParameterError);
});

test('log1mExp near 0, at the -ln 2 switch and far out', () => {
  // mpmath 1.3, mp.dps=50: log(-expm1(-1e-20))
  assertClose(log1mExp(-1e-20), -46.051701859880914, 1e-15);
  // mpmath 1.3, mp.dps=50: log(1 - exp(-1))
  assertClose(log1mExp(-1), -0.4586751453870819, 1e-15);
  // mpmath 1.3, mp.dps=50: log(1 - exp(-0.6931471805599453))
  assertClose(log1mExp(-Math.LN2), -0.6931471805599453, 1e-15);
  // mpmath 1.3, mp.dps=50: log1p(-exp(-50))
  assertClose(log1mExp(-50), -1.9287498479639178e-22, 1e-14);
  // mpmath 1.3, mp.dps=50: log1p(-exp(-700))
  assertClose(log1mExp(-700), -9.85967654375977e-305, 1e-14);
  // -exp(-800) ~ -3.7e-348 is below the smallest double: the answer is (negative) zero.
  assert.ok(log1mExp(-800) === 0);
  assert.ok(log1mExp(-Infinity) === 0);
  assert.equal(log1mExp(0), -Infinity);
  assert.throws(() => log1mExp(1e-300), InvalidParameterError);
  assert.throws(() => log1mExp(NaN), InvalidParameterError);
});

test('logSubExp', () => {
  // mpmath 1.3, mp.dps=50: log(exp(1000) - exp(999))
  assertClose(logSubExp(1000, 999), 999.5413248546129, 1e-15);
  // mpmath 1.3, mp.dps=50: log(1 - exp(-1e-20))
  assertClose(logSubExp(0, -1e-20), -46.051701859880914, 1e-15);
  // mpmath 1.3, mp.dps=50: log(exp(-745) - exp(-746)) (both terms underflow in linear space)
  assertClose(logSubExp(-745, -746), -745.4586751453871, 1e-15);
  assert.equal(logSubExp(3, 3), -Infinity);
  assert.equal(logSubExp(-Infinity, -Infinity), -Infinity);
  assert.equal(logSubExp(2, -Infinity), 2);
  assert.equal(logSubExp(Infinity, 2), Infinity);
  assert.throws(() => logSubExp(1, 2), InvalidParameterError);
  assert.throws(() => logSubExp(Infinity, Infinity), InvalidParameterError);
});

test('log1pExp across its four regimes', () => {
  // mpmath 1.3, mp.dps=50: log1p(exp(x)) for x = -700, -20, 0, 20, 30, 800
  assertClose(log1pExp(-700), 9.85967654375977e-305, 1e-14);
  assertClose(log1pExp(-20), 2.061153620314381e-9, 1e-15);
  assertClose(log1pExp(0), 0.6931471805599453, 1e-15);
  assertClose(log1pExp(20), 20.000000002061153, 1e-15);
  assertClose(log1pExp(30), 30.000000000000092, 1e-15);
  assert.equal(log1pExp(800), 800);
  assert.equal(log1pExp(Infinity), Infinity);
  assert.equal(log1pExp(-Infinity), 0);
});
