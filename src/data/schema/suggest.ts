/**
 * Exploration helpers that READ THE PRIVATE DATA: a schema suggestion and a table summary. Their
 * output depends on every row (observed min/max, observed categories, counts), so using it to
 * preprocess the same data voids the privacy guarantee (diffprivlib issues #58, #102, #106 are
 * users tripping on exactly this). They say so: the suggestion carries a `warning` and the
 * provenance "suggested-from-private-data", which the CLI repeats on stderr whenever such a
 * schema is used; a summary is marked `readsPrivateData: true`.
 *
 * Browser-safe.
 */
import { InvalidParameterError } from '../../errors.js';
import { applySchema } from './apply.js';
import { schemaFeatureNames, schemaRowNormBound } from './bounds.js';
import { isSuggestedSchema, parseSchema } from './parse.js';
import { SUGGESTED_PROVENANCE, type Schema } from './types.js';
import { findColumn, type RawColumn, type RawTable } from '../table.js';
import { optionNames, rejectUnknownOptions } from '../../validate.js';

/** The warning printed with every suggestion and every use of a suggested schema. */
export const SUGGESTION_WARNING =
  'WARNING: this schema was suggested by READING THE PRIVATE DATA (observed ranges and categories). It is for exploration only: ' +
  'training on the same data with it voids the privacy guarantee. Replace every bound and category list by public knowledge ' +
  '(documentation, domain ranges), then set "provenance" to "declared".';

/** The warning attached to `dpfit data inspect` output. */
export const INSPECT_WARNING =
  'This summary reads the private data (counts, categories, clipping): look at it yourself, do not publish it or use it to choose preprocessing.';

/** x rounded outwards (down for a lower bound, up for an upper one) to two significant digits. */
function roundOut(x: number, up: boolean): number {
  if (x === 0 || !Number.isFinite(x)) return x;
  const step = 10 ** (Math.floor(Math.log10(Math.abs(x))) - 1);
  const r = (up ? Math.ceil : Math.floor)(x / step) * step;
  return Number(r.toPrecision(12));
}

function levelCounts(column: Extract<RawColumn, { kind: 'categorical' }>): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i < column.codes.length; i++) {
    const code = column.codes[i];
    if (code < 0) continue;
    const level = column.levels[code].trim();
    counts.set(level, (counts.get(level) ?? 0) + 1);
  }
  return counts;
}

export interface SuggestSchemaOptions {
  /** The label column (default: the last column). */
  label?: string;
  /** The positive label value (default: the less frequent of two values; else the most frequent). */
  positive?: string;
  /** Categorical columns with more distinct values than this are left out (`ignore`) (default 100). */
  maxCategories?: number;
}

const SUGGEST_SCHEMA_OPTIONS = optionNames<SuggestSchemaOptions>({ label: true, positive: true, maxCategories: true });

/**
 * Suggests a schema from the data: observed ranges (rounded outwards) as bounds, observed values
 * as category lists, a guess of the label's classes. READS THE PRIVATE DATA — see
 * `SUGGESTION_WARNING`, which the returned schema carries.
 *
 * @example
 * const { schema, warning } = suggestSchema(table, { label: 'income', positive: '>50K' });
 */
export function suggestSchema(table: RawTable, options: SuggestSchemaOptions = {}): { schema: Schema; warning: string } {
  rejectUnknownOptions(options, SUGGEST_SCHEMA_OPTIONS, 'suggestSchema');
  const labelName = options.label ?? table.columns[table.columns.length - 1]?.name;
  const labelRaw = labelName === undefined ? undefined : findColumn(table, labelName);
  if (labelRaw === undefined) throw new InvalidParameterError('label', options.label, `a column of ${table.source} (its columns are not listed: messages never quote the file; dpfit data inspect shows them)`);
  const maxCategories = options.maxCategories ?? 100;
  const columns: Record<string, unknown>[] = [];
  for (const column of table.columns) {
    if (column.name === labelRaw.name) {
      columns.push(suggestLabel(column, options.positive));
      continue;
    }
    if (column.kind === 'numeric') {
      let lo = Infinity;
      let hi = -Infinity;
      let missing = 0;
      for (const v of column.values) {
        if (Number.isNaN(v)) missing++;
        else {
          if (v < lo) lo = v;
          if (v > hi) hi = v;
        }
      }
      if (!(lo < hi)) {
        columns.push({ name: column.name, type: 'ignore', note: 'constant or empty column in the data' });
        continue;
      }
      const lower = roundOut(lo, false);
      const upper = roundOut(hi, true);
      columns.push({
        name: column.name,
        type: 'numeric',
        lower,
        upper,
        ...(missing > 0 ? { missing: 'fill', fillValue: (lower + upper) / 2 } : {}),
        note: 'SUGGESTED FROM THE DATA: replace by public bounds',
      });
    } else {
      const counts = levelCounts(column);
      if (counts.size > maxCategories) {
        columns.push({ name: column.name, type: 'ignore', note: `more than ${maxCategories} distinct values in the data` });
        continue;
      }
      const categories = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([level]) => level);
      columns.push({ name: column.name, type: 'categorical', categories, missing: 'other', note: 'SUGGESTED FROM THE DATA: replace by the public category list' });
    }
  }
  const schema = parseSchema(
    {
      version: 1,
      name: table.source.replace(/^.*[\\/]/, ''),
      provenance: SUGGESTED_PROVENANCE,
      warning: SUGGESTION_WARNING,
      columns,
      rowTransform: 'normalize',
      intercept: false,
    },
    'suggested schema',
  );
  return { schema, warning: SUGGESTION_WARNING };
}

