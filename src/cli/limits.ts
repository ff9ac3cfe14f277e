/**
 * Work limits of `dpfit train` and `dpfit audit` (the same constants): a request so large that it
 * could never finish is refused before any work (exit 2, naming the flag and the limit) instead of
 * running for days without a word.
 * The limits are far above any real use (a DP-SGD run on a million rows for a thousand epochs
 * with tuning is ~1e10 per-example gradients) and are stated in `dpfit train --help`:
 *
 *   - optimiser steps of one run (`--steps`, or epochs x rows / batch size) <= 1e9, and
 *     `--epochs` <= 1e6 whatever the data;
 *   - per-example gradient evaluations of the whole command <= 1e12: one run's (its learner's
 *     work rule, `work` in `the family folders' `*-learner.ts` files`: steps x rows for dpgd and rgm, steps x batch size
 *     for dpsgd, ceil(epochs / fraction) x floor(fraction x rows) for shuffled, epochs x rows for output-sgd, max-iterations x rows for
 *     output when --max-iterations is given; an epoch or step count left out is its default), times the
 *     number of classes for one-vs-rest, times the EXPECTED number of runs for `--tune` (its mean:
 *     K is Poisson with that mean). Only PUBLIC counts enter: the rows of replace-one methods
 *     (public by the relation), DP-SGD's `--dataset-size` when declared (else the count it treats
 *     as public anyway); never n for objpert and amp, whose releases keep n private (a refusal
 *     at 1001 rows but not at 1000 would tell their add/remove neighbours apart): their
 *     `--max-iterations` has a limit of its own instead;
 *   - `--tune` mean <= 1e6 runs: K ~ Poisson(mean) full training runs can never be paid for in time
 *     beyond that, whatever one run costs;
 *   - `--max-iterations` <= 1e9, and <= 1e6 for objpert and amp (whatever n);
 *   - `dpfit audit`: the same steps per run (`--steps`, or `--epochs` x (rows + 1) / batch size),
 *     and per-example gradient evaluations of the whole audit (2 x runs x steps x (rows + 1) for
 *     dpgd, x batch size for dpsgd: `--runs` trainings on each of the two neighbours) <= 1e12.
 * At 1e7 gradients per second per core (`npm run bench -- train`), 1e12 gradients are more than a
 * day of computing.
 */
import { InvalidParameterError } from '../errors.js';
import { datasetSizeReport } from '../learners/dataset-size.js';
import { cliName, type RunWork } from '../learners/learner.js';
import { learnerOfCliName } from '../learners/registry.js';
import { optionsFromFlags, type TrainFlags } from './train-flags.js';

export const MAX_STEPS = 1e9;
export const MAX_EPOCHS = 1e6;
export const MAX_GRADIENT_EVALUATIONS = 1e12;
export const MAX_TUNE_MEAN = 1e6;
export const MAX_ITERATIONS = 1e9;
/** `--max-iterations` of objpert and amp, whose work limit cannot use n (module comment). */
export const MAX_SUM_OBJECTIVE_ITERATIONS = 1e6;

function tooLarge(flag: string, value: unknown, expected: string): InvalidParameterError {
  return new InvalidParameterError(flag, value, expected);
}

/** A limit as messages and help print it: 1e9, not 1e+9. */
export function sci(limit: number): string {
  return limit.toExponential().replace('e+', 'e');
}

/**
 * Steps of one run: `--steps` at most MAX_STEPS, or the steps another flag implies (`rule`, e.g.
 * epochs x rows / batch size). Throws InvalidParameterError naming `flag`, its value and the limit.
 */
export function checkStepLimit(flag: string, value: number | undefined, steps: number, rule?: string): void {
  if (!(steps > MAX_STEPS)) return;
  throw tooLarge(flag, value, rule === undefined ? `at most ${sci(MAX_STEPS)} (dpfit's limit on the steps of one run)` : `small enough for at most ${sci(MAX_STEPS)} steps per run (${rule} = ${steps.toExponential(3).replace('e+', 'e')})`);
}

/** Per-example gradient evaluations of a whole command (`rule` says how they were counted): at most MAX_GRADIENT_EVALUATIONS. */
export function checkGradientLimit(flag: string, value: number | undefined, gradients: number, rule: string): void {
  if (!(gradients > MAX_GRADIENT_EVALUATIONS)) return;
  throw tooLarge(flag, value, `small enough for at most ${sci(MAX_GRADIENT_EVALUATIONS)} per-example gradient evaluations (${rule} = ${gradients.toExponential(3).replace('e+', 'e')})`);
}

/** Checks that need only the flags (before any file is read). */
export function checkFlagLimits(flags: Pick<TrainFlags, 'steps' | 'epochs' | 'tune' | 'maxIterations'> & { readonly method?: string }): void {
  if (flags.steps !== undefined) checkStepLimit('--steps', flags.steps, flags.steps);
  if (flags.epochs !== undefined && flags.epochs > MAX_EPOCHS) throw tooLarge('--epochs', flags.epochs, `at most ${sci(MAX_EPOCHS)} (passes over the data)`);
  if (flags.tune !== undefined && flags.tune > MAX_TUNE_MEAN) {
    throw tooLarge('--tune', flags.tune, `at most ${sci(MAX_TUNE_MEAN)} (the mean number of full training runs; K ~ Poisson(mean) runs could never finish)`);
  }
  if (flags.maxIterations !== undefined && flags.maxIterations > MAX_ITERATIONS) {
    throw tooLarge('--max-iterations', flags.maxIterations, `at most ${sci(MAX_ITERATIONS)}`);
  }
  const learner = flags.method === undefined ? undefined : learnerOfCliName(flags.method);
  if (learner?.datasetSize === 'unused' && flags.maxIterations !== undefined && flags.maxIterations > MAX_SUM_OBJECTIVE_ITERATIONS) {
    throw tooLarge('--max-iterations', flags.maxIterations, `at most ${sci(MAX_SUM_OBJECTIVE_ITERATIONS)} with --method ${flags.method} (its limit cannot depend on the number of rows, which its release keeps private)`);
  }
}

/**
 * One run's optimiser steps and per-example gradient evaluations (its learner's work rule, on the
 * PUBLIC n only: `dataset-size.ts`; none for a learner whose release keeps n private), or nothing
 * when the run bounds itself.
 */
function runWork(flags: TrainFlags, n: number): RunWork {
  const learner = learnerOfCliName(flags.method);
  if (learner === undefined) return {};
  return learner.work(optionsFromFlags(learner, flags), datasetSizeReport(learner.method, n, flags.datasetSize).value);
}

/**
 * Checks the work the flags ask of a run on `n` rows (`classes` runs for one-vs-rest, `--tune`
 * mean runs when tuning). Throws InvalidParameterError naming the flag, the rule and the limit.
 */
export function checkWorkLimits(flags: TrainFlags, n: number, classes = 1): void {
  const { steps, gradients } = runWork(flags, n);
  if (steps !== undefined) checkStepLimit(`--${cliName(steps.option)}`, steps.value, steps.count, steps.rule);
  if (gradients === undefined) return;
  const runs = (flags.tune ?? 1) * classes;
  const total = gradients.count * runs;
  const why = `${gradients.rule}${classes > 1 ? `, x ${classes} classes` : ''}${flags.tune !== undefined ? `, x ${flags.tune} expected --tune runs` : ''}`;
  if (flags.tune !== undefined && gradients.count <= MAX_GRADIENT_EVALUATIONS) checkGradientLimit('--tune', flags.tune, total, why);
  else checkGradientLimit(`--${cliName(gradients.option)}`, gradients.value, total, why);
}
