/**
 * @internal The clamp and update of float32 rows with the logistic loss in fixed point: out +=
 * sum_i c_i x_i computed as an exact integer sum, so that each row's contribution is fixed by that
 * row alone (no rounding across rows: any order, block size or thread count gives the same
 * integers). The fused WebAssembly pass (`wasm-logistic-step.ts`, update 'fixed') and the
 * JavaScript here compute the same integers and the same float64 results bit for bit. c_i is the
 * float32 derivative of `float32-logistic.ts` (steps 1-2 there); this replaces its step 3.
 *
 * With K = FIXED_BITS (21), N = 2^K - 2 - 2 ceil(sqrt d), P the least power of two >= 1.5 C',
 * sigma32 = N / P and unit = P 2^-K (both exact), where C' = C is the clip norm the thresholds were
 * computed with (every caller passes it beside them, `accumulateClippedRangeCached`), so
 * 1.5 C <= P < 3 C (the proof below allows C' within 2^-29 of C, an earlier design's margin):
 *
 *   1. per row i, in float32: t32 = fl32(t_i) capped at FLT_MAX, and 0 where fl32(t_i) < 2^-126 (so that
 *      t32 <= t_i (1 + 2^-24) always); c = clamp(c_i, -t32, t32), a NaN c_i +0 (counted as clipped, as
 *      `per-example.ts`'s "A NaN derivative"); s_i = fl32(c sigma32) clamped to +-FLT_MAX;
 *   2. per element, v_ij = fl32(x_ij s_i) and q_ij = fl32(v_ij + M) - M with M = 1.5 2^23: v_ij rounded
 *      to the nearest integer, ties to even (for |v| < 2^22, M + v lies in [2^23, 2^24), where the
 *      float32 numbers are the integers; the SIMD pass reads q off the bits: bits(M + q) = bits(M) + q);
 *   3. the rows of a range are cut into blocks of FIXED_FLUSH_ROWS (1024) rows from the range's
 *      first row; a block's integer sums Q_j = sum_i q_ij are exact (|Q_j| <= 1024 2^21 = 2^31 < 2^53:
 *      in int32 lanes over 16 rows, wrapping but exact modulo 2^32 with |sum| < 2^26, then in
 *      float64), and at the block's end out_j <- out_j + fl64(Q_j unit), Q_j <- 0.
 *
 * Why every row's contribution w_i = q_i unit has norm < C (the sensitivity of `002` Sec. 2.2
 * unchanged). Each rounding is fl(y) = y (1 + delta) + eta (Higham, "Accuracy and Stability of
 * Numerical Algorithms", 2nd ed., Sec. 2.1, with underflow): |delta| <= 2^-53 (float64) or 2^-24
 * (float32), |eta| <= 2^-150 (float32); the clamps only shrink. t32 is 0 or a normal float32 (by
 * construction) and P is in [2^-100, 2^100], so |c| <= t32 <= t_i (1 + 2^-24), and the cached t_i
 * gives t_i ||x_i|| <= C (1 + (d + 8) 2^-53) (`clippedSumRoundingBound`'s per-term bound, <= C (1 + 2^-30)
 * for d < 2^22). With s_i's and v_ij's roundings: |v_ij| <= N |c x_ij| / P (1 + 2^-24)^2 + 2^-149 |x_ij| +
 * 2^-150, and |q_ij - v_ij| <= 1/2, so (float32 rows have |x_ij| <= 2^128)
 *   ||q_i|| <= N (C / P) (1 + 2^-22.4 + 2^-29.9) + 2^-20 sqrt(d) + sqrt(d) / 2,
 *   ||w_i|| = ||q_i|| P 2^-K <= C 2^-K [N (1 + 2^-22.4 + 2^-29.9) + (P / C) sqrt(d) (1/2 + 2^-20)]
 *           <= C 2^-K [2^K - 2 - 2 sqrt(d) + 0.39 + 3 (1 + 2^-29) sqrt(d) (1/2 + 2^-20)] < C.
 * It also gives |v_ij| < 2^K / 1.5 < 2^22 (step 2's premise) and |q_ij| <= 2^K, so 16 rows' q sum
 * below 2^25 in magnitude. (A row with a NaN or infinite entry breaks the clamp's
 * premise on every path; validated data has none.)
 *
 * The rounding of step 3 (fl64(Q_j unit), then the additions into out and of the chunk sums,
 * `per-example.ts`) passes each w_i through at most 2 + ceil(min(rows, CHUNK_ROWS) / 1024) +
 * ceil(rows / CHUNK_ROWS) roundings: no more than `clippedSumRoundingBound` counts, which therefore
 * covers this path (with the w_i as the clipped gradients summed).
 *
 * Accuracy: |q_ij unit - c x_ij (N / 2^K)| <= unit / 2 < 1.5 C 2^-21 + float32 rounding, unbiased
 * (rounding to nearest); the shrink N / 2^K = 1 - (2 + 2 ceil(sqrt d)) 2^-21 (5.7e-6 for d = 20) that
 * keeps ||w_i|| < C scales the sum, about as much as the float32 rounding of the margins the
 * coefficients come from.
 * Rows of norm below about 2^-107 (where t32 sigma32 > FLT_MAX) and rows of norm above about
 * 2^126 C (t32 = 0) contribute less than their clipped gradient (s clamped; c = 0): sound, and only
 * for rows scaled far from C. A coefficient within 2^-24 (relative) of t_i may be left unclipped (t32 > t_i) and then counts as
 * unclipped: the clip count can differ from the float64 update's by such rows.
 *
 * Used only for P in [FIXED_MIN_CLIP_NORM, FIXED_MAX_CLIP_NORM] and d <= FIXED_MAX_D; with C =
 * Infinity (no clipping, no sensitivity), P outside that range or longer rows, float32 rows keep the float64 clamp and update (`float32-logistic.ts` step 3).
 */
