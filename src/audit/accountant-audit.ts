/**
 * The audit in the accountant's threat model (`gradient-canary.ts`): every step released, a
 * gradient canary at every step. Its verdict is one bound chosen by the method before any run:
 *   - DP-GD: 'gaussianShift' (`gaussian-dp-bound.ts`, its samples the R T steps). Each canary
 *     coordinate is N(+C, sigma^2) against N(-C, sigma^2), independently, by the mechanism's
 *     definition (exact discrete Gaussian noise on a grid of s >= 1024 steps, which a smoothing
 *     post-processing turns into a Gaussian: below), so the bound on mu measures the mechanism's
 *     only parameter.
 *   - DP-SGD: 'subsampledGaussian' (`subsampled-gaussian-bound.ts`, its samples the R T steps): each
 *     canary coordinate is N(0, s^2) against c B + N(0, s^2), B ~ Bernoulli(q), by the mechanism's
 *     definition (the same smoothing of the discrete noise as DP-GD's), so the bound measures
 *     s, c q and c^2 q from the released values and composes the most private pair consistent with
 *     them. 'perStepComposed' (`per-step-bound.ts`: no shape assumed for the one-step release, only
 *     the steps' independence) is reported beside it when T fits its exact composition.
 * The split-sample threshold test on the run statistic (`split-threshold.ts`, the optimal
 * statistic of `likelihood-ratio.ts`; no assumption at all) is always computed and reported too,
 * as is the per-step bound: each holds with probability >= confidence by itself, but only
 * the chosen one decides `violated` (so no union bound is needed), and it decides at
 * `refuteConfidence` (its bound computed again at that confidence: `refuteLower`).
 */
import { gaussianDpEpsilonLower, gaussianShiftMuLower } from './bounds/gaussian-dp-bound.js';
import type { AuditOptions, AuditResult, AuditStatistic } from './audit-options.js';
import { resolveAudit } from './audit-options.js';
import type { GradientCanaryReleases } from './gradient-canary.js';
import { runStatistics } from './likelihood-ratio.js';
import { perStepBound, perStepBoundFits } from './bounds/per-step-bound.js';
import { splitThresholdBound } from './bounds/split-threshold.js';
import { subsampledGaussianBound } from './bounds/subsampled-gaussian-bound.js';

/**
 * The std factor of the discrete noise's smoothing: adding N(0, (8g)^2) to each release (a
 * post-processing the adversary may apply) turns the discrete Gaussian of s grid steps into a
 * Gaussian of variance sigma_d^2 + 64 g^2 up to a total variation below e^-1000 (the lattice's
 * smoothing: the sum's density is periodic in g with relative amplitude ~e^(-2 pi^2 64)), so the
 * measured std grows by at most sqrt(1 + 64 / s^2) (sigma_d, the discrete noise's std, is what the
 * samples measure, and sigma_d ~ s g). Post-processing cannot add privacy loss, so that Gaussian's
 * epsilon is a lower bound of the mechanism's (a factor 1 - 3.1e-5 at s = 1024).
 */
function smoothingFactor(gridNoiseStd: number): number {
  return Math.sqrt(1 + 64 / gridNoiseStd ** 2);
}

/** The verdict of the accountant-model audit from the simulated releases (file comment). */
export function accountantVerdict(options: AuditOptions, releases: GradientCanaryReleases): AuditResult {
  const a = resolveAudit(options, 'accountantVerdict');
  const inside = runStatistics(releases, 'inside');
  const outside = runStatistics(releases, 'outside');
  const split = splitThresholdBound(inside, outside, a.delta, a.confidence);
  const bounds: Partial<Record<AuditStatistic, number>> = { splitThreshold: split.epsilonLower };
  let statistic: AuditStatistic = 'splitThreshold';
  let gaussian: AuditResult['gaussian'];
  if (perStepBoundFits(releases.steps)) {
    bounds.perStepComposed = perStepBound(releases.inside, releases.outside, releases.runs, releases.steps, a.delta, a.confidence).epsilonLower;
  }
  let subsampled: AuditResult['subsampled'];
  let refuteLower: (confidence: number) => number = (confidence) => splitThresholdBound(inside, outside, a.delta, confidence).epsilonLower;
  if (a.method === 'dpgd') {
    // The steps are the samples: T independent identical Gaussian shifts, mu of the run = sqrt(T) mu of a step.
    const root = Math.sqrt(releases.steps);
    const smoothing = 1 / smoothingFactor(releases.gridNoiseStd);
    const epsilonAt = (confidence: number) => {
      const shift = gaussianShiftMuLower(releases.inside, releases.outside, confidence);
      const muLower = shift.muLower * root * smoothing * (1 - 1e-15);
      return { shift, muLower, epsilon: gaussianDpEpsilonLower(muLower, a.delta) };
    };
    const at = epsilonAt(a.confidence);
    bounds.gaussianShift = at.epsilon;
    statistic = 'gaussianShift';
    refuteLower = (confidence) => epsilonAt(confidence).epsilon;
    gaussian = { muEstimate: at.shift.muEstimate * root, muLower: at.muLower, muNominal: (2 * releases.clipNorm * root) / releases.noiseStd };
  } else {
    const factor = smoothingFactor(releases.gridNoiseStd);
    const boundAt = (confidence: number) => subsampledGaussianBound(releases.inside, releases.outside, releases.steps, a.delta, confidence, factor);
    const b = boundAt(a.confidence);
    bounds.subsampledGaussian = b.epsilonLower;
    statistic = 'subsampledGaussian';
    refuteLower = (confidence) => boundAt(confidence).epsilonLower;
    const { std, stdUpper, mean, meanLower, meanUpper, excess, excessLower } = b.region;
    subsampled = { std, stdUpper, mean, meanLower, meanUpper, excess, excessLower, ...(b.pair === undefined ? {} : { corner: b.pair }), nominal: { shift: releases.clipNorm, rate: releases.samplingProbability, std: releases.noiseStd } };
  }
  const epsilonLower = bounds[statistic] as number;
  const epsilonClaimed = options.claimedEpsilon ?? releases.accounted;
  const refute = a.refuteConfidence === a.confidence ? epsilonLower : refuteLower(a.refuteConfidence);
  return {
    method: a.method,
    epsilonLower,
    epsilonClaimed,
    epsilonAccounted: releases.accounted,
    delta: a.delta,
    runs: releases.runs,
    confidence: a.confidence,
    refuteLower: refute,
    refuteConfidence: a.refuteConfidence,
    violated: refute > epsilonClaimed,
    test: { threshold: split.threshold, falsePositives: split.falsePositives, falseNegatives: split.falseNegatives, evaluated: split.evaluated },
    threatModel: 'accountant',
    statistic,
    bounds,
    ...(gaussian === undefined ? {} : { gaussian }),
    ...(subsampled === undefined ? {} : { subsampled }),
  };
}
