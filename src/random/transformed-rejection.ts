/**
 * Internal: transformed rejection with squeeze for the Poisson (PTRS) and binomial (BTRS)
 * distributions, W. Hörmann, "The transformed rejection method for generating Poisson random
 * variables", Insurance: Mathematics and Economics 12 (1993), and "The generation of binomial
 * random variates", J. Statist. Comput. Simul. 46 (1993).
 *
 * How it works. With U uniform on (-1/2, 1/2), us = 1/2 - |U| and V uniform on [0, 1), the
 * candidate is k = floor(X(U)), X(u) = (2a/us + b) u + shift, an increasing map with
 * X'(u) = b + a/us^2. Accepting when V <= target(k) X'(U) / hat makes P(k) proportional to
 * target(k) times the length of [k, k+1), i.e. to target(k) — exactly, PROVIDED that
 * target(k) X'(u) / hat <= 1 for every u (the hat dominates). The squeeze (us >= 0.07 and
 * V <= vr: accept at once) is exact provided vr <= target(k) X'(u) / hat wherever us >= 0.07, and
 * PTRS's quick rejection (us < 0.013 and V > us) provided target(k) X'(u) / hat <= us there.
 *
 * Proof note. Hörmann's published constants do not quite satisfy these conditions. Checking
 * every k exactly (on each k's u-interval the ratio is monotone in us, so its extremes sit at the
 * interval's ends) for lambda in [10, 1e7]: PTRS's ratio reaches 1.0058 (lambda ~ 14, k = 21: P(21)
 * comes out a few 1e-5 short) and its squeeze accepts down to 0.0039 below the ratio
 * (lambda ~ 28); its quick rejection is fine. BTRS keeps within its bounds over n p in [10, 1e7]
 * (ratio <= 0.9953, squeeze margin >= 0.0046) but with little room. So both hats are widened by
 * HAT_MARGIN and both squeezes lowered by SQUEEZE_MARGIN and divided by HAT_MARGIN. Then the
 * same check gives ratio <= 0.986 and squeeze margin >= 0.0059 (PTRS), ratio <= 0.976 and
 * margin >= 0.014 (BTRS), at the cost of about 2% more rejections. (Beyond the checked ranges the
 * ratio's profile in standardised units converges, and the worst cases sit at small parameters.) test/random/discrete.test.ts
 * repeats the check on a grid of parameters.
 */
import { logBinomialPmf, logPoissonPmf } from './log-pmf.js';
import type { Rng } from './rng.js';

/** Factor by which Hörmann's hats are widened (see the proof note). */
export const HAT_MARGIN = 1.02;
/** Amount by which Hörmann's squeeze bounds vr are lowered before dividing by HAT_MARGIN. */
export const SQUEEZE_MARGIN = 0.01;

export interface TransformedRejection {
  /** X(u) = (2a/us + b) u + shift. */
  readonly a: number;
  readonly b: number;
  readonly shift: number;
  /** Largest value of the support (n, or Infinity). */
  readonly max: number;
  /** Accept when log V <= logTarget(k) + log(a/us^2 + b) - logHat. */
  readonly logHat: number;
  /** Squeeze: accept at once when us >= 0.07 and V <= vr. */
  readonly vr: number;
  /** PTRS only: reject at once when us < 0.013 and V > us. */
  readonly quickReject: boolean;
  /** log of the (unnormalised) target pmf. */
  readonly logTarget: (k: number) => number;
}

/** PTRS for Poisson(lambda), lambda >= 10; target = the pmf. */
export function ptrs(lambda: number): TransformedRejection {
  const b = 0.931 + 2.53 * Math.sqrt(lambda);
  const invAlpha = 1.1239 + 1.1328 / (b - 3.4);
  return {
    a: -0.059 + 0.02483 * b,
    b,
    shift: lambda + 0.43,
    max: Infinity,
    logHat: Math.log(invAlpha * HAT_MARGIN),
    vr: (0.9277 - 3.6224 / (b - 2) - SQUEEZE_MARGIN) / HAT_MARGIN,
    quickReject: true,
    logTarget: (k) => logPoissonPmf(k, lambda),
  };
}

/** BTRS for Binomial(n, p), p <= 1/2 and n p >= 10; target = pmf / pmf(mode). */
export function btrs(n: number, p: number): TransformedRejection {
  const spq = Math.sqrt(n * p * (1 - p));
  const b = 1.15 + 2.53 * spq;
  const alpha = (2.83 + 5.1 / b) * spq;
  const logPmfMode = logBinomialPmf(Math.floor((n + 1) * p), n, p);
  return {
    a: -0.0873 + 0.0248 * b + 0.01 * p,
    b,
    shift: n * p + 0.5,
    max: n,
    logHat: Math.log(alpha * HAT_MARGIN),
    vr: (0.92 - 4.2 / b - SQUEEZE_MARGIN) / HAT_MARGIN,
    quickReject: false,
    logTarget: (k) => logBinomialPmf(k, n, p) - logPmfMode,
  };
}

/** One sample by transformed rejection (about 1.2 pairs of uniforms on average). */
export function sampleTransformedRejection(rng: Rng, s: TransformedRejection): number {
  for (;;) {
    const u = rng.nextDouble() - 0.5;
    const v = rng.nextDouble();
    const us = 0.5 - Math.abs(u);
    const k = Math.floor(((2 * s.a) / us + s.b) * u + s.shift);
    if (k < 0 || k > s.max) continue;
    if (us >= 0.07 && v <= s.vr) return k;
    if (s.quickReject && us < 0.013 && v > us) continue;
    if (Math.log(v) + s.logHat - Math.log(s.a / (us * us) + s.b) <= s.logTarget(k)) return k;
  }
}
