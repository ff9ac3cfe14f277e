/**
 * Synthetic data with a caller-given `Rng` (seed it for reproducible experiments):
 *
 * - `gaussianFeatures`: rows x_i ~ N(mean, Sigma) i.i.d., the setting of `000` Prop. 3 (there with
 *   mean 0): x = mean + L z with Sigma = L L^T (Cholesky) and z standard normal;
 * - `syntheticDataset`: such features with labels from a true parameter theta, either linear
 *   (y = x.theta + noise, the ridge-regression setting of `000` eqs. 9-11) or logistic
 *   (y ~ Bernoulli(sigmoid(x.theta)));
 * - `twoPartySplit`: the two-node splits of `000` Sec. 6 — "random", "label" (50 random points per
 *   node, then every positive to node 1 and every negative to node 2) and "bias" (a bias B added to
 *   node 2's objective; see the function for how).
 *
 * Browser-safe.
 */
import { InvalidParameterError } from '../errors.js';
import { fillGaussian } from '../random/continuous.js';
import { randomPermutation } from '../random/discrete.js';
import type { Rng } from '../random/rng.js';
import { optionNames, pickOptions, rejectUnknownOptions, requireInteger, requireNonNegative, requireProbability } from '../validate.js';
import { selectRows, type Dataset } from './dataset.js';
import { choleskyFactor } from './transforms.js';

function requireRng(rng: unknown): Rng {
  if (rng === null || typeof rng !== 'object' || typeof (rng as Rng).nextUint32 !== 'function') throw new InvalidParameterError('rng', rng, 'an Rng');
  return rng as Rng;
}

function vectorOf(param: string, value: ArrayLike<number>, d: number): Float64Array {
  if (value === null || typeof value !== 'object' || value.length !== d) throw new InvalidParameterError(param, value, `a vector of length ${d}`);
  const out = Float64Array.from(value);
  for (let k = 0; k < d; k++) if (!Number.isFinite(out[k])) throw new InvalidParameterError(`${param}[${k}]`, out[k], 'a finite number');
  return out;
}

export interface GaussianFeaturesOptions {
  /** Rows. */
  n: number;
  /** Features. */
  d: number;
  /** Sigma as a row-major d x d symmetric positive-definite matrix, or a number s for s * I. Default I. */
  covariance?: Float64Array | number;
  /** Mean vector (default 0). */
  mean?: ArrayLike<number>;
  rng: Rng;
}

const GAUSSIAN_FEATURES_OPTIONS = optionNames<GaussianFeaturesOptions>({ n: true, d: true, covariance: true, mean: true, rng: true });

/**
 * n rows x_i ~ N(mean, Sigma), row-major n x d.
 *
 * @example
 * const x = gaussianFeatures({ n: 1000, d: 2, covariance: Float64Array.of(1, 0.5, 0.5, 2), rng: seededRng(7) });
 */
export function gaussianFeatures(options: GaussianFeaturesOptions): Float64Array {
  rejectUnknownOptions(options, GAUSSIAN_FEATURES_OPTIONS, 'gaussianFeatures');
  const n = requireInteger('n', options.n, 0);
  const d = requireInteger('d', options.d, 1);
  const rng = requireRng(options.rng);
  const mean = options.mean === undefined ? new Float64Array(d) : vectorOf('mean', options.mean, d);
  const covariance = options.covariance ?? 1;
  const x = new Float64Array(n * d);
  if (typeof covariance === 'number') {
    if (!(covariance > 0 && Number.isFinite(covariance))) throw new InvalidParameterError('covariance', covariance, '> 0 (a variance) or a d x d matrix');
    if (n * d > 0) fillGaussian(rng, x, Math.sqrt(covariance));
    for (let i = 0; i < n; i++) for (let k = 0; k < d; k++) x[i * d + k] += mean[k];
    return x;
  }
  const L = choleskyFactor(covariance, d);
  const z = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    fillGaussian(rng, z, 1);
    for (let r = 0; r < d; r++) {
      let s = mean[r];
      for (let c = 0; c <= r; c++) s += L[r * d + c] * z[c];
      x[i * d + r] = s;
    }
  }
  return x;
}

export interface SyntheticDatasetOptions extends GaussianFeaturesOptions {
  /** "linear": y = x.theta + N(0, noiseStd^2); "logistic": y = 1 with probability sigmoid(x.theta). */
  labels: 'linear' | 'logistic';
  /** The true parameter (length d). Default: (1, ..., 1) / sqrt(d). */
  theta?: ArrayLike<number>;
  /** Label noise of the linear model (default 0). */
  noiseStd?: number;
  /** Logistic labels in {0, 1} (default) or {-1, +1}. */
  encoding?: 'zeroOne' | 'plusMinusOne';
}

/** Its own options and gaussianFeatures', which it forwards. */
const SYNTHETIC_DATASET_OPTIONS = optionNames<SyntheticDatasetOptions>({ ...GAUSSIAN_FEATURES_OPTIONS, labels: true, theta: true, noiseStd: true, encoding: true });

/**
 * Gaussian features (`000` Prop. 3) with linear or logistic labels. Features are named x1..xd.
 * The rows are not bounded: normalise or clip them (`transforms.ts`) before a learner that needs
 * a row-norm bound.
 *
 * @example
 * const data = syntheticDataset({ n: 10_000, d: 5, labels: 'logistic', rng: seededRng(1) });
 */
