/**
 * Loss lookup by name for learners and the CLI, and the label conversion each loss needs.
 */
import { InvalidParameterError, dataValueError } from '../../../errors.js';
import { rejectUnknownOptions } from '../../../validate.js';
import { toSignedLabels } from '../constants.js';
import { huberLoss } from './huber.js';
import { logisticLoss } from './logistic.js';
import { smoothedHingeLoss } from './smoothed-hinge.js';
import { squaredLoss } from './squared.js';
import type { GlmData, GlmLoss } from '../types.js';

/** The parameters of the built-in losses: huber's delta, smoothedHinge's smoothing (each takes only its own). */
export type LossParameters = { readonly delta?: number; readonly smoothing?: number };

export type LossName = 'logistic' | 'squared' | 'huber' | 'smoothedHinge';

export function lossByName(name: string, parameters: Record<string, number> = {}): GlmLoss {
  // The parameters a loss takes are the ones it records (`GlmLoss.parameters`): any other is refused.
  const names = lossParameterNames(name);
  if (names !== undefined) rejectUnknownOptions(parameters, names, `the ${name} loss's lossParameters`);
  switch (name) {
    case 'logistic':
      return logisticLoss;
    case 'squared':
    case 'linear':
      return squaredLoss;
    case 'huber':
      return huberLoss(parameters.delta ?? 1);
    case 'smoothedHinge':
      return smoothedHingeLoss(parameters.smoothing ?? 1);
    default:
      throw new InvalidParameterError('loss', name, "'logistic', 'squared' (alias 'linear'), 'huber' or 'smoothedHinge'");
  }
}

/** The names of the parameters the built-in loss `name` takes, or undefined for a name dpfit does not know. */
export function lossParameterNames(name: string): readonly string[] | undefined {
  return Object.prototype.hasOwnProperty.call(LOSS_PARAMETERS, name) ? LOSS_PARAMETERS[name] : undefined;
}

/** The parameters each built-in loss takes: the names its loss object records. */
const LOSS_PARAMETERS: Readonly<Record<string, readonly string[]>> = {
  logistic: Object.keys(logisticLoss.parameters),
  squared: Object.keys(squaredLoss.parameters),
  linear: Object.keys(squaredLoss.parameters),
  huber: Object.keys(huberLoss(1).parameters),
  smoothedHinge: Object.keys(smoothedHingeLoss(1).parameters),
};

/**
 * The data in the loss's label convention: classification labels 0/1 become -1/+1; a label value
 * that is not a class code is an error naming the values. Data holding ONE class only train as
 * they are (a one-class data set is a neighbour of a two-class one: refusing it would be a status
 * that one record decides; the schema, not the data, says which classes there are).
 */
export function dataForLoss(loss: GlmLoss, data: GlmData): GlmData {
  if (data.n === 0) throw new InvalidParameterError('data.n', 0, 'at least one row (the data set is empty)');
  if (loss.labels !== 'signed') return data;
  const values = new Set<number>();
  for (let i = 0; i < data.n; i++) values.add(data.y[i]);
  const allowed = [...values].every((v) => v === 0 || v === 1 || v === -1);
  if (!allowed) throw dataValueError('labels', 'two classes coded 0/1 or -1/+1');
  return { ...data, y: toSignedLabels(data.y) };
}
