/**
 * RDP of long heterogeneous DP-SGD schedules: many Poisson-subsampled Gaussian steps with
 * different noise multipliers z_t (a noise schedule) and/or sampling probabilities q_t, accounted
 * in O(grid) exact curve evaluations plus O(steps) cheap operations per order, instead of one
 * exact curve (~0.4 ms) per distinct step.
 *
 * ## The bound (chords of a separately convex function)
 *
 * With tau = 1/z^2 (the precision), the MTZ moment of one step is (`poisson-gaussian.ts`)
 *
 *   A(q, tau) = E_{u ~ N(0,1)} [ (1 - q + q Y_tau)^alpha ],   Y_tau = exp(sqrt(tau) u - tau/2),
 *
 * and its RDP at order alpha is log A / (alpha - 1). For every real alpha > 1:
 *
 * (i) A is convex and nondecreasing in tau for fixed q. Y_tau has the law of the geometric
 *     Brownian motion exp(W_tau - tau/2) at time tau, a martingale, and M_tau = 1 - q + q Y_tau
 *     satisfies dM = q Y dW. By Ito's formula, with f(m) = m^alpha (all moments are finite),
 *       dA/dtau = (q^2 / 2) E[g(Y_tau)],   g(y) = f''(1 - q + q y) y^2 = alpha (alpha - 1) (1 - q + q y)^(alpha - 2) y^2.
 *     With u = 1 - q + q y and beta = alpha - 2, g''(y) = alpha (alpha - 1) u^(beta - 2)
 *     [(beta + 1)(beta + 2) q^2 y^2 + 4 (beta + 1)(1 - q) q y + 2 (1 - q)^2] > 0 for y > 0, since
 *     beta + 1 = alpha - 1 > 0: g is convex. For tau < tau', Y_tau' = Y_tau V with V independent of
 *     Y_tau and E V = 1, so E g(Y_tau') >= E g(Y_tau) (Jensen, conditionally on Y_tau). Hence
 *     dA/dtau is >= 0 and nondecreasing: A is nondecreasing and convex in tau.
 * (ii) A is convex and nondecreasing in q for fixed tau: q -> (1 + q (Y - 1))^alpha is convex (a
 *     power alpha >= 1 of a positive affine function), so is its expectation; A(0, tau) = 1 <= A
 *     (Rényi divergences are >= 0), so the convex A is nondecreasing on [0, 1].
 * (iii) Bilinear chords. Let q_lo <= q <= q_hi, tau_B <= tau <= tau_A, q = mu q_hi + (1 - mu) q_lo
 *     and tau = lambda tau_A + (1 - lambda) tau_B. By (i) at q, then (ii) at tau_A and at tau_B,
 *       A(q, tau) - 1 <= sum over the corners of w_c (A_c - 1),
 *     with weights mu lambda, mu (1 - lambda), (1 - mu) lambda, (1 - mu)(1 - lambda) on
 *     (q_hi, tau_A), (q_hi, tau_B), (q_lo, tau_A), (q_lo, tau_B). By the monotonicity in (i)-(ii),
 *     rounding lambda and mu UP keeps the inequality (more weight on the larger corner), and so does
 *     replacing each A_c - 1 by an upper bound. The step's RDP is then at most
 *     log1p(sum_c w_c (A_c - 1)) / (alpha - 1), and also at most alpha tau / 2 (the unsampled
 *     Gaussian, which the exact path uses as a cap too).
 *
 * ## The grid, and what it costs
 *
 * Corners lie on geometric grids with P points per doubling (default 1024, `DEFAULT_SCHEDULE_GRID`):
 * z on 2^(k/P), and q likewise when a composition has more than `EXACT_SAMPLING_PROBABILITIES`
 * distinct sampling probabilities (otherwise every q is its own node, mu = 1). A step whose z is
 * a node uses that node alone and gets exactly the exact path's value. The chord error is second
 * order in the cell width: for a term e^{c tau} of A - 1 it is at most a factor
 * cosh(c dtau / 2) ~ 1 + (c dtau)^2 / 8, with dtau / tau = 1 - 2^(-2/P) = 1.35e-3 at P = 1024, and
 * tends to a relative dtau / (2 tau) = 7e-4 of the RDP where one term dominates (large orders).
 * Measured against the step-by-step sum (1500 steps, z from 0.8 to 1.3, q = 0.01; see
 * test/accounting/rdp/schedule.test.ts): +3e-7 (relative) at order 2, +1.4e-6 at 5, +4.5e-5 at 10, +6e-5
 * at 20, +3e-4 to +7e-4 from order 64 up; epsilon at delta = 1e-5 +1.8e-6 (and +1.9e-7 for the
 * 1e5-step schedule of `npm run bench -- schedule`). Coarser grids are looser where the curve is
 * steep in z (2x at order 7.5 for z ~ 0.7, q = 0.001 on 16 points per doubling), never invalid.
 * Cost: one exact curve per corner (~0.4 ms on the default orders; 719 corners for z in
 * [0.8, 1.3]) and, per order, a few floating-point operations per distinct step.
 *
 * Rounding. Each corner value is an upper bound with its own rounding allowance
 * (`poissonGaussianLogExcessCurve`); lambda and mu are rounded up by a bound on their own rounding
 * error; the combination log(sum w_c e^{L_c}) is computed as L_max + log(sum w_c e^{L_c - L_max}) and
 * enlarged by a bound on its rounding error. A step with a single corner is not touched (it is
 * the exact value).
 */