export function syntheticDataset(options: SyntheticDatasetOptions): Dataset {
  rejectUnknownOptions(options, SYNTHETIC_DATASET_OPTIONS, 'syntheticDataset');
  const d = requireInteger('d', options.d, 1);
  if (options.labels !== 'linear' && options.labels !== 'logistic') throw new InvalidParameterError('labels', options.labels, '"linear" or "logistic"');
  const noiseStd = requireNonNegative('noiseStd', options.noiseStd ?? 0);
  const encoding = options.encoding ?? 'zeroOne';
  if (encoding !== 'zeroOne' && encoding !== 'plusMinusOne') throw new InvalidParameterError('encoding', encoding, '"zeroOne" or "plusMinusOne"');
  const theta = options.theta === undefined ? new Float64Array(d).fill(1 / Math.sqrt(d)) : vectorOf('theta', options.theta, d);
  const x = gaussianFeatures(pickOptions(options, GAUSSIAN_FEATURES_OPTIONS));
  const n = options.n;
  const rng = options.rng;
  const y = new Float64Array(n);
  const noise = new Float64Array(n);
  if (options.labels === 'linear' && noiseStd > 0 && n > 0) fillGaussian(rng, noise, noiseStd);
  for (let i = 0; i < n; i++) {
    let z = 0;
    for (let k = 0; k < d; k++) z += x[i * d + k] * theta[k];
    if (options.labels === 'linear') y[i] = z + noise[i];
    else {
      // P(y = 1) = 1 / (1 + e^-z), in the form that does not overflow for large |z|.
      const p = z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z));
      y[i] = rng.nextDouble() < p ? 1 : encoding === 'zeroOne' ? 0 : -1;
    }
  }
  return { x, y, n, d, featureNames: Array.from({ length: d }, (_, k) => `x${k + 1}`) };
}

export type TwoPartySplitKind = 'random' | 'label' | 'bias';

export interface TwoPartySplitOptions {
  /** "random", "label" or "bias" (`000` Sec. 6). */
  kind: TwoPartySplitKind;
  rng: Rng;
  /** "random"/"bias": fraction of rows for the first party (default 0.5). */
  fraction?: number;
  /** "label": random rows given to each party before the labels decide (default 50, as in `000` Sec. 6). */
  seedPoints?: number;
  /** "bias": the bias vector B (length d) added to the second party's problem. */
  bias?: ArrayLike<number>;
}

const TWO_PARTY_SPLIT_OPTIONS = optionNames<TwoPartySplitOptions>({ kind: true, rng: true, fraction: true, seedPoints: true, bias: true });

/**
 * Splits a dataset between two parties as in `000` Sec. 6:
 *
 * - "random": a uniformly random split (`fraction` of the rows to party 1);
 * - "label": `seedPoints` random rows to each party, then all remaining rows with a positive label
 *   (y > 0) to party 1 and all others to party 2 ("label heterogeneity");
 * - "bias": a random split, then party 2's labels become y_j + x_j.B. For least squares this is
 *   exactly "a bias B added to the objective" of party 2: its local optimum moves by B,
 *   1/2 ||X theta - (y + X B)||^2 = 1/2 ||X (theta - B) - y||^2 (the paper's two-node example
 *   f_2(theta) = beta ||theta - b||^2 with real data). This is our reading of the paper's one-line
 *   description; App. C gives no more detail.
 *
 * @example
 * const { parties: [a, b] } = twoPartySplit(data, { kind: 'label', rng: seededRng(3) });
 */
export function twoPartySplit(dataset: Dataset, options: TwoPartySplitOptions): { kind: TwoPartySplitKind; parties: [Dataset, Dataset] } {
  rejectUnknownOptions(options, TWO_PARTY_SPLIT_OPTIONS, 'twoPartySplit');
  const rng = requireRng(options.rng);
  const { n, d } = dataset;
  const order = randomPermutation(rng, n);
  switch (options.kind) {
    case 'random':
    case 'bias': {
      const fraction = requireProbability('fraction', options.fraction ?? 0.5);
      const cut = Math.round(fraction * n);
      const first = selectRows(dataset, order.subarray(0, cut));
      let second = selectRows(dataset, order.subarray(cut));
      if (options.kind === 'bias') {
        if (options.bias === undefined) throw new InvalidParameterError('bias', options.bias, `a vector of length d = ${d} for the "bias" split`);
        const bias = vectorOf('bias', options.bias, d);
        const y = Float64Array.from(second.y);
        for (let i = 0; i < second.n; i++) {
          let s = 0;
          for (let k = 0; k < d; k++) s += second.x[i * d + k] * bias[k];
          y[i] += s;
        }
        second = { ...second, y };
      }
      return { kind: options.kind, parties: [first, second] };
    }
    case 'label': {
      const seedPoints = requireInteger('seedPoints', options.seedPoints ?? 50, 0);
      if (2 * seedPoints > n) throw new InvalidParameterError('seedPoints', seedPoints, `at most n / 2 = ${Math.floor(n / 2)}`);
      const a: number[] = Array.from(order.subarray(0, seedPoints));
      const b: number[] = Array.from(order.subarray(seedPoints, 2 * seedPoints));
      for (let r = 2 * seedPoints; r < n; r++) {
        const i = order[r];
        (dataset.y[i] > 0 ? a : b).push(i);
      }
      return { kind: 'label', parties: [selectRows(dataset, a), selectRows(dataset, b)] };
    }
    default:
      throw new InvalidParameterError('kind', options.kind, '"random", "label" or "bias"');
  }
}
