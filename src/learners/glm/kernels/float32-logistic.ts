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
 *   2. c = -y / (1 + e(y z)) in float32 arithmetic, e = `exp32` (float32 Cody-Waite reduction, Taylor
 *      polynomial of degree 6), widened exactly to float64;
 *   3. c clamped to [-t, t] with the row's cached threshold and the update out += sum c_i x_i, both
 *      exactly as for float64 rows (the products c_i x_ij in float64, the same order of additions),
 *      where C = Infinity (or C beyond about [2^-101, 2^99]); otherwise the clamp in float32 and the
 *      fixed-point update of `fixed-point.ts` (exact integer sums, each row's contribution < C).
 *
 * Why this is safe for the guarantee: steps 1 and 2 only choose the coefficient c_i from row i and
 * theta; step 3 then bounds |c_i| ||x_i|| <= C (the threshold t_i and the clamp are unchanged), and the
 * sum's operations and order are unchanged, so `clippedSumRoundingBound` and the sensitivity hold as
 * they are (any c_i in [-t_i, t_i] is a valid clipped gradient of `003` App. F.2's construction; the
 * analysis of `002` Sec. 2.2 needs only the norm bound). What changes is the gradient's accuracy:
 * the margin carries float32 rounding (relative error of the products' sum <= gamma_{ceil(d/4)+2}
 * with u = 2^-24, plus theta's rounding, as numpy's float32 step has), and c is within a few float32
 * roundings of -y / (1 + e^{yz}) for that z (e(s) within 1e-6 of e^s relative: Taylor remainder
 * |r|^7 / 7! e^|r| < 1.7e-7 for |r| <= ln 2 / 2, plus float32 roundings;
 * `test/learners/glm/kernels/float32-logistic.test.ts`). So float32 storage no
 * longer trains the model of float64 training on the rounded rows; it trains a model as accurate as
 * float32 arithmetic allows, deterministically (same rows, same theta: the same bits, on any thread).
 *
 * Emulation: a float32 product or sum is the float64 one rounded by `Math.fround` (for + and * of
 * float32 operands, rounding the exact or float64 result to float32 is the correctly rounded float32
 * result: double rounding is innocuous when 53 >= 2 * 24 + 2; Figueroa, "When is double rounding
 * innocuous?", SIGNUM Newsletter 30(3), 1995), and WebAssembly's f32x4 operations are IEEE
 * round-to-nearest (Core Specification 2.0, Sec. 4.3.3).
 */
/** The largest finite float32, (2 - 2^-23) 2^127. */
export const FLOAT32_MAX = 3.4028234663852886e38;

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

/** Float32 constants of `exp32` (Cody and Waite's split of ln 2 as in Cephes' expf: C1 has 9 significant bits). */
export const EXP32 = {
  max: 88,
  min: -87,
  log2e: Math.fround(Math.LOG2E),
  shifter: 12582912, // 1.5 2^23
  c1: 0.693359375,
  c2: Math.fround(-2.12194440e-4),
  taylor: [2, 3, 4, 5, 6].map((k) => Math.fround(1 / [1, 1, 2, 6, 24, 120, 720][k])),
} as const;

/**
 * e^x in float32 arithmetic, every operation rounded to float32 (the f32x4 lanes of the fused pass
 * do the same operations): n = round(x log2 e) by the shifter, r = (x - n C1) - n C2, the Taylor
 * polynomial of degree 6 in Estrin's tree, times 2^n; Infinity above 88, and x clamped to -87 below
 * (e^-87 ~ 1.6e-38, a normal float32; 1 + that is 1 in float32, which is all the derivative uses).
 * Relative error < 1e-6 (`test/learners/glm/kernels/float32-logistic.test.ts`).
 */
export function exp32(x: number): number {
  const f = Math.fround;
  if (Number.isNaN(x)) return NaN;
  if (x > EXP32.max) return Infinity;
  const s = x < EXP32.min ? EXP32.min : x;
  const k = f(f(s * EXP32.log2e) + EXP32.shifter);
  const n = f(k - EXP32.shifter);
  const r = f(f(s - f(n * EXP32.c1)) - f(n * EXP32.c2));
  const [c2, c3, c4, c5, c6] = EXP32.taylor;
  const r2 = f(r * r);
  const r4 = f(r2 * r2);
  const p = f(f(f(1 + r) + f(r2 * f(c2 + f(c3 * r)))) + f(r4 * f(f(c4 + f(c5 * r)) + f(r2 * c6))));
  return f(p * 2 ** n);
}

/** out[k] = -y_k / (1 + exp32(y_k z_k)) in float32 (step 2; z_k a float32 margin, y_k = +-1: exact in float32). */
export function float32LogisticDerivatives(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
  const f = Math.fround;
  for (let k = 0; k < count; k++) {
    const yk = f(y[k]);
    out[k] = f(f(-yk) / f(1 + exp32(f(yk * f(z[k])))));
  }
}