import { geometricBracket } from '../geometric-grid.js';
import { MAX_SERIES_ORDER, rdpFromLogExcess } from './series.js';
import { poissonGaussianLogExcessCurve } from './subsampling/poisson-gaussian.js';

const EPS = Number.EPSILON;

/** Grid points per doubling of z (and q) of the chord bounds. */
export const DEFAULT_SCHEDULE_GRID = 1024;
/** Up to this many distinct sampling probabilities, each is its own node (no chord in q). */
export const EXACT_SAMPLING_PROBABILITIES = 16;
/** Up to this many distinct steps, schedules are accounted step by step (exactly). */
export const EXACT_SCHEDULE_STEPS = 256;

/** One distinct step: Poisson sampling q in (0, 1), noise multiplier z in (0, Infinity), and how often it occurs. */
export interface ScheduleStep {
  readonly q: number;
  readonly z: number;
  readonly count: number;
}


/** Steps grouped by the cell of corners they use. */
interface Cell {
  /** Corner indices (1, 2 or 4). */
  readonly corners: number[];
  /** Indices of the steps in this cell. */
  readonly steps: number[];
}

export class SampledGaussianSchedule {
  /** Corner (q, z) pairs whose exact curves the bound needs. */
  readonly cornerQ: number[] = [];
  readonly cornerZ: number[] = [];
  private readonly cornerIndex = new Map<string, number>();
  private readonly cells = new Map<string, Cell>();
  /** Per step: weights of its cell's corners (4 slots), its count, 2 z^2. */
  private readonly weights: Float64Array;
  private readonly counts: Float64Array;
  private readonly twoZSquared: Float64Array;
  /** Corner curves already computed, by order. */
  private readonly cache = new Map<number, Float64Array>();

  private constructor(
    readonly steps: readonly ScheduleStep[],
    readonly pointsPerDoubling: number,
  ) {
    this.weights = new Float64Array(4 * steps.length);
    this.counts = new Float64Array(steps.length);
    this.twoZSquared = new Float64Array(steps.length);
    const distinctQ = new Set(steps.map((s) => s.q));
    const qOnGrid = distinctQ.size > EXACT_SAMPLING_PROBABILITIES;
    steps.forEach((step, t) => {
      const { q, z, count } = step;
      this.counts[t] = count;
      this.twoZSquared[t] = 2 * z * z; // alpha / (2 z^2) evaluated as on the exact path
      // z: node A (smaller z, larger tau) and B; lambda = weight of A.
      const zb = geometricBracket(z, pointsPerDoubling);
      const zNodes: [number, number][] = [];
      if (zb.lo === z) zNodes.push([z, 1]);
      else {
        const tauA = 1 / (zb.lo * zb.lo);
        const tauB = 1 / (zb.hi * zb.hi);
        const tau = 1 / (z * z);
        // Each tau carries <= 2 roundings (relative 2 EPS); the quotient's error is below
        // 16 EPS tauA / (tauA - tauB): round lambda up by that (module comment, Rounding).
        const raw = (tau - tauB) / (tauA - tauB);
        const lambda = Math.min(1, Math.max(0, raw) + (16 * EPS * tauA) / (tauA - tauB));
        zNodes.push([zb.lo, lambda], [zb.hi, 1 - lambda]);
      }
      // q: node q_hi (weight mu) and q_lo.
      const qNodes: [number, number][] = [];
      if (!qOnGrid) qNodes.push([q, 1]);
      else {
        const qb = geometricBracket(q, pointsPerDoubling);
        const hi = Math.min(1, qb.hi);
        if (qb.lo === q) qNodes.push([q, 1]);
        else {
          const raw = (q - qb.lo) / (hi - qb.lo);
          const mu = Math.min(1, Math.max(0, raw) + (8 * EPS * hi) / (hi - qb.lo));
          qNodes.push([hi, mu], [qb.lo, 1 - mu]);
        }
      }
      const corners: number[] = [];
      let slot = 0;
      for (const [qn, wq] of qNodes) {
        for (const [zn, wz] of zNodes) {
          corners.push(this.corner(qn, zn));
          this.weights[4 * t + slot++] = wq * wz;
        }
      }
      const cellKey = corners.join(',');
      let cell = this.cells.get(cellKey);
      if (cell === undefined) this.cells.set(cellKey, (cell = { corners, steps: [] }));
      cell.steps.push(t);
    });
  }

