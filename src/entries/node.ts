/**
 * `dpfit/node`: everything that needs Node: files (CSV, LIBSVM, Parquet through DuckDB, schema
 * files, `loadDataset`), dataset downloads checked against their hashes, output files checked
 * before any work and written atomically, SQL engines (DuckDB, PostgreSQL) with DP-GD run inside
 * the database and DP-GD/DP-SGD streamed out of core, and federated training (a data-holding
 * node with its persistent privacy ledger, its HTTP server and client, the coordinator). DuckDB
 * (`@duckdb/node-api`, an optional dependency) and node-postgres are loaded only when used.
 * Not browser-safe; the browser-safe layers are `dpfit/accounting`, `dpfit/mechanisms`,
 * `dpfit/math`, `dpfit/data` and `dpfit/learners` (docs/architecture.md, "Package entries").
 * Explicit exports only.
 */

export {
  BudgetExceededError,
  CalibrationError,
  DataFormatError,
  DpfitError,
  InvalidParameterError,
  NumericalError,
  UnknownOptionError,
  UnsupportedEventError,
} from '../errors.js';

// Files and downloads
export type { CsvEngine, DataFormat, LoadOptions, ReadTableOptions } from '../data/node/read.js';
export { detectFormat, loadDataset, readCsvFile, readLibsvmFile, readSchemaFile, readTable } from '../data/node/read.js';
export type { DuckDbOptions } from '../data/node/duckdb.js';
export { convertCsvToParquet, readCsvWithDuckDb, readParquetFile } from '../data/node/duckdb.js';
export type { FetchAdultOptions, FetchFunction, FetchReport, InstallOptions, InstalledFile } from '../data/node/fetch.js';
export { FETCHERS, FetchFailedError, downloadVerified, fetchAdult, installFiles, sha256Hex, verifyBytes } from '../data/node/fetch.js';

// Output files
export type { CheckedOutput, OutputContent, OutputKind, OutputRequest, WriteOperations } from '../data/node/atomic-write.js';
export { removePendingTemporaryFiles, writeFileAtomic, writeOutputFiles } from '../data/node/atomic-write.js';
// A command's rule (its outputs against its inputs and each other), the CLI's own; exported for
// programs that, like the CLI, check every output before any work.
export type { InputRequest } from '../cli/output-files.js';
export { checkOutputPaths } from '../cli/output-files.js';
export { describeOsError } from '../data/node/files.js';

// Databases and data larger than memory
export type { SqlEngine } from '../data/node/sql-engine.js';
export { openSqlEngine } from '../data/node/sql-engine.js';
export type { PushDownCheck, PushDownOptions } from '../learners/sql/sql-gradient.js';
export { trainDpGdInSql } from '../learners/sql/sql-gradient.js';
export type { StreamedDataset, StreamOptions } from '../data/node/stream-rows.js';
export { openStreamedDataset } from '../data/node/stream-rows.js';
export type { RowSource } from '../data/row-source.js';
export { trainDpGdStreamed, trainDpSgdStreamed } from '../learners/gradient/streamed.js';

// Federated training
export type { FederatedNodeOptions, NodeData } from '../federated/node.js';
export { FederatedNode, NodeRefusal } from '../federated/node.js';
export type { Budget, BudgetEntry, BudgetLedger, LedgerDecision, SpentBudget } from '../accounting/budget/rule.js';
export { decideBudget, InMemoryLedger, spentBudget } from '../accounting/budget/rule.js';
export type { LedgerEntry, LedgerOpenOptions, LedgerSummary } from '../federated/ledger.js';
export { DEFAULT_LOCK_TIMEOUT_MS, LEDGER_FORMAT, PrivacyLedger } from '../federated/ledger.js';
export type { NodeServerOptions, RunningNodeServer } from '../federated/http-server.js';
export { MIN_TOKEN_LENGTH, startNodeServer } from '../federated/http-server.js';
export type { HttpClientOptions } from '../federated/http-client.js';
export { httpNodeClient } from '../federated/http-client.js';
export { inProcessClient } from '../federated/in-process.js';
export type { FederatedModel, FederatedPrivacy, FederatedResult, FederateOptions, NodeClient, NodeOutcome } from '../federated/coordinator.js';
export { federate } from '../federated/coordinator.js';
export type { FederatedMethod, GradientAnswer, GradientRequest, NodeInfo, SessionPlan, SessionRequest } from '../federated/protocol.js';
export { FEDERATED_METHODS, MAX_SESSION_STEPS, PROTOCOL } from '../federated/protocol.js';
