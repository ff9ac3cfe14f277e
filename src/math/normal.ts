/**
 * The standard normal distribution in linear and log space, accurate deep into both tails:
 * Gaussian-mechanism accounting needs Phi(-40) ~ 1e-350 (not representable) through its
 * logarithm, and quantiles of probabilities as small as 1e-300 or exp(-1e5).
 *
 * Lower tail: Phi(x) = erfcx(-x/sqrt2) / 2 * exp(-x^2/2) with erfcx(t) = exp(t^2) erfc(t) the
 * scaled complementary error function (@stdlib). Upper-tail values use the exact symmetry
 * 1 - Phi(x) = Phi(-x), so no function ever computes 1 - (something close to 1).
 */
import erfc from '@stdlib/math-base-special-erfc';
import erfcinv from '@stdlib/math-base-special-erfcinv';
import erfcx from '@stdlib/math-base-special-erfcx';
import { InvalidParameterError, NumericalError } from '../errors.js';

const HALF_LOG_2PI = 0.5 * Math.log(2 * Math.PI);
const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);
const EPS = Number.EPSILON;

function requireNumber(param: string, x: number): void {
  if (typeof x !== 'number' || Number.isNaN(x)) throw new InvalidParameterError(param, x, 'a number (not NaN)');
}

/** log phi(x) = -x^2/2 - log(2 pi)/2; relative error ~1 ulp. */
export function normalLogPdf(x: number): number {
  requireNumber('x', x);
  return -0.5 * x * x - HALF_LOG_2PI;
}

/**
 * exp(-x^2/2) with x^2 split as xh^2 + (x - xh)(x + xh), xh = x truncated to a multiple of
 * 1/16 (the device of W. J. Cody's ANORM, ACM TOMS 715, 1993): xh^2/2 is exact, so the result
 * has a relative error of a few ulps instead of the ~x^2 ulps of exp(-x*x/2).
 */
function expHalfSquareNeg(x: number): number {
  const xh = Math.trunc(x * 16) / 16;
  const d = (x - xh) * (x + xh);
  return Math.exp(-0.5 * xh * xh) * Math.exp(-0.5 * d);
}

/** Phi(x) for x <= -1 via erfcx: relative error a few ulps until Phi(x) becomes subnormal (x < -37.5). */
function lowerTailCdf(x: number): number {
  return 0.5 * erfcx(-x * Math.SQRT1_2) * expHalfSquareNeg(x);
}

/**
 * Phi(x) = P(Z <= x). Relative error below 1e-15 wherever Phi(x) is a normal double, including
 * the lower tail (erfcx with Cody's exact-square splitting, `expHalfSquareNeg`); for x > 1,
 * Phi(x) is 1 - Phi(-x) rounded (use `normalSf` or `normalLogCdf` for the upper tail).
 */
export function normalCdf(x: number): number {
  requireNumber('x', x);
  if (x < -1) return x === -Infinity ? 0 : lowerTailCdf(x);
  return 0.5 * erfc(-x * Math.SQRT1_2);
}

/** 1 - Phi(x) = Phi(-x), with the same relative accuracy in the upper tail as `normalCdf` in the lower. */
export function normalSf(x: number): number {
  requireNumber('x', x);
  return normalCdf(-x);
}

/**
 * log Phi(x). For x < -1: log(erfcx(-x/sqrt2)/2) - x^2/2, which never underflows (relative error
 * ~1e-16 at x = -1000); for -1 <= x < 0: log(erfc(-x/sqrt2)/2); for x >= 0: log1p(-Phi(-x)),
 * which keeps the tiny negative value (-7.6e-24 at x = 10) and becomes -0 once Phi(-x)
 * underflows (x > 38.5). log Phi(-Infinity) = -Infinity.
 */
export function normalLogCdf(x: number): number {
  requireNumber('x', x);
  if (x < -1) {
    if (x === -Infinity) return -Infinity;
    return Math.log(0.5 * erfcx(-x * Math.SQRT1_2)) - 0.5 * x * x;
  }
  if (x < 0) return Math.log(0.5 * erfc(-x * Math.SQRT1_2));
  return Math.log1p(-normalCdf(-x));
}

