/**
 * One-dimensional root finding: Brent's method on a bracket, and geometric bracket expansion to
 * find such a bracket on (0, Infinity). Calibration ("which noise multiplier gives epsilon = 1?")
 * is built from these two.
 */
import { InvalidParameterError, NumericalError } from '../errors.js';
import { optionNames, rejectUnknownOptions, requireFinite, requireInteger, requireNonNegative } from '../validate.js';

const EPS = Number.EPSILON;

export interface BrentRootOptions {
  /** Absolute tolerance on the root (default 0). */
  xAbsTol?: number;
  /** Relative tolerance on the root (default 1e-12). */
  xRelTol?: number;
  /** Maximum number of function evaluations after the two endpoints (default 1000). */
  maxIterations?: number;
}

export interface BrentRootResult {
  /** The best estimate (the bracket end with the smaller |f|). */
  root: number;
  /** Final bracket, lo <= root <= hi; f(lo) and f(hi) have opposite signs or one is 0. */
  lo: number;
  hi: number;
  /** Function evaluations after the two endpoints. */
  iterations: number;
}

function sameSign(u: number, v: number): boolean {
  return (u > 0 && v > 0) || (u < 0 && v < 0);
}

const BRENT_ROOT_OPTIONS = optionNames<BrentRootOptions>({ xAbsTol: true, xRelTol: true, maxIterations: true });

/**
 * A root of f in [lo, hi] by Brent's method (Brent 1973, "Algorithms for Minimization without
 * Derivatives", ch. 4: inverse quadratic / secant steps safeguarded by bisection), requiring
 * f(lo) and f(hi) of opposite signs (or one of them 0). Stops when the bracket is no wider than
 * max(xAbsTol, xRelTol * |root|) + 4 eps |root|, or when f(root) = 0 (then lo = hi = root).
 * f may return +-Infinity (bisection is used then) but not NaN.
 *
 * The returned [lo, hi] always straddles a sign change; when f has a single root in the initial
 * bracket, f(lo) has the sign of the initial f(lo), so a caller that needs, e.g., f <= 0 can take
 * the corresponding end instead of `root`.
 *
 * Throws `InvalidParameterError` for a bad bracket (same signs, NaN values, lo >= hi) and
 * `NumericalError` if `maxIterations` evaluations do not reach the tolerance or f returns NaN.
 *
 * @example brentRoot((x) => x * x * x - 2, 0, 2).root // 1.2599210498948732
 */
