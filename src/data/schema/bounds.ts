/**
 * What a schema makes of the data, computed from the schema alone and so public: the feature
 * names in output order, the label column, and the bounds the learners need (every row's L2 norm
 * before and after the row transform, |y|).
 */
import { binFeatureNames, numericValueBound } from './numeric-encoding.js';
import type { LabelColumnSpec, Schema } from './types.js';

/** The slot name of a categorical column's "other" category. */
export function otherSlotName(column: string): string {
  return `${column}=<other>`;
}

/** The label column of the schema. */
export function labelColumn(schema: Schema): LabelColumnSpec {
  return schema.columns.find((c): c is LabelColumnSpec => c.type === 'label') as LabelColumnSpec;
}

/**
 * Feature names in output order: a numeric column gives its name (or `log1p(name)`) unless it is
 * encoded by bins only, then one `name=[a,b)` per bin; a categorical column one `name=category`
 * per category and `name=<other>`; then `(intercept)` if the schema has one.
 */
export function schemaFeatureNames(schema: Schema): string[] {
  const names: string[] = [];
  for (const c of schema.columns) {
    if (c.type === 'numeric') {
      if (c.encode !== 'bins') names.push(c.transform === 'log1p' ? `log1p(${c.name})` : c.name);
      if (c.bins !== undefined) names.push(...binFeatureNames(c));
    } else if (c.type === 'categorical') {
      for (const category of c.categories) names.push(`${c.name}=${category}`);
      names.push(otherSlotName(c.name));
    }
  }
  if (schema.intercept !== null) names.push('(intercept)');
  return names;
}

/** Rounds a bound up by a few ulps: a bound must never be below the true value. */
function roundUp(value: number): number {
  return value === 0 ? 0 : value * (1 + 4 * Number.EPSILON);
}

/**
 * The L2 norm bound of encoded rows *before* the row transform: each numeric value feature is at
 * most 1 in absolute value (or max(|t(lower)|, |t(upper)|) with scale "none", t the column's
 * transform), each binned column contributes exactly one 1 and each categorical column exactly
 * one 1, so B0 = sqrt(sum of squares). Public: it reads only the schema.
 */
export function schemaEncodedNormBound(schema: Schema): number {
  let s = 0;
  for (const c of schema.columns) {
    if (c.type === 'numeric') {
      if (c.encode !== 'bins') s += numericValueBound(c) ** 2;
      if (c.bins !== undefined) s += 1;
    } else if (c.type === 'categorical') s += 1;
  }
  return roundUp(Math.sqrt(s));
}

/**
 * The public bound on every output row's L2 norm, the `rowNormBound` the learners need:
 * B = 1 after "normalize" (003 Sec. 5) or "scale", clipNorm after "clip", B0 after "none"; an
 * intercept column of value c raises it to sqrt(B^2 + c^2) (see `addIntercept`).
 */
export function schemaRowNormBound(schema: Schema): number {
  let bound: number;
  switch (schema.rowTransform) {
    case 'normalize':
    case 'scale':
      bound = 1;
      break;
    case 'clip':
      bound = schema.clipNorm as number;
      break;
    case 'none':
      bound = schemaEncodedNormBound(schema);
      break;
  }
  return schema.intercept === null ? bound : roundUp(Math.hypot(bound, schema.intercept));
}

/** The public bound on |y|: 1 for binary labels, K - 1 for K classes (y is the class index), max(|lower|, |upper|) for numeric ones. */
export function schemaLabelBound(schema: Schema): number {
  const label = labelColumn(schema);
  if (label.positive !== undefined) return 1;
  if (label.classes !== undefined) return label.classes.length - 1;
  return Math.max(Math.abs(label.lower as number), Math.abs(label.upper as number));
}
