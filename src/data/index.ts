/**
 * The data layer's browser-safe part (docs/design.md, layer `src/data`): the `Dataset` type and its
 * helpers, the CSV and LIBSVM parsers over bytes, public schemas, per-row transforms, synthetic
 * generators and the UCI Adult description. Node-only back-ends (files, DuckDB, downloads) are in
 * `./node/`, exported by `src/entries/node.ts`. Explicit re-exports only.
 */
export type { Dataset, TrainTestSplitOptions } from './dataset.js';
export { checkRowNormBound, concatRows, createDataset, maxRowNorm, rowNorm, rowView, selectRows, trainTestSplit } from './dataset.js';
export type { CategoricalColumn, NumericColumn, RawColumn, RawTable } from './table.js';
export { findColumn, numericTableToDataset } from './table.js';
export type { CsvColumnType, CsvOptions } from './csv.js';
export { CsvParser, parseCsv } from './csv.js';
export type { LibsvmOptions } from './libsvm.js';
export { parseLibsvm } from './libsvm.js';
export type {
  CategoricalColumnSpec,
  ColumnSpec,
  CsvDialectSpec,
  IgnoredColumnSpec,
  LabelColumnSpec,
  MissingPolicy,
  NumericColumnSpec,
  NumericEncoding,
  NumericScale,
  NumericTransform,
  RowTransform,
  Schema,
} from './schema/types.js';
export { SCHEMA_VERSION, SUGGESTED_PROVENANCE } from './schema/types.js';
export { isSuggestedSchema, parseSchema, schemaToJson } from './schema/parse.js';
export { schemaEncodedNormBound, schemaFeatureNames, schemaLabelBound, schemaRowNormBound } from './schema/bounds.js';
export type { SchemaReadOptions } from './schema/read-options.js';
export { schemaCsvOptions } from './schema/read-options.js';
export type { PreparedData, PrivateDiagnostics } from './schema/apply.js';
export { applySchema } from './schema/apply.js';
export type { NumericEncodingFields } from './schema/numeric-encoding.js';
export { binFeatureNames, binIndex, numericEncodedWidth, numericValueBound, numericValueFeature } from './schema/numeric-encoding.js';
export type { ColumnSummary, SuggestSchemaOptions, TableSummary } from './schema/suggest.js';
export { INSPECT_WARNING, SUGGESTION_WARNING, inspectTable, suggestSchema } from './schema/suggest.js';
export { addIntercept, clipRows, clipRowsMahalanobis, normalizeRows, scaleRows } from './transforms.js';
export type { GaussianFeaturesOptions, SyntheticDatasetOptions, TwoPartySplitKind, TwoPartySplitOptions } from './synthetic.js';
export { gaussianFeatures, syntheticDataset, twoPartySplit } from './synthetic.js';
export type { RemoteFile } from './adult.js';
export { ADULT_DOCUMENTED, ADULT_FILES, ADULT_SCHEMA_JSON, adultSchema, normalizeAdultCopy } from './adult.js';
