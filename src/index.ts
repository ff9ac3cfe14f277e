/**
 * dpfit's public API (explicit exports only; docs/design.md). Layers: math -> random -> accounting ->
 * mechanisms (-> learners, data, eval, report, cli in later issues).
 */

// Errors
export {
  BudgetExceededError,
  CalibrationError,
  DataFormatError,
  DpfitError,
  InvalidParameterError,
  NumericalError,
  UnsupportedEventError,
} from './errors.js';

// Math
export {
  brentMinimize,
  brentRoot,
  expandBracket,
  integrate,
  log1mExp,
  log1pExp,
  logAddExp,
  logBinomial,
  logGamma,
  logSubExp,
  logSumExp,
  normalCdf,
  normalLogCdf,
  normalLogSf,
  normalQuantile,
  normalQuantileOfLog,
  normalSf,
} from './math/index.js';

// Randomness
export type { Rng } from './random/index.js';
export {
  defaultRng,
  fillDiscreteGaussian,
  fillGaussian,
  poissonSubsampleIndices,
  poissonSubsampleMask,
  randomPermutation,
  sampleBernoulli,
  sampleBinomial,
  sampleDiscreteGaussian,
  sampleDiscreteGaussianVariance,
  sampleDiscreteLaplace,
  sampleExponential,
  sampleGaussian,
  sampleLaplace,
  samplePoisson,
  secureRng,
  seededRng,
  shuffleInPlace,
  uniformInt,
} from './random/index.js';

// Accounting
export type {
  ComposeEvent,
  DpEvent,
  DpEventKind,
  GaussianEvent,
  LaplaceEvent,
  NoOpEvent,
  NonPrivateEvent,
  ObjectivePerturbationEvent,
  PoissonSampledEvent,
  RandomizedResponseEvent,
  RelativeGaussianEvent,
  RepeatAndSelectEvent,
  SampledWithoutReplacementEvent,
  SelfComposeEvent,
  ShuffledSgdConjectureEvent,
} from './accounting/events.js';
export {
  composeEvent,
  eventToJson,
  gaussianEvent,
  laplaceEvent,
  NO_OP_EVENT,
  NON_PRIVATE_EVENT,
  objectivePerturbationEvent,
  parseEvent,
  poissonSampledEvent,
  randomizedResponseEvent,
  relativeGaussianEvent,
  repeatAndSelectEvent,
  sampledWithoutReplacementEvent,
  selfComposeEvent,
  shuffledSgdConjectureEvent,
} from './accounting/events.js';
export type { GaussianCalibration, GaussianCalibrationMethod, GaussianCalibrationOptions } from './accounting/calibrate-gaussian.js';
export { analyticGaussianNoiseMultiplier, calibrateGaussian, classicalGaussianNoiseMultiplier } from './accounting/calibrate-gaussian.js';
export { gaussianDelta, gaussianLogDelta } from './accounting/gaussian-profile.js';
export type { PldAccountantOptions, PldDiscretization, PldGuarantee } from './accounting/pld/accountant.js';
export { PldAccountant, pldDelta, pldEpsilon } from './accounting/pld/accountant.js';
export type { PrivacyGuarantee } from './accounting/guarantee.js';
export type { NeighboringRelation } from './accounting/neighboring.js';
export { neighboringRelationOf } from './accounting/neighboring.js';
export { RdpAccountant, rdpDelta, rdpEpsilon } from './accounting/rdp/accountant.js';
export { DEFAULT_ORDERS } from './accounting/rdp/orders.js';
export { calibrateDpsgd, calibrateNoiseMultiplier, dpsgdEvent, maxSteps } from './accounting/calibrate.js';
export { advancedComposition, pureEpsilon } from './accounting/pure-dp.js';
export { totalVariation } from './accounting/total-variation.js';
export { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } from './accounting/gaussian-composition.js';
export type { RdpConversion } from './accounting/rdp/conversion.js';
export { rdpToEpsilon, rdpToEpsilonImproved, rdpToEpsilonMironov } from './accounting/rdp/conversion.js';
export type { RelativeGaussianCalibration, RelativeGaussianEpsilon, RelativeGaussianParams } from './accounting/relative-gaussian.js';
export {
  calibrateRelativeGaussian,
  relativeGaussianCorollary1,
  relativeGaussianEpsilon,
  relativeGaussianEpsilonFloor,
  relativeGaussianMaxOrder,
  relativeGaussianRdp,
} from './accounting/relative-gaussian.js';

