/**
 * RGM gradient descent in the learner registry, replace-one:
 *   - loss 'squared' (alias 'linear'; the library's default): ridge regression after a
 *     Propose-Test-Release check (`000` Sec. 5, `rgm-gd.ts`); may release nothing;
 *   - loss 'logistic': the GLM objective with App. B.2's relative sensitivity (`rgm-glm.ts`), all
 *     of whose constants are public, so no test. `dpfit train --method rgm` takes `--loss`, whose
 *     default is logistic.
 * Any other loss is refused by name.
 */
import { DEFAULT_RGM_STEPS } from '../defaults.js';
import { learnerOptions, type Learner, type TrainOutcome } from '../learner.js';
import { lossByName } from '../glm/losses/by-name.js';
import { InvalidParameterError } from '../../errors.js';
import { planRgmRidge, trainRgmGd, type RgmGdOptions, RGM_GD_OPTIONS } from './rgm-gd.js';
import { planRgmGlmRelease, RGM_GLM_LOSSES, RGM_GLM_OPTIONS, trainRgmGlm } from './rgm-glm.js';

/** RGM's options, and the loss as every learner takes it: 'squared' (ridge, the default) or a loss of `RGM_GLM_LOSSES`. */
export type RgmTrainOptions = Omit<RgmGdOptions, 'loss' | 'bClip'> & { readonly loss?: string; readonly bClip?: number };

/** Whether `loss` (absent: ridge) names the squared loss, i.e. the Sec. 5 ridge path. */
function isRidge(loss: unknown): boolean {
  if (loss === undefined) return true;
  if (typeof loss !== 'string') return false;
  try {
    return lossByName(loss).name === 'squared';
  } catch {
    return false;
  }
}

/** The options only ridge's PTR path reads: refused by name on the GLM path (nothing would use them). */
const RIDGE_ONLY: readonly string[] = Object.keys(RGM_GD_OPTIONS).filter((o) => !Object.keys(RGM_GLM_OPTIONS).includes(o));

/**
 * The default lambda of the GLM path (a PUBLIC rule; privacy does not depend on it, the plan checks
 * the exact floor). `000` eq. (6)'s additive term is about 2 alpha d eta^2 per step for small eta,
 * so T steps converted at the best order cost about 2 eta sqrt(2 T d log(1/delta)) whatever gamma;
 * asking this floor to be epsilon / 2 gives eta* = epsilon / (4 sqrt(2 T d log(1/delta))), and
 * App. B.2's eta = sqrt(6) c R^2 / (lambda n) gives lambda = sqrt(6) c R^2 / (n eta*).
 */
export function defaultRgmGlmRegularization(shape: { n: number; d: number; smoothness: number; epsilon?: number }, steps: number, delta = 1e-5): number {
  const epsilon = shape.epsilon ?? 1;
  const etaStar = epsilon / (4 * Math.sqrt(2 * steps * shape.d * Math.log(1 / delta)));
  return (Math.sqrt(6) * shape.smoothness) / (shape.n * etaStar);
}

/** The ridge path's options: B is required (the schema's bounds fill it in `train()` and `dpfit train`). */
function ridgeOptions(options: Omit<RgmTrainOptions, 'loss'>): RgmGdOptions {
  if (options.bClip === undefined) {
    throw new InvalidParameterError('bClip', undefined, "given for method 'rgm' (> 0), or train on what loadDataset returns: the schema's public bounds then fix it, as dpfit train does");
  }
  return { ...options, bClip: options.bClip };
}

/** The GLM path's options: ridge's own options refused by name (nothing would use them). */
function glmOptions(loss: string, options: Omit<RgmTrainOptions, 'loss'>): Parameters<typeof trainRgmGlm>[1] {
  const given = options as Record<string, unknown>;
  for (const option of RIDGE_ONLY) {
    if (given[option] !== undefined) throw new InvalidParameterError(option, given[option], `absent with loss '${loss}' (only ridge's Propose-Test-Release path reads it; the GLM bound's constants are public)`);
  }
  return { ...(options as Omit<typeof options, 'bClip'>), loss } as Parameters<typeof trainRgmGlm>[1];
}