  private corner(q: number, z: number): number {
    const key = `${q}|${z}`;
    let index = this.cornerIndex.get(key);
    if (index === undefined) {
      index = this.cornerQ.length;
      this.cornerIndex.set(key, index);
      this.cornerQ.push(q);
      this.cornerZ.push(z);
    }
    return index;
  }

  /**
   * The schedule's chord-bound plan, or undefined when it would not pay: at most
   * `EXACT_SCHEDULE_STEPS` distinct steps, or more corners than half the distinct steps.
   */
  static plan(steps: readonly ScheduleStep[], pointsPerDoubling = DEFAULT_SCHEDULE_GRID): SampledGaussianSchedule | undefined {
    if (steps.length <= EXACT_SCHEDULE_STEPS || !Number.isFinite(pointsPerDoubling)) return undefined;
    const schedule = new SampledGaussianSchedule(steps, pointsPerDoubling);
    return schedule.cornerQ.length <= steps.length / 2 ? schedule : undefined;
  }

  /** Number of exact curve evaluations the bound needs per order. */
  get cornerCount(): number {
    return this.cornerQ.length;
  }

  /**
   * The corner curves at `orders` (finite series orders only), one array per order. `onCorner` is
   * called after each corner's curve is computed.
   */
  private cornerValues(orders: readonly number[], onCorner?: () => void): Map<number, Float64Array> {
    const missing = [...new Set(orders)].filter((a) => a > 1 && a <= MAX_SERIES_ORDER && !this.cache.has(a));
    if (missing.length > 0) {
      const byOrder = missing.map(() => new Float64Array(this.cornerCount));
      for (let c = 0; c < this.cornerCount; c++) {
        const curve = poissonGaussianLogExcessCurve(this.cornerQ[c], this.cornerZ[c], missing);
        for (let i = 0; i < missing.length; i++) byOrder[i][c] = curve[i];
        onCorner?.();
      }
      if (this.cache.size > 512) this.cache.clear();
      missing.forEach((a, i) => this.cache.set(a, byOrder[i]));
    }
    const out = new Map<number, Float64Array>();
    for (const a of orders) {
      const values = this.cache.get(a);
      if (values !== undefined) out.set(a, values);
    }
    return out;
  }

  /** The sum over the steps of count x (an upper bound on the step's RDP), at each order. */
  rdp(orders: readonly number[], onCorner?: () => void): Float64Array {
    const values = this.cornerValues(orders, onCorner);
    const out = new Float64Array(orders.length);
    const n = this.steps.length;
    for (let i = 0; i < orders.length; i++) {
      const alpha = orders[i];
      if (alpha === Infinity) {
        out[i] = Infinity; // every step has q > 0 and a finite z
        continue;
      }
      if (alpha > MAX_SERIES_ORDER) {
        // The exact path's value there: the unsampled Gaussian's alpha / (2 z^2).
        let total = 0;
        for (let t = 0; t < n; t++) total += this.counts[t] * (alpha / this.twoZSquared[t]);
        out[i] = total;
        continue;
      }
      out[i] = this.sumAtOrder(alpha, values.get(alpha)!);
    }
    return out;
  }

  private sumAtOrder(alpha: number, corner: Float64Array): number {
    let total = 0;
    const scaled = [0, 0, 0, 0];
    for (const cell of this.cells.values()) {
      const m = cell.corners.length;
      let lmax = -Infinity;
      let maxAbs = 0;
      for (let j = 0; j < m; j++) {
        const l = corner[cell.corners[j]];
        if (l > lmax) lmax = l;
        if (Number.isFinite(l) && Math.abs(l) > maxAbs) maxAbs = Math.abs(l);
      }
      const finite = Number.isFinite(lmax);
      if (finite) for (let j = 0; j < m; j++) scaled[j] = Math.exp(corner[cell.corners[j]] - lmax);
      for (const t of cell.steps) {
        const full = alpha / this.twoZSquared[t];
        let rdp: number;
        if (lmax === -Infinity) rdp = 0;
        else if (lmax === Infinity) rdp = full;
        else {
          let logExcess: number;
          if (m === 1) logExcess = lmax;
          else {
            let s = 0;
            for (let j = 0; j < m; j++) s += this.weights[4 * t + j] * scaled[j];
            const logS = Math.log(s);
            logExcess = lmax + logS;
            // Rounding of the exponents (<= 2 EPS (|L_c| + |L_max|) each), of the weights, the sum and the logarithms.
            logExcess += 8 * EPS * (2 * maxAbs + Math.abs(logS) + 4) + 2 * EPS * Math.abs(logExcess);
          }
          rdp = Math.min(rdpFromLogExcess(logExcess, alpha), full);
        }
        total += this.counts[t] * rdp;
      }
    }
    return total;
  }
}
