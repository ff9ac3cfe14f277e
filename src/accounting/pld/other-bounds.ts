/**
 * The other valid bounds on the same event that cap the PLD accountant's answers (issue 29): the
 * RDP accountant's (`../rdp/accountant.ts`, every RDP -> DP conversion an upper bound) and, for a
 * composition of Gaussians only, the exact Gaussian profile (`../gaussian/gaussian-composition.ts`,
 * Dong, Roth & Su 2022, Cor. 3.3 with `003` eq. B.1). The minimum of valid upper bounds is a valid
 * upper bound, so the PLD accountant never reports an epsilon (delta) above what these prove, and
 * still answers when its own composition cannot be computed.
 *
 * The exact Gaussian's answers agree with themselves the way the PLD's do: epsilon(d) is the
 * smallest grid point at which its delta is <= d, so that delta(epsilon(d)) <= d and
 * epsilon(delta(e)) <= e (with gridded discrete noise: one ulp above such a point of the continuous
 * surrogate, as the coupling requires, `exactDelta`). The RDP accountant's epsilon is reported as it is (an answer is never above
 * what it proves), so these hold when RDP bounds the answer only as well as its own two queries agree.
 */
import { DpfitError } from '../../errors.js';
import { containsGriddedDiscreteNoise, continuousSurrogate } from '../discrete-coupling.js';
import { nextDown, nextUp } from '../float-steps.js';
import type { DpEvent } from '../events/types.js';
import { composeEvent, selfComposeEvent } from '../events/constructors.js';
import { gaussianCompositionDelta, gaussianCompositionEpsilon, gaussianPrecision } from '../gaussian/gaussian-composition.js';
import { RdpAccountant } from '../rdp/accountant.js';
import { deltaFromRdpCurve } from '../rdp/conversion.js';

/** Which accountant's value a PLD accountant's answer is. */
export type BoundSource = 'pld' | 'rdp' | 'exactGaussian';

export interface OtherBound {
  readonly value: number;
  readonly source: 'rdp' | 'exactGaussian';
}

/** Bits of the grid of epsilons the other sources' deltas are taken on (relative step 2^-36). */
const GRID_BITS = 36;

/** The step of the epsilon grid at x > 0. */
function gridStep(x: number): number {
  return 2 ** (Math.floor(Math.log2(x)) - GRID_BITS);
}

/**
 * x rounded down to the epsilon grid. A source's delta is taken at gridDown(epsilon) (a valid
 * delta there is valid at every larger epsilon), which makes it a step function of epsilon,
 * monotone although the source's own rounding (log Phi, the RDP accountant's order search) is not
 * at the ulp level; epsilon queries then return the left end of a step.
 */
function gridDown(x: number): number {
  if (!(x > 0) || !Number.isFinite(x)) return x;
  const s = gridStep(x);
  return Math.floor(x / s) * s;
}

/**
 * The smallest grid point x with ok(x), ok nondecreasing, starting from an estimate: up from
 * gridDown(estimate) until ok, then down by bisection over at most 64 grid steps. undefined when
 * no point within 2^20 steps above is ok.
 */
function smallestGridPoint(estimate: number, ok: (x: number) => boolean): number | undefined {
  if (estimate === 0) return ok(0) ? 0 : undefined;
  let x = gridDown(estimate);
  for (let i = 0; !ok(x); i++) {
    if (i >= 21) return undefined;
    x = gridDown(x + gridStep(x) * 2 ** i);
  }
  const s = gridStep(x);
  let good = 0; // ok(x - good s)
  let bad = 64;
  if (x - bad * s <= 0 || gridStep(x - bad * s) !== s) bad = Math.max(1, Math.min(bad, Math.floor((x - 2 ** Math.floor(Math.log2(x))) / s)));
  if (ok(x - bad * s)) return x - bad * s;
  while (bad - good > 1) {
    const mid = (good + bad) >> 1;
    if (ok(x - mid * s)) good = mid;
    else bad = mid;
  }
  return x - good * s;
}

/**
 * The event with every sampling without replacement of the whole dataset (m >= n) replaced by its
 * release, as the PLD accountant composes it (`event-components.ts`): then a Gaussian by itself.
 */
function wholeSamplesAsReleases(event: DpEvent): DpEvent {
  switch (event.kind) {
    case 'sampledWithoutReplacement':
      return event.sampleSize >= event.sourceDatasetSize ? wholeSamplesAsReleases(event.event) : event;
    case 'selfCompose':
      return selfComposeEvent(wholeSamplesAsReleases(event.event), event.count);
    case 'compose':
      return composeEvent(event.events.map(wholeSamplesAsReleases));
    default:
      return event;
  }
}

/** The RDP and exact-Gaussian bounds of what a PLD accountant composed. */
export class OtherBounds {
  private rdp: RdpAccountant | undefined = new RdpAccountant();
  private readonly parts: DpEvent[] = [];
  private gaussianOnly = true;

  /** Validates `event` x count for the RDP accountant; the returned commit composes it. */
  prepare(event: DpEvent, count: number): () => void {
    const asReleases = wholeSamplesAsReleases(event);
    const gaussian = this.gaussianOnly && gaussianPrecision(asReleases) !== undefined;
    let rdpOk = this.rdp !== undefined && this.rdp.supports(event);
    return () => {
      if (rdpOk) {
        try {
          this.rdp!.compose(event, count);
        } catch (error) {
          if (!(error instanceof DpfitError)) throw error;
          rdpOk = false;
        }
      }
      if (!rdpOk) this.rdp = undefined;
      this.gaussianOnly = gaussian;
      this.parts.push(count === 1 ? asReleases : selfComposeEvent(asReleases, count));
    };
  }

