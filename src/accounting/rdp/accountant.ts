/**
 * The Rényi-DP accountant: composes events into an RDP curve on a grid of orders and converts it
 * to (epsilon, delta) with the best valid conversion (Mironov 2017, Prop. 3; Balle et al. 2020,
 * Thm. 21). It is an `EventAccountant` (`../accountant.ts`: `supports`, `compose(event, count)`,
 * `getEpsilon(delta)`, `getDelta(epsilon)`; the whole event is validated before the state changes).
 *
 * Events with gridded discrete noise (`../discrete-coupling.ts`) are partly accounted through the
 * smoothing coupling, whose RDP correction (< 1e-514 at every order) is absorbed by rounding the
 * final epsilon (delta) up by one ulp, as that module's comment proves.
 *
 * The accountant keeps what it composed as a multiset of distinct releases with counts
 * (`../events/multiset.ts`): composing e k times, compose(e, k) and compose(compose([e] * k)) give
 * the same curve bit for bit, at the cost of one. Curves of most releases are computed (and
 * checked) in `compose`; Poisson-subsampled Gaussian steps are kept until a query, where many
 * distinct ones (a noise schedule) are bounded together by chords (`sampled-gaussian-schedule.ts`).
 */
import { DpfitError, InvalidParameterError, NumericalError } from '../../errors.js';
import { optionNames, rejectUnknownOptions, requireNonNegative, requireOpenUnit } from '../../validate.js';
import { EventAccountant } from '../accountant.js';
import { addCompositionAtoms, type CompositionAtom } from '../events/multiset.js';
import type { DpEvent } from '../events/types.js';
import type { GuaranteeKind, PrivacyGuarantee } from '../guarantee.js';
import { containsConjecture } from '../neighboring.js';
import { brentMinimize } from '../../math/minimize.js';
import { nextUp } from '../float-steps.js';
import { deltaFromRdpCurve, epsilonFromRdpCurve, rdpToEpsilon, rdpToLogDelta } from './conversion.js';
import { checkRdpSupport, rdpOfEvent, sampledGaussianStep, splitAtoms, splitRdp, validateScheduleGrid, type AtomsRdpInfo, type RdpOptions, type SplitAtoms } from './event-rdp.js';
import { DEFAULT_ORDERS, mergeOrders } from './orders.js';
import { monotoneEnvelope } from './repeat-and-select.js';
import { ProgressMeter, validateProgressCallback, type ProgressCallback } from '../progress-meter.js';
import { DEFAULT_SCHEDULE_GRID } from './sampled-gaussian-schedule.js';

export interface RdpAccountantOptions extends RdpOptions {
  /** Orders to use instead of the default grid. */
  readonly orders?: readonly number[];
  /** Orders to add to the grid. */
  readonly extraOrders?: readonly number[];
  /**
   * Refine the best order of the grid continuously (Brent's minimiser between its grid
   * neighbours, each trial order accounted from scratch). Default: true for the default grid,
   * false when `orders` is given (so that a caller's grid is reproduced exactly).
   */
  readonly optimizeOrder?: boolean;
  /**
   * Progress of long queries (many distinct releases, e.g. a noise schedule of 1e5 steps): called
   * with (done, total), total = 1000, a fraction of the curves to compute (exact curves of
   * releases, grid corners of a schedule) that never goes backwards, ending with (1000, 1000) once.
   * Only called when there are at least 256 curves to compute (`../progress-meter.ts`).
   */
  readonly onProgress?: ProgressCallback;
}

/** Below this many curves to compute, a query reports no progress (it takes well under a second). */
const PROGRESS_MIN_UNITS = 256;

function validateOrders(orders: readonly number[], param: string): void {
  orders.forEach((order, i) => {
    if (typeof order !== 'number' || !(order > 1)) {
      throw new InvalidParameterError(`${param}[${i}]`, order, 'a Rényi order > 1 (Infinity allowed)');
    }
  });
}

export const RDP_ACCOUNTANT_OPTIONS = optionNames<RdpAccountantOptions>({ orders: true, extraOrders: true, optimizeOrder: true, onProgress: true, allowConjecture: true, scheduleGrid: true });

export class RdpAccountant extends EventAccountant<PrivacyGuarantee> {
  readonly orders: readonly number[];
  private readonly options: RdpOptions;
  private conjecture = false;
  /** Everything composed, as distinct releases with their counts (first appearance first). */
  private readonly atoms = new Map<string, CompositionAtom>();
  /** Curves at `orders` of the releases not kept for the schedule bound, by key. */
  private readonly curves = new Map<string, Float64Array>();
  /** Sum of count x curve over the atoms (computed at the first query after a compose). */
  private total: { rdp: Float64Array; info: AtomsRdpInfo } | undefined;
  /** The current atoms split into exact ones and a schedule bound (shared by the grid and the refinement). */
  private split: SplitAtoms | undefined;
  private readonly optimizeOrder: boolean;
  private readonly onProgress: ((done: number, total: number) => void) | undefined;