export function brentRoot(f: (x: number) => number, lo: number, hi: number, options: BrentRootOptions = {}): BrentRootResult {
  rejectUnknownOptions(options, BRENT_ROOT_OPTIONS, 'brentRoot');
  requireFinite('lo', lo);
  requireFinite('hi', hi);
  if (!(lo < hi)) throw new InvalidParameterError('hi', hi, `> lo = ${lo}`);
  const absTol = requireNonNegative('xAbsTol', options.xAbsTol ?? 0);
  const relTol = requireNonNegative('xRelTol', options.xRelTol ?? 1e-12);
  const maxIterations = requireInteger('maxIterations', options.maxIterations ?? 1000, 1);

  let a = lo;
  let b = hi;
  let fa = f(a);
  let fb = f(b);
  if (Number.isNaN(fa)) throw new InvalidParameterError('lo', lo, 'a point where f is not NaN', `f(${lo}) = NaN`);
  if (Number.isNaN(fb)) throw new InvalidParameterError('hi', hi, 'a point where f is not NaN', `f(${hi}) = NaN`);
  if (fa === 0) return { root: a, lo: a, hi: a, iterations: 0 };
  if (fb === 0) return { root: b, lo: b, hi: b, iterations: 0 };
  if (sameSign(fa, fb)) {
    throw new InvalidParameterError('[lo, hi]', [lo, hi], 'a bracket where f changes sign', `f(${lo}) = ${fa}, f(${hi}) = ${fb}`);
  }

  // b: best estimate; a: previous b; c: contrapoint with f(c) of the other sign.
  let c = a;
  let fc = fa;
  let d = b - a;
  let e = d;
  for (let iteration = 0; ; iteration++) {
    if (Math.abs(fc) < Math.abs(fb)) {
      a = b; b = c; c = a;
      fa = fb; fb = fc; fc = fa;
    }
    const tol = 2 * EPS * Math.abs(b) + 0.5 * Math.max(absTol, relTol * Math.abs(b));
    const m = 0.5 * (c - b);
    if (fb === 0) return { root: b, lo: b, hi: b, iterations: iteration };
    if (Math.abs(m) <= tol) return { root: b, lo: Math.min(b, c), hi: Math.max(b, c), iterations: iteration };
    if (iteration >= maxIterations) {
      throw new NumericalError(`brentRoot: maxIterations = ${maxIterations} reached with bracket [${Math.min(b, c)}, ${Math.max(b, c)}]`);
    }

    if (Math.abs(e) >= tol && Math.abs(fa) > Math.abs(fb) && Number.isFinite(fa) && Number.isFinite(fc)) {
      const s = fb / fa;
      let p: number;
      let q: number;
      if (a === c) {
        p = 2 * m * s; // secant
        q = 1 - s;
      } else {
        const qa = fa / fc; // inverse quadratic interpolation through a, b, c
        const r = fb / fc;
        p = s * (2 * m * qa * (qa - r) - (b - a) * (r - 1));
        q = (qa - 1) * (r - 1) * (s - 1);
      }
      if (p > 0) q = -q;
      else p = -p;
      if (2 * p < Math.min(3 * m * q - Math.abs(tol * q), Math.abs(e * q))) {
        e = d;
        d = p / q;
      } else {
        d = m;
        e = m;
      }
    } else {
      d = m;
      e = m;
    }
    a = b;
    fa = fb;
    b += Math.abs(d) > tol ? d : m > 0 ? tol : -tol;
    fb = f(b);
    if (Number.isNaN(fb)) throw new NumericalError(`brentRoot: f(${b}) is NaN`);
    if (sameSign(fb, fc)) {
      c = a;
      fc = fa;
      d = b - a;
      e = d;
    }
  }
}

export interface ExpandBracketOptions {
  /** 'up': probe start*factor^k; 'down': start/factor^k; 'both': alternate, up first. */
  direction: 'up' | 'down' | 'both';
  /** Growth factor per step, > 1 (default 2). */
  factor?: number;
  /** Maximum number of probes per direction (default 100: 2^100 ~ 1e30 with factor 2). */
  limit?: number;
  /** Smallest point to probe, in (0, start); probed itself when reached (default: no bound). */
  lowerLimit?: number;
  /** Largest point to probe, > start and finite; probed itself when reached (default: no bound). */
  upperLimit?: number;
}

const EXPAND_BRACKET_OPTIONS = optionNames<ExpandBracketOptions>({ direction: true, factor: true, limit: true, lowerLimit: true, upperLimit: true });

/**
 * A bracket [lo, hi] on which f changes sign, found by probing geometrically from `start` > 0:
 * x = start * factor^k upwards and/or start / factor^k downwards, so it suits scale parameters on
 * (0, Infinity) such as a noise multiplier (for a signed domain, search over t = exp(x) instead).
 * The first sign change relative to f(start) ends the search: the bracket is the last probe
 * with the sign of f(start) and the first probe without it (opposite sign or a zero of f), so it
 * is a valid input for `brentRoot` and, for monotone f, the tightest such pair of probes.
 * With 'both' the two directions alternate one probe at a time, beginning upwards.
 * If f(start) = 0 it returns lo = hi = start. Cost: at most 1 + limit (x2 for 'both') calls of f.
 *
 * Throws `NumericalError` naming what stopped the search (`limit` probes, `lowerLimit`,
 * `upperLimit`, overflow to Infinity or underflow to 0) when f keeps its sign, or when f returns
 * NaN; `InvalidParameterError` for bad options.
 *
 * @example expandBracket((s) => 1 / s - 0.001, 1, { direction: 'up' }) // { lo: 512, hi: 1024 }
 */
