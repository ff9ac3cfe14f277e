/**
 * A flag's old name, kept working as a hidden alias of its new one (one name per concept, as
 * docs/design.md asks, without breaking scripts): `train --model` (now `--loss`), `audit` and
 * `federate --clip` (now `--clip-norm`, train's name for the clipping norm).
 */
import type { Command } from 'commander';
import { InvalidParameterError } from '../errors.js';
import type { CliIo } from './io.js';

export interface FlagName {
  /** The key commander stores the value under (camelCase). */
  readonly key: string;
  /** The flag as typed, e.g. `--clip-norm`. */
  readonly flag: string;
}

/**
 * When the old flag was given: one deprecation line on stderr (`note` says why the name changed),
 * then its value becomes the new flag's (both given with different values is refused), and the
 * old key is removed from `flags`.
 */
export function takeDeprecatedFlag(
  flags: Record<string, unknown>, old: FlagName, current: FlagName, command: Command, io: CliIo, note = '',
): void {
  const value = flags[old.key];
  if (value === undefined) return;
  if (command.getOptionValueSource(current.key) === 'cli' && JSON.stringify(flags[current.key]) !== JSON.stringify(value)) {
    throw new InvalidParameterError(old.flag, Array.isArray(value) ? value.join(',') : value, `absent when ${current.flag} is given (${old.flag} is the deprecated name of ${current.flag}, here ${JSON.stringify(flags[current.key])})`);
  }
  const path: string[] = [];
  for (let c: Command | null = command; c !== null && c.parent !== null; c = c.parent) path.unshift(c.name());
  io.stderr(`dpfit: ${path.join(' ')} ${old.flag} is deprecated: use ${current.flag}${note === '' ? '' : ` (${note})`}\n`);
  flags[current.key] = value;
  delete flags[old.key];
}
