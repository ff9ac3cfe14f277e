/**
 * Rényi DP -> (epsilon, delta) conversions for a single order. Both are valid upper bounds; callers
 * take the smaller (`rdpToEpsilon`). An epsilon is never negative (ACCOUNTING-NOTES: Opacus can
 * return one): results are clamped at 0.
 */
import { requireOpenUnit } from '../../validate.js';

export type RdpConversion = 'mironov' | 'improved';

/**
 * Mironov 2017, Prop. 3: an (alpha, rdp)-RDP mechanism is (rdp + log(1/delta)/(alpha-1), delta)-DP.
 * Used by `000` Cor. 1 and `004` Sec. 2.5.
 */
export function rdpToEpsilonMironov(order: number, rdp: number, delta: number): number {
  if (!(order > 1) || !(rdp >= 0)) return Infinity;
  if (rdp === Infinity) return Infinity;
  if (order === Infinity) return rdp; // D_infinity is pure DP: (rdp, 0)-DP
  return Math.max(0, rdp - Math.log(delta) / (order - 1));
}

/**
 * The improved conversion of Balle et al. 2020 (Thm. 21) / Canonne, Kamath, Steinke 2020 (Prop. 12):
 * epsilon = rdp + log((alpha-1)/alpha) - (log(delta) + log(alpha)) / (alpha - 1).
 */
export function rdpToEpsilonImproved(order: number, rdp: number, delta: number): number {
  if (!(order > 1) || !(rdp >= 0)) return Infinity;
  if (rdp === Infinity) return Infinity;
  if (order === Infinity) return rdp; // D_infinity is pure DP: (rdp, 0)-DP
  const value = rdp + Math.log1p(-1 / order) - (Math.log(delta) + Math.log(order)) / (order - 1);
  return Math.max(0, value);
}

/** The smaller of the two valid conversions at one order, and which one achieved it. */
export function rdpToEpsilon(order: number, rdp: number, delta: number): { epsilon: number; conversion: RdpConversion } {
  requireOpenUnit('delta', delta);
  const mironov = rdpToEpsilonMironov(order, rdp, delta);
  const improved = rdpToEpsilonImproved(order, rdp, delta);
  return improved <= mironov ? { epsilon: improved, conversion: 'improved' } : { epsilon: mironov, conversion: 'mironov' };
}

/** log delta at one order for a target epsilon: the smaller of Mironov's and the improved conversion. */
export function rdpToLogDelta(order: number, rdp: number, epsilon: number): number {
  if (!(order > 1) || rdp === Infinity) return 0;
  if (order === Infinity) return rdp <= epsilon ? -Infinity : 0; // pure DP
  const mironov = (order - 1) * (rdp - epsilon);
  // Inverse of rdpToEpsilonImproved: log delta = (alpha-1)(rdp - eps + log(1 - 1/alpha)) - log(alpha).
  const improved = (order - 1) * (rdp - epsilon + Math.log1p(-1 / order)) - Math.log(order);
  return Math.min(0, mironov, improved);
}

export interface CurveEpsilon {
  readonly epsilon: number;
  readonly order: number;
  readonly index: number;
  readonly conversion: RdpConversion;
}

/** The best (epsilon, delta) over an RDP curve on a grid of orders: min over orders and conversions. */
export function epsilonFromRdpCurve(orders: readonly number[], rdp: ArrayLike<number>, delta: number): CurveEpsilon {
  requireOpenUnit('delta', delta);
  let best: CurveEpsilon = { epsilon: Infinity, order: orders[0], index: 0, conversion: 'improved' };
  for (let i = 0; i < orders.length; i++) {
    const candidate = rdpToEpsilon(orders[i], rdp[i], delta);
    if (candidate.epsilon < best.epsilon) best = { ...candidate, order: orders[i], index: i };
  }
  return best;
}

/** The best delta for a given epsilon over an RDP curve: min over orders and conversions. */
export function deltaFromRdpCurve(orders: readonly number[], rdp: ArrayLike<number>, epsilon: number): { delta: number; order: number; index: number } {
  let bestLog = 0;
  let index = 0;
  for (let i = 0; i < orders.length; i++) {
    const logDelta = rdpToLogDelta(orders[i], rdp[i], epsilon);
    if (logDelta < bestLog) {
      bestLog = logDelta;
      index = i;
    }
  }
  // Round the final exponential up: delta is an upper bound.
  return { delta: Math.min(1, Math.exp(bestLog) * (1 + 8 * Number.EPSILON)), order: orders[index], index };
}
