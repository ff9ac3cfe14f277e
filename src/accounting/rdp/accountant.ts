/**
 * The Rényi-DP accountant: composes events into an RDP curve on a grid of orders and converts it
 * to (epsilon, delta) with the best valid conversion (Mironov 2017, Prop. 3; Balle et al. 2020,
 * Thm. 21). Interface as dp_accounting's: `supports`, `compose(event, count)`, `getEpsilon(delta)`,
 * `getDelta(epsilon)`. The whole event is validated before the state changes.
 *
 * Events with gridded discrete noise (`../discrete-coupling.ts`) are partly accounted through the
 * smoothing coupling, whose RDP correction (< 1e-514 at every order) is absorbed by rounding the
 * final epsilon (delta) up by one ulp, as that module's comment proves.
 */
import { DpfitError, InvalidParameterError } from '../../errors.js';
import { requireInteger, requireNonNegative, requireOpenUnit } from '../../validate.js';
import { selfComposeEvent, type DpEvent } from '../events.js';
import type { GuaranteeKind, PrivacyGuarantee } from '../guarantee.js';
import { containsConjecture, neighboringRelationOf, type NeighboringRelation } from '../neighboring.js';
import { brentMinimize } from '../../math/minimize.js';
import { containsGriddedDiscreteNoise } from '../discrete-coupling.js';
import { nextDown, nextUp } from '../float-steps.js';
import { deltaFromRdpCurve, epsilonFromRdpCurve, rdpToEpsilon, rdpToLogDelta } from './conversion.js';
import { checkRdpSupport, rdpOfEvent, type RdpOptions } from './event-rdp.js';
import { DEFAULT_ORDERS, mergeOrders } from './orders.js';
import { monotoneEnvelope } from './repeat-and-select.js';

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
}

function validateOrders(orders: readonly number[], param: string): void {
  orders.forEach((order, i) => {
    if (typeof order !== 'number' || !(order > 1)) {
      throw new InvalidParameterError(`${param}[${i}]`, order, 'a Rényi order > 1 (Infinity allowed)');
    }
  });
}

export class RdpAccountant {
  readonly orders: readonly number[];
  private readonly options: RdpOptions;
  private readonly rdp: Float64Array;
  private relation: NeighboringRelation = 'relativeToSensitivity';
  private conjecture = false;
  private gridded = false;
  private readonly composed: DpEvent[] = [];
  private readonly optimizeOrder: boolean;

  constructor(options: RdpAccountantOptions = {}) {
    if (options.orders !== undefined) validateOrders(options.orders, 'orders');
    if (options.extraOrders !== undefined) validateOrders(options.extraOrders, 'extraOrders');
    this.orders = Object.freeze(mergeOrders(options.orders ?? DEFAULT_ORDERS, options.extraOrders));
    if (this.orders.length === 0) throw new InvalidParameterError('orders', options.orders, 'a non-empty list of orders > 1');
    this.options = { allowConjecture: options.allowConjecture };
    this.optimizeOrder = options.optimizeOrder ?? options.orders === undefined;
    this.rdp = new Float64Array(this.orders.length);
  }

  /** Whether the accountant can handle the event (and all its sub-events). */
  supports(event: DpEvent): boolean {
    try {
      checkRdpSupport(event, this.options);
      neighboringRelationOf(event);
      return true;
    } catch (error) {
      if (error instanceof DpfitError) return false;
      throw error;
    }
  }

  /** Adds `count` adaptive repetitions of `event`; validates everything before changing state. */
  compose(event: DpEvent, count = 1): this {
    requireInteger('count', count, 0);
    const wrapped = count === 1 ? event : selfComposeEvent(event, count);
    checkRdpSupport(wrapped, this.options);
    const relation = neighboringRelationOf({ kind: 'compose', events: [...this.composed, wrapped] });
    const curve = rdpOfEvent(wrapped, this.orders, this.options);
    for (let i = 0; i < curve.length; i++) {
      if (Number.isNaN(curve[i])) throw new DpfitError('NUMERICAL', `internal error: NaN RDP at order ${this.orders[i]}`);
      this.rdp[i] += curve[i];
    }
    this.relation = relation;
    this.conjecture ||= containsConjecture(wrapped);
    this.gridded ||= containsGriddedDiscreteNoise(wrapped);
    this.composed.push(wrapped);
    return this;
  }

