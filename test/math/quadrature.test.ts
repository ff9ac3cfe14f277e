import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError, NumericalError } from '../../src/errors.js';
import { integrate } from '../../src/math/quadrature.js';
import { assertClose } from '../helpers/assert-close.js';

// mpmath 1.3, mp.dps=50: sqrt(2*pi)
const SQRT_2PI = 2.5066282746310007;

test('integrate: Gaussian over the whole line to 1e-12', () => {
  const r = integrate((x) => Math.exp(-0.5 * x * x), -Infinity, Infinity, { relTol: 1e-13 });
  assertClose(r.value, SQRT_2PI, 1e-12);
  assert.ok(r.errorEstimate <= 1e-13 * r.value);
  assert.ok(Math.abs(r.value - SQRT_2PI) <= r.errorEstimate + 4e-16 * SQRT_2PI, 'the estimate bounds the true error');
  assert.ok(r.evaluations % 15 === 0 && r.evaluations < 3000, `evaluations = ${r.evaluations}`);
});

test('integrate: half-infinite ranges', () => {
  assertClose(integrate((x) => Math.exp(-x), 0, Infinity, { relTol: 1e-12 }).value, 1, 1e-12);
  // mpmath 1.3, mp.dps=50: sqrt(2*pi)*ncdf(1)
  assertClose(integrate((x) => Math.exp(-0.5 * x * x), -Infinity, 1, { relTol: 1e-12 }).value, 2.108938529207649, 1e-12);
  // mpmath 1.3, mp.dps=50: pi
  assertClose(integrate((x) => 1 / (1 + x * x), -Infinity, Infinity, { relTol: 1e-12 }).value, Math.PI, 1e-12);
});

test('integrate: a sharply peaked integrand', () => {
  // mpmath 1.3, mp.dps=50: quad(1/(1e-6 + (x - 0.3)^2), [0, 0.3, 1])
  const r = integrate((x) => 1 / (1e-6 + (x - 0.3) ** 2), 0, 1, { relTol: 1e-11 });
  assertClose(r.value, 3136.8307621453014, 1e-10);
});

test('integrate: integrable endpoint singularities, reversed limits, empty range', () => {
  assertClose(integrate((x) => 1 / Math.sqrt(x), 0, 1, { relTol: 1e-10 }).value, 2, 1e-9);
  // mpmath 1.3, mp.dps=50: quad(log(x)*sqrt(x), [0, 1]) = -4/9
  assertClose(integrate((x) => Math.log(x) * Math.sqrt(x), 0, 1, { relTol: 1e-10 }).value, -4 / 9, 1e-9);
  assertClose(integrate((x) => x * x, 3, 0).value, -9, 1e-14);
  assert.deepEqual(integrate(Math.exp, 2, 2), { value: 0, errorEstimate: 0, evaluations: 0 });
  // An integral that is exactly 0 needs an absolute tolerance.
  assert.ok(Math.abs(integrate(Math.sin, -1, 1, { absTol: 1e-13 }).value) <= 1e-13);
});

test('integrate: throws instead of returning an inaccurate value', () => {
  // Divergent: the tolerance can never be met.
  assert.throws(() => integrate((x) => 1 / x, 0, 1), NumericalError);
  // Wildly oscillating: not within 20 bisections.
  assert.throws(
    () => integrate((x) => Math.sin(1 / x), 0.001, 1, { relTol: 1e-12, maxSubdivisions: 20 }),
    (e: unknown) => e instanceof NumericalError && /maxSubdivisions = 20/.test(e.message),
  );
  // Odd integrand with relative tolerance only: value ~0 can never satisfy relTol.
  assert.throws(() => integrate(Math.sin, -1, 1), NumericalError);
  // A goal below rounding error fails fast, and says so.
  assert.throws(
    () => integrate(Math.sin, -1, 1, { absTol: 1e-15 }),
    (e: unknown) => e instanceof NumericalError && /rounding-error floor/.test(e.message),
  );
  assert.throws(() => integrate(() => NaN, 0, 1), NumericalError);
  assert.throws(() => integrate((x) => x, NaN, 1), InvalidParameterError);
  assert.throws(() => integrate((x) => x, 0, 1, { relTol: 0 }), InvalidParameterError);
});
