/**
 * Public encodings of one numeric column (the `transform`, `bins` and `encode` fields of a schema
 * column; `parse.ts` parses them and `applySchema` calls the encoders below).
 *
 * Why: a linear model sees a clipped and linearly scaled amount such as capital-gain / 99,999 as
 * almost 0 for nearly every row, and a monotone value cannot express "income peaks in middle age".
 * The standard Adult preprocessing (LIBSVM's a9a, used by Iyengar et al. 2019 and so by `003`
 * Sec. 5) bins the continuous columns. dpfit offers the same shapes, but only with PUBLIC
 * parameters:
 *
 * - `"transform": "log1p"`: the clipped value v becomes log(1 + v), scaled between
 *   log(1 + lower) and log(1 + upper) like any value (needs lower > -1). A monotone function of a
 *   clipped value and of the declared bounds only.
 * - `"bins": [c_1, ..., c_k]` with lower < c_1 < ... < c_k <= upper: the clipped value is one-hot
 *   encoded into the k + 1 bins [lower, c_1), [c_1, c_2), ..., [c_k, upper] (a cut point equal to
 *   `upper` gives a bin of the top-coded value alone, e.g. capital-gain 99,999).
 *   `"encode": "bins"` (default) writes the bins only, `"valueAndBins"` the scaled value then
 *   the bins.
 *
 * Privacy: each encoded row is a function of that row and of the schema alone, so replacing one
 * record changes one encoded row (the property `test/data/schema/schema.test.ts` checks), and the bins
 * add exactly one 1 per row, so the norm bound stays public (`schemaEncodedNormBound`). The cut
 * points must be chosen WITHOUT the private data — round numbers from domain knowledge (age in
 * five-year census groups, the 35-hour part-time line, powers of ten for dollar amounts). Cut
 * points at the data's quantiles (as a9a's were: Platt 1998 chose them from the data) would be a
 * statistic of the private data, leaking like a min/max scaler: one record can move a quantile and
 * with it every other row's encoding.
 *
 * Browser-safe.
 */
import { DataFormatError } from '../../errors.js';
import type { NumericColumnSpec } from './types.js';

function fail(source: string, where: string, message: string): never {
  throw new DataFormatError(source, `${where}: ${message}`);
}

/** The validated encoding fields of a numeric column, defaults left out (so old schemas round-trip unchanged). */
export interface NumericEncodingFields {
  readonly transform?: 'log1p';
  readonly bins?: readonly number[];
  readonly encode?: 'bins' | 'valueAndBins';
}

/**
 * Validates `transform`, `bins` and `encode` of the numeric column `raw` (already known to have
 * finite lower < upper). Errors name the field, the value and the valid range.
 */
