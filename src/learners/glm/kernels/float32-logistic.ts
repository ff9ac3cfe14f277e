/**
 * @internal The clipped logistic gradient on float32 features, as the fused WebAssembly pass
 * computes it (`wasm-logistic-step.ts`, float32 rows) and as every other path of a float32 sum
 * computes it in JavaScript (`per-example.ts`: the rows after the last whole block, and memories
 * without WebAssembly SIMD), so that every path gives the same numbers bit for bit:
 *
 *   1. the margin in float32, four lanes: theta32_j = round32(theta_j) (saturated at +-FLT_MAX, so
 *      that a finite theta never becomes infinite), rows and theta32 padded with zeros to 4 ceil(d / 4);
 *      lane l sums the products of j = l, l + 4, l + 8, ... in that order, each product and sum
 *      rounded to float32; z = (a_0 + a_2) + (a_1 + a_3) in float32, widened exactly to float64;
 *   2. c = -y / (1 + e(y z)) in float64, e = `shortExp` (degree 7 where `deterministicExp` has 13);
 *   3. c clamped to [-t, t] with the row's cached threshold and the update out += sum c_i x_i, both
 *      exactly as for float64 rows (the products c_i x_ij in float64, the same order of additions).
 *
 * Why this is safe for the guarantee: steps 1 and 2 only choose the coefficient c_i from row i and
 * theta; step 3 then bounds |c_i| ||x_i|| <= C (the threshold t_i and the clamp are unchanged), and the
 * sum's operations and order are unchanged, so `clippedSumRoundingBound` and the sensitivity hold as
 * they are (any c_i in [-t_i, t_i] is a valid clipped gradient of `003` App. F.2's construction; the
 * analysis of `002` Sec. 2.2 needs only the norm bound). What changes is the gradient's accuracy:
 * the margin carries float32 rounding (relative error of the products' sum <= gamma_{ceil(d/4)+2}
 * with u = 2^-24, plus theta's rounding, as numpy's float32 step has), and e(s) is within 1e-8 of
 * e^s relative (Taylor remainder |r|^8 / 8! e^|r| < 7.5e-9 for |r| <= ln 2 / 2, plus roundings;
 * `test/learners/glm/float32-logistic.test.ts`), far below the margin's error. So float32 storage no
 * longer trains the model of float64 training on the rounded rows; it trains a model as accurate as
 * float32 arithmetic allows, deterministically (same rows, same theta: the same bits, on any thread).
 *
 * Emulation: a float32 product or sum is the float64 one rounded by `Math.fround` (for + and * of
 * float32 operands, rounding the exact or float64 result to float32 is the correctly rounded float32
 * result: double rounding is innocuous when 53 >= 2 * 24 + 2; Figueroa, "When is double rounding
 * innocuous?", SIGNUM Newsletter 30(3), 1995), and WebAssembly's f32x4 operations are IEEE
 * round-to-nearest (Core Specification 2.0, Sec. 4.3.3).
 */
import { EXP_LN2_HI, EXP_LN2_LO, EXP_LOG2E, EXP_MAX, EXP_MIN, EXP_SHIFTER, EXP_TAYLOR } from '../../../math/exp.js';

/** The largest finite float32, (2 - 2^-23) 2^127. */
export const FLOAT32_MAX = 3.4028234663852886e38;

const [, , , , , , c7, c6, c5, c4, c3, c2] = EXP_TAYLOR;

/** 2^n for n in [-1022, 1023], at index n + 1022. */
const POW2 = new Float64Array(2046);
for (let n = -1022; n <= 1023; n++) POW2[n + 1022] = 2 ** n;

/**
 * e^x by `deterministicExp`'s method (the same reduction, range ends and 2^n) with the Taylor
 * polynomial of degree 7 in Estrin's tree (its first two levels), operation for operation what
 * `simdExp(..., short = true)` evaluates: relative error < 1e-8 (see the module comment).
 */
export function shortExp(x: number): number {
  if (x > EXP_MAX) return Infinity;
  if (x < EXP_MIN) return 0;
  const n = x * EXP_LOG2E + EXP_SHIFTER - EXP_SHIFTER;
  const r = x - n * EXP_LN2_HI - n * EXP_LN2_LO;
  const r2 = r * r;
  const r4 = r2 * r2;
  const p = 1 + r + r2 * (c2 + c3 * r) + r4 * (c4 + c5 * r + r2 * (c6 + c7 * r));
  return p * POW2[(n + 1022) | 0];
}

/** theta rounded to float32 (saturated at +-FLOAT32_MAX), zero-padded to 4 ceil(d / 4) (step 1). */
export function float32Theta(theta: Float64Array, d: number, out: Float32Array = new Float32Array(4 * Math.ceil(d / 4))): Float32Array {
  out.fill(0);
  for (let j = 0; j < d; j++) out[j] = Math.max(-FLOAT32_MAX, Math.min(FLOAT32_MAX, theta[j]));
  return out;
}

/** z[k] = the float32 margin of row start + k (step 1) for `count` rows of x (row stride d); theta32 from `float32Theta`. */
export function float32Margins(x: Float32Array, d: number, theta32: Float32Array, start: number, count: number, z: Float64Array): void {
  const f = Math.fround;
  const q4 = 4 * Math.ceil(d / 4);
  for (let k = 0; k < count; k++) {
    const o = (start + k) * d;
    let a0 = 0;
    let a1 = 0;
    let a2 = 0;
    let a3 = 0;
    for (let j = 0; j < q4; j += 4) {
      // Padded lanes (j >= d) add 0 * 0, as the kernel's zero-filled loads do (it turns -0 into +0).
      a0 = f(a0 + f((j < d ? x[o + j] : 0) * theta32[j]));
      a1 = f(a1 + f((j + 1 < d ? x[o + j + 1] : 0) * theta32[j + 1]));
      a2 = f(a2 + f((j + 2 < d ? x[o + j + 2] : 0) * theta32[j + 2]));
      a3 = f(a3 + f((j + 3 < d ? x[o + j + 3] : 0) * theta32[j + 3]));
    }
    z[k] = f(f(a0 + a2) + f(a1 + a3));
  }
}

/** out[k] = -y_k / (1 + shortExp(y_k z_k)) (step 2). */
export function float32LogisticDerivatives(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
  for (let k = 0; k < count; k++) {
    const yk = y[k];
    out[k] = -yk / (1 + shortExp(yk * z[k]));
  }
}
