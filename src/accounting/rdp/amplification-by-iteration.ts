/**
 * Privacy of the LAST iterate of noisy SGD by amplification by iteration (Feldman, Mironov,
 * Talwar & Thakurta 2018; `004` Sec. 3.2.3-3.3), for one or more shuffled epochs.
 *
 * Setting: theta_{t+1} = psi_t(theta_t) + N(0, gamma^2 sigma^2 I) with psi_t(u) = u - gamma g(u; x_t),
 * where every per-example gradient has norm <= L (so replacing one record moves one psi_t by at
 * most s = 2 gamma L), and every psi_t is C-Lipschitz: C = 1 when the loss is convex and beta-smooth
 * and gamma <= 2 / beta (the step is non-expansive), C = 1 + gamma beta for a beta-smooth non-convex
 * loss. Only the last iterate is released.
 *
 * One ordering (`004` Thm. 3.5-3.6): the record processed k-th from the end (k = n - t + 1) is
 * (alpha, epsilon_k(alpha))-RDP with
 *
 *   epsilon_k(alpha) = (2 alpha L^2 / sigma^2) (1 - C^-2) / (1 - C^-2k)      (C > 1)
 *   epsilon_k(alpha) =  2 alpha L^2 / (sigma^2 k)                             (C = 1, the limit).
 *
 * It is the shift-reduction argument with the shift 2 gamma L spread over the k remaining noise
 * draws optimally (a_j proportional to C^(n-j), by Cauchy-Schwarz). With dpfit's noise convention
 * (`noiseMultiplier` z = sigma / L: noise std z L for gradients of norm <= L), epsilon_k =
 * 2 alpha f_k / z^2; the last record (k = 1, f_1 = 1) gets exactly one Gaussian step of sensitivity
 * 2L and multiplier z / 2, what plain composition charges per epoch.
 *
 * Shuffled order (`004` Lemma 3.1, the mixture bound of Feldman et al.): a uniformly random
 * permutation puts the differing record at each k with probability 1/n, and
 *   exp((alpha - 1) D_alpha) <= (1/n) sum_k exp((alpha - 1) epsilon_k(alpha)),
 * which holds for every alpha > 1 without further conditions (the permutation uses no data).
 *
 * Several epochs: each epoch (a fresh permutation) starts from the previous epoch's last iterate;
 * the final model is a post-processing of the sequence of epoch-end iterates, an adaptive
 * composition of the epochs, so the RDP adds up over epochs (Mironov 2017, Prop. 1).
 *
 * Clipping, projections and rounding: `learners/gradient/lattice-sgd.ts` runs the iteration so that these
 * theorems apply to what is computed (a clipped GLM gradient is the gradient of a convex smooth
 * function; the state lives on a lattice with discrete Gaussian noise; the rounding and the
 * floating-point error add a bounded shift per step) and emits a `shuffledLastIterate` event,
 * accounted by `shuffledLastIterateEventRdp` below.
 */
import { InvalidParameterError } from '../../errors.js';
import type { ShuffledLastIterateEvent } from '../events/types.js';
import { logSumExp } from '../../math/log-space.js';
import { epsilonFromRdpCurve } from './conversion.js';
import { DEFAULT_ORDERS } from './orders.js';

export interface LastIterateOptions {
  /** Records per epoch (steps per epoch, batch size one). */
  readonly n: number;
  readonly epochs: number;
  /** z = sigma / L: noise std of each step's gradient over the per-example gradient bound L. */
  readonly noiseMultiplier: number;
  /** C >= 1: the Lipschitz constant of each step map (1: convex, smooth, gamma <= 2 / beta). */
  readonly lipschitzFactor: number;
}

function validate(options: LastIterateOptions): void {
  if (!(Number.isSafeInteger(options.n) && options.n >= 1)) throw new InvalidParameterError('n', options.n, 'an integer >= 1');
  if (!(Number.isSafeInteger(options.epochs) && options.epochs >= 1)) throw new InvalidParameterError('epochs', options.epochs, 'an integer >= 1');
  if (!(options.noiseMultiplier > 0 && Number.isFinite(options.noiseMultiplier))) throw new InvalidParameterError('noiseMultiplier', options.noiseMultiplier, 'a finite number > 0');
  if (!(options.lipschitzFactor >= 1 && Number.isFinite(options.lipschitzFactor))) {
    throw new InvalidParameterError('lipschitzFactor', options.lipschitzFactor, 'a finite number >= 1 (1 for a convex beta-smooth loss with step size <= 2/beta, 1 + step size x beta for a smooth non-convex one)');
  }
}

/** f_k = (1 - C^-2) / (1 - C^-2k) (1/k at C = 1): the share of the single-step RDP left k steps from the end. */
export function iterationFactor(lipschitzFactor: number, k: number): number {
  if (!(Number.isSafeInteger(k) && k >= 1)) throw new InvalidParameterError('k', k, 'an integer >= 1');
  if (lipschitzFactor === 1) return 1 / k;
  const r = lipschitzFactor ** -2;
  // (1 - r) / (1 - r^k), computed without cancellation for r close to 1.
  const logR = Math.log(r);
  return Math.expm1(logR) / Math.expm1(k * logR);
}