  constructor(options: RdpAccountantOptions = {}) {
    super();
    rejectUnknownOptions(options, RDP_ACCOUNTANT_OPTIONS, 'RdpAccountant');
    if (options.orders !== undefined) validateOrders(options.orders, 'orders');
    if (options.extraOrders !== undefined) validateOrders(options.extraOrders, 'extraOrders');
    this.orders = Object.freeze(mergeOrders(options.orders ?? DEFAULT_ORDERS, options.extraOrders));
    if (this.orders.length === 0) throw new InvalidParameterError('orders', options.orders, 'a non-empty list of orders > 1');
    validateScheduleGrid(options.scheduleGrid);
    validateProgressCallback(options.onProgress);
    this.options = { allowConjecture: options.allowConjecture, scheduleGrid: options.scheduleGrid };
    this.optimizeOrder = options.optimizeOrder ?? options.orders === undefined;
    this.onProgress = options.onProgress;
  }

  protected override checkSupport(event: DpEvent): void {
    checkRdpSupport(event, this.options);
  }

  /** The distinct releases of `event` x count, with their curves; the commit adds them to the atoms. */
  protected override prepare(event: DpEvent, count: number): () => void {
    const added = addCompositionAtoms(event, count);
    // Curves of the releases the schedule bound cannot take, computed and checked before any state changes.
    const fresh = new Map<string, Float64Array>();
    for (const atom of added.values()) {
      if (this.curves.has(atom.key) || fresh.has(atom.key) || sampledGaussianStep(atom.event) !== undefined) continue;
      const curve = rdpOfEvent(atom.event, this.orders, this.options);
      for (let i = 0; i < curve.length; i++) {
        if (Number.isNaN(curve[i])) throw new DpfitError('NUMERICAL', `internal error: NaN RDP at order ${this.orders[i]}`);
      }
      fresh.set(atom.key, curve);
    }
    const conjecture = containsConjecture(event);
    return () => {
      for (const [key, curve] of fresh) this.curves.set(key, curve);
      for (const atom of added.values()) {
        const known = this.atoms.get(atom.key);
        if (known === undefined) this.atoms.set(atom.key, { ...atom });
        else {
          const sum = known.count + atom.count;
          known.count = Number.isSafeInteger(sum) ? sum : nextUp(sum);
        }
      }
      this.conjecture ||= conjecture;
      this.total = undefined;
      this.split = undefined;
    };
  }

  /** A progress meter over `units` curve computations (undefined when not worth reporting). */
  private meter(units: number): ProgressMeter | undefined {
    if (this.onProgress === undefined || units < PROGRESS_MIN_UNITS) return undefined;
    const meter = new ProgressMeter(this.onProgress);
    meter.expect(units);
    return meter;
  }

  /** The RDP of everything composed at `orders` (the accountant's grid, or refinement trials). */
  private composedRdp(orders: readonly number[], onGrid: boolean): { rdp: Float64Array; info: AtomsRdpInfo } {
    if (this.split === undefined) this.split = splitAtoms(this.atoms.values(), this.options);
    const split = this.split;
    const units = onGrid ? split.exact.length + (split.schedule?.cornerCount ?? 0) : 0;
    const progress = this.meter(units);
    const curveOf = (atom: CompositionAtom): Float64Array => {
      if (!onGrid) return rdpOfEvent(atom.event, orders, this.options);
      let curve = this.curves.get(atom.key);
      if (curve === undefined) this.curves.set(atom.key, (curve = rdpOfEvent(atom.event, orders, this.options)));
      return curve;
    };
    const result = splitRdp(split, orders, curveOf, progress === undefined ? undefined : () => progress.tick());
    progress?.finish();
    for (let i = 0; i < result.rdp.length; i++) {
      if (Number.isNaN(result.rdp[i])) throw new NumericalError(`internal error: NaN RDP at order ${orders[i]}`);
    }
    return result;
  }

  private composedCurve(): { rdp: Float64Array; info: AtomsRdpInfo } {
    if (this.total === undefined) this.total = this.composedRdp(this.orders, true);
    return this.total;
  }

  /** The composed RDP curve (nondecreasing in the order: each value is the min over larger orders). */
  rdpCurve(): Float64Array {
    return monotoneEnvelope(Float64Array.from(this.composedCurve().rdp));
  }

