/**
 * One-dimensional minimisation without derivatives, e.g. the choice of Rényi order that gives
 * the smallest epsilon.
 */
import { InvalidParameterError, NumericalError } from '../errors.js';
import { optionNames, rejectUnknownOptions, requireFinite, requireInteger, requireNonNegative } from '../validate.js';

/** (3 - sqrt 5) / 2: the golden-section fraction. */
const GOLDEN = 0.5 * (3 - Math.sqrt(5));
const SQRT_EPS = Math.sqrt(Number.EPSILON);

export interface BrentMinimizeOptions {
  /** Absolute tolerance on x (default 1e-10 * (hi - lo)); sqrt(eps) * |x| is always added. */
  xTol?: number;
  /** Maximum number of interior evaluations (default 500). */
  maxIterations?: number;
}

export interface BrentMinimizeResult {
  /** Best point found: the interior local minimum or an endpoint, whichever has the smaller f. */
  x: number;
  value: number;
  /** Interior evaluations (the two endpoint evaluations are not counted). */
  iterations: number;
}

const BRENT_MINIMIZE_OPTIONS = optionNames<BrentMinimizeOptions>({ xTol: true, maxIterations: true });

/**
 * Minimises f on [lo, hi] with Brent's method (Brent 1973, "Algorithms for Minimization without
 * Derivatives", ch. 5: golden-section search accelerated by successive parabolic interpolation).
 * The interior search locates a local minimum to within 2 (sqrt(eps) |x| + xTol / 3); f(lo) and
 * f(hi) are evaluated too and the best of the three points is returned, so a convex function
 * decreasing towards an end gives that end exactly. For a unimodal f the result is the global
 * minimum on [lo, hi]; for multimodal f it is a local one. As with any derivative-free method,
 * x is only determined to ~sqrt(eps) relative precision for smooth f; `value` is accurate.
 * f may return +Infinity (treated as very large) but not NaN.
 *
 * Throws `InvalidParameterError` for a bad interval or options, `NumericalError` if f returns NaN
 * or `maxIterations` is exhausted.
 *
 * @example brentMinimize((x) => (x - 2) ** 2, 0, 5).x // 2 (to ~1e-8)
 */
export function brentMinimize(f: (x: number) => number, lo: number, hi: number, options: BrentMinimizeOptions = {}): BrentMinimizeResult {
  rejectUnknownOptions(options, BRENT_MINIMIZE_OPTIONS, 'brentMinimize');
  requireFinite('lo', lo);
  requireFinite('hi', hi);
  if (!(lo < hi)) throw new InvalidParameterError('hi', hi, `> lo = ${lo}`);
  const xTol = requireNonNegative('xTol', options.xTol ?? 1e-10 * (hi - lo));
  const maxIterations = requireInteger('maxIterations', options.maxIterations ?? 500, 1);
  const evaluate = (x: number): number => {
    const y = f(x);
    if (Number.isNaN(y)) throw new NumericalError(`brentMinimize: f(${x}) is NaN`);
    return y;
  };

  let a = lo;
  let b = hi;
  let x = a + GOLDEN * (b - a); // best point so far
  let w = x; // second best
  let v = x; // previous value of w
  let fx = evaluate(x);
  let fw = fx;
  let fv = fx;
  let d = 0; // last step
  let e = 0; // step before last
  let iterations = 1;
  for (;;) {
    const m = 0.5 * (a + b);
    const tol = SQRT_EPS * Math.abs(x) + xTol / 3;
    const tol2 = 2 * tol;
    if (Math.abs(x - m) <= tol2 - 0.5 * (b - a)) break;
    if (iterations >= maxIterations) {
      throw new NumericalError(`brentMinimize: maxIterations = ${maxIterations} reached on [${a}, ${b}]`);
    }
    let golden = true;
    if (Math.abs(e) > tol) {
      // Parabola through (v, fv), (w, fw), (x, fx): step p / q from x.
      let r = (x - w) * (fx - fv);
      let q = (x - v) * (fx - fw);
      let p = (x - v) * q - (x - w) * r;
      q = 2 * (q - r);
      if (q > 0) p = -p;
      else q = -q;
      r = e;
      e = d;
      // Accept if it lies in (a, b) and moves less than half the step before last.
      if (Math.abs(p) < Math.abs(0.5 * q * r) && p > q * (a - x) && p < q * (b - x)) {
        d = p / q;
        const u = x + d;
        if (u - a < tol2 || b - u < tol2) d = x < m ? tol : -tol;
        golden = false;
      }
    }
    if (golden) {
      e = (x < m ? b : a) - x;
      d = GOLDEN * e;
    }
    const u = x + (Math.abs(d) >= tol ? d : d > 0 ? tol : -tol);
    const fu = evaluate(u);
    iterations++;
    if (fu <= fx) {
      if (u < x) b = x;
      else a = x;
      v = w; fv = fw;
      w = x; fw = fx;
      x = u; fx = fu;
    } else {
      if (u < x) a = u;
      else b = u;
      if (fu <= fw || w === x) {
        v = w; fv = fw;
        w = u; fw = fu;
      } else if (fu <= fv || v === x || v === w) {
        v = u; fv = fu;
      }
    }
  }

  let best = { x, value: fx };
  const fLo = evaluate(lo);
  const fHi = evaluate(hi);
  if (fLo < best.value) best = { x: lo, value: fLo };
  if (fHi < best.value) best = { x: hi, value: fHi };
  return { x: best.x, value: best.value, iterations };
}
