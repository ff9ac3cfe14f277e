/**
 * Noise so large that its square overflows. A Gaussian of noise multiplier z > Z is a
 * post-processing of one of multiplier Z (add independent noise of variance z^2 - Z^2), so an
 * accountant may account z as min(z, Z) and its bound stays an upper bound; at Z = 1e100 the
 * difference in epsilon is below 1e-99. Without the cap, 1 / z^2 underflows to 0 and
 * order / (2 z^2) at order Infinity is NaN (as the event fuzz, test/accounting/events/fuzz.test.ts, found).
 */
export const MAX_ACCOUNTED_NOISE_MULTIPLIER = 1e100;

/** The noise multiplier an accountant uses for z: min(z, MAX_ACCOUNTED_NOISE_MULTIPLIER) (pessimistic). */
export function accountedNoiseMultiplier(noiseMultiplier: number): number {
  return Math.min(noiseMultiplier, MAX_ACCOUNTED_NOISE_MULTIPLIER);
}
