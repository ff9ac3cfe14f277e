/**
 * The geometric grid 2^(k/P) (P points per doubling) on which long schedules are bounded: the RDP
 * chords (`rdp/sampled-gaussian-schedule.ts`) and the PLD buckets (`pld/schedule-buckets.ts`).
 * Nodes are computed by the same expression for the same k, so equal inputs give equal nodes.
 */

/** The node at or below x and the next node above it: lo <= x < hi, lo = 2^(k/P). */
export function geometricBracket(x: number, pointsPerDoubling: number): { k: number; lo: number; hi: number } {
  let k = Math.floor(Math.log2(x) * pointsPerDoubling);
  let lo = 2 ** (k / pointsPerDoubling);
  while (lo > x) lo = 2 ** (--k / pointsPerDoubling);
  let hi = 2 ** ((k + 1) / pointsPerDoubling);
  while (hi <= x) {
    k++;
    lo = hi;
    hi = 2 ** ((k + 1) / pointsPerDoubling);
  }
  return { k, lo, hi };
}