export function expandBracket(f: (x: number) => number, start: number, options: ExpandBracketOptions): { lo: number; hi: number } {
  rejectUnknownOptions(options, EXPAND_BRACKET_OPTIONS, 'expandBracket');
  if (!(typeof start === 'number' && start > 0 && Number.isFinite(start))) throw new InvalidParameterError('start', start, 'a finite number > 0');
  const direction = options.direction;
  if (direction !== 'up' && direction !== 'down' && direction !== 'both') {
    throw new InvalidParameterError('direction', direction, "'up', 'down' or 'both'");
  }
  const factor = options.factor ?? 2;
  if (!(typeof factor === 'number' && factor > 1 && Number.isFinite(factor))) throw new InvalidParameterError('factor', factor, 'a finite number > 1');
  const limit = requireInteger('limit', options.limit ?? 100, 1);
  const lowerLimit = options.lowerLimit ?? 0;
  const upperLimit = options.upperLimit ?? Infinity;
  if (options.lowerLimit !== undefined && !(lowerLimit > 0 && lowerLimit < start)) {
    throw new InvalidParameterError('lowerLimit', lowerLimit, `in (0, start = ${start})`);
  }
  if (options.upperLimit !== undefined && !(upperLimit > start && Number.isFinite(upperLimit))) {
    throw new InvalidParameterError('upperLimit', upperLimit, `finite and > start = ${start}`);
  }

  const evaluate = (x: number): number => {
    const y = f(x);
    if (Number.isNaN(y)) throw new NumericalError(`expandBracket: f(${x}) is NaN`);
    return y;
  };
  const f0 = evaluate(start);
  if (f0 === 0) return { lo: start, hi: start };

  const sides: ('up' | 'down')[] = direction === 'both' ? ['up', 'down'] : [direction];
  const last = { up: start, down: start }; // furthest probes that kept the sign of f0
  const stoppedBy: { up?: string; down?: string } = {};
  for (let k = 1; k <= limit; k++) {
    for (const side of sides) {
      if (stoppedBy[side] !== undefined) continue;
      const prev = last[side];
      const x = side === 'up' ? Math.min(prev * factor, upperLimit) : Math.max(prev / factor, lowerLimit);
      if (x === Infinity || x === 0) {
        stoppedBy[side] = x === 0 ? 'underflow to 0' : 'overflow to Infinity';
        continue;
      }
      if (!sameSign(evaluate(x), f0)) return side === 'up' ? { lo: prev, hi: x } : { lo: x, hi: prev };
      last[side] = x;
      if (x === upperLimit) stoppedBy.up = `upperLimit = ${upperLimit}`;
      if (x === lowerLimit) stoppedBy.down = `lowerLimit = ${lowerLimit}`;
    }
    if (sides.every((side) => stoppedBy[side] !== undefined)) break;
  }
  const reasons = sides.map((side) => stoppedBy[side] ?? `limit = ${limit} probes`);
  throw new NumericalError(
    `expandBracket: f keeps the sign of f(${start}) = ${f0} on [${last.down}, ${last.up}] (direction '${direction}'); stopped by ${reasons.join(' and ')}`,
  );
}

/**
 * The largest x >= 0 at which `holds` is true, for a predicate true on [0, x*) and false above
 * (e.g. "epsilon is refuted"), rounded DOWN: the value returned satisfies `holds` (or is 0 when
 * holds(0) is false). Doubles from 1 until `holds` fails, then bisects until the bracket is within
 * `relativeTolerance` of its upper end. When the doubling passes `cap`, the last x that held is
 * returned with `capped: true` (the caller decides what a predicate true that far means).
 */
export function largestWhere(holds: (x: number) => boolean, options: { relativeTolerance: number; cap?: number }): { value: number; capped: boolean } {
  if (!holds(0)) return { value: 0, capped: false };
  const cap = options.cap ?? Infinity;
  let lo = 0;
  let hi = 1;
  while (holds(hi)) {
    lo = hi;
    hi *= 2;
    if (hi > cap) return { value: lo, capped: true };
  }
  for (let i = 0; i < 200 && hi - lo > options.relativeTolerance * hi; i++) {
    const mid = (lo + hi) / 2;
    if (holds(mid)) lo = mid;
    else hi = mid;
  }
  return { value: lo, capped: false };
}