  /**
   * The Gaussian composition composed so far, when the exact Gaussian applies: undefined when
   * something else was composed, or when its precision sum 1/z^2 overflows (noise multipliers near
   * 1e-154 and below: no finite profile to compute, and the query then fails as the PLD's does).
   */
  private whole(): DpEvent | undefined {
    if (!this.gaussianOnly || this.parts.length === 0) return undefined;
    const whole = this.parts.length === 1 ? this.parts[0] : composeEvent(this.parts);
    return Number.isFinite(gaussianPrecision(whole)) ? whole : undefined;
  }

  /**
   * The RDP accountant's delta, at epsilon itself (not on the grid: an answer must never be above
   * what that accountant proves, and its epsilon and delta queries agree up to rounding).
   */
  private rdpDelta(epsilon: number): number | undefined {
    const g = this.rdp?.getDelta(epsilon);
    return g !== undefined && g.guarantee === 'proven' ? g.delta : undefined;
  }

  /**
   * The exact Gaussian's delta at epsilon (taken at gridDown(epsilon)). With gridded discrete noise,
   * the continuous surrogate's (`../discrete-coupling.ts`) at gridDown(nextDown(epsilon)), rounded
   * up one ulp: the coupling's rule, applied around the grid as the PLD applies it around its own
   * query (`accountant.ts`), so that epsilon(delta) below is nextUp of the surrogate's.
   */
  private exactDelta(whole: DpEvent, epsilon: number): number | undefined {
    if (!containsGriddedDiscreteNoise(whole)) return gaussianCompositionDelta(whole, gridDown(epsilon));
    const inner = gaussianCompositionDelta(continuousSurrogate(whole), gridDown(epsilon > 0 ? nextDown(epsilon) : 0));
    return inner === undefined ? undefined : Math.min(1, nextUp(inner));
  }

  /**
   * The exact Gaussian's epsilon at delta: the smallest grid point at which its delta is <= delta.
   * With gridded discrete noise, nextUp of the continuous surrogate's at nextDown(delta) (its delta
   * at that point is then <= delta: see `exactDelta`).
   */
  private exactEpsilon(whole: DpEvent, delta: number): number | undefined {
    const gridded = containsGriddedDiscreteNoise(whole);
    const event = gridded ? continuousSurrogate(whole) : whole;
    const target = gridded ? nextDown(delta) : delta;
    const exact = gaussianCompositionEpsilon(event, target);
    if (exact === undefined || !Number.isFinite(exact.epsilon)) return undefined;
    const e = smallestGridPoint(exact.epsilon, (x) => (gaussianCompositionDelta(event, gridDown(x)) ?? 1) <= target);
    return e === undefined || !gridded ? e : nextUp(e);
  }

  /**
   * The smallest of the other sources' epsilons at delta (each the smallest grid point at which the
   * source's own delta is <= delta), when one is below `below` (undefined otherwise).
   */
  epsilon(delta: number, below: number): OtherBound | undefined {
    let best: OtherBound | undefined;
    const whole = this.whole();
    if (whole !== undefined) {
      const e = this.exactEpsilon(whole, delta);
      if (e !== undefined && e < below) best = { value: e, source: 'exactGaussian' };
    }
    const bound = best?.value ?? below;
    const g = this.rdp?.getEpsilon(delta);
    // The RDP epsilon is refined (a few RDP delta queries) only when it may be the smallest.
    if (g !== undefined && g.guarantee === 'proven' && Number.isFinite(g.epsilon) && g.epsilon < bound * (1 + 1e-9)) {
      // Its own epsilon as it is: never above what the RDP accountant proves. (Its delta query at
      // that epsilon searches orders for delta and may answer a little above delta: measured up to
      // 1e-6 relative in epsilon at delta = 1e-300; the two RDP queries agree only that well.)
      if (g.epsilon < bound) best = { value: g.epsilon, source: 'rdp' };
    }
    return best;
  }

  /**
   * A valid but rougher delta at epsilon, cheaply (the RDP curve on its grid of orders, no order
   * search; the exact Gaussian's): what the PLD's delta query uses to choose its tail mass.
   */
  roughDelta(epsilon: number): number | undefined {
    const whole = this.whole();
    let best = whole === undefined ? undefined : this.exactDelta(whole, epsilon);
    if (this.rdp !== undefined) {
      const rdp = deltaFromRdpCurve(this.rdp.orders, this.rdp.rdpCurve(), epsilon).delta;
      if (best === undefined || rdp < best) best = rdp;
    }
    return best;
  }

  /** The smallest of the other sources' deltas at epsilon (taken at gridDown(epsilon)). */
  delta(epsilon: number): OtherBound | undefined {
    let best: OtherBound | undefined;
    const whole = this.whole();
    if (whole !== undefined) {
      const exact = this.exactDelta(whole, epsilon);
      if (exact !== undefined) best = { value: exact, source: 'exactGaussian' };
    }
    const rdp = this.rdpDelta(epsilon);
    if (rdp !== undefined && (best === undefined || rdp < best.value)) best = { value: rdp, source: 'rdp' };
    return best;
  }
}
