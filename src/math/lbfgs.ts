/**
 * Limited-memory BFGS (Nocedal & Wright, "Numerical Optimization", 2nd ed., Alg. 7.4 two-loop
 * recursion and Alg. 7.5) with a line search satisfying the strong Wolfe conditions (Alg. 3.5
 * and its `zoom`, Alg. 3.6) — or, once changes in f are below its rounding noise, the
 * approximate Wolfe conditions of Hager & Zhang (2005), which judge decrease by the slope so
 * that tight gradient tolerances stay reachable when |f| is large. It stops when the Euclidean norm of the gradient falls to
 * `gradTolerance` — the stopping test Approximate Minima Perturbation relies on (`003` Alg. 1,
 * step 4): `converged: true` means exactly "||grad f(x)||_2 <= gradTolerance at the returned x",
 * and every other stop (iteration or evaluation cap, failed line search) says `converged: false`
 * with its reason, so that callers can fail loudly.
 */
import { InvalidParameterError, NumericalError } from '../errors.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireNonNegative } from '../validate.js';
import { dot, norm2 } from './linear-algebra.js';

/**
 * A differentiable objective: fills `grad` with the gradient at `x` and returns the value.
 * It must not keep references to `x` or `grad` (the optimiser reuses both buffers). A value or
 * gradient entry that is not finite marks `x` as outside the domain; the line search then
 * shrinks its step.
 */
export type Objective = (x: Float64Array, grad: Float64Array) => number;

/** Why an optimiser stopped. Only 'gradTolerance' means convergence. */
export type OptimizeStopReason = 'gradTolerance' | 'maxIterations' | 'maxEvaluations' | 'lineSearchFailed';

export interface OptimizeResult {
  /** The last accepted iterate (a new array; the starting point is never modified). */
  x: Float64Array;
  /** Objective value at x. */
  value: number;
  /** ||grad f(x)||_2 at x, as computed by the objective. */
  gradNorm: number;
  /** Accepted steps. */
  iterations: number;
  /** Calls of the objective (each computes value and gradient). */
  evaluations: number;
  /** true iff gradNorm <= gradTolerance. */
  converged: boolean;
  reason: OptimizeStopReason;
}

/** Progress report passed to `onIteration` after every accepted step (and once at the start). */
export interface OptimizeProgress {
  iteration: number;
  value: number;
  gradNorm: number;
}

export interface LbfgsOptions {
  /** Number of correction pairs kept, m (default 10). */
  memory?: number;
  /** Stop when ||grad||_2 <= gradTolerance (absolute; default 1e-6). 0 is allowed and then only caps stop the run. */
  gradTolerance?: number;
  /** Maximum accepted steps (default 1000); reaching it gives `converged: false`, reason 'maxIterations'. */
  maxIterations?: number;
  /** Maximum objective calls, line searches included (default 20 * maxIterations + 20). */
  maxEvaluations?: number;
  /** Sufficient-decrease constant c1 of the Wolfe conditions (default 1e-4). */
  c1?: number;
  /** Curvature constant c2, c1 < c2 < 1 (default 0.9, N&W's choice for quasi-Newton methods). */
  c2?: number;
  /**
   * Relative rounding noise of the objective's values (default 1e-10): changes in f smaller than
   * valueNoise * |f| are judged by the slope instead (approximate Wolfe conditions, Hager & Zhang
   * 2005). Set 0 for the exact conditions.
   */
  valueNoise?: number;
  /** Objective calls allowed per line search (default 40). */
  maxLineSearchEvaluations?: number;
  onIteration?: (progress: OptimizeProgress) => void;
}

/** Validated numeric options shared with `newton.ts`. */
export interface CommonOptions {
  gradTolerance: number;
  maxIterations: number;
  maxEvaluations: number;
}

/** @internal Validates the options common to both optimisers. */
export function commonOptions(options: { gradTolerance?: number; maxIterations?: number; maxEvaluations?: number }): CommonOptions {
  const gradTolerance = requireNonNegative('gradTolerance', options.gradTolerance ?? 1e-6);
  const maxIterations = requireInteger('maxIterations', options.maxIterations ?? 1000, 0);
  const maxEvaluations = requireInteger('maxEvaluations', options.maxEvaluations ?? 20 * maxIterations + 20, 1);
  return { gradTolerance, maxIterations, maxEvaluations };
}

/** @internal Checks x0 and evaluates the objective there; throws if the start is not finite. */
export function evaluateStart(f: Objective, x0: Float64Array, grad: Float64Array, name: string): number {
  if (!(x0 instanceof Float64Array) || x0.length === 0) throw new InvalidParameterError('x0', x0, 'a non-empty Float64Array');
  for (let i = 0; i < x0.length; i++) {
    if (!Number.isFinite(x0[i])) throw new InvalidParameterError(`x0[${i}]`, x0[i], 'a finite number');
  }
  const value = f(x0, grad);
  if (!Number.isFinite(value) || !Number.isFinite(norm2(grad))) {
    throw new NumericalError(`${name}: the objective or its gradient is not finite at the starting point (value ${value})`);
  }
  return value;
}