  private describe(epsilon: number, delta: number, order: number, conversion: string | undefined, index: number): PrivacyGuarantee {
    const warnings: string[] = [];
    const guarantee: GuaranteeKind = this.conjecture ? 'conjecture' : 'proven';
    if (this.conjecture) warnings.push('this result rests on the shuffled-SGD conjecture (amplification by shuffling, unproven): it is not a privacy guarantee');
    if (Number.isFinite(epsilon) && epsilon > 0 && this.orders.length > 1) {
      if (index === 0) warnings.push(`the best Rényi order is the smallest of the grid (${order}); smaller orders might give a smaller epsilon`);
      if (index === this.orders.length - 1 && order < Infinity) warnings.push(`the best Rényi order is the largest of the grid (${order}); larger orders might give a smaller epsilon`);
    }
    const schedule = this.composedCurve().info.schedule;
    if (schedule !== undefined) {
      warnings.push(
        `${schedule.steps} distinct Poisson-subsampled Gaussian steps were bounded together by chords between ${schedule.corners} exact curves on a grid of ${schedule.pointsPerDoubling} points per doubling of the noise multiplier (RDP is convex in 1/z^2 and in q): a valid upper bound, ${schedule.pointsPerDoubling >= DEFAULT_SCHEDULE_GRID ? 'measured within 1e-5 (relative) of the step-by-step sum at orders <= 5 and 1e-3 at any order for DP-SGD schedules' : `looser than on the default grid of ${DEFAULT_SCHEDULE_GRID} points`}; scheduleGrid: Infinity accounts every step exactly`,
      );
    }
    return Object.freeze({
      epsilon,
      delta,
      accountant: 'rdp',
      order,
      ...(conversion === undefined ? {} : { conversion }),
      neighboringRelation: this.relation,
      guarantee,
      warnings: Object.freeze(warnings),
    });
  }

  /** The smallest epsilon such that the composition is (epsilon, delta)-DP by this accountant. */
  override getEpsilon(delta: number): PrivacyGuarantee {
    requireOpenUnit('delta', delta);
    // The conversions have slope 1 in the RDP value: one ulp up covers the coupling's correction.
    const safe = (epsilon: number) => this.outwardEpsilon(epsilon);
    const best = epsilonFromRdpCurve(this.orders, this.rdpCurve(), delta);
    const refined = this.refine(best.index, (order, rdp) => rdpToEpsilon(order, rdp, delta).epsilon);
    if (refined !== undefined && refined.value < best.epsilon) {
      const { conversion } = rdpToEpsilon(refined.order, refined.rdp, delta);
      return this.describe(safe(refined.value), delta, refined.order, conversion, best.index);
    }
    return this.describe(safe(best.epsilon), delta, best.order, best.conversion, best.index);
  }

  /**
   * Minimises `objective(order, rdp(order))` over the interval between the grid neighbours of the
   * best grid order. Every trial is a valid RDP bound at its order, accounted from scratch, so the
   * result is a valid bound whatever the minimiser does.
   */
  private refine(index: number, objective: (order: number, rdp: number) => number): { order: number; value: number; rdp: number } | undefined {
    if (!this.optimizeOrder || this.atoms.size === 0) return undefined;
    const lo = this.orders[Math.max(0, index - 1)];
    const hi = this.orders[Math.min(this.orders.length - 1, index + 1)];
    if (!(hi > lo) || !Number.isFinite(hi)) return undefined;
    const rdpAt = (order: number) => this.composedRdp([order], false).rdp[0];
    const result = brentMinimize((order) => objective(order, rdpAt(order)), lo, hi, { xTol: 1e-6 * lo });
    const rdp = rdpAt(result.x);
    return { order: result.x, value: objective(result.x, rdp), rdp };
  }

  /** The smallest delta such that the composition is (epsilon, delta)-DP by this accountant. */
  override getDelta(epsilon: number): PrivacyGuarantee {
    requireNonNegative('epsilon', epsilon);
    // Gridded discrete noise: evaluate one ulp below epsilon and round delta up one ulp (../discrete-coupling.ts).
    const at = this.inwardEpsilon(epsilon);
    const safe = (delta: number) => this.outwardDelta(delta);
    const best = deltaFromRdpCurve(this.orders, this.rdpCurve(), at);
    const refined = this.refine(best.index, (order, rdp) => rdpToLogDelta(order, rdp, at));
    if (refined !== undefined) {
      const delta = Math.min(1, Math.exp(refined.value) * (1 + 8 * Number.EPSILON));
      if (delta < best.delta) return this.describe(epsilon, safe(delta), refined.order, undefined, best.index);
    }
    return this.describe(epsilon, safe(best.delta), best.order, undefined, best.index);
  }
}

/** epsilon of one event at delta by the RDP accountant. */
export function rdpEpsilon(event: DpEvent, delta: number, options: RdpAccountantOptions = {}): PrivacyGuarantee {
  rejectUnknownOptions(options, RDP_ACCOUNTANT_OPTIONS, 'rdpEpsilon');
  return new RdpAccountant(options).compose(event).getEpsilon(delta);
}

/** delta of one event at epsilon by the RDP accountant. */
export function rdpDelta(event: DpEvent, epsilon: number, options: RdpAccountantOptions = {}): PrivacyGuarantee {
  rejectUnknownOptions(options, RDP_ACCOUNTANT_OPTIONS, 'rdpDelta');
  return new RdpAccountant(options).compose(event).getDelta(epsilon);
}
