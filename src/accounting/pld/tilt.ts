/**
 * Exponential tilting (the Esscher transform) of discrete PLDs. Tilting by lambda multiplies the
 * probability at loss s by e^{lambda s} / M(lambda) (M the moment generating function); it
 * commutes with convolution, since e^{lambda (s + s')} = e^{lambda s} e^{lambda s'}, so the tilted
 * composition is the composition of the tilted mechanisms.
 *
 * Why: an FFT composition of k steps has a floating-point error of about k eps times the largest
 * mass in EVERY bin, coherently (the error of each transform is relative to its largest value and
 * is amplified k times by the power). A delta of 1e-10 in the upper tail drowns in it. Tilted at
 * the saddle point, where the tilted composed loss has its mean at epsilon, the bins that make
 * delta(epsilon) are the tilted distribution's bulk and keep a relative accuracy of about k eps
 * (the saddle-point idea of Alghamdi et al. 2023, used here only to place the FFT's precision).
 */
import type { DiscretePld } from './discrete-pld.js';

/** The PLD with its finite part tilted by lambda and renormalised; its probabilities are unchanged. */
export function tiltPld(pld: DiscretePld, lambda: number): DiscretePld {
  if (lambda === 0) return pld;
  const { masses, minIndex, valueDiscretization: h } = pld;
  let max = -Infinity;
  for (let j = 0; j < masses.length; j++) if (masses[j] > 0) max = Math.max(max, lambda * (minIndex + j) * h);
  if (max === -Infinity) return { ...pld, tilt: pld.tilt + lambda };
  const tilted = new Float64Array(masses.length);
  let sum = 0;
  for (let j = 0; j < masses.length; j++) {
    if (masses[j] > 0) {
      tilted[j] = masses[j] * Math.exp(lambda * (minIndex + j) * h - max);
      sum += tilted[j];
    }
  }
  for (let j = 0; j < tilted.length; j++) tilted[j] /= sum;
  // masses_j e^{logScale - lambda s_j} = original_j
  return { ...pld, masses: tilted, tilt: pld.tilt + lambda, logScale: pld.logScale + max + Math.log(sum) };
}

/** The largest loss carrying mass (-Infinity when none). */
function maxLoss(pld: DiscretePld): number {
  for (let j = pld.masses.length - 1; j >= 0; j--) if (pld.masses[j] > 0) return (pld.minIndex + j) * pld.valueDiscretization;
  return -Infinity;
}

/** Mean and variance of the finite part of a (plain, untilted) PLD tilted by lambda. */
function tiltedMoments(pld: DiscretePld, lambda: number): { mean: number; variance: number } {
  const { masses, minIndex, valueDiscretization: h } = pld;
  let max = -Infinity;
  for (let j = 0; j < masses.length; j++) if (masses[j] > 0) max = Math.max(max, lambda * (minIndex + j) * h);
  if (max === -Infinity) return { mean: 0, variance: 0 };
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  const ref = (minIndex + (masses.length >> 1)) * h; // moments about the middle (no cancellation)
  for (let j = 0; j < masses.length; j++) {
    if (masses[j] > 0) {
      const s = (minIndex + j) * h;
      const w = masses[j] * Math.exp(lambda * s - max);
      s0 += w;
      s1 += w * (s - ref);
      s2 += w * (s - ref) ** 2;
    }
  }
  const m = s1 / s0;
  return { mean: ref + m, variance: Math.max(0, s2 / s0 - m * m) };
}

/** Mean of the finite part of a (plain, untilted) PLD tilted by lambda. */
function tiltedMean(pld: DiscretePld, lambda: number): number {
  return tiltedMoments(pld, lambda).mean;
}

/** Tilted standard deviations of the composition that put epsilon within reach of the FFT's precision. */
const NEAR = 3;

/**
 * The saddle-point tilt: the lambda >= 0 at which the composition of `count` copies of each PLD
 * has tilted mean epsilon (0 when epsilon is at most the untilted mean). Found by bisection on
 * log lambda, then lowered to the smallest tilt that puts epsilon within NEAR tilted standard
 * deviations of the tilted mean; any lambda >= 0 gives correct results.
 */
export function saddlePointTilt(parts: readonly { pld: DiscretePld; count: number }[], epsilon: number): number {
  const mean = (lambda: number) => parts.reduce((s, p) => s + p.count * tiltedMean(p.pld, lambda), 0);
  if (!(epsilon > mean(0))) return 0;
  // Beyond the largest loss of the composition delta(epsilon) is the mass at infinity: no tilt.
  const max = parts.reduce((s, p) => s + p.count * maxLoss(p.pld), 0);
  if (!(epsilon < max)) return 0;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 20 && mean(hi) < epsilon; i++) hi *= 4;
  if (mean(hi) < epsilon) return 0; // a tilt beyond 4^20 is useless; fall back to none
  for (let i = 0; i < 60; i++) {
    const mid = lo === 0 ? hi / 2 : Math.sqrt(lo * hi);
    if (mean(mid) < epsilon) lo = mid;
    else hi = mid;
    if (hi - lo <= 1e-3 * hi) break;
  }
  const saddle = 0.5 * (lo + hi);
  // The smallest tilt that puts epsilon within NEAR tilted standard deviations of the tilted mean
  // is enough: the bins there are within e^{-NEAR^2/2} of the largest, so their relative rounding
  // stays about k eps. A larger tilt would only amplify a heavy upper tail (small q, small z),
  // whose tilted window can then exceed any grid.
  const distance = (lambda: number) => {
    let m = 0;
    let v = 0;
    for (const p of parts) {
      const t = tiltedMoments(p.pld, lambda);
      m += p.count * t.mean;
      v += p.count * t.variance;
    }
    return v > 0 ? (epsilon - m) / Math.sqrt(v) : Infinity;
  };
  if (distance(0) <= NEAR) return 0;
  let a = 0;
  let b = saddle;
  for (let i = 0; i < 40; i++) {
    const mid = a === 0 ? b / 2 : Math.sqrt(a * b);
    if (distance(mid) > NEAR) a = mid;
    else b = mid;
    if (b - a <= 1e-3 * b) break;
  }
  return b;
}