export function parseNumericEncoding(source: string, where: string, raw: Record<string, unknown>, lower: number, upper: number): NumericEncodingFields {
  const out: { transform?: 'log1p'; bins?: number[]; encode?: 'bins' | 'valueAndBins' } = {};
  if (raw.transform !== undefined && raw.transform !== 'identity') {
    if (raw.transform !== 'log1p') fail(source, `${where}.transform`, `must be "identity" or "log1p", got ${JSON.stringify(raw.transform)}`);
    if (!(lower > -1)) fail(source, `${where}.transform`, `"log1p" needs lower > -1 (log(1 + v) must be finite on [lower, upper]), got lower = ${lower}`);
    out.transform = 'log1p';
  }
  if (raw.bins !== undefined) {
    if (!Array.isArray(raw.bins) || raw.bins.length === 0) fail(source, `${where}.bins`, `must be a non-empty list of cut points, got ${JSON.stringify(raw.bins)}`);
    const cuts: number[] = [];
    for (const [k, c] of raw.bins.entries()) {
      if (typeof c !== 'number' || !Number.isFinite(c)) fail(source, `${where}.bins[${k}]`, `must be a finite number, got ${JSON.stringify(c)}`);
      if (k === 0 && !(c > lower)) fail(source, `${where}.bins[0]`, `must be > lower (${lower}) so that the first bin [lower, c_1) is not empty, got ${c}`);
      if (k > 0 && !(c > cuts[k - 1])) fail(source, `${where}.bins[${k}]`, `must be > bins[${k - 1}] (${cuts[k - 1]}): cut points increase strictly, got ${c}`);
      if (!(c <= upper)) fail(source, `${where}.bins[${k}]`, `must be <= upper (${upper}): values are clipped to upper first, got ${c}`);
      cuts.push(c);
    }
    out.bins = cuts;
  }
  const encode = raw.encode;
  if (encode !== undefined && encode !== 'value' && encode !== 'bins' && encode !== 'valueAndBins') {
    fail(source, `${where}.encode`, `must be "value", "bins" or "valueAndBins", got ${JSON.stringify(encode)}`);
  }
  if (out.bins === undefined) {
    if (encode === 'bins' || encode === 'valueAndBins') fail(source, `${where}.encode`, `"${encode}" needs "bins" (the public cut points)`);
  } else {
    if (encode === 'value') fail(source, `${where}.encode`, '"value" would ignore the declared "bins" (use "bins" or "valueAndBins")');
    out.encode = encode ?? 'bins';
  }
  return out;
}

/** Number of encoded features of a numeric column: 1 for the value, plus k + 1 for k cut points. */
export function numericEncodedWidth(spec: NumericColumnSpec): number {
  const bins = spec.bins === undefined ? 0 : spec.bins.length + 1;
  return spec.encode === 'bins' ? bins : 1 + bins;
}

/**
 * The bin of a clipped value among cut points c_1 < ... < c_k: 0 for v < c_1, j for
 * c_j <= v < c_{j+1}, k for v >= c_k (binary search).
 */
export function binIndex(cuts: readonly number[], value: number): number {
  let lo = 0;
  let hi = cuts.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (value >= cuts[mid]) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function transformed(spec: NumericColumnSpec, v: number): number {
  return spec.transform === 'log1p' ? Math.log1p(v) : v;
}

/**
 * The value feature of a clipped value v in [lower, upper]: t(v) with t the column's transform,
 * then "unit" maps [t(lower), t(upper)] to [0, 1], "symmetric" to [-1, 1], "none" keeps t(v).
 * Results are clamped to the scaled range, so rounding never leaves it.
 */
export function numericValueFeature(spec: NumericColumnSpec, v: number): number {
  const t = transformed(spec, v);
  const lo = transformed(spec, spec.lower);
  const hi = transformed(spec, spec.upper);
  if (spec.scale === 'unit') return Math.max(0, Math.min(1, (t - lo) / (hi - lo)));
  if (spec.scale === 'symmetric') return Math.max(-1, Math.min(1, (2 * (t - lo)) / (hi - lo) - 1));
  return Math.max(lo, Math.min(hi, t));
}

/** Largest |value feature| of the column: 1 when scaled, max(|t(lower)|, |t(upper)|) with scale "none". */
export function numericValueBound(spec: NumericColumnSpec): number {
  return spec.scale === 'none' ? Math.max(Math.abs(transformed(spec, spec.lower)), Math.abs(transformed(spec, spec.upper))) : 1;
}

/** Names of the bin features: `name=[lower,c_1)`, `name=[c_1,c_2)`, ..., `name=[c_k,upper]`. */
export function binFeatureNames(spec: NumericColumnSpec): string[] {
  const cuts = spec.bins ?? [];
  const edges = [spec.lower, ...cuts, spec.upper];
  const names: string[] = [];
  for (let k = 0; k <= cuts.length; k++) {
    const last = k === cuts.length;
    names.push(`${spec.name}=[${edges[k]},${edges[k + 1]}${last ? ']' : ')'}`);
  }
  return names;
}
