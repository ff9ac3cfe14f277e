/**
 * Newton's method for small dimensions (d up to a few hundred) with an explicit Hessian: the
 * step solves H p = -g by Cholesky; when H is not numerically positive definite, tau I is
 * added with tau growing tenfold until the factorisation succeeds (a variant of "Cholesky with
 * added multiple of the identity", Nocedal & Wright, "Numerical Optimization", 2nd ed., Alg. 3.3).
 * A backtracking Armijo line search (N&W Alg. 3.1) shrinks the step, also past points where the
 * objective is not finite; near the optimum, where changes in f are rounding noise, the Armijo
 * test is judged by the slope instead (approximate Armijo, see `valueNoise`). Stops on ||grad||_2 <= gradTolerance like `lbfgs`, with the same
 * result shape and the same honesty: `converged` is true only for that test.
 */
import { InvalidParameterError } from '../errors.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireNonNegative } from '../validate.js';
import { commonOptions, evaluateStart } from './lbfgs.js';
import type { Objective, OptimizeProgress, OptimizeResult, OptimizeStopReason } from './lbfgs.js';
import { choleskyFactor, choleskySolve, dot, norm2 } from './linear-algebra.js';

/** Fills `out` (row-major d x d) with the Hessian at x. Only the lower triangle is read. */
export type HessianCallback = (x: Float64Array, out: Float64Array) => void;

export interface NewtonOptions {
  /** Stop when ||grad||_2 <= gradTolerance (absolute; default 1e-8). */
  gradTolerance?: number;
  /** Maximum accepted steps (default 100); reaching it gives `converged: false`, reason 'maxIterations'. */
  maxIterations?: number;
  /** Maximum objective calls, backtracking included (default 20 * maxIterations + 20). */
  maxEvaluations?: number;
  /** Armijo constant c1 (default 1e-4). */
  c1?: number;
  /** Backtracking factor rho in (0, 1) (default 0.5). */
  backtrack?: number;
  /**
   * Relative rounding noise of f (default 1e-10): a step that changes f by less than
   * valueNoise * |f| is accepted when the slope along the step has not turned strongly positive,
   * grad(x + t p) . p <= (2 c1 - 1) grad(x) . p (approximate Armijo, Hager & Zhang 2005).
   */
  valueNoise?: number;
  /** Backtracking steps allowed per iteration (default 60). */
  maxBacktracks?: number;
  onIteration?: (progress: OptimizeProgress) => void;
}

const NEWTON_OPTIONS = optionNames<NewtonOptions>({ gradTolerance: true, maxIterations: true, maxEvaluations: true, c1: true, backtrack: true, valueNoise: true, maxBacktracks: true, onIteration: true });

/**
 * Minimises a twice-differentiable function by damped Newton steps. Returns the `lbfgs` result
 * shape; `reason` is 'lineSearchFailed' when no step length in 1, rho, rho^2, ... gave
 * sufficient decrease (typically when gradTolerance is below what rounding allows).
 *
 * @example
 * const r = newton(
 *   (x, g) => { g[0] = 2 * (x[0] - 3); return (x[0] - 3) ** 2; },
 *   (x, h) => { h[0] = 2; },
 *   new Float64Array(1),
 * );
 * r.x[0]; // 3, in one step
 */
