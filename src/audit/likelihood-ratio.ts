/**
 * The optimal test statistic of a run in the accountant's threat model (`gradient-canary.ts`): the
 * log likelihood ratio of the canary coordinates y_1..y_T between the worlds, which by the
 * Neyman-Pearson lemma orders the runs as the most powerful test at every false positive rate
 * does. With sigma the noise std of a coordinate, C the canary's norm and q the sampling rate:
 *   - DP-GD: y_t ~ N(+C, sigma^2) against N(-C, sigma^2); log LR = (2C / sigma^2) sum_t y_t, an
 *     increasing function of sum_t y_t, which is the statistic.
 *   - DP-SGD: y_t ~ (1 - q) N(0, sigma^2) + q N(C, sigma^2) against N(0, sigma^2), independent
 *     over t; log LR = sum_t log(1 - q + q exp((C y_t - C^2/2) / sigma^2)), the privacy loss of the
 *     pair the accountants analyse for the Poisson-sampled Gaussian (the removal direction).
 * The grid rounding of the noise is ignored by the statistic: it is only a statistic (any function
 * of the runs gives a valid test); the bounds computed from it are exact whatever it is.
 */
import { logAddExp } from '../math/log-space.js';
import type { GradientCanaryReleases } from './gradient-canary.js';

/** The statistic of each run of one world (file comment), from its canary coordinates y[r * steps + t]. */
export function runStatistics(releases: GradientCanaryReleases, world: 'inside' | 'outside'): Float64Array {
  const { runs, steps, noiseStd: sigma, clipNorm: C, samplingProbability: q } = releases;
  const y = releases[world];
  const out = new Float64Array(runs);
  const logKeep = Math.log1p(-Math.min(q, 1 - 1e-300));
  const logQ = Math.log(q);
  for (let r = 0; r < runs; r++) {
    let s = 0;
    for (let t = 0; t < steps; t++) {
      const v = y[r * steps + t];
      s += releases.method === 'dpgd' ? v : q === 1 ? (C * v - (C * C) / 2) / (sigma * sigma) : logAddExp(logKeep, logQ + (C * v - (C * C) / 2) / (sigma * sigma));
    }
    out[r] = s;
  }
  return out;
}
