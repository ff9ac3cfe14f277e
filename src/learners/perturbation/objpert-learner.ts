/**
 * Objective perturbation without output noise (`003` Sec. 2.2) in the learner registry: NOT
 * private (its released minimiser identifies the dataset, `objective-perturbation-opt-in.ts`), so
 * refused unless `acceptNoGuarantee: true`, for research; reported with `003`'s epsilon and
 * guarantee none. A sum objective: add/remove-one, and no released value depends on n.
 */
import type { TrainResult } from '../training.js';
import { learnerOptions, type Learner } from '../learner.js';
import { planObjectivePerturbation, trainObjectivePerturbation, type ObjectivePerturbationOptions, OBJECTIVE_PERTURBATION_OPTIONS } from './objective-perturbation.js';
import { GRID_INVERSION, OBJECTIVE_PERTURBATION_NOT_PRIVATE, requireObjectivePerturbationOptIn } from './objective-perturbation-opt-in.js';

export const objpert: Learner<'objpert', ObjectivePerturbationOptions, TrainResult> = {
  method: 'objpert',
  summary: 'objective perturbation without output noise: NOT private (its minimiser identifies the data set); refused unless --accept-no-guarantee, for research',
  reference: '003 Sec. 2.2, Thm. 3.1/3.2',
  relation: 'addOrRemoveOne',
  datasetSize: 'unused',
  eventKinds: ['objectivePerturbation'],
  options: learnerOptions(OBJECTIVE_PERTURBATION_OPTIONS),
  optIn: {
    option: 'acceptNoGuarantee',
    check: requireObjectivePerturbationOptIn,
    refusal: {
      expected: 'amp (objective perturbation with output noise: proven), or objpert with --accept-no-guarantee (research only: guarantee none)',
      detail: `objective perturbation alone is not private: ${GRID_INVERSION}`,
    },
    warning: OBJECTIVE_PERTURBATION_NOT_PRIVATE,
  },
  // lambda and sigma are chosen inside (003 Sec. 5) from public quantities; no rule here uses n.
  defaults: () => ({}),
  fromBounds: (bounds, given) => ({
    rowNormBound: given.rowNormBound ?? bounds.rowNormBound,
    ...(given.labelBound !== undefined || given.huberThreshold !== undefined ? {} : { labelBound: bounds.labelBound }),
  }),
  train: trainObjectivePerturbation,
  // No guarantee: a budget charges it as non-private (only an infinite budget holds it); n is not read.
  plan: (shape, options) => ({ event: planObjectivePerturbation(shape.d, options), extraDelta: 0 }),
  // n is private: its --max-iterations has a limit of its own (cli/limits.ts).
  work: () => ({}),
  cli: { flags: ['noiseStd', 'regularization', 'accountant', 'parameterNormBound', 'gradTolerance', 'maxIterations', 'acceptNoGuarantee'] },
};
