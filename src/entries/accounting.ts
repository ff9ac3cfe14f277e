/**
 * `dpfit/accounting`: privacy accounting. DpEvents (what a computation released), the Rényi-DP
 * and PLD accountants, RDP-to-(epsilon, delta) conversions, exact Gaussian composition, pure DP,
 * the Relative Gaussian Mechanism's bounds, and the calibrations (noise for a target epsilon).
 * Browser-safe: nothing here imports a Node module (docs/architecture.md, "Package entries";
 * test/package/entries.test.ts walks the import graph). Explicit exports only.
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

// Events
export type {
  ComposeEvent,
  DpEvent,
  DpEventKind,
  GaussianEvent,
  LaplaceEvent,
  NoOpEvent,
  NonPrivateEvent,
  NonUniformSampledEvent,
  ObjectivePerturbationEvent,
  PoissonSampledEvent,
  RandomizedResponseEvent,
  RelativeGaussianEvent,
  RepeatAndSelectEvent,
  SampledWithoutReplacementEvent,
  SelfComposeEvent,
  ShuffledSgdConjectureEvent,
} from '../accounting/events/types.js';
export {
  composeEvent,
  gaussianEvent,
  laplaceEvent,
  NO_OP_EVENT,
  NON_PRIVATE_EVENT,
  nonUniformSampledEvent,
  objectivePerturbationEvent,
  poissonSampledEvent,
  randomizedResponseEvent,
  relativeGaussianEvent,
  repeatAndSelectEvent,
  sampledWithoutReplacementEvent,
  selfComposeEvent,
  shuffledSgdConjectureEvent,
} from '../accounting/events/constructors.js';
export { eventToJson, parseEvent } from '../accounting/events/json.js';
export { ampEvent } from '../accounting/events/approximate-minima-perturbation.js';
export type { PrivacyGuarantee } from '../accounting/guarantee.js';
export type { NeighboringRelation } from '../accounting/neighboring.js';
export { neighboringRelationOf } from '../accounting/neighboring.js';

// Accountants and conversions
export { RdpAccountant, rdpDelta, rdpEpsilon } from '../accounting/rdp/accountant.js';
export { DEFAULT_ORDERS } from '../accounting/rdp/orders.js';
export { nonUniformSampledGaussianRdpCurve, nonUniformSampledRdp } from '../accounting/rdp/subsampling/non-uniform-sampling.js';
export type { RdpConversion } from '../accounting/rdp/conversion.js';
export { rdpToEpsilon, rdpToEpsilonImproved, rdpToEpsilonMironov } from '../accounting/rdp/conversion.js';
export type { PldAccountantOptions, PldDiscretization, PldGuarantee } from '../accounting/pld/accountant.js';
export { PldAccountant, pldDelta, pldEpsilon } from '../accounting/pld/accountant.js';
export { gaussianDelta, gaussianLogDelta } from '../accounting/gaussian/gaussian-profile.js';
export { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } from '../accounting/gaussian/gaussian-composition.js';
export { advancedComposition, pureEpsilon } from '../accounting/pure-dp.js';
export { totalVariation } from '../accounting/total-variation.js';
export type { RelativeGaussianCalibration, RelativeGaussianEpsilon, RelativeGaussianParams, TruncatedCdp } from '../accounting/rdp/relative-gaussian.js';
export {
  calibrateRelativeGaussian,
  relativeGaussianCorollary1,
  relativeGaussianEpsilon,
  relativeGaussianEpsilonFloor,
  relativeGaussianMaxOrder,
  relativeGaussianRdp,
  relativeGaussianTcdp,
} from '../accounting/rdp/relative-gaussian.js';

// Calibration
export type { GaussianCalibration, GaussianCalibrationMethod, GaussianCalibrationOptions } from '../accounting/gaussian/calibrate-gaussian.js';
export { analyticGaussianNoiseMultiplier, calibrateGaussian, classicalGaussianNoiseMultiplier } from '../accounting/gaussian/calibrate-gaussian.js';
export { calibrateDpsgd, calibrateNoiseMultiplier, dpsgdEvent, maxSteps } from '../accounting/calibration/calibrate.js';
export { calibrateObjectivePerturbation } from '../accounting/calibration/calibrate-objective-perturbation.js';
export type { KiferObjectivePerturbationParams } from '../accounting/calibration/kifer-objective-perturbation.js';
export { kiferObjectivePerturbationDelta, kiferObjectivePerturbationEpsilon } from '../accounting/calibration/kifer-objective-perturbation.js';
export { selectAmpParameters, selectObjectivePerturbationParameters } from '../accounting/calibration/approximate-minima-perturbation-parameters.js';

// A privacy budget across releases (in memory; dpfit/node's PrivacyLedger keeps one in a file)
export type { BudgetCheck, PrivacyBudgetOptions, SpendOptions } from '../accounting/budget/privacy-budget.js';
export { PrivacyBudget, remainingBudget } from '../accounting/budget/privacy-budget.js';
export type { Budget, BudgetEntry, BudgetLedger, LedgerDecision, SpentBudget } from '../accounting/budget/rule.js';
export { decideBudget, InMemoryLedger, spentBudget } from '../accounting/budget/rule.js';
