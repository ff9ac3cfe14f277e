/**
 * Private hyperparameter tuning (Papernot & Steinke 2022, "Hyperparameter Tuning with Renyi
 * Differential Privacy", ICLR): run a mechanism Q a random number K of times and release only the
 * best run. RDP of the result from Q's RDP curve on a grid of orders:
 *
 * - K ~ Poisson(mu) (Thm. 6): eps'(lambda) = eps(lambda) + mu delta_hat + log(mu) / (lambda - 1),
 *   where Q is (eps_hat, delta_hat)-DP with e^eps_hat = 1 + 1/(lambda - 1) (delta_hat from Q's
 *   RDP curve by the conversion of conversion.ts).
 * - K ~ truncated negative binomial D_{eta,gamma} (Thm. 2; eta = 1 geometric, eta = 0 logarithmic):
 *   eps'(lambda) = eps(lambda) + (1 + eta)(1 - 1/lambda_hat) eps(lambda_hat)
 *                  + (1 + eta) log(1/gamma) / lambda_hat + log(E[K]) / (lambda - 1),
 *   minimised over lambda_hat on the grid.
 *
 * Finally, as RDP is nondecreasing in the order, each value is replaced by the minimum over the
 * larger orders of the grid.
 */
import { InvalidParameterError } from '../../errors.js';
import { deltaFromRdpCurve } from './conversion.js';

/** Mean of the truncated negative binomial D_{eta,gamma} (Papernot & Steinke 2022, Def. 1). */
export function truncatedNegativeBinomialMean(gamma: number, shape: number): number {
  if (shape === 1) return 1 / gamma;
  if (shape === 0) return (1 - gamma) / (gamma * -Math.log(gamma)); // logarithmic distribution
  return (shape * (1 - gamma)) / (gamma * -Math.expm1(shape * Math.log(gamma)));
}

/**
 * The gamma of D_{eta,gamma} whose mean is `mean`, by bisection (the mean decreases in gamma).
 * Returns the lower end of the final bracket: the smaller gamma has the larger log(1/gamma)
 * term, so the bound stays valid for the true gamma.
 */
export function truncatedNegativeBinomialGamma(mean: number, shape: number): number {
  if (!(mean > 1)) throw new InvalidParameterError('mean', mean, '> 1 (the number of runs is at least 1)');
  if (shape === 1) return 1 / mean;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 200 && hi - lo > 1e-16 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (truncatedNegativeBinomialMean(mid, shape) < mean) hi = mid;
    else lo = mid;
  }
  return lo;
}

/** Makes a curve nondecreasing from the right: value[i] = min over j >= i (valid as RDP is monotone in the order). */
export function monotoneEnvelope(values: Float64Array): Float64Array {
  for (let i = values.length - 2; i >= 0; i--) values[i] = Math.min(values[i], values[i + 1]);
  return values;
}

export function repeatAndSelectRdp(orders: readonly number[], base: ArrayLike<number>, mean: number, shape: number): Float64Array {
  const out = new Float64Array(orders.length).fill(Infinity);
  if (shape === Infinity) {
    const logMean = Math.log(mean);
    for (let i = 0; i < orders.length; i++) {
      const lambda = orders[i];
      // Thm. 6 is stated for finite lambda > 1.
      if (!(lambda > 1 && lambda < Infinity) || base[i] === Infinity) continue;
      const epsilonHat = Math.log1p(1 / (lambda - 1));
      const { delta: deltaHat } = deltaFromRdpCurve(orders, base, epsilonHat);
      out[i] = base[i] + mean * deltaHat + logMean / (lambda - 1);
    }
  } else {
    const gamma = truncatedNegativeBinomialGamma(mean, shape);
    let constant = Infinity;
    for (let j = 0; j < orders.length; j++) {
      const lambdaHat = orders[j];
      if (!(lambdaHat >= 1 && lambdaHat < Infinity)) continue; // Thm. 2: lambda_hat in [1, infinity)
      constant = Math.min(constant, (1 + shape) * ((1 - 1 / lambdaHat) * base[j] - Math.log(gamma) / lambdaHat));
    }
    const logMean = Math.log(mean);
    for (let i = 0; i < orders.length; i++) {
      if (orders[i] > 1 && orders[i] < Infinity) out[i] = base[i] + logMean / (orders[i] - 1) + constant;
    }
  }
  for (let i = 0; i < out.length; i++) out[i] *= 1 + 8 * Number.EPSILON;
  return monotoneEnvelope(out);
}