function suggestLabel(column: RawColumn, positive: string | undefined): Record<string, unknown> {
  const base = { name: column.name, type: 'label', note: 'SUGGESTED FROM THE DATA: check the classes' };
  if (column.kind === 'numeric') {
    const distinct = new Set<number>();
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of column.values) {
      if (Number.isNaN(v)) continue;
      if (distinct.size <= 2) distinct.add(v);
      lo = Math.min(lo, v);
      hi = Math.max(hi, v);
    }
    if (distinct.size === 2) {
      const [a, b] = [...distinct].sort((u, v) => u - v);
      const pos = positive !== undefined ? Number(positive) : b;
      if (pos !== a && pos !== b) throw new InvalidParameterError('positive', positive, 'one of the two values of the label column (they are not listed: messages never quote the data; dpfit data schema without --positive shows them in the schema it prints)');
      return { ...base, positive: [pos], negative: [pos === a ? b : a] };
    }
    if (!(lo < hi)) throw new InvalidParameterError('label', column.name, 'a column with at least two distinct values');
    return { ...base, lower: roundOut(lo, false), upper: roundOut(hi, true) };
  }
  const counts = levelCounts(column);
  if (counts.size < 2) throw new InvalidParameterError('label', column.name, 'a column with at least two distinct values');
  const byCount = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([level]) => level);
  let pos: string;
  if (positive !== undefined) {
    if (!counts.has(positive)) throw new InvalidParameterError('positive', positive, 'a value of the label column (its values are not listed: messages never quote the data; dpfit data schema without --positive shows them in the schema it prints)');
    pos = positive;
  } else pos = byCount.length === 2 ? byCount[1] : byCount[0];
  return { ...base, positive: [pos], negative: byCount.filter((level) => level !== pos) };
}

/** Per-column summary in `inspectTable`. */
export interface ColumnSummary {
  readonly name: string;
  readonly type: 'numeric' | 'categorical';
  readonly missing: number;
  /** Categorical columns: number of distinct values. */
  readonly distinct?: number;
}

export interface TableSummary {
  readonly source: string;
  readonly readsPrivateData: true;
  readonly warning: string;
  readonly rows: number;
  readonly columns: readonly ColumnSummary[];
  /** With a schema: the encoding (public) and what happened to the data (private). */
  readonly schema?: {
    readonly provenance: string;
    readonly featureCount: number;
    readonly rowNormBound: number;
    readonly rowTransform: string;
    readonly rows: number;
    readonly droppedRows: number;
    readonly positives?: number;
    readonly positiveRate?: number;
    readonly clipped: Readonly<Record<string, number>>;
    readonly other: Readonly<Record<string, number>>;
    readonly missing: Readonly<Record<string, number>>;
  };
}

/**
 * Rows, columns, types and missing counts of a table, and with a schema what encoding it would
 * do (feature count, public row-norm bound, rows dropped, values clipped or sent to "other",
 * positives). READS THE PRIVATE DATA: the result is marked so.
 */
export function inspectTable(table: RawTable, schema?: Schema): TableSummary {
  const columns: ColumnSummary[] = table.columns.map((column) => {
    if (column.kind === 'numeric') {
      let missing = 0;
      for (const v of column.values) if (Number.isNaN(v)) missing++;
      return { name: column.name, type: 'numeric', missing };
    }
    let missing = 0;
    for (const code of column.codes) if (code < 0) missing++;
    return { name: column.name, type: 'categorical', missing, distinct: levelCounts(column).size };
  });
  let schemaSummary: TableSummary['schema'];
  if (schema !== undefined) {
    const prepared = applySchema(table, schema);
    const diagnostics = prepared.privateDiagnostics;
    schemaSummary = {
      provenance: isSuggestedSchema(schema) ? `${schema.provenance} (NOT PRIVATE)` : schema.provenance,
      featureCount: schemaFeatureNames(schema).length,
      rowNormBound: schemaRowNormBound(schema),
      rowTransform: schema.rowTransform,
      rows: prepared.dataset.n,
      droppedRows: diagnostics.droppedRows,
      ...(diagnostics.positives !== undefined ? { positives: diagnostics.positives, positiveRate: prepared.dataset.n > 0 ? diagnostics.positives / prepared.dataset.n : 0 } : {}),
      clipped: diagnostics.clipped,
      other: diagnostics.other,
      missing: diagnostics.missing,
    };
  }
  return {
    source: table.source,
    readsPrivateData: true,
    warning: INSPECT_WARNING,
    rows: table.rowCount,
    columns,
    ...(schemaSummary !== undefined ? { schema: schemaSummary } : {}),
  };
}
