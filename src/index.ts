/**
 * `dpfit`, the package's root: what a newcomer needs first: train a private model on a file with
 * its public schema, use and verify the model, and the errors. Everything else lives in one
 * subpath by layer (docs/architecture.md, "Package entries"):
 * `dpfit/accounting`, `dpfit/mechanisms`, `dpfit/math`, `dpfit/data`, `dpfit/learners` (all
 * browser-safe) and `dpfit/node` (files, databases, federated training); every name below is
 * also exported by one of them, as the same object. The root reads files (`loadDataset`), so it
 * is for Node; in a browser, import the subpaths. Explicit exports only.
 */

// Errors
export {
  BudgetExceededError,
  CalibrationError,
  DataFormatError,
  DpfitError,
  InvalidParameterError,
  NumericalError,
  UnknownOptionError,
  UnsupportedEventError,
} from './errors.js';

// Data: a file and its public schema (also in dpfit/node and dpfit/data)
export type { Dataset, PreparedData, Schema } from './data/index.js';
export { adultSchema, parseSchema, trainTestSplit } from './data/index.js';
export { loadDataset, readSchemaFile } from './data/node/read.js';
export type { Rng } from './random/index.js';
export { defaultRng } from './random/index.js';

// Training (also in dpfit/learners)
export type { SchemaBoundedData, TrainData, TrainMethod, TrainOptions, TrainOutcome } from './learners/train.js';
export { train, TRAIN_METHODS } from './learners/train.js';
export type { EstimatorOptions } from './learners/estimators.js';
export { PrivateLinearRegression, PrivateLogisticRegression } from './learners/estimators.js';

// Models and their privacy reports (also in dpfit/learners)
export type { LinearModel, Metrics } from './learners/models/model.js';
export { evaluate, parseModel, predict } from './learners/models/model.js';
export type { PrivacyReport } from './learners/models/privacy-report.js';
export type { GuaranteeSummary, ModelVerification, VerifyModelOptions } from './learners/verification/verify-model.js';
export { describeVerification, verifyModel } from './learners/verification/verify-model.js';
