/**
 * The row rescaling of `src/data/transforms.ts` as it was written before its passes were fused
 * (commit ec369ae): a separate pass for the largest entry, the division, each sum of squares and
 * each shrink. `normalizeRows` and `clipRows` must give these rows bit for bit
 * (`test/data/dataset.test.ts`).
 */
function sumSquares(x: Float64Array, start: number, end: number): number {
  let s = 0;
  for (let k = start; k < end; k++) s += x[k] * x[k];
  return s;
}

function robustNorm(x: Float64Array, start: number, end: number): number {
  const s = sumSquares(x, start, end);
  if (s < Infinity && s > 1e-290) return Math.sqrt(s);
  let max = 0;
  for (let k = start; k < end; k++) max = Math.max(max, Math.abs(x[k]));
  if (max === 0 || max === Infinity) return max;
  let t = 0;
  for (let k = start; k < end; k++) t += (x[k] / max) ** 2;
  return max * Math.sqrt(t);
}

function rescaleRow(x: Float64Array, start: number, end: number, target: number): void {
  let max = 0;
  for (let k = start; k < end; k++) max = Math.max(max, Math.abs(x[k]));
  for (let k = start; k < end; k++) x[k] /= max;
  const norm = Math.sqrt(sumSquares(x, start, end));
  for (let k = start; k < end; k++) x[k] = (x[k] / norm) * target;
  const safe = target * (1 - 4 * Number.EPSILON);
  let guard = 0;
  while (Math.sqrt(sumSquares(x, start, end)) > safe && guard++ < 64) {
    for (let k = start; k < end; k++) x[k] *= 1 - 2 * Number.EPSILON;
  }
}

/** Every row of x (rows of d) normalized in place, the old way. */
export function referenceNormalize(x: Float64Array, d: number): void {
  for (let start = 0; start < x.length; start += d) if (robustNorm(x, start, start + d) > 0) rescaleRow(x, start, start + d, 1);
}

/** Every row of x (rows of d) clipped to norm clipNorm in place, the old way. */
export function referenceClip(x: Float64Array, d: number, clipNorm: number): void {
  for (let start = 0; start < x.length; start += d) if (robustNorm(x, start, start + d) > clipNorm) rescaleRow(x, start, start + d, clipNorm);
}