/** Minimiser of the cubic matching phi and phi' at a and b (N&W eq. 3.59), or NaN. */
function cubicMinimizer(a: number, fa: number, da: number, b: number, fb: number, db: number): number {
  const d1 = da + db - (3 * (fa - fb)) / (a - b);
  const disc = d1 * d1 - da * db;
  if (!(disc >= 0)) return NaN;
  const d2 = Math.sign(b - a) * Math.sqrt(disc);
  const denom = db - da + 2 * d2;
  if (denom === 0) return NaN;
  return b - ((b - a) * (db + d2 - d1)) / denom;
}

interface LineSearchState {
  evaluations: number;
  maxEvaluations: number;
}

/**
 * Strong Wolfe line search along p from x (value f0, slope df0 = grad . p < 0), N&W Alg. 3.5
 * with zoom (Alg. 3.6); trial steps use safeguarded cubic interpolation, and bisection where a
 * value is not finite. Where f changes by less than its rounding noise, the sufficient-decrease
 * test and the comparisons of values are replaced by slope tests (approximate Wolfe). On success (status 'wolfe') xOut/gOut hold the accepted point and the
 * return value its objective value. If the conditions cannot be met within the budget but some
 * step decreased f sufficiently, that step is returned with status 'decrease'; otherwise 'failed'
 * (or 'budget' when maxEvaluations was reached first) and xOut/gOut are unspecified.
 */
function strongWolfe(
  f: Objective,
  x: Float64Array,
  f0: number,
  df0: number,
  p: Float64Array,
  alpha1: number,
  c1: number,
  c2: number,
  valueNoise: number,
  maxTrials: number,
  state: LineSearchState,
  xOut: Float64Array,
  gOut: Float64Array,
  xLo: Float64Array,
  gLo: Float64Array,
): { status: 'wolfe' | 'decrease' | 'failed' | 'budget'; value: number; step: number } {
  const n = x.length;
  let trials = 0;
  // Evaluates phi(alpha) into xOut/gOut; returns value and slope (NaN slope if not finite).
  const phi = (alpha: number): { value: number; slope: number } => {
    for (let i = 0; i < n; i++) xOut[i] = x[i] + alpha * p[i];
    state.evaluations++;
    trials++;
    const value = f(xOut, gOut);
    const slope = dot(gOut, p);
    if (!Number.isFinite(value) || !Number.isFinite(slope) || !Number.isFinite(norm2(gOut))) return { value: Infinity, slope: NaN };
    return { value, slope };
  };
  const budgetLeft = (): boolean => trials < maxTrials && state.evaluations < state.maxEvaluations;
  // Sufficient decrease, exact (Armijo) or approximate (Hager & Zhang 2005, "A new conjugate
  // gradient method with guaranteed descent and an efficient line search", eq. 4.3: when the
  // change in f is within its rounding noise, decide by the slope: phi'(alpha) <= (2 c1 - 1) phi'(0)).
  // Without the approximate test, tight gradient tolerances are unreachable once
  // ||g||^2 / curvature < eps |f| (e.g. AMP on large n, where f ~ n).
  const noise = valueNoise * Math.abs(f0);
  const approximate = (value: number, slope: number): boolean => value <= f0 + noise && slope <= (2 * c1 - 1) * df0;
  // The Armijo test compares the difference (exact by Sterbenz's lemma when value ~ f0): in the
  // form value <= f0 + c1 alpha df0 an unchanged value would pass whenever the right-hand side
  // rounds to f0.
  const sufficient = (alpha: number, value: number, slope: number): boolean =>
    value - f0 <= c1 * alpha * df0 || approximate(value, slope);
  // Latest sufficient-decrease point (the zoom's alpha_lo when lo > 0).
  let haveLo = false;
  let loValue = f0;
  let loStep = 0;
  let loApproximate = false;
  const saveLo = (value: number, slope: number, step: number): void => {
    xLo.set(xOut);
    gLo.set(gOut);
    haveLo = true;
    loValue = value;
    loStep = step;
    loApproximate = approximate(value, slope);
  };
  const fallback = (): { status: 'decrease' | 'failed' | 'budget'; value: number; step: number } => {
    // A fallback must make progress: a strict decrease, or the slope test of the approximate conditions.
    if (haveLo && (loValue < f0 || loApproximate)) {
      xOut.set(xLo);
      gOut.set(gLo);
      return { status: 'decrease', value: loValue, step: loStep };
    }
    return { status: state.evaluations >= state.maxEvaluations ? 'budget' : 'failed', value: NaN, step: 0 };
  };

  const zoom = (
    lo: number, fLo: number, dLo: number,
    hi: number, fHi: number, dHi: number,
  ): { status: 'wolfe' | 'decrease' | 'failed' | 'budget'; value: number; step: number } => {
    while (budgetLeft()) {
      const a = Math.min(lo, hi);
      const b = Math.max(lo, hi);
      const width = b - a;
      if (width <= 1e-16 * Math.max(1, b)) break;
      let alpha = Number.isFinite(fHi) ? cubicMinimizer(lo, fLo, dLo, hi, fHi, dHi) : NaN;
      // Safeguard: stay 10% away from both ends, otherwise bisect.
      if (!(alpha >= a + 0.1 * width && alpha <= b - 0.1 * width)) alpha = 0.5 * (lo + hi);
      const t = phi(alpha);
      if (!sufficient(alpha, t.value, t.slope) || (t.value >= fLo && !approximate(t.value, t.slope))) {
        hi = alpha; fHi = t.value; dHi = t.slope;
      } else {
        if (Math.abs(t.slope) <= -c2 * df0) return { status: 'wolfe', value: t.value, step: alpha };
        saveLo(t.value, t.slope, alpha);
        if (t.slope * (hi - lo) >= 0) {
          hi = lo; fHi = fLo; dHi = dLo;
        }
        lo = alpha; fLo = t.value; dLo = t.slope;
      }
    }
    return fallback();
  };

  let prevStep = 0;
  let prevValue = f0;
  let prevSlope = df0;
  let alpha = alpha1;
  for (let i = 1; budgetLeft(); i++) {
    const t = phi(alpha);
    if (!sufficient(alpha, t.value, t.slope) || (i > 1 && t.value >= prevValue && !approximate(t.value, t.slope))) {
      return zoom(prevStep, prevValue, prevSlope, alpha, t.value, t.slope);
    }
    if (Math.abs(t.slope) <= -c2 * df0) return { status: 'wolfe', value: t.value, step: alpha };
    saveLo(t.value, t.slope, alpha);
    if (t.slope >= 0) return zoom(alpha, t.value, t.slope, prevStep, prevValue, prevSlope);
    prevStep = alpha;
    prevValue = t.value;
    prevSlope = t.slope;
    const next = 4 * alpha; // still descending: extrapolate
    if (!Number.isFinite(next) || next > 1e20) break;
    alpha = next;
  }
  return fallback();
}

