/** Numerical kernels of dpfit (docs/design.md, layer `src/math`): explicit re-exports only. */
export { logSumExp, logAddExp, log1mExp, logSubExp, log1pExp } from './log-space.js';
export { logGamma, logFactorial, logBinomial, logBeta } from './gamma.js';
export {
  normalLogPdf,
  normalCdf,
  normalSf,
  normalLogCdf,
  normalLogSf,
  normalQuantile,
  normalQuantileOfLog,
} from './normal.js';
export { brentRoot, expandBracket } from './root-finding.js';
export type { BrentRootOptions, BrentRootResult, ExpandBracketOptions } from './root-finding.js';
export { brentMinimize } from './minimize.js';
export type { BrentMinimizeOptions, BrentMinimizeResult } from './minimize.js';
export { integrate } from './quadrature.js';
export type { IntegrateOptions, IntegrateResult } from './quadrature.js';
export { axpy, choleskyFactor, choleskySolve, dot, matVec, norm2, scale, solveSpd } from './linear-algebra.js';
export { lbfgs } from './lbfgs.js';
export type { LbfgsOptions, Objective, OptimizeProgress, OptimizeResult, OptimizeStopReason } from './lbfgs.js';
export { newton } from './newton.js';
export type { HessianCallback, NewtonOptions } from './newton.js';
