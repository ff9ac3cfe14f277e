/**
 * Parameters of a PLD query that depend only on the event, the requested accuracy and a coarse
 * level, never on the exact value queried (issue 29): `dpfit epsilon` and `dpfit delta`, each in a
 * fresh process, then compose the same distributions in the common case, and every parameter is
 * taken from a fixed ladder, so that two queries about the same point of the curve land on the same
 * rung. (Each composition is a valid bound whatever its parameters; the ladders only make queries
 * agree, and let the accountant's cache serve the check an epsilon query makes of its answer.)
 *
 * - Tail mass (what the window may leave out on each side, added to delta): 1e-14 for every delta
 *   >= 1e-8 (at relativeAccuracy 1e-4), below that the decade at or below 1e-2 relativeAccuracy
 *   delta, so that it moves delta by at most 1e-2 of the accuracy target.
 * - Exponential tilt: rounded down to a ladder of 8 rungs per doubling (any tilt >= 0 is exact;
 *   the tilt only places the FFT's precision, `tilt.ts`).
 * - Grid step refinements: rungs of 2^{-1/2} below the first step.
 */

/** Tail mass of the composition for deltas >= 1e-8 (relativeAccuracy 1e-4). */
export const DEFAULT_TAIL_MASS = 1e-14;
/** Tail mass per unit of relativeAccuracy * delta. */
const TAIL_PER_ACCURATE_DELTA = 1e-2;

/** The largest power of ten <= x (x > 0, finite), exactly as the decimal literal 1eK parses. */
export function decadeAtOrBelow(x: number): number {
  let k = Math.floor(Math.log10(x));
  let v = Number(`1e${k}`);
  while (v > x) v = Number(`1e${--k}`);
  while (Number(`1e${k + 1}`) <= x) v = Number(`1e${++k}`);
  return v > 0 ? v : Number.MIN_VALUE;
}

/** The tail mass for answers near `delta` (see the file comment); never above DEFAULT_TAIL_MASS. */
export function tailMassFor(delta: number, relativeAccuracy: number): number {
  const wanted = Math.max(1e-300, TAIL_PER_ACCURATE_DELTA * relativeAccuracy * delta);
  return Math.min(DEFAULT_TAIL_MASS, decadeAtOrBelow(wanted));
}

/**
 * The tail mass of an epsilon query that is not checked by the delta query (`checkedEpsilon`
 * false): 1e-2 relativeAccuracy delta, at most 1e-10, as it needs to share no grid.
 */
export function uncheckedTailMass(delta: number, relativeAccuracy: number): number {
  return Math.min(1e-10, TAIL_PER_ACCURATE_DELTA * relativeAccuracy * delta);
}

/** Rungs of the tilt ladder per doubling. */
const TILT_RUNGS = 8;

/** The tilt rounded down to its ladder 2^{j / 8} (0 stays 0). */
export function tiltRung(lambda: number): number {
  if (!(lambda > 0) || !Number.isFinite(lambda)) return 0;
  const j = Math.floor(TILT_RUNGS * Math.log2(lambda) + 1e-9);
  return 2 ** (j / TILT_RUNGS);
}

/** The largest step of the ladder h0 2^{-j/2} (j >= 1) that is <= target. */
export function stepRung(h0: number, target: number): number {
  if (!(target > 0) || !(h0 > 0)) return h0 / 2;
  const j = Math.max(1, Math.ceil(2 * Math.log2(h0 / target) - 1e-9));
  return h0 * 2 ** (-j / 2);
}
