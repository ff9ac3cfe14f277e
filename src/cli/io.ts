/**
 * CLI plumbing shared by every command: where output goes, how numbers are parsed from flags, how
 * results are printed (exactly one JSON object with --json; never NaN), and how errors map to exit
 * codes (docs/design.md, "CLI contract").
 */
import { DpfitError, InvalidParameterError } from '../errors.js';
import { parseDecimalBytes } from '../data/parse-number.js';
import { toDpfitJson } from '../json-numbers.js';

export interface CliIo {
  readonly stdout: (text: string) => void;
  /** Held by `main` until the command succeeds (a failure prints one line only). */
  readonly stderr: (text: string) => void;
  /**
   * Written at once: the log of a long-running service (`dpfit node serve`), which has no end to
   * wait for. Defaults to `stderr` where a command builds its own io.
   */
  readonly log?: (text: string) => void;
}

export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** Exit statuses: 2 bad parameters, 3 bad data, files or network, 4 budget, calibration or accuracy impossible (nothing can be released), 1 internal error (a bug). */
export function exitCodeFor(error: unknown): number {
  if (!(error instanceof DpfitError)) return 1;
  switch (error.code) {
    case 'INVALID_PARAMETER':
    case 'UNSUPPORTED_EVENT':
      return 2;
    case 'DATA_FORMAT':
    case 'FETCH_FAILED':
      return 3;
    case 'CALIBRATION':
    case 'BUDGET_EXCEEDED':
      return 4;
    case 'NUMERICAL':
      // A computation that cannot reach its stated accuracy for this request (e.g. a PLD grid
      // larger than allowed for a tiny delta): nothing can be answered, as for an impossible
      // calibration. Numerical errors that are internal inconsistencies stay bugs (1).
      return /^internal error/.test(error.message) ? 1 : 4;
    default:
      return 1;
  }
}

/**
 * A decimal number, or NaN: `[+-] digits [. digits] [(e|E) [+-] digits]` (the grammar of data
 * cells, `data/parse-number.ts`). `Number()` alone would also read hex, octal and binary
 * (`--epsilon 0x10` was 16), "Infinity" and a blank string (0).
 */
export function parseDecimal(text: string): number {
  const bytes = new TextEncoder().encode(text.trim());
  return parseDecimalBytes(bytes, 0, bytes.length);
}

/** Parses a flag's value as a finite decimal number (commander gives strings); names the flag on failure. */
export function parseNumberFlag(flag: string): (raw: string) => number {
  return (raw: string) => {
    const value = parseDecimal(raw);
    if (!Number.isFinite(value)) throw new InvalidParameterError(flag, raw, 'a finite decimal number (e.g. 0.5 or 1e-5)');
    return value;
  };
}

/** Parses a flag's value as a whole number. */
export function parseIntegerFlag(flag: string): (raw: string) => number {
  return (raw: string) => {
    const value = parseNumberFlag(flag)(raw);
    if (!Number.isSafeInteger(value)) throw new InvalidParameterError(flag, raw, 'a whole number');
    return value;
  };
}

/** JSON with Infinity as "Infinity" and NaN refused: dpfit never prints NaN (`toDpfitJson`). */
export function toJson(value: unknown): string {
  return toDpfitJson(value, 2);
}

/** Prints a result: one JSON object with --json, else the human-readable lines. */
export function printResult(io: CliIo, json: boolean, result: object, human: () => string): void {
  io.stdout(json ? `${toJson(result)}\n` : `${human()}\n`);
}

/** Formats a number for people: up to `digits` significant digits. */
export function formatNumber(value: number, digits = 6): string {
  if (!Number.isFinite(value)) return String(value);
  return Number(value.toPrecision(digits)).toString();
}

/** Parses a comma-separated list of finite numbers. */
export function parseNumberListFlag(flag: string): (raw: string) => number[] {
  return (raw: string) => {
    const parts = raw.split(',');
    return parts.map((part) => parseNumberFlag(flag)(part));
  };
}
