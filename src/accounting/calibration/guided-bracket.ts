/**
 * A bracket for a noise calibration found from a guide: a cheaper accountant's answer (RDP's for
 * the PLD's search, `PLD_CALIBRATION`) says roughly where the root is and how steeply log epsilon
 * falls in log z there, so a few secant steps of the expensive accountant bracket its root tightly
 * (where a search from z = 1 by unit steps of log z takes three to six evaluations before Brent's
 * method starts on a bracket of width 1). Only a speed-up: the bracket's ends are checked with the
 * function itself, and `undefined` sends the caller back to its general search.
 */

/**
 * [lo, hi] with g(lo) > 0 >= g(hi), from x0 (the guide's root) and an estimate of g's slope there
 * (negative): g is log epsilon minus log target as a function of x = log z, decreasing. From x0,
 * each step goes 10 % past the secant's prediction of the root (plus 1e-4, doubling), until g
 * changes sign; at most `maxSteps` evaluations of g. With the bracket, the slope of g's last secant
 * (the estimate given when no secant was usable). undefined when g is not finite where it is
 * evaluated, or no sign change is found.
 */
export function guidedBracket(g: (x: number) => number, x0: number, slope: number, maxSteps = 6): { lo: number; hi: number; slope: number } | undefined {
  let s = slope < 0 && Number.isFinite(slope) ? slope : -1;
  let a = x0;
  let ga = g(a);
  for (let step = 0; step < maxSteps; step++) {
    if (!Number.isFinite(ga)) return undefined;
    const towards = -ga / s; // the secant's step to the root (down when g(a) <= 0)
    const b = a + 1.1 * towards + (ga > 0 ? 1 : -1) * 1e-4 * 2 ** step;
    const gb = g(b);
    if (Number.isNaN(gb)) return undefined;
    const secant = (gb - ga) / (b - a);
    if (secant < 0 && Number.isFinite(secant)) s = secant;
    if (ga > 0 !== gb > 0) return ga > 0 ? { lo: a, hi: b, slope: s } : { lo: b, hi: a, slope: s };
    a = b;
    ga = gb;
  }
  return undefined;
}
