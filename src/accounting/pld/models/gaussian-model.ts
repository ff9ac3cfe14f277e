/**
 * The Gaussian mechanism's privacy loss distribution. With noise multiplier z (noise std over L2
 * sensitivity) the pair (P, Q) = (N(1, z^2), N(0, z^2)) dominates the mechanism in both directions
 * (`003` App. B.1), and its privacy loss L(x) = (2x - 1) / (2 z^2) is Gaussian:
 *
 *   L ~ N(mu, 2 mu) under P and L ~ N(-mu, 2 mu) under Q, mu = 1 / (2 z^2)
 *
 * (`003` Sec. 3.1: "the PLRV determined by N(1, sigma^2) and N(0, sigma^2) is distributed as
 * N(1/(2 sigma^2), 1/sigma^2)"). Its hockey-stick divergence is `003` eq. B.1
 * (`gaussianDelta` in ../../gaussian/gaussian-profile.ts), which the tests use as the exact reference.
 */
import { NumericalError } from '../../../errors.js';
import { accountedNoiseMultiplier } from '../../extreme-noise.js';
import { intervalMasses, normalDistribution } from './interval-mass.js';
import type { PrivacyLossModel } from './loss-model.js';

/** The model of noise multiplier z (accounted as min(z, 1e100): `../../extreme-noise.ts`). */
export function gaussianLossModel(noiseMultiplier: number): PrivacyLossModel {
  const z = accountedNoiseMultiplier(noiseMultiplier);
  const mu = 1 / (2 * z * z);
  if (!(mu < 1e300)) throw new NumericalError(`the privacy loss of Gaussian(noiseMultiplier = ${noiseMultiplier}) is beyond what the PLD grid represents (mean ${mu}); the RDP accountant bounds it`);
  const sd = Math.sqrt(2 * mu);
  const p = normalDistribution(mu, sd);
  const q = normalDistribution(-mu, sd);
  return {
    description: `Gaussian(noiseMultiplier = ${noiseMultiplier})`,
    infinityMass: 0,
    atoms: [],
    lossMin: -Infinity,
    lossMax: Infinity,
    cellMasses: (edges) => ({ p: intervalMasses(p, edges), q: intervalMasses(q, edges) }),
  };
}
