/**
 * Eigen-decomposition of a small symmetric matrix by the cyclic Jacobi method (Golub & Van Loan
 * 2013, Sec. 8.5): rotations zero the off-diagonal entries until their norm is below 1e-15 of the
 * matrix's. Returns the eigenvalues and the eigenvectors as the COLUMNS of `vectors` (row-major).
 */
import { InvalidParameterError, NumericalError } from '../errors.js';

export function symmetricEigen(matrix: Float64Array, n: number): { values: Float64Array; vectors: Float64Array } {
  if (!(matrix instanceof Float64Array) || matrix.length !== n * n) throw new InvalidParameterError('matrix', matrix, `a Float64Array of length ${n * n}`);
  const a = Float64Array.from(matrix);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  let scale = 0;
  for (let i = 0; i < n * n; i++) scale += a[i] * a[i];
  const tolerance = 1e-30 * scale;
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p * n + q] ** 2;
    if (off <= tolerance) {
      return { values: Float64Array.from({ length: n }, (_, i) => a[i * n + i]), vectors: v };
    }
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q];
        if (apq === 0) continue;
        const theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p];
          const akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k];
          const aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p];
          const vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  throw new NumericalError(`symmetricEigen: Jacobi did not converge in 100 sweeps (n = ${n})`);
}
