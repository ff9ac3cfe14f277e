/**
 * RGM gradient descent (`000` Sec. 5) in the learner registry: ridge regression by Relative
 * Gaussian Mechanism gradient descent after a Propose-Test-Release check, replace-one; may
 * release nothing (`rgm-gd.ts`). Ridge is the linear loss, its default: any other is refused by
 * name (`dpfit train --method rgm` needs `--loss linear`, whose default is logistic).
 */
import { DEFAULT_RGM_STEPS } from '../defaults.js';
import { learnerOptions, type Learner, type TrainOutcome } from '../learner.js';
import { lossByName } from '../glm/losses/by-name.js';
import { trainRgmGd, type RgmGdOptions, RGM_GD_OPTIONS } from './rgm-gd.js';

/** RGM's options, and the loss as every learner takes it: only the linear (squared) loss, ridge's (the default). */
export type RgmTrainOptions = Omit<RgmGdOptions, 'loss'> & { readonly loss?: string };

export const rgm: Learner<'rgm', RgmTrainOptions, TrainOutcome> = {
  method: 'rgm',
  summary: 'ridge by Relative Gaussian Mechanism gradient descent after a Propose-Test-Release check, 000 Sec. 5; may release nothing',
  relation: 'replaceOne',
  datasetSize: 'records',
  options: learnerOptions<RgmTrainOptions>(RGM_GD_OPTIONS),
  required: ['featureClip', 'bClip'],
  rules: [
    {
      option: 'loss',
      absent: 'squared',
      holds: (value) => typeof value === 'string' && lossByName(value).name === 'squared',
      expected: "'squared' (alias 'linear')",
      why: '000 Sec. 5 is ridge regression',
    },
    {
      option: 'noiseMultiplier',
      holds: (value) => value === 0,
      expected: '0 (no test, no noise, NOT private) or absent',
      why: 'its noise is calibrated from epsilon',
    },
  ],
  defaults: (_shape, given) => ({ steps: given.steps ?? DEFAULT_RGM_STEPS, regularization: given.regularization ?? 0 }),
  // R_c = the row-norm bound, B = R_c times the label bound.
  fromBounds: (bounds, given) => {
    const featureClip = given.featureClip ?? bounds.rowNormBound;
    return { featureClip, bClip: given.bClip ?? featureClip * bounds.labelBound };
  },
  train: (data, { loss: _ridge, ...options }) => {
    const { model, privacy, diagnostics } = trainRgmGd(data, options);
    return { model, privacy, diagnostics: { ...diagnostics } };
  },
  work: (given, n) => {
    const steps = given.steps ?? DEFAULT_RGM_STEPS;
    return n === undefined ? {} : { gradients: { count: steps * n, option: 'steps', value: steps, rule: `steps x rows = ${steps} x ${n}` } };
  },
  cli: { flags: ['noiseMultiplier', 'steps', 'regularization', 'featureClip', 'bClip', 'rho', 'bNormBound', 'ptrFraction', 'learningRate'], flagOptions: { ptrFraction: 'ptrEpsilonFraction' } },
};
