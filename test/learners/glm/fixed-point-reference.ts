/**
 * An independent reference of the float32 logistic sum with the fixed-point update
 * (`src/learners/glm/kernels/fixed-point.ts`), written out from its definition rather than from
 * src's code: float32 roundings by storing into a Float32Array (not Math.fround), the integer
 * rounding of v by floor and an explicit tie-to-even rule (not the 1.5 2^23 trick), the integer
 * sums in BigInt, the 1024-row blocks counted from each chunk's first row, the power of two
 * P >= 1.5 C of the clip norm C (`fixedPointScale`'s), chunk sums added in
 * chunk order (`per-example.ts`, CHUNK_ROWS). Test data: every block has a row of nonzero norm, or
 * only zero rows (whose terms are +0 either way).
 */
import { CLIP_SAFETY } from '../../../src/learners/glm/clipped-gradient.js';
import assert from 'node:assert/strict';
import { CHUNK_ROWS } from '../../../src/learners/glm/per-example.js';

const cell = new Float32Array(1);
/** v rounded to float32 by a store. */
export function r32(v: number): number {
  cell[0] = v;
  return cell[0];
}

const FLT_MAX = 3.4028234663852886e38;

/** The nearest integer to v, ties to even. */
export function nearestEven(v: number): number {
  const fl = Math.floor(v);
  const frac = v - fl;
  if (frac > 0.5) return fl + 1;
  if (frac < 0.5) return fl;
  return fl % 2 === 0 ? fl : fl + 1;
}

/** The least power of two >= v, by doubling and halving. */
export function referencePower(v: number): number {
  let p = 1;
  while (p < v) p *= 2;
  while (p / 2 >= v) p /= 2;
  return p;
}

/** One row's integer vector q (BigInt) and whether its coefficient was clipped, from its float32 coefficient c, threshold t and the block's power of two P. */
export function referenceRow(x: ArrayLike<number>, o: number, d: number, c: number, t: number, power: number): { q: bigint[]; clipped: boolean } {
  let t32 = r32(t);
  if (t32 < 2 ** -126) t32 = 0;
  if (t32 > FLT_MAX) t32 = FLT_MAX;
  let clipped = true;
  let cc = c;
  if (Number.isNaN(c)) cc = 0;
  else if (c > t32) cc = t32;
  else if (c < -t32) cc = -t32;
  else clipped = false;
  const sigma = r32((2 ** 21 - 2 - 2 * Math.ceil(Math.sqrt(d))) / power);
  let s = r32(cc * sigma);
  if (s > FLT_MAX) s = FLT_MAX;
  if (s < -FLT_MAX) s = -FLT_MAX;
  const q: bigint[] = [];
  for (let j = 0; j < d; j++) q.push(BigInt(nearestEven(r32(x[o + j] * s))));
  return { q, clipped };
}

/**
 * The sum over all n rows as `sumStoredClippedGradients` defines it for float32 logistic rows with
 * the fixed-point update, from the unclipped float32 coefficients c (NaN allowed) and the cached
 * thresholds t.
 */
export function referenceFixedSum(x: ArrayLike<number>, n: number, d: number, c: ArrayLike<number>, t: ArrayLike<number>, clipNorm: number): { sum: Float64Array; clippedCount: number; count: number } {
  const sum = new Float64Array(d);
  let clippedCount = 0;
  for (let chunk = 0; chunk < n; chunk += CHUNK_ROWS) {
    const part = new Float64Array(d);
    const chunkEnd = Math.min(n, chunk + CHUNK_ROWS);
    for (let block = chunk; block < chunkEnd; block += 1024) {
      const Q = new Array<bigint>(d).fill(0n);
      const blockEnd = Math.min(chunkEnd, block + 1024);
      // Whether the block has a row of nonzero norm (the thresholds' consistency with C is checked on it).
      let recovered = NaN;
      for (let i = block; i < blockEnd && Number.isNaN(recovered); i++) {
        let ss = 0;
        for (let j = 0; j < d; j++) ss += x[i * d + j] ** 2;
        if (ss > 0) recovered = (t[i] * Math.sqrt(ss)) / CLIP_SAFETY;
      }
      assert.ok(Number.isNaN(recovered) || Math.abs(recovered / clipNorm - 1) < 2 ** -40, `C' = ${recovered}`);
      const power = referencePower(1.5 * clipNorm);
      const unit = power * 2 ** -21;
      for (let i = block; i < blockEnd; i++) {
        if (Number.isNaN(recovered)) {
          // Only zero rows: the float64 clamp (terms +0).
          if (Number.isNaN(c[i]) || Math.abs(c[i]) > t[i]) clippedCount++;
          continue;
        }
        const row = referenceRow(x, i * d, d, c[i], t[i], power);
        if (row.clipped) clippedCount++;
        for (let j = 0; j < d; j++) Q[j] += row.q[j];
      }
      if (!Number.isNaN(recovered)) for (let j = 0; j < d; j++) part[j] += Number(Q[j]) * unit;
    }
    for (let j = 0; j < d; j++) sum[j] += part[j];
  }
  return { sum, clippedCount, count: n };
}
