/**
 * Numerical assertion shared by the test suites: passes when
 * |actual - expected| <= max(relTol * |expected|, absTol). Equal infinities (and two NaNs, which
 * a test may expect deliberately) pass. On failure the message shows actual, expected, the
 * absolute and the relative error, and the tolerances.
 */
import { AssertionError } from 'node:assert/strict';

export function assertClose(actual: number, expected: number, relTol: number, absTol = 0, message?: string): void {
  if (typeof actual !== 'number') {
    throw new AssertionError({ message: `${message ? `${message}: ` : ''}expected a number, got ${typeof actual}`, actual, expected });
  }
  if (Object.is(actual, expected) || actual === expected) return;
  if (Number.isNaN(actual) && Number.isNaN(expected)) return;
  const absError = Math.abs(actual - expected);
  const relError = expected === 0 ? Infinity : absError / Math.abs(expected);
  if (absError <= Math.max(relTol * Math.abs(expected), absTol)) return;
  const text =
    `${message ? `${message}: ` : ''}not close\n` +
    `  actual:   ${actual}\n` +
    `  expected: ${expected}\n` +
    `  abs error ${absError.toExponential(3)}, rel error ${relError.toExponential(3)} ` +
    `(relTol ${relTol}, absTol ${absTol})`;
  throw new AssertionError({ message: text, actual, expected, operator: 'assertClose' });
}
