/**
 * The exact privacy profile of the Gaussian mechanism (Balle & Wang 2018, Thm. 8; `003` eq. B.1):
 * with noise multiplier z = sigma / Delta_2,
 *
 *   delta(epsilon) = Phi(-epsilon z + 1/(2z)) - e^epsilon Phi(-epsilon z - 1/(2z)).
 *
 * Computed in log space, log delta = log Phi(a) + log(1 - exp(epsilon + log Phi(b) - log Phi(a))),
 * so it stays accurate for delta down to 1e-300 and below. The argument of log(1 - exp(.)) is
 * moved by a bound on its own rounding error towards the side that makes delta larger: the value
 * returned is an upper bound of the exact delta up to the accuracy of log Phi (1e-14 relative).
 */
import { log1mExp } from '../../math/log-space.js';
import { normalLogCdf } from '../../math/normal.js';
import { requireNonNegative, requirePositive } from '../../validate.js';

/** Pessimistic bound on the rounding error of a sum of three doubles (a few ulps of its terms). */
function sumRoundingBound(...terms: number[]): number {
  let scale = 0;
  for (const t of terms) scale += Math.abs(t);
  return 8 * Number.EPSILON * scale;
}

/** log delta(epsilon) of the Gaussian mechanism with noise multiplier z (`003` eq. B.1). */
export function gaussianLogDelta(epsilon: number, noiseMultiplier: number): number {
  requireNonNegative('epsilon', epsilon);
  const z = requirePositive('noiseMultiplier', noiseMultiplier);
  const a = -epsilon * z + 1 / (2 * z);
  const b = -epsilon * z - 1 / (2 * z);
  const logA = normalLogCdf(a);
  const logB = normalLogCdf(b);
  if (logA === -Infinity) return -Infinity;
  const x = epsilon + logB - logA;
  const xPessimistic = Math.min(x - sumRoundingBound(epsilon, logB, logA), -Number.MIN_VALUE);
  return logA + log1mExp(xPessimistic);
}

/** delta(epsilon) of the Gaussian mechanism with noise multiplier z (`003` eq. B.1). */
export function gaussianDelta(epsilon: number, noiseMultiplier: number): number {
  return Math.min(1, Math.exp(gaussianLogDelta(epsilon, noiseMultiplier)));
}
