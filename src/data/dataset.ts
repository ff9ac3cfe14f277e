/**
 * The `Dataset` every learner consumes (docs/design.md, "Data"): features as one row-major n x d
 * `Float64Array`, labels as a `Float64Array` of length n, and the feature names. Helpers give row
 * views without copying, split rows with an explicit `Rng`, and check the row-norm bound that the
 * learners' privacy proofs assume (e.g. ||x|| <= 1 in `003` Thm. 3.1/3.2).
 *
 * Browser-safe: imports nothing from Node.
 */
import { DataFormatError, InvalidParameterError, dataValueError } from '../errors.js';
import { randomPermutation } from '../random/discrete.js';
import type { Rng } from '../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireNonNegative, requireProbability } from '../validate.js';

/** Row-major n x d features, n labels, d feature names. */
export interface Dataset {
  /** Row-major features: row i is `x.subarray(i * d, (i + 1) * d)`. */
  readonly x: Float64Array;
  /** One label per row (classification: 0/1 or -1/+1; regression: any finite number). */
  readonly y: Float64Array;
  /** Number of rows. */
  readonly n: number;
  /** Number of features. */
  readonly d: number;
  /** d names, in column order. */
  readonly featureNames: readonly string[];
}

const DATASET_PARTS = optionNames<NonNullable<Parameters<typeof createDataset>[0]>>({ x: true, y: true, d: true, featureNames: true });

/**
 * Builds a `Dataset` after checking shapes and that every value is finite (a NaN or Infinity in x
 * or y is an `InvalidParameterError` naming the row and the feature).
 *
 * @example
 * const data = createDataset({ x: Float64Array.of(1, 0, 0, 1), y: Float64Array.of(1, 0), d: 2 });
 * // data.n === 2, data.featureNames = ['x0', 'x1']
 */
export function createDataset(parts: {
  x: Float64Array;
  y: Float64Array;
  d: number;
  featureNames?: readonly string[];
}): Dataset {
  rejectUnknownOptions(parts, DATASET_PARTS, 'createDataset');
  const { x, y } = parts;
  if (!(x instanceof Float64Array)) throw new InvalidParameterError('x', x, 'a Float64Array');
  if (!(y instanceof Float64Array)) throw new InvalidParameterError('y', y, 'a Float64Array');
  const d = requireInteger('d', parts.d, 0);
  const n = y.length;
  if (x.length !== n * d) throw new InvalidParameterError('x.length', x.length, `n * d = ${n} * ${d} = ${n * d}`);
  const featureNames = parts.featureNames ?? Array.from({ length: d }, (_, j) => `x${j}`);
  if (featureNames.length !== d) throw new InvalidParameterError('featureNames.length', featureNames.length, `d = ${d}`);
  for (let i = 0; i < n; i++) {
    if (!Number.isFinite(y[i])) throw dataValueError(`y[${i}]`, 'a finite number');
    for (let j = 0, k = i * d; j < d; j++, k++) {
      if (!Number.isFinite(x[k])) throw dataValueError(`x[${i}, ${featureNames[j]}]`, 'a finite number');
    }
  }
  return { x, y, n, d, featureNames: [...featureNames] };
}

/** Row i as a view into `dataset.x` (no copy: writes go through to the dataset). */
export function rowView(dataset: Dataset, i: number): Float64Array {
  if (dataset.n === 0) throw new InvalidParameterError('row', i, 'a row of a non-empty dataset');
  requireInteger('row', i, 0, dataset.n - 1);
  return dataset.x.subarray(i * dataset.d, (i + 1) * dataset.d);
}

/** L2 norm of row i. */
export function rowNorm(dataset: Dataset, i: number): number {
  const { x, d } = dataset;
  let s = 0;
  for (let k = i * d, end = k + d; k < end; k++) s += x[k] * x[k];
  return Math.sqrt(s);
}

/** The largest row L2 norm (0 for an empty dataset). Reads every row: a statistic of the data. */
export function maxRowNorm(dataset: Dataset): number {
  let max = 0;
  for (let i = 0; i < dataset.n; i++) max = Math.max(max, rowNorm(dataset, i));
  return max;
}