export const rgm: Learner<'rgm', RgmTrainOptions, TrainOutcome> = {
  method: 'rgm',
  summary: 'ridge regression by Relative Gaussian Mechanism gradient descent after a Propose-Test-Release check (may release nothing); with --loss logistic a GLM bound, no test',
  reference: '000 Sec. 5 (ridge), App. B.2 (GLMs)',
  relation: 'replaceOne',
  datasetSize: 'records',
  options: learnerOptions<RgmTrainOptions>(RGM_GD_OPTIONS),
  required: ['featureClip'],
  rules: [
    {
      option: 'loss',
      absent: 'squared',
      holds: (value) => typeof value === 'string' && (isRidge(value) || RGM_GLM_LOSSES.includes(value)),
      expected: `'squared' (alias 'linear') or ${RGM_GLM_LOSSES.map((l) => `'${l}'`).join(', ')}`,
      why: 'RGM gradient descent is ridge regression, and its GLM bound is implemented for these losses',
    },
    {
      option: 'noiseMultiplier',
      holds: (value) => value === 0,
      expected: '0 (no test, no noise, NOT private) or absent',
      why: 'its noise is calibrated from epsilon',
    },
  ],
  defaults: (shape, given) => {
    const steps = given.steps ?? DEFAULT_RGM_STEPS;
    if (isRidge(given.loss)) return { steps, regularization: given.regularization ?? 0 };
    // The GLM path needs lambda > 0 (App. B.2's strong convexity): a public rule fills it when n and c R^2 are public.
    const featureClip = given.featureClip;
    const curvature = featureClip === undefined ? undefined : lossByName(given.loss as string).curvatureBound * featureClip * featureClip;
    const smoothness = curvature ?? shape.smoothness;
    const regularization =
      given.regularization ?? (shape.n === undefined || smoothness === undefined ? undefined : defaultRgmGlmRegularization({ n: shape.n, d: shape.d, smoothness, ...(shape.epsilon === undefined ? {} : { epsilon: shape.epsilon }) }, steps, given.delta));
    return { steps, ...(regularization === undefined ? {} : { regularization }) };
  },
  // R_c = the row-norm bound; ridge: B = R_c times the label bound.
  fromBounds: (bounds, given) => {
    const featureClip = given.featureClip ?? bounds.rowNormBound;
    return isRidge(given.loss) ? { featureClip, bClip: given.bClip ?? featureClip * bounds.labelBound } : { featureClip };
  },
  train: (data, { loss, ...options }) => {
    if (isRidge(loss)) {
      const { model, privacy, diagnostics } = trainRgmGd(data, ridgeOptions(options));
      return { model, privacy, diagnostics: { ...diagnostics } };
    }
    const { model, privacy, diagnostics } = trainRgmGlm(data, glmOptions(loss as string, options));
    return { model, privacy, diagnostics: { ...diagnostics } };
  },
  // Ridge: the whole mechanism (PTR's Laplace and the T steps) and delta_ptr, whether or not the test passes; GLMs: no test.
  plan: (shape, { loss, ...options }) =>
    isRidge(loss) ? planRgmRidge(shape, ridgeOptions(options)) : { event: planRgmGlmRelease(shape, glmOptions(loss as string, options)), extraDelta: 0 },
  work: (given, n) => {
    const steps = given.steps ?? DEFAULT_RGM_STEPS;
    return n === undefined ? {} : { gradients: { count: steps * n, option: 'steps', value: steps, rule: `steps x rows = ${steps} x ${n}` } };
  },
  cli: { flags: ['noiseMultiplier', 'steps', 'regularization', 'featureClip', 'bClip', 'rho', 'bNormBound', 'ptrFraction', 'learningRate'], flagOptions: { ptrFraction: 'ptrEpsilonFraction' } },
};
