/**
 * Small dense linear algebra on `Float64Array`s: vector kernels and the Cholesky factorisation
 * of symmetric positive-definite (SPD) matrices, enough for Newton steps and closed-form ridge
 * regression with d up to a few hundred. Matrices are square, row-major, n x n in a flat array.
 *
 * The kernels do not validate their inputs (they sit in optimiser inner loops); lengths must
 * agree and are taken from the first argument.
 */
import { InvalidParameterError, NumericalError } from '../errors.js';

/** Sum_i a[i] b[i]. */
export function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

/** y <- y + alpha x (BLAS axpy); returns y. */
export function axpy(alpha: number, x: Float64Array, y: Float64Array): Float64Array {
  for (let i = 0; i < x.length; i++) y[i] += alpha * x[i];
  return y;
}

/** x <- alpha x; returns x. */
export function scale(alpha: number, x: Float64Array): Float64Array {
  for (let i = 0; i < x.length; i++) x[i] *= alpha;
  return x;
}

/**
 * Euclidean norm ||x||_2, scaled so that it neither overflows nor underflows (as BLAS nrm2);
 * Infinity if any entry is infinite, NaN if any entry is NaN (callers check with Number.isFinite).
 */
export function norm2(x: Float64Array): number {
  let max = 0;
  for (let i = 0; i < x.length; i++) {
    const a = Math.abs(x[i]);
    if (a > max || Number.isNaN(a)) max = a;
  }
  if (max === 0 || !Number.isFinite(max)) return max;
  let s = 0;
  for (let i = 0; i < x.length; i++) {
    const t = x[i] / max;
    s += t * t;
  }
  return max * Math.sqrt(s);
}

/** out <- A x for a row-major n x n matrix A (out must not alias x); returns out. */
export function matVec(a: Float64Array, n: number, x: Float64Array, out: Float64Array = new Float64Array(n)): Float64Array {
  for (let i = 0; i < n; i++) {
    let s = 0;
    const row = i * n;
    for (let j = 0; j < n; j++) s += a[row + j] * x[j];
    out[i] = s;
  }
  return out;
}

function requireSquare(a: Float64Array, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidParameterError('n', n, 'an integer >= 0');
  if (a.length !== n * n) throw new InvalidParameterError('a.length', a.length, `n * n = ${n * n}`);
}

/**
 * Cholesky factor of an SPD matrix: the lower-triangular L with A = L L^T (Golub & Van Loan,
 * "Matrix Computations", Alg. 4.2.1, row-oriented). Only the lower triangle of `a` is read.
 * Returns L (row-major, upper triangle zero) in `out`, or `null` when a pivot is not strictly
 * positive and finite, i.e. A is not (numerically) positive definite — callers that can damp
 * (Newton) use this as their test; `solveSpd` throws instead.
 */
export function choleskyFactor(a: Float64Array, n: number, out: Float64Array = new Float64Array(n * n)): Float64Array | null {
  requireSquare(a, n);
  if (out.length !== n * n) throw new InvalidParameterError('out.length', out.length, `n * n = ${n * n}`);
  out.fill(0);
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    for (let j = 0; j <= i; j++) {
      const rj = j * n;
      let s = a[ri + j];
      for (let k = 0; k < j; k++) s -= out[ri + k] * out[rj + k];
      if (i === j) {
        if (!(s > 0) || !Number.isFinite(s)) return null;
        out[ri + i] = Math.sqrt(s);
      } else {
        out[ri + j] = s / out[rj + j];
      }
    }
  }
  return out;
}

/**
 * Solves L L^T x = b given the Cholesky factor L from `choleskyFactor` (forward then backward
 * substitution). `out` may alias `b`. Returns out.
 */
export function choleskySolve(l: Float64Array, n: number, b: Float64Array, out: Float64Array = new Float64Array(n)): Float64Array {
  requireSquare(l, n);
  if (b.length !== n) throw new InvalidParameterError('b.length', b.length, `n = ${n}`);
  // L z = b
  for (let i = 0; i < n; i++) {
    const ri = i * n;
    let s = b[i];
    for (let k = 0; k < i; k++) s -= l[ri + k] * out[k];
    out[i] = s / l[ri + i];
  }
  // L^T x = z
  for (let i = n - 1; i >= 0; i--) {
    let s = out[i];
    for (let k = i + 1; k < n; k++) s -= l[k * n + i] * out[k];
    out[i] = s / l[i * n + i];
  }
  return out;
}

/**
 * Solves A x = b for SPD A by Cholesky. Throws `NumericalError` when A is not numerically
 * positive definite (never returns a wrong answer silently).
 *
 * @example solveSpd(Float64Array.of(4, 2, 2, 3), 2, Float64Array.of(2, 1)) // [0.5, 0]
 */
export function solveSpd(a: Float64Array, n: number, b: Float64Array, out: Float64Array = new Float64Array(n)): Float64Array {
  const l = choleskyFactor(a, n);
  if (l === null) throw new NumericalError(`solveSpd: the ${n} x ${n} matrix is not numerically positive definite`);
  return choleskySolve(l, n, b, out);
}
