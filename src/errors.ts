/**
 * dpfit's error hierarchy (docs/design.md, "Conventions"). Every error a user can cause is a
 * `DpfitError` with a stable `code`; the CLI maps codes to exit statuses and prints one line.
 */

/** Base class of every error dpfit raises on purpose. */
export class DpfitError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Formats a value for an error message: numbers keep their full precision, NaN stays NaN. */
export function describeValue(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value === undefined) return 'nothing (it was not given)';
  if (typeof value === 'string') return JSON.stringify(value);
  try {
    const text = JSON.stringify(value);
    return text.length > 200 ? `${text.slice(0, 197)}...` : text;
  } catch {
    return String(value);
  }
}

/** A parameter outside its valid range: `noiseMultiplier must be > 0, got -1`. */
export class InvalidParameterError extends DpfitError {
  readonly param: string;
  readonly value: unknown;
  readonly expected: string;
  constructor(param: string, value: unknown, expected: string, detail?: string) {
    super('INVALID_PARAMETER', `${param} must be ${expected}, got ${describeValue(value)}${detail ? ` (${detail})` : ''}`);
    this.param = param;
    this.value = value;
    this.expected = expected;
  }
}

/**
 * A value read from the data outside its valid range, named by where it is (`y[41]`, a column)
 * but never quoted: no message carries a value of the data (docs/threat-model.md, "Messages"),
 * since messages reach logs and terminals that the release's guarantee does not cover. `value`
 * is left undefined for the same reason (a logged error object prints its fields).
 */
export function dataValueError(param: string, expected: string, detail?: string): InvalidParameterError {
  const error = new InvalidParameterError(param, undefined, expected, detail);
  error.message = `${param} must be ${expected}${detail ? ` (${detail})` : ''}; the value is not shown (messages never quote the data)`;
  return error;
}

/**
 * An option a function does not know (`validate.ts`, `rejectUnknownOptions`): a typo would
 * otherwise be silently ignored. `param` is the unknown key, `value` what was given for it,
 * `validOptions` the names the function accepts and `suggestion` the closest of them, if any.
 */
export class UnknownOptionError extends InvalidParameterError {
  /** The function whose options these are, e.g. `gaussianMechanism`. */
  readonly where: string;
  readonly validOptions: readonly string[];
  readonly suggestion: string | undefined;
  constructor(option: string, value: unknown, where: string, validOptions: readonly string[], suggestion: string | undefined) {
    super(option, value, validOptions.length === 0 ? `absent (${where} takes no options)` : `one of the options of ${where}: ${validOptions.join(', ')}`);
    this.where = where;
    this.validOptions = validOptions;
    this.suggestion = suggestion;
    const name = /^[A-Za-z_$][\w$]*$/.test(option) ? option : JSON.stringify(option);
    const given = value === undefined ? 'undefined' : describeValue(value);
    this.message = `unknown option ${name} of ${where}${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}, given ${given}; ${validOptions.length === 0 ? 'it takes none' : `its options are ${validOptions.join(', ')}`}`;
  }
}

/** An accountant cannot handle an event (or one of its sub-events). */
export class UnsupportedEventError extends DpfitError {
  readonly event: unknown;
  readonly subevent: unknown;
  readonly reason: string;
  constructor(event: unknown, subevent: unknown, reason: string) {
    super('UNSUPPORTED_EVENT', `unsupported event ${describeValue(subevent)}: ${reason}`);
    this.event = event;
    this.subevent = subevent;
    this.reason = reason;
  }
}

/** A calibration (inverse problem) has no solution, e.g. an unreachable privacy target. */
export class CalibrationError extends DpfitError {
  constructor(message: string) {
    super('CALIBRATION', message);
  }
}

/** A privacy budget ledger would be exceeded. */
export class BudgetExceededError extends DpfitError {
  constructor(message: string) {
    super('BUDGET_EXCEEDED', message);
  }
}

/** Malformed input data, located by source, line and column. */
export class DataFormatError extends DpfitError {
  readonly source: string;
  readonly line: number | undefined;
  readonly column: string | undefined;
  constructor(source: string, message: string, line?: number, column?: string) {
    const where = [source, line !== undefined ? `line ${line}` : '', column !== undefined ? `column '${column}'` : '']
      .filter((s) => s !== '')
      .join(', ');
    super('DATA_FORMAT', `${where}: ${message}`);
    this.source = source;
    this.line = line;
    this.column = column;
  }
}

/** A numerical routine failed to reach its stated accuracy; never silently return a wrong number. */
export class NumericalError extends DpfitError {
  constructor(message: string) {
    super('NUMERICAL', message);
  }
}
