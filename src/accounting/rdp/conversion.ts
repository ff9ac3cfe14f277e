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
  return Math.max(0, rdp - Math.log(delta) / (order - 1));
}

/**
 * The improved conversion of Balle et al. 2020 (Thm. 21) / Canonne, Kamath, Steinke 2020 (Prop. 12):
 * epsilon = rdp + log((alpha-1)/alpha) - (log(delta) + log(alpha)) / (alpha - 1).
 */
export function rdpToEpsilonImproved(order: number, rdp: number, delta: number): number {
  if (!(order > 1) || !(rdp >= 0)) return Infinity;
  if (rdp === Infinity) return Infinity;
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
