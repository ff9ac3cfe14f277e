/**
 * Dominating pairs of additive-noise mechanisms in output space: P is the noise shifted by the
 * sensitivity (normalised to 1), Q the noise itself, and the log-likelihood ratio
 * l(x) = log(p(x) / q(x)) is nondecreasing in x (a monotone likelihood ratio), so a loss interval
 * is an x interval. Used directly (Laplace) and inside Poisson subsampling (`poisson-model.ts`).
 */
import { accountedNoiseMultiplier } from '../../extreme-noise.js';
import { laplaceDistribution, normalDistribution, type TailDistribution } from './interval-mass.js';

export interface AdditivePair {
  readonly description: string;
  readonly p: TailDistribution;
  readonly q: TailDistribution;
  /** Infimum and supremum of l(x) (+-Infinity when unbounded). */
  readonly lossMin: number;
  readonly lossMax: number;
  /**
   * The interval (continuousLow, continuousHigh) of x on which l is strictly increasing; outside
   * it l is flat, and each flat part is an atom of the loss (`atoms`).
   */
  readonly continuousLow: number;
  readonly continuousHigh: number;
  /** Flat parts of l: base loss value and its probability under P and under Q. */
  readonly atoms: readonly { readonly loss: number; readonly pMass: number; readonly qMass: number }[];
  /** sup{x : l(x) <= t} (-Infinity if no such x, +Infinity if every x). */
  xSup(t: number): number;
  /** inf{x : l(x) >= t} (-Infinity if every x, +Infinity if no such x). */
  xInf(t: number): number;
}

/**
 * Gaussian noise with std z: P = N(1, z^2), Q = N(0, z^2), l(x) = (2x - 1) / (2 z^2)
 * (`003` App. B.1).
 */
export function gaussianPair(noiseMultiplier: number): AdditivePair {
  noiseMultiplier = accountedNoiseMultiplier(noiseMultiplier); // pessimistic: ../../extreme-noise.ts
  const z2 = noiseMultiplier * noiseMultiplier;
  const inverse = (t: number) => z2 * t + 0.5;
  return {
    description: `Gaussian(noiseMultiplier = ${noiseMultiplier})`,
    p: normalDistribution(1, noiseMultiplier),
    q: normalDistribution(0, noiseMultiplier),
    lossMin: -Infinity,
    lossMax: Infinity,
    continuousLow: -Infinity,
    continuousHigh: Infinity,
    atoms: [],
    xSup: inverse,
    xInf: inverse,
  };
}

/**
 * Laplace noise with scale b (noise multiplier = scale / L1 sensitivity): P = Lap(1, b),
 * Q = Lap(0, b), l(x) = (|x| - |x - 1|) / b, which is -1/b for x <= 0, (2x - 1)/b on [0, 1] and
 * 1/b for x >= 1 (so the loss has atoms at +-1/b of P-mass 1/2 and e^{-1/b}/2).
 */
export function laplacePair(noiseMultiplier: number): AdditivePair {
  const b = noiseMultiplier;
  const top = 1 / b;
  return {
    description: `Laplace(noiseMultiplier = ${noiseMultiplier})`,
    p: laplaceDistribution(1, b),
    q: laplaceDistribution(0, b),
    lossMin: -top,
    lossMax: top,
    continuousLow: 0,
    continuousHigh: 1,
    atoms: [
      { loss: top, pMass: 0.5, qMass: 0.5 * Math.exp(-top) },
      { loss: -top, pMass: 0.5 * Math.exp(-top), qMass: 0.5 },
    ],
    xSup: (t) => (t < -top ? -Infinity : t >= top ? Infinity : (1 + b * t) / 2),
    xInf: (t) => (t <= -top ? -Infinity : t > top ? Infinity : (1 + b * t) / 2),
  };
}
