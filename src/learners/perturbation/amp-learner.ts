/**
 * Approximate Minima Perturbation (`003` Alg. 1, Thm. 4.1) in the learner registry: objective
 * perturbation of the clipped loss with output noise that hides b and pays for the optimiser's
 * tolerance. A sum objective: add/remove-one, and no released value depends on n (`approximate-minima-perturbation.ts`).
 */
import { trainAmp, type AmpOptions, AMP_OPTIONS } from './approximate-minima-perturbation.js';
import type { TrainResult } from '../training.js';
import { clipNormFromBounds, learnerOptions, type Learner } from '../learner.js';

export const amp: Learner<'amp', AmpOptions, TrainResult> = {
  method: 'amp',
  summary: 'Approximate Minima Perturbation: objective perturbation with output noise',
  reference: '003 Alg. 1, Thm. 4.1',
  relation: 'addOrRemoveOne',
  datasetSize: 'unused',
  eventKinds: ['objectivePerturbation'],
  options: learnerOptions(AMP_OPTIONS),
  // lambda and sigma are chosen inside (003 Sec. 5) from public quantities; no rule here uses n.
  defaults: () => ({}),
  // Without a schema: 003 Sec. 5's C = sqrt(2) and R = 1 (amp.ts).
  fromBounds: (bounds, given) => ({ rowNormBound: given.rowNormBound ?? bounds.rowNormBound, clipNorm: clipNormFromBounds(given, bounds) }),
  train: trainAmp,
  // n is private: its --max-iterations has a limit of its own (cli/limits.ts).
  work: () => ({}),
  cli: { flags: ['noiseStd', 'regularization', 'accountant', 'clipNorm', 'gradTolerance', 'outputNoiseStd', 'maxIterations'] },
};
