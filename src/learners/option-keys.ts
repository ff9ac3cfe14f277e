/**
 * Strict options for `train()` and the estimators (issue 24): a key a learner does not take is an
 * error naming the key and the closest valid one, never silently ignored (`clipnorm: 0.1` used to
 * train with the default clipping norm as if nothing had been said).
 *
 * The closest name is by edit distance, case-insensitively (so `clipnorm` is `clipNorm` at
 * distance 0 and `epsilion` is `epsilon` at distance 1); a name further than a third of its length
 * (at least 2) from every valid one gets no suggestion, only the list of valid names.
 * (`src/validate.ts` may grow a shared helper for the other public functions: the lead unifies.)
 */
import { InvalidParameterError } from '../errors.js';

/** Levenshtein distance between two strings (insertions, deletions, substitutions). */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length];
}

/** The valid name closest to `name` (case-insensitively), when it is close enough to be a likely typo. */
export function closestName(name: string, valid: readonly string[]): string | undefined {
  const lower = name.toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const candidate of valid) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (best === undefined || distance < best.distance) best = { name: candidate, distance };
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(name.length / 3)) ? best.name : undefined;
}

/** `unknown option epsilion (did you mean epsilon?)`: what an unknown key's error says first. */
export function unknownOptionError(key: string, value: unknown, valid: readonly string[], where: string): InvalidParameterError {
  const suggestion = closestName(key, valid);
  const error = new InvalidParameterError(key, value, `one of the options of ${where}: ${valid.join(', ')}`);
  error.message = `unknown option ${key}${suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`}: ${where} takes ${valid.join(', ')}`;
  return error;
}

/**
 * Throws `InvalidParameterError` for the first own key of `options` that is not in `valid`
 * (a key whose value is `undefined` counts as absent, as for any optional field). `where` says
 * whose options these are ("train() with method 'dpsgd'").
 */
export function rejectUnknownOptions(options: object, valid: readonly string[], where: string): void {
  const known = new Set(valid);
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined || known.has(key)) continue;
    throw unknownOptionError(key, value, valid, where);
  }
}
