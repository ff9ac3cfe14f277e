/**
 * The data layer's Node-only back-ends: file readers (CSV streamed, LIBSVM, schema files), the
 * DuckDB back-end (Parquet, large CSV; loaded lazily), dataset fetchers and output files (checked
 * before any work, written atomically). Explicit re-exports only.
 */
export type { CsvEngine, DataFormat, ReadTableOptions } from './read.js';
export { detectFormat, loadDataset, readCsvFile, readLibsvmFile, readSchemaFile, readTable } from './read.js';
export type { DuckDbOptions } from './duckdb.js';
export { convertCsvToParquet, readCsvWithDuckDb, readParquetFile } from './duckdb.js';
export type { FetchAdultOptions, FetchFunction, FetchReport, InstallOptions, InstalledFile } from './fetch.js';
export { FETCHERS, FetchFailedError, downloadVerified, fetchAdult, installFiles, sha256Hex, verifyBytes } from './fetch.js';
export type { CheckedOutput, InputRequest, OutputContent, OutputKind, OutputRequest, WriteOperations } from './output-files.js';
export { checkOutputPaths, describeOsError, removePendingTemporaryFiles, writeFileAtomic, writeOutputFiles } from './output-files.js';
