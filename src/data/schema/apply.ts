/**
 * A schema applied to a table (`applySchema`): numeric columns clipped and scaled by their
 * declared bounds (or binned), categorical columns one-hot with an "other" slot, the label
 * encoded, the missing-value policies applied, then the row transform and the intercept. Each
 * output row depends only on its input row and the schema; what the encoding met in the private
 * data is counted apart, for the owner's eyes (`PrivateDiagnostics`). The encoding itself is
 * `encoder.ts` (compiled once, each row written in place at its final position).
 */
import type { Dataset } from '../dataset.js';
import type { RawTable } from '../table.js';
import { rejectUnknownOptions } from '../../validate.js';
import { schemaLabelBound, schemaRowNormBound } from './bounds.js';
import { schemaEncoder, type EncodedRows, type SchemaEncoder } from './encoder.js';
import { SCHEMA_READ_OPTIONS, type SchemaReadOptions } from './read-options.js';
import type { RowTransform, Schema } from './types.js';

/** Statistics of the private data gathered while encoding: for the owner's eyes (`dpfit data inspect`), never for release. */
export interface PrivateDiagnostics {
  readonly rowsRead: number;
  readonly droppedRows: number;
  /** Per numeric column: values clipped to a bound. */
  readonly clipped: Readonly<Record<string, number>>;
  /** Per categorical column: values (unknown or missing) sent to the "other" slot. */
  readonly other: Readonly<Record<string, number>>;
  /** Per column: missing values seen. */
  readonly missing: Readonly<Record<string, number>>;
  /** Rows whose label is the positive class (binary labels). */
  readonly positives?: number;
}

export interface PreparedData {
  readonly dataset: Dataset;
  /** Public bound on every row's L2 norm (from the schema: `schemaRowNormBound`). */
  readonly rowNormBound: number;
  /** Public bound on |y|. */
  readonly labelBound: number;
  readonly rowTransform: RowTransform;
  readonly intercept: number | null;
  readonly privateDiagnostics: PrivateDiagnostics;
  /**
   * The label of a zero row (`../dropped-rows.ts`: a record dropped for a missing value is a zero row
   * of the training set, so that n does not depend on the data): a value the label's encoding
   * accepts; x = 0 cancels it in every learner.
   */
  readonly zeroRowLabel: number;
}

/**
 * Encodes a table with a public schema: clip and scale numeric columns by their declared bounds,
 * one-hot categorical columns with an "other" slot, encode the label, apply the missing-value
 * policies, then the row transform and the intercept. Each output row depends only on its input
 * row and the schema.
 *
 * Throws a `DataFormatError` at the first offending cell (file, line, column): a column of the
 * schema absent from the table, a missing value under policy "error", a label value that is
 * neither positive nor negative, a non-finite number.
 *
 * @example
 * const { dataset, rowNormBound } = applySchema(table, schema); // rowNormBound = 1 by default
 */
export function applySchema(table: RawTable, schema: Schema, options: SchemaReadOptions = {}): PreparedData {
  rejectUnknownOptions(options, SCHEMA_READ_OPTIONS, 'applySchema');
  const encoder = schemaEncoder(schema, options.label === 'ignore');
  const n0 = table.rowCount;
  const x = new Float64Array(n0 * encoder.d);
  const y = new Float64Array(n0);
  const encoded = encoder.encode(table, x, y, 0);
  const { kept } = encoded;
  const rows = kept === n0 ? { x, y, n: kept } : { x: x.slice(0, kept * encoder.d), y: y.slice(0, kept), n: kept };
  return preparedData(schema, encoder, rows, encoded, n0);
}

/**
 * @internal The `PreparedData` of the rows an encoder wrote (`rows`, taken as they are: the kept
 * rows, and any zero rows after them), of `rowsRead` records read.
 */
export function preparedData(
  schema: Schema, encoder: Pick<SchemaEncoder, 'd' | 'featureNames' | 'zeroRowLabel'>, rows: { x: Float64Array; y: Float64Array; n: number },
  encoded: Pick<EncodedRows, 'kept' | 'counts' | 'positives' | 'countsPositives'>, rowsRead: number,
): PreparedData {
  const { kept } = encoded;
  const dataset: Dataset = { x: rows.x, y: rows.y, n: rows.n, d: encoder.d, featureNames: [...encoder.featureNames] };
  return {
    dataset,
    rowNormBound: schemaRowNormBound(schema),
    labelBound: schemaLabelBound(schema),
    rowTransform: schema.rowTransform,
    intercept: schema.intercept,
    zeroRowLabel: encoder.zeroRowLabel,
    privateDiagnostics: {
      rowsRead,
      droppedRows: rowsRead - kept,
      ...encoded.counts,
      ...(encoded.countsPositives ? { positives: encoded.positives } : {}),
    },
  };
}
