/**
 * The thesis' CONJECTURED accountant for private SGD with shuffling (`004`, Alg. 1, Conj. 1-2).
 * NOT A THEOREM: results derived from it are marked `guarantee: "conjecture"` and are computed
 * only when the caller opts in.
 *
 * Conj. 1: step t of an epoch (batch size one, n records, clipping L, noise sigma >= 2L) is
 * (alpha, C alpha L^2 / ((n - t + 1)^2 sigma^2))-RDP, C >= 16 (the O((n-t+1)^-3) term is dropped,
 * as the thesis' own experiments do). Conj. 2's sum over the floor(tau n) steps of each of the
 * ceil(e / tau) partial epochs (Alg. 1, line 3; rounded up) gives
 *   eps(alpha) = ceil(e/tau) * C alpha / z^2 * sum_{t=1}^{floor(tau n)} 1 / (n - t + 1)^2.
 */
import { InvalidParameterError } from '../../errors.js';
import type { ShuffledSgdConjectureEvent } from '../events/types.js';

/** sum_{m=a}^{b} 1/m^2, exactly for short ranges and by an upper bound (1/a^2 + 1/a - 1/b) beyond. */
function inverseSquareSum(a: number, b: number): number {
  if (b < a) return 0;
  if (b - a <= 2_000_000) {
    let sum = 0;
    for (let m = b; m >= a; m--) sum += 1 / (m * m);
    return sum * (1 + 1e-12);
  }
  return 1 / (a * a) + 1 / a - 1 / b;
}

/** The per-order coefficient: eps(alpha) = coefficient * alpha. */
export function shuffledSgdConjectureCoefficient(event: ShuffledSgdConjectureEvent): number {
  const { datasetSize: n, noiseMultiplier: z, epochs, fraction: tau, constant: c } = event;
  if (!(z >= 2)) {
    throw new InvalidParameterError('noiseMultiplier', z, '>= 2', 'the conjecture assumes sigma^2 >= 4 L^2');
  }
  const stepsPerEpoch = Math.floor(tau * n);
  const partialEpochs = Math.ceil(epochs / tau - 1e-12);
  return (partialEpochs * c * inverseSquareSum(n - stepsPerEpoch + 1, n)) / (z * z);
}