const LBFGS_OPTIONS = optionNames<LbfgsOptions>({ memory: true, gradTolerance: true, maxIterations: true, maxEvaluations: true, c1: true, c2: true, valueNoise: true, maxLineSearchEvaluations: true, onIteration: true });

/**
 * Minimises a smooth function with L-BFGS and a strong Wolfe line search.
 *
 * - The inverse-Hessian approximation starts from gamma I with gamma = s.y / y.y of the newest
 *   pair (N&W eq. 7.20); a pair with s.y <= 1e-12 ||s|| ||y|| (no positive curvature, possible
 *   only through rounding or a line search that fell back) is skipped.
 * - The first step tries alpha = min(1, 1/||g||), later steps alpha = 1.
 * - If a search direction is not a descent direction or a line search fails, the memory is
 *   cleared and steepest descent is tried once before giving up with 'lineSearchFailed'.
 *
 * Throws `InvalidParameterError` for bad options or a non-finite x0 and `NumericalError` when the
 * objective is not finite at x0. Never throws for a run that merely fails to converge.
 *
 * @example
 * const r = lbfgs((x, g) => { g[0] = 2 * (x[0] - 3); return (x[0] - 3) ** 2; }, new Float64Array(1));
 * r.x[0]; // 3 (to ~1e-6 / 2)
 */
