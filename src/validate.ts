/**
 * Parameter checks shared by every layer. Each throws `InvalidParameterError` naming the
 * parameter, the value and the valid range, and returns the value so checks compose inline:
 * `const z = requirePositive('noiseMultiplier', options.noiseMultiplier);`
 * NaN never passes a check.
 */
import { InvalidParameterError } from './errors.js';

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && !Number.isNaN(value);
}

/** A finite number. */
export function requireFinite(param: string, value: unknown): number {
  if (!isNumber(value) || !Number.isFinite(value)) throw new InvalidParameterError(param, value, 'a finite number');
  return value;
}

/** A finite number > 0. */
export function requirePositive(param: string, value: unknown): number {
  if (!isNumber(value) || !Number.isFinite(value) || value <= 0) throw new InvalidParameterError(param, value, '> 0');
  return value;
}

/** A number > 0 that may be +Infinity. */
export function requirePositiveOrInfinity(param: string, value: unknown): number {
  if (!isNumber(value) || value <= 0) throw new InvalidParameterError(param, value, '> 0 (Infinity allowed)');
  return value;
}

/** A finite number >= 0. */
export function requireNonNegative(param: string, value: unknown): number {
  if (!isNumber(value) || !Number.isFinite(value) || value < 0) throw new InvalidParameterError(param, value, '>= 0');
  return value;
}

/** A probability strictly inside (0, 1), e.g. delta. */
export function requireOpenUnit(param: string, value: unknown): number {
  if (!isNumber(value) || !(value > 0 && value < 1)) throw new InvalidParameterError(param, value, 'in (0, 1)');
  return value;
}

/** A probability in [0, 1]. */
export function requireProbability(param: string, value: unknown): number {
  if (!isNumber(value) || !(value >= 0 && value <= 1)) throw new InvalidParameterError(param, value, 'in [0, 1]');
  return value;
}

/** A number in the interval (lo, hi] (lo exclusive, hi inclusive), e.g. a sampling probability. */
export function requireInHalfOpen(param: string, value: unknown, lo: number, hi: number): number {
  if (!isNumber(value) || !(value > lo && value <= hi)) throw new InvalidParameterError(param, value, `in (${lo}, ${hi}]`);
  return value;
}

/** An integer in [min, max] (safe integers only). */
export function requireInteger(param: string, value: unknown, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (!isNumber(value) || !Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `an integer >= ${min}` : `an integer in [${min}, ${max}]`;
    throw new InvalidParameterError(param, value, range);
  }
  return value;
}
