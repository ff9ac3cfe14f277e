/**
 * `dpfit/audit`: the empirical privacy audit, what `dpfit audit` runs (docs/audit.md): many runs
 * on two neighbouring datasets of the audit's own in two threat models (`auditLearner`, on worker
 * threads `auditLearnerParallel`), one training on the user's data with canaries (`oneRunAudit`,
 * its release planned before the data are read by `planOneRunAudit` for a budget), the trade-off
 * figure (`auditTradeOffCurves`, its numbers; `auditTradeOffFigure`, SVG and PNG), and the
 * statistics they use, each a lower bound that holds with a stated confidence. Node-only (worker
 * threads; vega and resvg loaded when a figure is drawn). Explicit exports only.
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

// The audits
export type { AuditMethod, AuditOptions, AuditResult, AuditStatistic, ThreatModel } from '../audit/audit-options.js';
export { auditLearner, auditLearnerParallel } from '../audit/canary-audit.js';
export type { OneRunOptions, OneRunResult } from '../audit/one-run.js';
export { oneRunAudit, planOneRunAudit } from '../audit/one-run.js';

// The trade-off figure
export type { AuditTradeOffCurves, TradeOffCurve, TradeOffCurveOptions, TradeOffTestPoint } from '../audit/trade-off-curves.js';
export { auditTradeOffCurves, epsilonDeltaTradeOff, gaussianMuOfEpsilon } from '../audit/trade-off-curves.js';
export type { AuditTradeOffFigure } from '../cli/audit-figure.js';
export { auditTradeOffFigure } from '../cli/audit-figure.js';

// The statistics: lower bounds on epsilon (or mu) from what a test observed
export { clopperPearsonLower, clopperPearsonUpper } from '../audit/bounds/clopper-pearson.js';
export { epsilonLowerBound } from '../audit/bounds/error-rate-bound.js';
export type { GaussianShiftBound } from '../audit/bounds/gaussian-dp-bound.js';
export { gaussianDpEpsilonLower, gaussianShiftMuLower, gaussianTradeOff } from '../audit/bounds/gaussian-dp-bound.js';
export type { SplitThresholdBound } from '../audit/bounds/split-threshold.js';
export { splitThresholdBound } from '../audit/bounds/split-threshold.js';
export type { PerStepBound } from '../audit/bounds/per-step-bound.js';
export { perStepBound } from '../audit/bounds/per-step-bound.js';
export type { TradeOffPoint } from '../audit/bounds/composed-trade-off.js';
export { composedEpsilonLower, tradeOffMinorant } from '../audit/bounds/composed-trade-off.js';
export { oneRunEpsilonLower, oneRunPValue } from '../audit/bounds/one-run-bound.js';