  /** The composed RDP curve (nondecreasing in the order: each value is the min over larger orders). */
  rdpCurve(): Float64Array {
    return monotoneEnvelope(Float64Array.from(this.rdp));
  }

  private describe(epsilon: number, delta: number, order: number, conversion: string | undefined, index: number): PrivacyGuarantee {
    const warnings: string[] = [];
    const guarantee: GuaranteeKind = this.conjecture ? 'conjecture' : 'proven';
    if (this.conjecture) warnings.push('this result rests on 004 Conj. 1-2, a conjecture: it is not a privacy guarantee');
    if (Number.isFinite(epsilon) && epsilon > 0 && this.orders.length > 1) {
      if (index === 0) warnings.push(`the best Rényi order is the smallest of the grid (${order}); smaller orders might give a smaller epsilon`);
      if (index === this.orders.length - 1 && order < Infinity) warnings.push(`the best Rényi order is the largest of the grid (${order}); larger orders might give a smaller epsilon`);
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
  getEpsilon(delta: number): PrivacyGuarantee {
    requireOpenUnit('delta', delta);
    // The conversions have slope 1 in the RDP value: one ulp up covers the coupling's correction.
    const safe = (epsilon: number) => (this.gridded ? nextUp(epsilon) : epsilon);
    const best = epsilonFromRdpCurve(this.orders, this.rdpCurve(), delta);
    const refined = this.refine(best.index, (order, rdp) => rdpToEpsilon(order, rdp, delta).epsilon);
    if (refined !== undefined && refined.value < best.epsilon) {
      const { conversion } = rdpToEpsilon(refined.order, rdpOfEvent({ kind: 'compose', events: this.composed }, [refined.order], this.options)[0], delta);
      return this.describe(safe(refined.value), delta, refined.order, conversion, best.index);
    }
    return this.describe(safe(best.epsilon), delta, best.order, best.conversion, best.index);
  }

  /**
   * Minimises `objective(order, rdp(order))` over the interval between the grid neighbours of the
   * best grid order. Every trial is a valid RDP bound at its order, accounted from scratch, so the
   * result is a valid bound whatever the minimiser does.
   */
  private refine(index: number, objective: (order: number, rdp: number) => number): { order: number; value: number } | undefined {
    if (!this.optimizeOrder || this.composed.length === 0) return undefined;
    const lo = this.orders[Math.max(0, index - 1)];
    const hi = this.orders[Math.min(this.orders.length - 1, index + 1)];
    if (!(hi > lo) || !Number.isFinite(hi)) return undefined;
    const whole: DpEvent = { kind: 'compose', events: this.composed };
    const at = (order: number) => objective(order, rdpOfEvent(whole, [order], this.options)[0]);
    const result = brentMinimize(at, lo, hi, { xTol: 1e-6 * lo });
    return { order: result.x, value: at(result.x) };
  }

  /** The smallest delta such that the composition is (epsilon, delta)-DP by this accountant. */
  getDelta(epsilon: number): PrivacyGuarantee {
    requireNonNegative('epsilon', epsilon);
    // Gridded discrete noise: evaluate one ulp below epsilon and round delta up one ulp (discrete-coupling.ts).
    const at = this.gridded && epsilon > 0 ? nextDown(epsilon) : epsilon;
    const safe = (delta: number) => (this.gridded ? Math.min(1, nextUp(delta)) : delta);
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
  return new RdpAccountant(options).compose(event).getEpsilon(delta);
}

/** delta of one event at epsilon by the RDP accountant. */
export function rdpDelta(event: DpEvent, epsilon: number, options: RdpAccountantOptions = {}): PrivacyGuarantee {
  return new RdpAccountant(options).compose(event).getDelta(epsilon);
}