export function newton(f: Objective, hessian: HessianCallback, x0: Float64Array, options: NewtonOptions = {}): OptimizeResult {
  rejectUnknownOptions(options, NEWTON_OPTIONS, 'newton');
  const { gradTolerance, maxIterations, maxEvaluations } = commonOptions({
    gradTolerance: options.gradTolerance ?? 1e-8,
    maxIterations: options.maxIterations ?? 100,
    maxEvaluations: options.maxEvaluations,
  });
  const c1 = options.c1 ?? 1e-4;
  if (!(c1 > 0 && c1 < 0.5)) throw new InvalidParameterError('c1', c1, 'in (0, 0.5)');
  const rhoBack = options.backtrack ?? 0.5;
  if (!(rhoBack > 0 && rhoBack < 1)) throw new InvalidParameterError('backtrack', rhoBack, 'in (0, 1)');
  const valueNoise = requireNonNegative('valueNoise', options.valueNoise ?? 1e-10);
  const maxBacktracks = requireInteger('maxBacktracks', options.maxBacktracks ?? 60, 1);

  const n = x0.length;
  const x = Float64Array.from(x0);
  const g = new Float64Array(n);
  let value = evaluateStart(f, x, g, 'newton');
  let evaluations = 1;
  let gradNorm = norm2(g);

  const h = new Float64Array(n * n);
  const damped = new Float64Array(n * n);
  const l = new Float64Array(n * n);
  const p = new Float64Array(n);
  const xNew = new Float64Array(n);
  const gNew = new Float64Array(n);

  const done = (iterations: number, reason: OptimizeStopReason): OptimizeResult => ({
    x, value, gradNorm, iterations, evaluations, converged: reason === 'gradTolerance', reason,
  });

  options.onIteration?.({ iteration: 0, value, gradNorm });
  let iterations = 0;
  for (;;) {
    if (gradNorm <= gradTolerance) return done(iterations, 'gradTolerance');
    if (iterations >= maxIterations) return done(iterations, 'maxIterations');
    if (evaluations >= maxEvaluations) return done(iterations, 'maxEvaluations');

    hessian(x, h);
    if (!factorDamped(h, n, damped, l)) {
      // The Hessian is not finite: fall back to steepest descent.
      for (let i = 0; i < n; i++) p[i] = -g[i] / gradNorm;
    } else {
      for (let i = 0; i < n; i++) p[i] = -g[i];
      choleskySolve(l, n, p, p);
    }
    let slope = dot(g, p);
    if (!(slope < 0) || !Number.isFinite(slope)) {
      for (let i = 0; i < n; i++) p[i] = -g[i] / gradNorm;
      slope = -gradNorm;
    }

    let step = 1;
    let accepted = false;
    for (let k = 0; k < maxBacktracks; k++) {
      if (evaluations >= maxEvaluations) return done(iterations, 'maxEvaluations');
      for (let i = 0; i < n; i++) xNew[i] = x[i] + step * p[i];
      evaluations++;
      const trial = f(xNew, gNew);
      const finite = Number.isFinite(trial) && Number.isFinite(norm2(gNew));
      // Armijo, or its approximate form where the change in f is rounding noise (as in lbfgs).
      const armijo = trial - value <= c1 * step * slope; // difference form, see lbfgs
      const approximate = trial <= value + valueNoise * Math.abs(value) && dot(gNew, p) <= (2 * c1 - 1) * slope;
      if (finite && (armijo || approximate)) {
        accepted = true;
        value = trial;
        break;
      }
      step *= rhoBack;
    }
    let moved = false;
    for (let i = 0; i < n && !moved; i++) moved = xNew[i] !== x[i];
    if (!accepted || !moved) return done(iterations, 'lineSearchFailed');
    x.set(xNew);
    g.set(gNew);
    gradNorm = norm2(g);
    iterations++;
    options.onIteration?.({ iteration: iterations, value, gradNorm });
  }
}

/**
 * Cholesky factor of H + tau I (into l) with tau = 0 first, then tau_0 = 1e-3 * max|H_ii|
 * (or 1e-3 when the diagonal is zero) times 10^k. N&W Alg. 3.3 starts from 1e-3 - min H_ii
 * instead; scaling by the diagonal keeps tau meaningful for Hessians of sums over n rows.
 * Returns false only when H has a non-finite entry.
 */
function factorDamped(h: Float64Array, n: number, damped: Float64Array, l: Float64Array): boolean {
  let maxDiag = 0;
  for (let i = 0; i < h.length; i++) if (!Number.isFinite(h[i])) return false;
  for (let i = 0; i < n; i++) maxDiag = Math.max(maxDiag, Math.abs(h[i * n + i]));
  if (choleskyFactor(h, n, l) !== null) return true;
  let tau = 1e-3 * (maxDiag > 0 ? maxDiag : 1);
  for (let k = 0; k < 400; k++, tau *= 10) {
    damped.set(h);
    for (let i = 0; i < n; i++) damped[i * n + i] += tau;
    if (choleskyFactor(damped, n, l) !== null) return true;
    if (!Number.isFinite(tau)) break;
  }
  return false;
}