/** log(1 - Phi(x)) = log Phi(-x), with the accuracy of `normalLogCdf`. */
export function normalLogSf(x: number): number {
  requireNumber('x', x);
  return normalLogCdf(-x);
}

/**
 * Lower-half quantile: the x <= 0 with log Phi(x) = logQ, for logQ <= log(1/2). `q` is exp(logQ)
 * when representable (else 0). Start: -sqrt2 erfcinv(2q), which @stdlib computes to 4e-16
 * relative for q >= 1e-200 but only to 7e-14 at q = 1e-300 (measured against mpmath); for
 * q = 0 the asymptotic x^2 ~ 2L - log(4 pi L), L = -logQ. If x <= -2, Halley steps on
 * h(x) = log Phi(x) - logQ with h' = r = phi/Phi = sqrt(2/pi)/erfcx(-x/sqrt2) and
 * h'' = -r (x + r) bring it to ~1e-16 relative (cubic convergence: 1-2 steps).
 */
function lowerQuantile(q: number, logQ: number): number {
  let x = q > 0 ? -Math.SQRT2 * erfcinv(2 * q) : NaN;
  if (!Number.isFinite(x)) {
    const L = -logQ;
    x = -Math.SQRT2 * Math.sqrt(L - 0.5 * Math.log(4 * Math.PI * L));
  }
  if (x === 0) return 0; // not -0
  if (x > -2 || x < -1e150) return x; // centre: erfcinv is accurate; x^2 would overflow below -1.3e154
  for (let i = 0; i < 10; i++) {
    const g = normalLogCdf(x) - logQ;
    const r = SQRT_2_OVER_PI / erfcx(-x * Math.SQRT1_2);
    const dx = -(g / r) / (1 + (g * (x + r)) / (2 * r));
    x += dx;
    if (Math.abs(dx) <= 4 * EPS * Math.abs(x)) return x;
  }
  throw new NumericalError(`normal quantile did not converge for log p = ${logQ} (last x = ${x})`);
}

/**
 * Phi^{-1}(p) for p in [0, 1]; -Infinity at 0 and +Infinity at 1. Relative error <= 4e-16
 * (measured against mpmath) from p = 1e-300 (and subnormal p) to 1 - 1e-16. For p > 1/2 it
 * returns -Phi^{-1}(1 - p), where 1 - p is computed exactly, so the result is the quantile of
 * the double p as given (the double 1 - 1e-10 is 1 - 1.00000008e-10).
 * Throws `InvalidParameterError` for p outside [0, 1] or NaN.
 */
export function normalQuantile(p: number): number {
  if (typeof p !== 'number' || !(p >= 0 && p <= 1)) throw new InvalidParameterError('p', p, 'in [0, 1]');
  if (p === 0) return -Infinity;
  if (p === 1) return Infinity;
  if (p <= 0.5) return lowerQuantile(p, Math.log(p));
  const q = 1 - p; // exact (Sterbenz)
  return -lowerQuantile(q, Math.log(q));
}

/**
 * The x with log Phi(x) = logP, for any logP <= 0 (0 -> +Infinity, -Infinity -> -Infinity): the
 * quantile of probabilities below the double range, e.g. logP = -1e5 gives x = -447.2.
 * For logP > log(1/2) it returns -Phi^{-1}(q) with q = 1 - exp(logP) = -expm1(logP) (no
 * cancellation), so upper quantiles are accurate too: logP = -1e-30 gives 11.46. Error
 * <= 2.3e-16 * max(1, |x|) against mpmath for logP in [-1e5, -1e-30] (see `lowerQuantile`);
 * near logP = log(1/2) the absolute error is what the conditioning allows.
 */
export function normalQuantileOfLog(logP: number): number {
  if (typeof logP !== 'number' || !(logP <= 0)) throw new InvalidParameterError('logP', logP, '<= 0');
  if (logP === 0) return Infinity;
  if (logP === -Infinity) return -Infinity;
  if (logP <= -Math.LN2) return lowerQuantile(Math.exp(logP), logP);
  const q = -Math.expm1(logP); // 1 - p, accurate because logP is near 0
  return -lowerQuantile(q, Math.log(q));
}