import { FLOAT32_MAX } from './float32-logistic.js';

/** K: a row's contribution is an integer vector of norm < 2^K C / P in units of P 2^-K. */
export const FIXED_BITS = 21;

/** M = 1.5 2^23: fl32(v + M) - M rounds |v| < 2^22 to the nearest integer. */
export const FIXED_MAGIC = 12582912;

/** The bits of M as a float32 (0x4b400000). */
export const FIXED_MAGIC_BITS = 0x4b400000;

/** Rows whose integer sums are dequantized together (step 3); the fused pass's 16-row blocks divide it. */
export const FIXED_FLUSH_ROWS = 1024;

/** The range of P of the fixed-point update (others keep the float64 update): sigma32 a normal float32. */
export const FIXED_MIN_CLIP_NORM = 2 ** -100;
export const FIXED_MAX_CLIP_NORM = 2 ** 100;

/** The smallest normal float32, 2^-126. */
export const FLOAT32_MIN_NORMAL = 2 ** -126;

/** The longest row of the fixed-point update (the proof's d < 2^22; longer rows keep the float64 update). */
export const FIXED_MAX_D = 2 ** 22 - 1;

/** The scale factors for clip norm C: sigma = N / P and unit = P 2^-K (step 1's definitions). */
export interface FixedPointScale {
  readonly sigma: number;
  readonly unit: number;
}

/**
 * The scales for clip norm C and rows of d elements, or undefined where the fixed-point update
 * does not apply (C = Infinity, C < FIXED_MIN_CLIP_NORM, d > FIXED_MAX_D).
 */
export function fixedPointScale(clipNorm: number | undefined, d: number): FixedPointScale | undefined {
  if (clipNorm === undefined || !(clipNorm > 0 && clipNorm < Infinity) || d > FIXED_MAX_D) return undefined;
  // P: the least power of two >= 1.5 C (in [1.5 C, 3 C)).
  const p = powerOfTwoAtLeast(1.5 * clipNorm);
  if (!(p >= FIXED_MIN_CLIP_NORM && p <= FIXED_MAX_CLIP_NORM)) return undefined;
  // N 2^-e and 2^(e - K): exact (N < 2^21 has 21 bits).
  return { sigma: (2 ** FIXED_BITS - 2 - 2 * Math.ceil(Math.sqrt(d))) / p, unit: p * 2 ** -FIXED_BITS };
}

/** The least power of two >= v (v positive and finite). */
export function powerOfTwoAtLeast(v: number): number {
  let p = 2 ** Math.ceil(Math.log2(v));
  while (p < v) p *= 2;
  while (p / 2 >= v) p /= 2;
  return p;
}

/** t32 = fl32(t) capped at FLT_MAX, 0 where fl32(t) < 2^-126 (step 1). */
export function fixedPointThreshold(t: number): number {
  const t32 = Math.fround(t);
  return t32 < FLOAT32_MIN_NORMAL ? 0 : t32 > FLOAT32_MAX ? FLOAT32_MAX : t32;
}

/**
 * c[k] <- clamp(c[k], -t32, t32) with t32 = `fixedPointThreshold(thresholds[start + k])`, a NaN c[k]
 * to +0 (step 1; c[k] float32 derivatives); returns how many were clipped.
 */
export function fixedPointClamp(c: Float64Array, thresholds: Float64Array, start: number, m: number): number {
  let clipped = 0;
  for (let k = 0; k < m; k++) {
    const ck = c[k];
    const t = fixedPointThreshold(thresholds[start + k]);
    if (ck > t) {
      c[k] = t;
      clipped++;
    } else if (ck < -t) {
      c[k] = -t;
      clipped++;
    } else if (ck !== ck) {
      c[k] = 0;
      clipped++;
    }
  }
  return clipped;
}

/** s = fl32(c sigma32) clamped to +-FLT_MAX (step 1; c a clamped float32 coefficient). */
export function fixedPointRowScale(c: number, sigma: number): number {
  const v = Math.fround(c * sigma);
  return v > FLOAT32_MAX ? FLOAT32_MAX : v < -FLOAT32_MAX ? -FLOAT32_MAX : v;
}

/** q[j] += q_kj (step 2) for rows start .. start + m - 1 of x (row stride d), coefficients c[0 .. m - 1]. */
export function fixedPointAccumulate(x: Float32Array, d: number, start: number, m: number, c: Float64Array, sigma: number, q: Float64Array): void {
  const f = Math.fround;
  for (let k = 0; k < m; k++) {
    const s = fixedPointRowScale(c[k], sigma);
    const o = (start + k) * d;
    // fl32(v + M) - M: exact (both in [2^23, 2^24)); + 0 would not change an integer's sum (no -0 survives q[j] + q).
    for (let j = 0; j < d; j++) q[j] += f(f(x[o + j] * s) + FIXED_MAGIC) - FIXED_MAGIC;
  }
}

/** out_j <- out_j + fl64(q_j unit), q_j <- 0 (step 3's dequantization). */
export function fixedPointFlush(q: Float64Array, unit: number, out: Float64Array, d: number): void {
  for (let j = 0; j < d; j++) {
    out[j] += q[j] * unit;
    q[j] = 0;
  }
}
