/**
 * DP-SGD's schedule as Opacus users state it: a dataset of N records, an expected batch size B and
 * E epochs. Poisson sampling at q = B / N; T = ceil(E N / B) steps, as Opacus counts them (one
 * epoch is N / B expected batches). The 1e-9 absorbs the rounding of E N / B when it is an integer
 * (90 * 60000 / 2400 is 2250, not 2250.0000000001).
 *
 * One function for the CLI (`dpfit epsilon dpsgd --dataset-size N --batch-size B --epochs E`) and
 * the privacy calculator page, so both account the same event.
 */
import { InvalidParameterError } from '../errors.js';
import { requireInteger, requirePositive } from '../validate.js';

export interface DpsgdSchedule {
  /** q = batchSize / datasetSize. */
  readonly samplingProbability: number;
  /** T = ceil(epochs datasetSize / batchSize). */
  readonly steps: number;
}

/** q and T of DP-SGD from (datasetSize, batchSize, epochs). */
export function dpsgdScheduleFromEpochs(datasetSize: number, batchSize: number, epochs: number): DpsgdSchedule {
  const n = requireInteger('datasetSize', datasetSize, 1);
  const b = requireInteger('batchSize', batchSize, 1);
  if (b > n) throw new InvalidParameterError('batchSize', b, `an integer in [1, datasetSize = ${n}]`);
  const e = requirePositive('epochs', epochs);
  const steps = Math.ceil((e * n) / b - 1e-9);
  if (!Number.isSafeInteger(steps)) throw new InvalidParameterError('epochs', e, `such that epochs datasetSize / batchSize is a safe integer, got ${steps} steps`);
  return { samplingProbability: b / n, steps };
}