// Mechanisms
export type { GaussianMechanismOptions, GaussianMechanismResult } from './mechanisms/gaussian.js';
export { gaussianMechanism } from './mechanisms/gaussian.js';
export type { LaplaceMechanismOptions, LaplaceMechanismResult } from './mechanisms/laplace.js';
export { laplaceMechanism } from './mechanisms/laplace.js';
export type { RandomizedResponseOptions, RandomizedResponseResult } from './mechanisms/randomized-response.js';
export { randomizedResponse, randomizedResponseEpsilon, randomizedResponseNoiseParameter } from './mechanisms/randomized-response.js';
export type { RelativeGaussianOptions, RelativeGaussianResult } from './mechanisms/relative-gaussian.js';
export { relativeGaussianMechanism } from './mechanisms/relative-gaussian.js';
export type { QueryValue } from './mechanisms/noise.js';
export type { GaussianGridPlan, GridPlanOptions, LaplaceGridPlan } from './mechanisms/grid-noise.js';
export { addGaussianGridNoise, addLaplaceGridNoise, GRID_RESOLUTION, planGaussianGrid, planLaplaceGrid } from './mechanisms/grid-noise.js';
export type { RelativeGaussianGrid } from './mechanisms/relative-gaussian-grid.js';
export { addRelativeGaussianGridNoise, planRelativeGaussianGrid } from './mechanisms/relative-gaussian-grid.js';

// Data
export type {
  CategoricalColumn,
  CategoricalColumnSpec,
  ColumnSpec,
  ColumnSummary,
  CsvColumnType,
  CsvDialectSpec,
  CsvOptions,
  Dataset,
  GaussianFeaturesOptions,
  IgnoredColumnSpec,
  LabelColumnSpec,
  LibsvmOptions,
  MissingPolicy,
  NumericColumn,
  NumericColumnSpec,
  NumericScale,
  PreparedData,
  PrivateDiagnostics,
  RawColumn,
  RawTable,
  RemoteFile,
  RowTransform,
  Schema,
  SuggestSchemaOptions,
  SyntheticDatasetOptions,
  TableSummary,
  TrainTestSplitOptions,
  TwoPartySplitKind,
  TwoPartySplitOptions,
} from './data/index.js';
export {
  ADULT_DOCUMENTED,
  ADULT_FILES,
  ADULT_SCHEMA_JSON,
  CsvParser,
  INSPECT_WARNING,
  SCHEMA_VERSION,
  SUGGESTED_PROVENANCE,
  SUGGESTION_WARNING,
  addIntercept,
  adultSchema,
  applySchema,
  checkRowNormBound,
  clipRows,
  clipRowsMahalanobis,
  concatRows,
  createDataset,
  findColumn,
  gaussianFeatures,
  inspectTable,
  isSuggestedSchema,
  maxRowNorm,
  normalizeAdultCopy,
  normalizeRows,
  numericTableToDataset,
  parseCsv,
  parseLibsvm,
  parseSchema,
  rowNorm,
  rowView,
  scaleRows,
  schemaCsvOptions,
  schemaEncodedNormBound,
  schemaFeatureNames,
  schemaLabelBound,
  schemaRowNormBound,
  schemaToJson,
  selectRows,
  suggestSchema,
  syntheticDataset,
  trainTestSplit,
  twoPartySplit,
} from './data/index.js';
// Data, Node-only back-ends (files, DuckDB loaded lazily, downloads)
export type { CsvEngine, DataFormat, DuckDbOptions, FetchAdultOptions, FetchFunction, FetchReport, InstallOptions, InstalledFile, ReadTableOptions } from './data/node/index.js';
export {
  FETCHERS,
  FetchFailedError,
  convertCsvToParquet,
  detectFormat,
  downloadVerified,
  fetchAdult,
  installFiles,
  loadDataset,
  readCsvFile,
  readCsvWithDuckDb,
  readLibsvmFile,
  readParquetFile,
  readSchemaFile,
  readTable,
  sha256Hex,
  verifyBytes,
} from './data/node/index.js';

