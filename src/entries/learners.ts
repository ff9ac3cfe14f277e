/**
 * `dpfit/learners`: every private learner and what surrounds it: `train()` (one call, any
 * method) and the scikit-learn-style estimators, the learners themselves (DP-GD, DP-SGD, shuffled
 * SGD, honest tuning, one-vs-rest, output and objective perturbation, AMP, RGM gradient descent
 * with Propose-Test-Release), the GLM losses, model files (predict, evaluate, parse, verify),
 * privacy reports and metrics. Browser-safe: learners take rows in memory (`{x, y, n, d}` or what
 * `loadDataset` of `dpfit/node` returns); the worker-thread gradient sum, out-of-core and SQL
 * training are Node-only and live in `dpfit/node` (docs/architecture.md, "Package entries").
 * The root `dpfit` re-exports the part a newcomer needs first. Explicit exports only.
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

// One call, any method; the estimators
export type { SchemaBoundedData, TrainData, TrainMethod, TrainOptions, TrainOutcome } from '../learners/train.js';
export { schemaClipNorm, train, TRAIN_METHODS } from '../learners/train.js';
// What a run will release, from public values, before its data are read (a budget reserves it: dpfit/node's PrivacyLedger, PrivacyBudget)
export type { PlannedRelease, PublicTrainingShape } from '../learners/train.js';
export { plannedTrainingRelease } from '../learners/train.js';
export type { EstimatorOptions } from '../learners/estimators.js';
export { PrivateLinearRegression, PrivateLogisticRegression } from '../learners/estimators.js';
export { DEFAULT_DELTA } from '../learners/training.js';

// Models, reports, verification, metrics
export type { LinearModel, Metrics } from '../learners/models/model.js';
export { evaluate, parseModel, parsePrivacyReport, predict, predictMargins } from '../learners/models/model.js';
export type { GuaranteeSummary, ModelVerification, VerifyModelOptions } from '../learners/verification/verify-model.js';
export { describeVerification, verifyModel } from '../learners/verification/verify-model.js';
export type { GuaranteeCondition, PrivacyReport } from '../learners/models/privacy-report.js';
export { nonPrivateReport, publicRandomness, weakerGuarantee, withConditions } from '../learners/models/privacy-report.js';
export { accuracy, logLoss, meanSquaredError, rocAuc, rSquared } from '../eval/metrics.js';

// The learners
export type { DpGdOptions } from '../learners/gradient/dp-gd.js';
export type { TrainResult } from '../learners/training.js';
export { trainDpGd } from '../learners/gradient/dp-gd.js';
export type { DpSgdOptions } from '../learners/gradient/dp-sgd.js';
export { trainDpSgd } from '../learners/gradient/dp-sgd.js';
export { trainShuffledSgd } from '../learners/gradient/shuffled-sgd.js';
export { gridSearchNotPrivate, tuneHonestly } from '../learners/composite/tuning.js';
export type { GradientMethod, GradientMethodOptions } from '../learners/composite/gradient-methods.js';
export { calibrateCompositeNoise, gradientRunEvent, gradientRunNoise, trainGradientMethod } from '../learners/composite/gradient-methods.js';
export type { TuneGradientMethodOptions } from '../learners/composite/tune-gradient-method.js';
export { poissonMeanForGrid, tuneGradientMethodHonestly } from '../learners/composite/tune-gradient-method.js';
export type { OneVsRestModel, OneVsRestOptions } from '../learners/composite/one-vs-rest.js';
export { evaluateOneVsRest, parseOneVsRestModel, predictClasses, trainOneVsRest } from '../learners/composite/one-vs-rest.js';
export type { ObjectivePerturbationOptions } from '../learners/perturbation/objective-perturbation.js';
export { minimizePerturbedObjective, trainObjectivePerturbation } from '../learners/perturbation/objective-perturbation.js';
export type { AmpOptions } from '../learners/perturbation/approximate-minima-perturbation.js';
export { trainAmp } from '../learners/perturbation/approximate-minima-perturbation.js';
export type { RgmGdOptions, RgmGdResult } from '../learners/rgm/rgm-gd.js';
export { rgmRidgeSensitivity, trainRgmGd } from '../learners/rgm/rgm-gd.js';
export { gaussianFeatureRho, proposeTestRelease, ptrStatistic } from '../learners/rgm/propose-test-release.js';
export type { OutputPerturbationOptions } from '../learners/perturbation/output-perturbation.js';
export { trainOutputPerturbation } from '../learners/perturbation/output-perturbation.js';
export type { OutputPerturbationSgdOptions } from '../learners/perturbation/output-perturbation-sgd.js';
export { trainOutputPerturbationSgd } from '../learners/perturbation/output-perturbation-sgd.js';
export type { CertifiedMinimum, CertifiedMinimumOptions } from '../learners/glm/certified-minimum.js';
export { certifiedMinimum } from '../learners/glm/certified-minimum.js';

// Losses
export type { GlmLoss } from '../learners/glm/index.js';
export { huberLoss, logisticLoss, smoothedHingeLoss, squaredLoss } from '../learners/glm/index.js';
