/**
 * Parameter checks shared by every layer. Each throws `InvalidParameterError` naming the
 * parameter, the value and the valid range, and returns the value so checks compose inline:
 * `const z = requirePositive('noiseMultiplier', options.noiseMultiplier);`
 * NaN never passes a check.
 */
import { InvalidParameterError, UnknownOptionError } from './errors.js';

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

/** Every key of T (of each member when T is a union). */
type AllKeys<T> = T extends unknown ? keyof T : never;

/**
 * The option names of an options type T as a record `{name: true, ...}`. Written as an object
 * literal against this type, the compiler checks it against T in both directions: a key T lacks
 * is an excess property, a key of T left out is a missing property. So a list built with
 * `optionNames<T>({...})` cannot drift from its interface. (A type with an index signature has no
 * list of names: `never`.)
 */
export type OptionNames<T> = string extends AllKeys<T> ? never : { readonly [K in AllKeys<T> & string]: true };

/**
 * The names of T's options, checked by the compiler to be exactly T's keys (see `OptionNames`):
 * `const GAUSSIAN_OPTIONS = optionNames<GaussianMechanismOptions>({ sensitivity: true, ... })`.
 * Options forwarded to another function are the union: `optionNames<A & B>({...A_NAMES, ...B_NAMES})`.
 */
export function optionNames<T>(names: OptionNames<T>): OptionNames<T> {
  return Object.freeze({ ...names }) as OptionNames<T>;
}

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions) of two strings. */
function editDistance(a: string, b: string): number {
  let prevPrev: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prevPrev[j - 2] + 1);
      row.push(d);
    }
    prevPrev = prev;
    prev = row;
  }
  return prev[b.length];
}

/**
 * The valid name closest to `key`, ignoring case, or undefined when none is close: the fewest
 * edits (insertions, deletions, substitutions, adjacent transpositions), at most a third of the
 * key's length (at least 1, fewer than its length), else the one name that the key begins (`eps`
 * for `epsilon`, from 3 characters). Ties go to the first name listed.
 */
export function closestName(key: string, names: readonly string[]): string | undefined {
  const k = key.toLowerCase();
  const limit = Math.min(Math.max(1, Math.floor(k.length / 3)), k.length - 1);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of names) {
    const d = editDistance(k, name.toLowerCase());
    if (d <= limit && d < bestDistance) {
      best = name;
      bestDistance = d;
    }
  }
  if (best !== undefined || k.length < 3) return best;
  const extended = names.filter((name) => name.toLowerCase().startsWith(k));
  return extended.length === 1 ? extended[0] : undefined;
}

/**
 * Refuses an options object holding a key that `where` does not know (a typo would otherwise be
 * ignored in silence): `UnknownOptionError`, an `InvalidParameterError` naming the key, its value,
 * the valid names and the closest of them ("unknown option epsilion of gaussianMechanism (did you
 * mean epsilon?) ..."). Only own enumerable string keys count (inherited and symbol keys are not
 * options); a known key whose value is undefined is accepted (it means "not given"). Options that
 * are not an object (null, an array, a number, ...) are refused as `options`. Call it first,
 * before any work or change of state; `allowed` is an `optionNames` record or a list of names.
 */
export function rejectUnknownOptions(options: unknown, allowed: Readonly<Record<string, true>> | readonly string[], where: string): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidParameterError('options', options, `an object holding the options of ${where}`);
  }
  const isList = Array.isArray(allowed);
  for (const key in options) {
    if (!Object.prototype.hasOwnProperty.call(options, key)) continue;
    if (isList ? (allowed as readonly string[]).includes(key) : Object.prototype.hasOwnProperty.call(allowed, key)) continue;
    const names = isList ? [...(allowed as readonly string[])] : Object.keys(allowed);
    throw new UnknownOptionError(key, (options as Record<string, unknown>)[key], where, names, closestName(key, names));
  }
}

/**
 * The options among `options` that `names` lists (own keys only), for forwarding to a function
 * that takes fewer than its caller: the caller has refused unknown keys against the union first,
 * and the callee, strict too, gets only its own.
 */
export function pickOptions<T extends object, K extends string>(options: T, names: Readonly<Record<K, true>>): Pick<T, K & keyof T> {
  const out: Record<string, unknown> = {};
  for (const key in options) {
    if (Object.prototype.hasOwnProperty.call(options, key) && Object.prototype.hasOwnProperty.call(names, key)) out[key] = (options as Record<string, unknown>)[key];
  }
  return out as Pick<T, K & keyof T>;
}