// Learners
export type { LinearModel, Metrics } from './learners/model.js';
export { evaluate, parseModel, parsePrivacyReport, predict, predictMargins } from './learners/model.js';
export type { GuaranteeSummary, ModelVerification, VerifyModelOptions } from './learners/verify-model.js';
export { describeVerification, verifyModel } from './learners/verify-model.js';
export type { GuaranteeCondition, PrivacyReport } from './learners/privacy-report.js';
export { nonPrivateReport, publicRandomness, weakerGuarantee, withConditions } from './learners/privacy-report.js';
export type { CertifiedMinimum, CertifiedMinimumOptions } from './learners/glm/certified-minimum.js';
export { certifiedMinimum } from './learners/glm/certified-minimum.js';
export type { DpGdOptions, TrainResult } from './learners/dp-gd.js';
export { trainDpGd } from './learners/dp-gd.js';
export type { DpSgdOptions } from './learners/dp-sgd.js';
export { trainDpSgd } from './learners/dp-sgd.js';
export { trainShuffledSgd } from './learners/shuffled-sgd.js';
export { gridSearchNotPrivate, tuneHonestly } from './learners/tuning.js';
export type { SchemaBoundedData, TrainData, TrainMethod, TrainOptions, TrainOutcome } from './learners/train.js';
export { schemaClipNorm, train, TRAIN_METHODS } from './learners/train.js';
export type { EstimatorOptions } from './learners/estimators.js';
export { PrivateLinearRegression, PrivateLogisticRegression } from './learners/estimators.js';
export { DEFAULT_DELTA } from './learners/training.js';
export type { GradientMethod, GradientMethodOptions } from './learners/gradient-methods.js';
export { calibrateCompositeNoise, gradientRunEvent, gradientRunNoise, trainGradientMethod } from './learners/gradient-methods.js';
export type { TuneGradientMethodOptions } from './learners/tune-gradient-method.js';
export { poissonMeanForGrid, tuneGradientMethodHonestly } from './learners/tune-gradient-method.js';
export type { OneVsRestModel, OneVsRestOptions } from './learners/one-vs-rest.js';
export { evaluateOneVsRest, parseOneVsRestModel, predictClasses, trainOneVsRest } from './learners/one-vs-rest.js';
export type { ObjectivePerturbationOptions } from './learners/objective-perturbation.js';
export { minimizePerturbedObjective, trainObjectivePerturbation } from './learners/objective-perturbation.js';
export type { AmpOptions } from './learners/amp.js';
export { trainAmp } from './learners/amp.js';
export { ampEvent } from './accounting/amp-event.js';
export { calibrateObjectivePerturbation } from './accounting/calibrate-objective-perturbation.js';
export { selectAmpParameters, selectObjectivePerturbationParameters } from './accounting/select-amp-parameters.js';
export type { RgmGdOptions, RgmGdResult } from './learners/rgm-gd.js';
export { rgmRidgeSensitivity, trainRgmGd } from './learners/rgm-gd.js';
export { gaussianFeatureRho, proposeTestRelease, ptrStatistic } from './learners/propose-test-release.js';
export type { OutputPerturbationOptions } from './learners/output-perturbation.js';
export { trainOutputPerturbation } from './learners/output-perturbation.js';
export type { OutputPerturbationSgdOptions } from './learners/output-perturbation-sgd.js';
export { trainOutputPerturbationSgd } from './learners/output-perturbation-sgd.js';
export { huberLoss, logisticLoss, smoothedHingeLoss, squaredLoss } from './learners/glm/index.js';
export type { GlmLoss } from './learners/glm/index.js';
export { lbfgs } from './math/lbfgs.js';
export { newton } from './math/newton.js';
export { accuracy, logLoss, meanSquaredError, rocAuc, rSquared } from './eval/metrics.js';
