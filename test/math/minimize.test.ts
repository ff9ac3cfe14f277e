import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError, NumericalError } from '../../src/errors.js';
import { brentMinimize } from '../../src/math/minimize.js';
import { assertClose } from '../helpers/assert-close.js';

test('brentMinimize: interior minimum of (x - 2)^2', () => {
  const r = brentMinimize((x) => (x - 2) ** 2, 0, 5);
  // Derivative-free: x is determined to ~sqrt(eps) relative, the value to ~eps.
  assertClose(r.x, 2, 1e-7);
  assert.ok(r.value <= 1e-14, `value = ${r.value}`);
  assert.ok(r.iterations < 30, `iterations = ${r.iterations}`);
});

test('brentMinimize: x log x has its minimum -1/e at 1/e', () => {
  const r = brentMinimize((x) => x * Math.log(x), 0.01, 3);
  // mpmath 1.3, mp.dps=50: 1/e = 0.36787944117144233
  assertClose(r.x, 0.36787944117144233, 1e-7);
  assertClose(r.value, -0.36787944117144233, 1e-14);
});

test('brentMinimize: convex functions minimised at a boundary return the boundary exactly', () => {
  const up = brentMinimize(Math.exp, 1, 3);
  assert.equal(up.x, 1);
  assert.equal(up.value, Math.E);
  const down = brentMinimize((x) => (x - 10) ** 2, 0, 5);
  assert.equal(down.x, 5);
  assert.equal(down.value, 25);
});

test('brentMinimize: non-smooth and infinite-valued functions', () => {
  const kink = brentMinimize((x) => Math.abs(x - 1 / 3), 0, 1, { xTol: 1e-12 });
  assertClose(kink.x, 1 / 3, 1e-8);
  const wall = brentMinimize((x) => (x < 0.5 ? Infinity : (x - 0.7) ** 2), 0, 1);
  assertClose(wall.x, 0.7, 1e-7);
});

test('brentMinimize: errors', () => {
  assert.throws(() => brentMinimize((x) => x, 1, 1), InvalidParameterError);
  assert.throws(() => brentMinimize((x) => x, 0, Infinity), InvalidParameterError);
  assert.throws(() => brentMinimize(() => NaN, 0, 1), NumericalError);
  assert.throws(() => brentMinimize((x) => Math.sin(40 * x), 0, 1, { maxIterations: 3, xTol: 0 }), NumericalError);
});
