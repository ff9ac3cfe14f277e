/**
 * Tick labels of a log axis in one format: vega's default mixes "0.000001" with "1e-7" on one
 * axis (it switches notation by magnitude). Values all within [1e-3, 1e4] read best as decimals
 * ("0.1", "0.5", "2"); anything wider gets scientific notation for every label ("1e-7", "1e-6",
 * "1e0"), never both.
 */

/** The decimal range: every positive value in [1e-3, 1e4] keeps decimal labels. */
const DECIMAL_RANGE = { low: 1e-3, high: 1e4 } as const;

/** vega-lite axis properties for a log axis showing `values` (non-positive values are off a log axis and ignored). */
export function logAxisLabels(values: readonly number[]): { readonly format?: string; readonly labelExpr?: string } {
  const positive = values.filter((v) => v > 0 && Number.isFinite(v));
  const decimal = positive.length > 0 && positive.every((v) => v >= DECIMAL_RANGE.low && v <= DECIMAL_RANGE.high);
  // d3-format: '~g' trims trailing zeros; '.0e' is one significant digit in scientific notation
  // ("1e-7", "1e+0"), the '+' dropped so that every label has the form "Ne-k" or "Nek".
  return decimal ? { format: '~g' } : { labelExpr: "replace(format(datum.value, '.0e'), '+', '')" };
}
