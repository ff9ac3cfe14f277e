/**
 * `--delta`, the same everywhere: optional, default `DEFAULT_DELTA` (1e-5, what
 * `dpfit train` always used), shown in `--help` as 1e-5, and checked in (0, 1) where it is read.
 */
import { Option } from 'commander';
import { DEFAULT_DELTA } from '../learners/training.js';
import { parseNumberFlag } from './io.js';

/** The `--delta <D>` option with the shared default; `description` says what delta is for in this command. */
export function deltaOption(description = 'delta, in (0, 1)'): Option {
  return new Option('--delta <D>', description).argParser(parseNumberFlag('--delta')).default(DEFAULT_DELTA, DEFAULT_DELTA.toExponential());
}
