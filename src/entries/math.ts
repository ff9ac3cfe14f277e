/**
 * `dpfit/math`: the numerical routines the accountants and learners are built on: log-space
 * arithmetic, the normal distribution in log space, log-gamma, Brent's root finder and minimiser,
 * adaptive quadrature, L-BFGS and Newton's method. Browser-safe (docs/architecture.md, "Package
 * entries"). Explicit exports only.
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
} from '../math/index.js';
export { lbfgs } from '../math/lbfgs.js';
export { newton } from '../math/newton.js';
