import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError, NumericalError } from '../../src/errors.js';
import { axpy, choleskyFactor, choleskySolve, dot, matVec, norm2, scale, solveSpd } from '../../src/math/linear-algebra.js';
import { assertClose } from '../helpers/assert-close.js';

test('vector kernels', () => {
  const x = Float64Array.of(1, 2, 3);
  const y = Float64Array.of(4, 5, 6);
  assert.equal(dot(x, y), 32);
  assert.deepEqual([...axpy(2, x, Float64Array.from(y))], [6, 9, 12]);
  assert.deepEqual([...scale(-1, Float64Array.from(x))], [-1, -2, -3]);
  assert.equal(norm2(Float64Array.of(3, 4)), 5);
  assert.equal(norm2(new Float64Array(3)), 0);
  // Scaled: no overflow or underflow of the squares.
  assertClose(norm2(Float64Array.of(3e200, 4e200)), 5e200, 1e-15);
  assertClose(norm2(Float64Array.of(3e-200, 4e-200)), 5e-200, 1e-15);
  assert.equal(norm2(Float64Array.of(1, Infinity)), Infinity);
  assert.ok(Number.isNaN(norm2(Float64Array.of(1, NaN))));
  assert.deepEqual([...matVec(Float64Array.of(1, 2, 3, 4), 2, Float64Array.of(1, 1))], [3, 7]);
});

test('choleskyFactor: a matrix with a known integer factor', () => {
  // A = L L^T with L = [[2, 0, 0], [1, 3, 0], [-1, 2, 4]] (hand-computed).
  const a = Float64Array.of(4, 2, -2, 2, 10, 5, -2, 5, 21);
  const l = choleskyFactor(a, 3);
  assert.ok(l !== null);
  assert.deepEqual([...l], [2, 0, 0, 1, 3, 0, -1, 2, 4]);
  // A x = b with x = (1, -1, 2): b = A x.
  const b = matVec(a, 3, Float64Array.of(1, -1, 2));
  const x = choleskySolve(l, 3, b);
  for (const [i, v] of [1, -1, 2].entries()) assertClose(x[i], v, 1e-15, 1e-15);
  const y = solveSpd(a, 3, b);
  assert.deepEqual([...y], [...x]);
  // In place: out may alias b.
  const bb = Float64Array.from(b);
  choleskySolve(l, 3, bb, bb);
  assert.deepEqual([...bb], [...x]);
});

test('choleskyFactor: not positive definite gives null; solveSpd throws', () => {
  const indefinite = Float64Array.of(1, 2, 2, 1); // eigenvalues 3, -1
  assert.equal(choleskyFactor(indefinite, 2), null);
  assert.equal(choleskyFactor(Float64Array.of(1, 1, 1, 1), 2), null); // singular
  assert.equal(choleskyFactor(Float64Array.of(NaN, 0, 0, 1), 2), null);
  assert.throws(() => solveSpd(indefinite, 2, Float64Array.of(1, 1)), NumericalError);
  assert.throws(() => choleskyFactor(new Float64Array(3), 2), InvalidParameterError);
  assert.throws(() => choleskySolve(Float64Array.of(1, 0, 0, 1), 2, new Float64Array(3)), InvalidParameterError);
});

test('choleskyFactor: reads only the lower triangle', () => {
  const a = Float64Array.of(4, 999, 2, 10);
  assert.deepEqual([...choleskyFactor(a, 2)!], [2, 0, 1, 3]);
});
