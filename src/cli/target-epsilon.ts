/**
 * The target epsilon of the `calibrate` commands: `--epsilon`, the name `dpfit train` gives the
 * target its noise is calibrated for (one name per concept), with `--target-epsilon`, its earlier
 * name here, kept as a hidden deprecated alias.
 */
import { Option, type Command } from 'commander';
import { InvalidParameterError } from '../errors.js';
import { takeDeprecatedFlag } from './deprecated-flag.js';
import { parseNumberFlag, type CliIo } from './io.js';

/** The target epsilon's flags: `--epsilon`, train's name, and `--target-epsilon`, its deprecated alias. */
export interface TargetEpsilonFlags {
  epsilon?: number;
  targetEpsilon?: number;
}

/** `--epsilon E`: the target the noise is calibrated for (as in `dpfit train`). */
export function targetEpsilonOption(): Option {
  return new Option('--epsilon <E>', 'target epsilon (> 0): the noise is calibrated for it').argParser(parseNumberFlag('--epsilon'));
}

/** `--target-epsilon E`: the old name of `--epsilon` here (hidden). */
export function deprecatedTargetEpsilonOption(): Option {
  return new Option('--target-epsilon <E>', 'deprecated alias of --epsilon').argParser(parseNumberFlag('--target-epsilon')).hideHelp();
}

/** The target epsilon of a calibrate command (the alias taken, with its deprecation line); required. */
export function takeTargetEpsilon(flags: TargetEpsilonFlags, command: Command, io: CliIo): number {
  takeDeprecatedFlag(flags as Record<string, unknown>, { key: 'targetEpsilon', flag: '--target-epsilon' }, { key: 'epsilon', flag: '--epsilon' }, command, io, "train's name for the target epsilon");
  if (flags.epsilon === undefined) throw new InvalidParameterError('--epsilon', undefined, 'given: the target epsilon (> 0)');
  return flags.epsilon;
}