/** epsilon_k(alpha) of the record k steps from the end of one epoch (file comment), rounded up. */
export function lastIteratePositionRdp(order: number, noiseMultiplier: number, lipschitzFactor: number, k: number): number {
  if (!(order > 1)) throw new InvalidParameterError('order', order, 'a Renyi order > 1');
  if (order === Infinity) return Infinity;
  return ((2 * order * iterationFactor(lipschitzFactor, k)) / (noiseMultiplier * noiseMultiplier)) * (1 + 1e-12);
}

/** The RDP at `order` of the last iterate of `epochs` shuffled epochs (mixture over positions, composition over epochs). */
export function shuffledLastIterateRdp(order: number, options: LastIterateOptions): number {
  validate(options);
  if (order === Infinity) return Infinity;
  const { n, noiseMultiplier: z, lipschitzFactor: c } = options;
  // log((1/n) sum_k exp((alpha - 1) eps_k)) / (alpha - 1).
  const terms = Float64Array.from({ length: n }, (_, i) => (order - 1) * lastIteratePositionRdp(order, z, c, i + 1));
  const perEpoch = (logSumExp(terms) - Math.log(n)) / (order - 1);
  return perEpoch * options.epochs * (1 + 1e-12);
}

/** (epsilon, delta) of the last iterate by the RDP curve on dpfit's default orders. */
export function shuffledLastIterateEpsilon(options: LastIterateOptions, delta: number): { epsilon: number; order: number } {
  const orders = DEFAULT_ORDERS.filter((a) => Number.isFinite(a));
  const rdp = orders.map((a) => shuffledLastIterateRdp(a, options));
  const best = epsilonFromRdpCurve(orders, rdp, delta);
  return { epsilon: best.epsilon, order: best.order };
}

/**
 * Positions handled one by one; beyond, geometric buckets of ratio 1 + 2^-10 (the file's mixture
 * over positions is bounded bucket by bucket by its count times the larger end's term: the
 * exponent (1 + g k)^2 / k is convex in k, so its maximum over a bucket is at an end).
 */
const EXACT_POSITIONS = 4096;
const BUCKET_RATIO = 1 + 2 ** -10;

/**
 * The RDP at `order` of one epoch of a `shuffledLastIterate` event: with e_k(alpha) =
 * 2 alpha (1 + g k)^2 / (z^2 k) for the record k-th from the end (k <= m), the mixture over the
 * permutation (`004` Lemma 3.1; the record is not processed with probability 1 - m/n, and then
 * the two runs have the same law):
 *   exp((alpha - 1) D) <= (1 - m/n) + (1/n) sum_{k=1}^{m} exp((alpha - 1) e_k(alpha)).
 * Rounded up. Cost O(min(m, 4096) + log(m) 2^10) exponentials.
 */
export function shuffledLastIterateEventRdp(order: number, event: ShuffledLastIterateEvent): number {
  if (!(order > 1)) throw new InvalidParameterError('order', order, 'a Renyi order > 1');
  if (order === Infinity) return Infinity;
  const { datasetSize: n, stepsPerEpoch: m, noiseMultiplier: z, shiftGrowth: g } = event;
  const c = (2 * order * (order - 1)) / (z * z);
  const exponent = (k: number) => (c * (1 + g * k) ** 2) / k;
  const logs: number[] = [];
  const logWeights: number[] = [];
  if (m < n) {
    logs.push(0);
    logWeights.push(Math.log1p(-m / n));
  }
  const exact = Math.min(m, EXACT_POSITIONS);
  for (let k = 1; k <= exact; k++) {
    logs.push(exponent(k));
    logWeights.push(0);
  }
  for (let low = exact + 1; low <= m; ) {
    const high = Math.min(m, Math.max(low, Math.floor(low * BUCKET_RATIO)));
    logs.push(Math.max(exponent(low), exponent(high)));
    logWeights.push(Math.log(high - low + 1));
    low = high + 1;
  }
  const terms = Float64Array.from(logs, (v, i) => v + logWeights[i]);
  // Terms with weight 1/n carry their -log(n) here; the "not processed" term already has its weight.
  const logN = Math.log(n);
  const start = m < n ? 1 : 0;
  for (let i = start; i < terms.length; i++) terms[i] -= logN;
  const value = logSumExp(terms) / (order - 1);
  // Rounding: the log-sum-exp of T terms is off by a few ulps of its largest term per term;
  // an absolute margin covers it (the value can be tiny, so a relative one would not).
  let largest = 0;
  for (const v of terms) largest = Math.max(largest, Math.abs(v));
  const margin = ((terms.length + 8) * Number.EPSILON * (1 + largest)) / (order - 1);
  return Math.max(0, value) * (1 + 1e-12) + margin;
}
