/** Numerical kernels of dpfit (DESIGN.md, layer `src/math`): explicit re-exports only. */
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
