/**
 * Arithmetic on numbers stored as their natural logarithms. Privacy accounting lives in log
 * space (deltas of 1e-300, moment sums of 1e500), so these are the bricks everything else uses.
 *
 * All functions reject NaN with `InvalidParameterError` and never return NaN.
 */
import { InvalidParameterError } from '../errors.js';

const LN2 = Math.LN2;

function requireNotNaN(param: string, value: number): void {
  if (typeof value !== 'number' || Number.isNaN(value)) throw new InvalidParameterError(param, value, 'a number (not NaN)');
}

/**
 * log(sum_i exp(values[i])), computed as `m + log1p(sum_{i != argmax} exp(values[i] - m))`
 * with `m = max(values)`, so it neither overflows nor loses the small terms (error a few ulps
 * of the result). Empty input or all -Infinity gives -Infinity; any +Infinity gives +Infinity.
 *
 * @example logSumExp([1000, 1000]) // 1000 + Math.LN2
 */
export function logSumExp(values: ArrayLike<number>): number {
  const n = values.length;
  let max = -Infinity;
  let argMax = -1;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    requireNotNaN(`values[${i}]`, v);
    if (v > max) {
      max = v;
      argMax = i;
    }
  }
  if (max === -Infinity || max === Infinity) return max;
  let rest = 0;
  for (let i = 0; i < n; i++) if (i !== argMax) rest += Math.exp(values[i] - max);
  return max + Math.log1p(rest);
}

/** log(exp(a) + exp(b)) without overflow or underflow; logAddExp(-Infinity, b) = b. */
export function logAddExp(a: number, b: number): number {
  requireNotNaN('a', a);
  requireNotNaN('b', b);
  const hi = a >= b ? a : b;
  const lo = a >= b ? b : a;
  if (lo === -Infinity || hi === Infinity) return hi;
  return hi + Math.log1p(Math.exp(lo - hi));
}

/**
 * log(1 - exp(x)) for x <= 0, accurate to a few ulps everywhere: `log(-expm1(x))` for
 * -ln 2 < x <= 0 (where 1 - exp(x) cancels) and `log1p(-exp(x))` below (Mächler 2012,
 * "Accurately computing log(1 - exp(-|a|))"). log1mExp(0) = -Infinity,
 * log1mExp(-Infinity) = 0. Throws `InvalidParameterError` for x > 0.
 */
export function log1mExp(x: number): number {
  requireNotNaN('x', x);
  if (x > 0) throw new InvalidParameterError('x', x, '<= 0', 'log(1 - exp(x)) is undefined for x > 0');
  return x > -LN2 ? Math.log(-Math.expm1(x)) : Math.log1p(-Math.exp(x));
}

/**
 * log(exp(a) - exp(b)) for a >= b, as `a + log1mExp(b - a)`; -Infinity when a == b (finite or
 * -Infinity). Throws `InvalidParameterError` for a < b and for a = b = +Infinity (undefined).
 */
export function logSubExp(a: number, b: number): number {
  requireNotNaN('a', a);
  requireNotNaN('b', b);
  if (a < b) throw new InvalidParameterError('a', a, `>= b = ${b}`, 'log(exp(a) - exp(b)) needs a >= b');
  if (b === -Infinity) return a;
  if (a === Infinity) {
    if (b === Infinity) throw new InvalidParameterError('b', b, '< Infinity when a = Infinity', 'Infinity - Infinity is undefined');
    return Infinity;
  }
  if (a === b) return -Infinity;
  return a + log1mExp(b - a);
}

/**
 * log(1 + exp(x)) ("softplus"), relative error a few ulps for all x: exp(x) for x <= -37,
 * log1p(exp(x)) up to 18, x + exp(-x) up to 33.3, and x beyond (Mächler 2012, section on log1pexp).
 */
export function log1pExp(x: number): number {
  requireNotNaN('x', x);
  if (x <= -37) return Math.exp(x);
  if (x <= 18) return Math.log1p(Math.exp(x));
  if (x <= 33.3) return x + Math.exp(-x);
  return x;
}