/**
 * Checks the bound the learners rely on: every row has ||x_i||_2 <= rowNormBound (computed in
 * floating point exactly as `rowNorm` does). Throws a `DataFormatError` naming the first row that
 * exceeds it; returns the dataset so the check composes inline.
 *
 * @example
 * checkRowNormBound(normalizeRows(data), 1); // 003 Sec. 5: unit rows
 */
export function checkRowNormBound(dataset: Dataset, rowNormBound: number, source = 'dataset'): Dataset {
  requireNonNegative('rowNormBound', rowNormBound);
  for (let i = 0; i < dataset.n; i++) {
    const norm = rowNorm(dataset, i);
    if (!(norm <= rowNormBound)) {
      throw new DataFormatError(source, `row ${i} has an L2 norm above rowNormBound ${rowNormBound} (normalise or clip the rows first; the norm is not shown: messages never quote the data)`);
    }
  }
  return dataset;
}

/** The rows at `indices` (in that order), copied into a new dataset. */
export function selectRows(dataset: Dataset, indices: ArrayLike<number>): Dataset {
  const { d } = dataset;
  const m = indices.length;
  const x = new Float64Array(m * d);
  const y = new Float64Array(m);
  for (let r = 0; r < m; r++) {
    const i = indices[r];
    if (!Number.isInteger(i) || i < 0 || i >= dataset.n) throw new InvalidParameterError(`indices[${r}]`, i, `a row index in [0, ${dataset.n - 1}]`);
    x.set(dataset.x.subarray(i * d, (i + 1) * d), r * d);
    y[r] = dataset.y[i];
  }
  return { x, y, n: m, d, featureNames: dataset.featureNames };
}

/** Rows of `a` followed by rows of `b` (same features). */
export function concatRows(a: Dataset, b: Dataset): Dataset {
  if (a.d !== b.d) throw new InvalidParameterError('b.d', b.d, `a.d = ${a.d}`);
  const x = new Float64Array((a.n + b.n) * a.d);
  x.set(a.x, 0);
  x.set(b.x, a.n * a.d);
  const y = new Float64Array(a.n + b.n);
  y.set(a.y, 0);
  y.set(b.y, a.n);
  return { x, y, n: a.n + b.n, d: a.d, featureNames: a.featureNames };
}

export interface TrainTestSplitOptions {
  /** Fraction of rows in the test part, in [0, 1]; the test part has round(testFraction * n) rows. */
  testFraction: number;
  /** The generator that shuffles the rows (required: the caller decides seeded or secure). */
  rng: Rng;
}

const TRAIN_TEST_SPLIT_OPTIONS = optionNames<TrainTestSplitOptions>({ testFraction: true, rng: true });

/**
 * A uniformly random split into train and test rows (a random permutation drawn from `rng`, then
 * the first round(testFraction * n) rows go to test). Row order inside each part follows the
 * permutation.
 *
 * Privacy note: which rows land in which part is data-independent, so the split itself costs no
 * privacy; what is later released about each part is accounted by its own mechanism.
 *
 * @example
 * const { train, test } = trainTestSplit(data, { testFraction: 0.2, rng: seededRng(1) });
 */
export function trainTestSplit(dataset: Dataset, options: TrainTestSplitOptions): { train: Dataset; test: Dataset } {
  rejectUnknownOptions(options, TRAIN_TEST_SPLIT_OPTIONS, 'trainTestSplit');
  const testFraction = requireProbability('testFraction', options.testFraction);
  if (options.rng === undefined || typeof options.rng.nextUint32 !== 'function') throw new InvalidParameterError('rng', options.rng, 'an Rng');
  const order = randomPermutation(options.rng, dataset.n);
  const nTest = Math.round(testFraction * dataset.n);
  return { test: selectRows(dataset, order.subarray(0, nTest)), train: selectRows(dataset, order.subarray(nTest)) };
}
