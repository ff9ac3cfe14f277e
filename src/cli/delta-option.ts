/**
 * `--delta`, the same everywhere: optional, default `DEFAULT_DELTA` (1e-5, what `dpfit train`
 * always used), shown in `--help` as 1e-5, a decimal number in (0, `MAX_DELTA`].
 *
 * Why the limits: an (epsilon, delta) guarantee allows, with probability delta, anything at all,
 * publishing a whole record included (Dwork and Roth, "The Algorithmic Foundations of
 * Differential Privacy", 2014, Sec. 2.3: a mechanism that publishes each of n records with
 * probability delta is (0, delta)-DP and publishes about n delta of them). A delta above 0.1 is no
 * privacy anyone means, and is refused; a delta above 1/n, where n is public, allows publishing
 * one record in expectation, and is warned about.
 */
import { Option } from 'commander';
import { InvalidParameterError } from '../errors.js';
import { DEFAULT_DELTA } from '../learners/training.js';
import type { DatasetSizeReport } from '../learners/models/privacy-report.js';
import { formatNumber, parseNumberFlag } from './io.js';

/** The largest delta any command accepts. */
export const MAX_DELTA = 0.1;

/** Parses `--delta`: a decimal in (0, 0.1], else an error naming the flag, the value and the range. */
export function parseDeltaFlag(flag = '--delta'): (raw: string) => number {
  const number = parseNumberFlag(flag);
  return (raw: string) => {
    const value = number(raw);
    if (!(value > 0 && value <= MAX_DELTA)) {
      throw new InvalidParameterError(flag, value, `in (0, ${MAX_DELTA}]`, 'delta is the probability that the guarantee fails outright, a whole record published included; choose it below 1/n, e.g. 1e-5');
    }
    return value;
  };
}

/** The `--delta <D>` option with the shared default; `description` says what delta is for in this command. */
export function deltaOption(description = `delta, in (0, ${MAX_DELTA}]`): Option {
  return new Option('--delta <D>', description).argParser(parseDeltaFlag('--delta')).default(DEFAULT_DELTA, DEFAULT_DELTA.toExponential());
}

/**
 * The warning for a delta above 1/n, where n is the public size of the release's report
 * (`privacy.datasetSize`: the records read for replace-one methods and DP-SGD, or the declared
 * `--dataset-size`); none when no released value depends on n (objective perturbation, AMP), so
 * no n is public.
 */
export function deltaAboveOneOverN(delta: number, size: DatasetSizeReport | undefined): string | undefined {
  if (size === undefined || size.source === 'unused' || size.value === undefined || !(size.value >= 1)) return undefined;
  if (!(delta > 1 / size.value)) return undefined;
  const what = size.source === 'declared' ? 'the declared --dataset-size' : 'the number of records, public for this method';
  return `warning: --delta ${formatNumber(delta)} is above 1/n = ${formatNumber(1 / size.value, 3)} (n = ${size.value}, ${what}): with probability delta the guarantee allows publishing a whole record; choose delta below 1/n (e.g. 1e-5 or smaller)`;
}
