/**
 * A discretised privacy loss distribution: probability masses on the grid of loss values
 * i * h (i = minIndex, minIndex + 1, ...), plus a mass at +infinity, and the numerical error terms
 * that must be added to (pessimistic) or subtracted from (optimistic) every delta computed from it.
 *
 * Orders used to prove that a discretisation is pessimistic or optimistic (`003` eq. D.1): for
 * measures mu, nu on [-inf, inf] (losses, P-masses) write H_mu(a) = E_mu[(1 - a e^{-L})_+] for
 * a >= 0 (so delta(epsilon) = H(e^epsilon), and H(0) is the total mass). If H_nu >= H_mu for every
 * a >= 0 then also H_{nu*nu'} >= H_{mu*mu'} whenever H_nu' >= H_mu' (proof: as a function of
 * u = e^{-s}, s -> H_{mu'}(a e^{-s}) is convex and decreasing, and every such function is a
 * constant plus a mixture of (t - u)_+, whose nu-expectations are t H_nu(1/t) >= t H_mu(1/t)).
 * So a per-mechanism discretisation that raises (lowers) H everywhere raises (lowers) the privacy
 * curve of every composition. Operations that raise H: moving mass to larger losses, and
 * mean-preserving spreads of u = e^{-L} (Jensen, as (1 - a u)_+ is convex in u); operations that
 * lower it: moving mass to smaller losses or dropping it, and contractions of u (replacing mass
 * by its u-mean). No condition on the total Q-mass is needed.
 */

export interface DiscretePld {
  /** Grid step h of the privacy-loss values. */
  readonly valueDiscretization: number;
  /** masses[j] sits at loss s_j = (minIndex + j) * h. */
  readonly minIndex: number;
  /**
   * The probability at s_j is masses[j] * exp(logScale - tilt * s_j): a composed PLD is stored
   * exponentially tilted (see `compose.ts`); tilt = logScale = 0 for plain probabilities.
   */
  readonly masses: Float64Array;
  readonly tilt: number;
  readonly logScale: number;
  /** P-mass at loss +infinity (delta(epsilon) >= this for every epsilon). */
  readonly infinityMass: number;
  /**
   * Pessimistic PLD: the part of `infinityMass` that a truncation put there (not the mechanism's).
   * Optimistic PLD: a bound on misplaced mass, subtracted from every delta.
   */
  readonly truncationMass: number;
  /** Bound on the floating-point error of each entry of `masses` (from FFTs), in its tilted units. */
  readonly errorPerBin: number;
  /** true: every delta computed from it is >= the mechanism's; false: <=. */
  readonly pessimistic: boolean;
  /**
   * A bound on the probability below the first grid point that `masses` does not represent (a
   * tilted composition's window leaves it out): added to a pessimistic delta(epsilon) for epsilon
   * below the grid. 0 when nothing is left out.
   */
  readonly belowWindowMass: number;
}

/** The loss of grid point j of a PLD. */
export function lossAt(pld: DiscretePld, j: number): number {
  return (pld.minIndex + j) * pld.valueDiscretization;
}
