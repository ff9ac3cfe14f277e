/**
 * A deterministic exp: the same IEEE-754 double operations, in the same order, in JavaScript here
 * and in the WebAssembly SIMD kernels (`learners/glm/kernels/wasm-kernels.ts`), so that a logistic
 * gradient computed by either path is the same number bit for bit. `Math.exp` cannot serve: the
 * kernels would have to call out of WebAssembly for every row, and engines need not agree on it
 * (its accuracy is implementation-defined, ECMA-262 Sec. 21.3.2.14).
 *
 * Method (Cody and Waite 1980; Muller, "Elementary Functions", 3rd ed., Sec. 11.3): with
 * n = round-to-nearest-even(x log2 e), found exactly by adding and subtracting SHIFTER = 1.5 2^52,
 *
 *   r = (x - n LN2_HI) - n LN2_LO,   |r| <= ln 2 / 2 + 2^-40,
 *   e^x = 2^n e^r,   e^r ~ sum_{k <= 13} r^k / k!   (Estrin's scheme: a shallow tree, fast on both paths),
 *
 * where LN2_HI has 32 significant bits so that n LN2_HI is exact for |n| <= 2^21, and x - n LN2_HI
 * is exact (Sterbenz). The Taylor remainder is < |r|^14 / 14! < 5e-18 relative; with the Horner
 * roundings the result is within 4 ulp of e^x (checked against a 100-digit reference in
 * `test/math/exp.test.ts`). 2^n is exact: a table here, the exponent bits in WebAssembly.
 *
 * Range: x > 709 gives Infinity (e^709.78 is the largest double), x < -708 gives 0 (e^x < 2^-1021:
 * absolute error below 3.3e-308); NaN gives NaN. In between, n is in [-1022, 1023], so 2^n is a
 * normal double and p 2^n rounds once.
 */

/** 1.5 2^52: x log2 e + SHIFTER - SHIFTER is x log2 e rounded to the nearest integer (ties to even). */
export const EXP_SHIFTER = 6755399441055744;
export const EXP_LOG2E = 1.4426950408889634;
/** ln 2 = LN2_HI + LN2_LO, LN2_HI with the low 21 bits of its significand zero. */
export const EXP_LN2_HI = 0.6931471803691238;
export const EXP_LN2_LO = 1.9082149292705877e-10;
/** Above this, Infinity; below EXP_MIN, 0. */
export const EXP_MAX = 709;
export const EXP_MIN = -708;
/** 1 / k! for k = 13 down to 2 (the terms of order 0 and 1 are 1 + r). */
export const EXP_TAYLOR = [
  1 / 6227020800, 1 / 479001600, 1 / 39916800, 1 / 3628800, 1 / 362880, 1 / 40320, 1 / 5040, 1 / 720, 1 / 120, 1 / 24, 1 / 6, 1 / 2,
] as const;

/** 2^n for n in [-1022, 1023], at index n + 1022. */
const POW2 = new Float64Array(2046);
for (let n = -1022; n <= 1023; n++) POW2[n + 1022] = 2 ** n;

const [c13, c12, c11, c10, c9, c8, c7, c6, c5, c4, c3, c2] = EXP_TAYLOR;

/** e^x, deterministic (see the module comment). */
export function deterministicExp(x: number): number {
  if (x > EXP_MAX) return Infinity;
  if (x < EXP_MIN) return 0;
  const n = x * EXP_LOG2E + EXP_SHIFTER - EXP_SHIFTER;
  const r = x - n * EXP_LN2_HI - n * EXP_LN2_LO;
  const r2 = r * r;
  const r4 = r2 * r2;
  const r8 = r4 * r4;
  // The tree the WebAssembly kernel evaluates, operation for operation (see the module comment).
  const p = 1 + r + r2 * (c2 + c3 * r) + r4 * (c4 + c5 * r + r2 * (c6 + c7 * r)) + r8 * (c8 + c9 * r + r2 * (c10 + c11 * r) + r4 * (c12 + c13 * r));
  return p * POW2[(n + 1022) | 0];
}
