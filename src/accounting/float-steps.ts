/**
 * One-ulp steps of doubles, for the accountants' final outward rounding (docs/design.md, "A number
 * that is a privacy guarantee is an upper bound and is computed pessimistically").
 *
 * @example nextUp(1) // 1 + 2^-52
 */

const view = new DataView(new ArrayBuffer(8));

/** The smallest double > x (x itself for NaN and +Infinity; Number.MIN_VALUE for +-0). */
export function nextUp(x: number): number {
  if (Number.isNaN(x) || x === Infinity) return x;
  if (x === 0) return Number.MIN_VALUE;
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  view.setBigUint64(0, x > 0 ? bits + 1n : bits - 1n);
  return view.getFloat64(0);
}

/** The largest double < x (x itself for NaN and -Infinity; -Number.MIN_VALUE for +-0). */
export function nextDown(x: number): number {
  return -nextUp(-x);
}
