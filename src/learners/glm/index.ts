/** GLM losses, their privacy constants, objectives and clipped per-example gradients (explicit exports). */
export type { GlmConstants, GlmData, GlmLoss, LabelKind, MarginDomain } from './types.js';
export { logisticLoss } from './losses/logistic.js';
export { squaredLoss } from './losses/squared.js';
export { huberLoss } from './losses/huber.js';
export { smoothedHingeLoss } from './losses/smoothed-hinge.js';
export { checkLabels, glmConstants, mulUp, toSignedLabels } from './constants.js';
export type { GlmConstantsOptions } from './constants.js';
export { checkGlmShape, maxRowNorm, rowNorms, validateGlmData } from './data.js';
export {
  CLIP_SAFETY,
  clippedDerivative,
  clippedGradientLoss,
  clippedSecondDerivative,
  clippedValue,
  clipThreshold,
} from './clipped-gradient.js';
export { glmHessian, glmHessianCallback, glmObjective, glmValueAndGradient } from './objective.js';
export type { GlmObjectiveOptions } from './objective.js';
export { clippedExampleGradient, clippedGradientCoefficients, sumClippedGradients } from './per-example.js';
export type { ClippedGradientSum, ClippedGradientSumOptions } from './per-example.js';
