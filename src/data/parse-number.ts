/**
 * Decimal numbers straight from bytes, correctly rounded (the same double `Number(text)` gives),
 * without making a string in the common case.
 *
 * Grammar: [+-] digits [. digits] [(e|E) [+-] digits], at least one digit before the exponent
 * (".5" and "5." are accepted). Anything else, including "NaN", "Infinity", hex and "1_000", is
 * not a number, and so is a value that overflows to Infinity.
 *
 * Fast path (W. D. Clinger, "How to read floating point numbers accurately", PLDI 1990): when the
 * decimal significand m is an integer below 2^53 and the decimal exponent e has |e| <= 22, both m
 * and 10^|e| are exact doubles, so the single IEEE multiplication m * 10^e (or division m / 10^-e)
 * is correctly rounded. Other inputs (more than ~15 significant digits, large exponents) fall back
 * to `Number`, which is correctly rounded too.
 */

const POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/** m * 10 + 9 stays an exact integer (<= 2^53) while m is below this. */
const MANTISSA_LIMIT = (2 ** 53 - 9) / 10;

/** Bytes [start, end) of an ASCII string as a JS string. */
function asciiText(bytes: Uint8Array, start: number, end: number): string {
  let text = '';
  for (let i = start; i < end; i++) text += String.fromCharCode(bytes[i]);
  return text;
}

/**
 * The finite number written in bytes [start, end), or NaN if they do not spell one (see the
 * grammar above). No surrounding whitespace is allowed: the caller trims.
 *
 * @example
 * parseDecimalBytes(new TextEncoder().encode('-1.25e3'), 0, 7); // -1250
 */
export function parseDecimalBytes(bytes: Uint8Array, start: number, end: number): number {
  let i = start;
  if (i >= end) return NaN;
  let c = bytes[i];
  const negative = c === 45; // '-'
  if (negative || c === 43) i++; // '+'
  let mantissa = 0;
  let exact = true;
  let digits = 0;
  let scale = 0;
  while (i < end) {
    const digit = bytes[i] - 48;
    if (digit < 0 || digit > 9) break;
    if (mantissa < MANTISSA_LIMIT) mantissa = mantissa * 10 + digit;
    else exact = false;
    digits++;
    i++;
  }
  if (i < end && bytes[i] === 46) {
    // '.'
    i++;
    while (i < end) {
      const digit = bytes[i] - 48;
      if (digit < 0 || digit > 9) break;
      if (mantissa < MANTISSA_LIMIT) {
        mantissa = mantissa * 10 + digit;
        scale--;
      } else exact = false;
      digits++;
      i++;
    }
  }
  if (digits === 0) return NaN;
  let exponent = 0;
  if (i < end && (bytes[i] | 32) === 101) {
    // 'e' or 'E'
    i++;
    let expNegative = false;
    if (i < end && (bytes[i] === 45 || bytes[i] === 43)) expNegative = bytes[i++] === 45;
    const expStart = i;
    while (i < end) {
      const digit = bytes[i] - 48;
      if (digit < 0 || digit > 9) break;
      if (exponent < 100000) exponent = exponent * 10 + digit;
      i++;
    }
    if (i === expStart) return NaN;
    if (expNegative) exponent = -exponent;
  }
  if (i !== end) return NaN;
  if (exact) {
    if (mantissa === 0) return negative ? -0 : 0;
    const e10 = scale + exponent;
    if (e10 >= -22 && e10 <= 22) {
      const value = e10 >= 0 ? mantissa * POW10[e10] : mantissa / POW10[-e10];
      if (value !== Infinity) return negative ? -value : value;
      return NaN;
    }
  }
  // Slow path: the grammar is checked, so Number() sees a plain decimal and rounds correctly.
  const value = Number(asciiText(bytes, start, end));
  return Number.isFinite(value) ? value : NaN;
}
