/**
 * Decimal rounding for numbers a person reads. A privacy floor or an epsilon printed with four
 * digits must still be on the safe side of the value it stands for: `ceilSignificant` never
 * returns less than its input, `floorSignificant` never more.
 */

function roundSignificant(x: number, digits: number, direction: 1 | -1): number {
  // Below 1e-290 the decimal scale overflows; such a number is returned as it is (still on both sides).
  if (!Number.isFinite(x) || Math.abs(x) < 1e-290) return x;
  if (!Number.isInteger(digits) || digits < 1 || digits > 15) throw new RangeError(`digits must be an integer in [1, 15], got ${digits}`);
  const exponent = Math.floor(Math.log10(Math.abs(x)));
  const scale = 10 ** (digits - 1 - exponent);
  const step = direction === 1 ? Math.ceil : Math.floor;
  let units = step(x * scale);
  // x * scale and units / scale are rounded binary operations: step further until the side holds.
  let rounded = Number((units / scale).toPrecision(digits + 1));
  while (direction === 1 ? rounded < x : rounded > x) {
    units += direction;
    rounded = Number((units / scale).toPrecision(digits + 1));
  }
  return rounded;
}

/** The smallest number with at most `digits` significant decimal digits that is >= x. */
export function ceilSignificant(x: number, digits = 4): number {
  return roundSignificant(x, digits, 1);
}

/** The largest number with at most `digits` significant decimal digits that is <= x. */
export function floorSignificant(x: number, digits = 4): number {
  return roundSignificant(x, digits, -1);
}
