/**
 * Progress of a certified minimisation (`certified-minimum.ts`) for a progress bar: the fast
 * optimiser's iterations, then the fallback's, reported as `onStep(done, total)` over
 * `OPTIMIZER_PROGRESS_UNITS` units. The optimiser's number of iterations is not known in advance,
 * so its share is the way travelled on a log scale from the first gradient norm g0 to the target:
 * log(g0 / g) / log(g0 / target). Under linear convergence (strongly convex objectives: L-BFGS,
 * Newton near the optimum) log ||grad|| falls about linearly in the iterations, so the bar's ETA
 * is meaningful. The fallback, when it runs, knows its count K (Nesterov's bound) and fills the
 * last tenth. `done` never reaches `total`: the caller ends the bar.
 *
 * The reports go to the data owner's terminal only (never into a release or --json).
 */
import type { OptimizeProgress } from '../../math/lbfgs.js';

export const OPTIMIZER_PROGRESS_UNITS = 1000;
const OPTIMIZER_SHARE = 0.9;

export interface OptimizerProgress {
  /** For `lbfgs`/`newton`'s `onIteration`. */
  readonly onIteration: (progress: OptimizeProgress) => void;
  /** For `certifiedMinimum`'s `onProgress(iteration, K)`. */
  readonly onFallback: (iteration: number, total: number) => void;
}

/** Progress callbacks towards ||grad|| <= target, reporting to `onStep`. */
export function optimizerProgress(target: number, onStep: (done: number, total: number) => void): OptimizerProgress {
  const total = OPTIMIZER_PROGRESS_UNITS;
  let first: number | undefined;
  let reported = 0;
  const report = (fraction: number): void => {
    const done = Math.min(total - 1, Math.max(reported, Math.floor(total * fraction)));
    if (done === reported && reported > 0) return;
    reported = done;
    onStep(done, total);
  };
  return {
    onIteration: ({ gradNorm }) => {
      if (!(gradNorm > 0) || !Number.isFinite(gradNorm)) return;
      if (first === undefined) first = gradNorm;
      const span = Math.log(first / target);
      const fraction = span > 0 ? Math.log(first / gradNorm) / span : 1;
      report(OPTIMIZER_SHARE * Math.min(1, Math.max(0, fraction)));
    },
    onFallback: (iteration, count) => {
      if (count > 0) report(OPTIMIZER_SHARE + (1 - OPTIMIZER_SHARE) * Math.min(1, iteration / count));
    },
  };
}