export function lbfgs(f: Objective, x0: Float64Array, options: LbfgsOptions = {}): OptimizeResult {
  rejectUnknownOptions(options, LBFGS_OPTIONS, 'lbfgs');
  const { gradTolerance, maxIterations, maxEvaluations } = commonOptions(options);
  const m = requireInteger('memory', options.memory ?? 10, 1);
  const c1 = options.c1 ?? 1e-4;
  const c2 = options.c2 ?? 0.9;
  if (!(c1 > 0 && c1 < 1)) throw new InvalidParameterError('c1', c1, 'in (0, 1)');
  if (!(c2 > c1 && c2 < 1)) throw new InvalidParameterError('c2', c2, `in (c1 = ${c1}, 1)`);
  const valueNoise = requireNonNegative('valueNoise', options.valueNoise ?? 1e-10);
  const maxTrials = requireInteger('maxLineSearchEvaluations', options.maxLineSearchEvaluations ?? 40, 1);

  const n = x0.length;
  const x = Float64Array.from(x0);
  const g = new Float64Array(n);
  let value = evaluateStart(f, x, g, 'lbfgs');
  const state: LineSearchState = { evaluations: 1, maxEvaluations };
  let gradNorm = norm2(g);

  const s = new Float64Array(m * n);
  const y = new Float64Array(m * n);
  const rho = new Float64Array(m);
  const coef = new Float64Array(m);
  let stored = 0; // number of valid pairs
  let newest = -1; // slot of the newest pair
  let gamma = 1;

  const p = new Float64Array(n);
  const xNew = new Float64Array(n);
  const gNew = new Float64Array(n);
  const xLo = new Float64Array(n);
  const gLo = new Float64Array(n);

  const done = (iterations: number, reason: OptimizeStopReason): OptimizeResult => ({
    x, value, gradNorm, iterations, evaluations: state.evaluations, converged: reason === 'gradTolerance', reason,
  });

  options.onIteration?.({ iteration: 0, value, gradNorm });
  let iterations = 0;
  for (;;) {
    if (gradNorm <= gradTolerance) return done(iterations, 'gradTolerance');
    if (iterations >= maxIterations) return done(iterations, 'maxIterations');
    if (state.evaluations >= maxEvaluations) return done(iterations, 'maxEvaluations');

    let accepted = false;
    // Up to two attempts: the quasi-Newton direction, then (memory cleared) steepest descent.
    for (let attempt = 0; attempt < 2 && !accepted; attempt++) {
      if (attempt === 1) {
        if (stored === 0) break; // steepest descent already failed
        stored = 0;
        gamma = 1;
      }
      // Two-loop recursion (N&W Alg. 7.4): p = -H g.
      for (let i = 0; i < n; i++) p[i] = -g[i];
      for (let k = 0; k < stored; k++) {
        const slot = (newest - k + m) % m;
        const off = slot * n;
        let a = 0;
        for (let i = 0; i < n; i++) a += s[off + i] * p[i];
        a *= rho[slot];
        coef[slot] = a;
        for (let i = 0; i < n; i++) p[i] -= a * y[off + i];
      }
      for (let i = 0; i < n; i++) p[i] *= gamma;
      for (let k = stored - 1; k >= 0; k--) {
        const slot = (newest - k + m) % m;
        const off = slot * n;
        let b = 0;
        for (let i = 0; i < n; i++) b += y[off + i] * p[i];
        b *= rho[slot];
        const c = coef[slot] - b;
        for (let i = 0; i < n; i++) p[i] += c * s[off + i];
      }
      let slope = dot(g, p);
      if (!(slope < 0) || !Number.isFinite(slope)) {
        if (stored > 0) continue; // not a descent direction: retry with steepest descent
        for (let i = 0; i < n; i++) p[i] = -g[i];
        slope = -gradNorm * gradNorm;
      }
      const alpha1 = stored === 0 ? Math.min(1, 1 / norm2(p)) : 1;
      const ls = strongWolfe(f, x, value, slope, p, alpha1, c1, c2, valueNoise, maxTrials, state, xNew, gNew, xLo, gLo);
      if (ls.status === 'budget') return done(iterations, 'maxEvaluations');
      if (ls.status === 'failed') continue;
      let moved = false;
      for (let i = 0; i < n && !moved; i++) moved = xNew[i] !== x[i];
      if (!moved) continue; // the step vanished in rounding: no progress is possible along p

      // Accept the step and update the memory with s = xNew - x, y = gNew - g (built in the
      // line search's scratch buffers, so that a rejected pair does not overwrite the oldest one).
      const sNew = xLo;
      const yNew = gLo;
      let sy = 0;
      let yy = 0;
      let ss = 0;
      for (let i = 0; i < n; i++) {
        const si = xNew[i] - x[i];
        const yi = gNew[i] - g[i];
        sNew[i] = si;
        yNew[i] = yi;
        sy += si * yi;
        yy += yi * yi;
        ss += si * si;
      }
      if (sy > 1e-12 * Math.sqrt(ss * yy) && yy > 0) {
        const slot = (newest + 1) % m;
        s.set(sNew, slot * n);
        y.set(yNew, slot * n);
        rho[slot] = 1 / sy;
        newest = slot;
        if (stored < m) stored++;
        gamma = sy / yy;
      }
      x.set(xNew);
      g.set(gNew);
      value = ls.value;
      gradNorm = norm2(g);
      accepted = true;
    }
    if (!accepted) return done(iterations, 'lineSearchFailed');
    iterations++;
    options.onIteration?.({ iteration: iterations, value, gradNorm });
  }
}
