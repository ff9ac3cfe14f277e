/**
 * `train(dataset, options)`: one entry point for every learner (issue 6's model API). The
 * `method` field picks the learner; the other fields are that learner's options, unchanged. The
 * result is always `{model, privacy, diagnostics}`; `model` is undefined only when the mechanism
 * released nothing (RGM's Propose-Test-Release rejected).
 *
 * @example
 * const { model, privacy } = train(dataset, { method: 'dpsgd', epsilon: 1, delta: 1e-5, clipNorm: 1, batchSize: 256, epochs: 10, learningRate: 1 });
 * evaluate(model, testSet).accuracy; privacy.epsilon; // <= 1
 */
import { InvalidParameterError } from '../errors.js';
import { trainAmp, type AmpOptions } from './amp.js';
import { trainDpGd, type DpGdOptions, type TrainResult } from './dp-gd.js';
import { trainDpSgd, type DpSgdOptions } from './dp-sgd.js';
import type { GlmData } from './glm/types.js';
import type { LinearModel } from './model.js';
import { trainObjectivePerturbation, type ObjectivePerturbationOptions } from './objective-perturbation.js';
import { trainOutputPerturbation, type OutputPerturbationOptions } from './output-perturbation.js';
import { trainOutputPerturbationSgd, type OutputPerturbationSgdOptions } from './output-perturbation-sgd.js';
import type { PrivacyReport } from './privacy-report.js';
import { trainRgmGd, type RgmGdOptions } from './rgm-gd.js';
import { trainShuffledSgd, type ShuffledSgdOptions } from './shuffled-sgd.js';

export type TrainOptions =
  | ({ readonly method: 'dpgd' } & DpGdOptions)
  | ({ readonly method: 'dpsgd' } & DpSgdOptions)
  | ({ readonly method: 'shuffled' } & ShuffledSgdOptions)
  | ({ readonly method: 'output' } & OutputPerturbationOptions)
  | ({ readonly method: 'outputSgd' } & OutputPerturbationSgdOptions)
  | ({ readonly method: 'objpert' } & ObjectivePerturbationOptions)
  | ({ readonly method: 'amp' } & AmpOptions)
  | ({ readonly method: 'rgm' } & RgmGdOptions);

export type TrainMethod = TrainOptions['method'];

export const TRAIN_METHODS: readonly TrainMethod[] = ['dpgd', 'dpsgd', 'shuffled', 'output', 'outputSgd', 'objpert', 'amp', 'rgm'];

export interface TrainOutcome {
  readonly model: LinearModel | undefined;
  readonly privacy: PrivacyReport;
  readonly diagnostics: TrainResult['diagnostics'] | Record<string, unknown>;
}

export function train(dataset: GlmData, options: TrainOptions): TrainOutcome {
  switch (options.method) {
    case 'dpgd':
      return trainDpGd(dataset, options);
    case 'dpsgd':
      return trainDpSgd(dataset, options);
    case 'shuffled':
      return trainShuffledSgd(dataset, options);
    case 'output':
      return trainOutputPerturbation(dataset, options);
    case 'outputSgd':
      return trainOutputPerturbationSgd(dataset, options);
    case 'objpert':
      return trainObjectivePerturbation(dataset, options);
    case 'amp':
      return trainAmp(dataset, options);
    case 'rgm': {
      const { model, privacy, diagnostics } = trainRgmGd(dataset, options);
      return { model, privacy, diagnostics: { ...diagnostics } };
    }
    default:
      throw new InvalidParameterError('method', (options as { method?: unknown }).method, TRAIN_METHODS.map((m) => `'${m}'`).join(', '));
  }
}
