/**
 * The "clipped-gradient" loss of `003` Sec. 4 and App. F.2 (Song et al. 2020, Lemma 5.1, quoted
 * there as Thm. F.2), used by Approximate Minima Perturbation with gradient clipping (`003`
 * Alg. 1). It is a well-defined per-example GLM transformation: for a row x != 0 and clipping
 * norm C let t = C / ||x||_2 and, f' being non-decreasing (f convex),
 *
 *   u_L = sup{u : f'(u; y) < -t}   (-Infinity if empty),   u_H = inf{u : f'(u; y) > t}   (+Infinity if empty),
 *
 *   f_C(u; y) = f(u_L; y) - t (u - u_L)   for u < u_L,
 *               f(u; y)                   for u_L <= u <= u_H,
 *               f(u_H; y) + t (u - u_H)   for u > u_H.
 *
 * Then f_C'(u) = clamp(f'(u), -t, t), so grad l_C(theta; x, y) = f_C'(x . theta) x is the per-example
 * gradient clipped to norm C (Thm. F.2 item 2), f_C is convex with the same smoothness beta
 * (Thm. F.3), and f_C'' = f'' on (u_L, u_H), 0 outside. Note: `003` prints the outer pieces
 * without the constants f(u_L), f(u_H); those only shift f_C by a constant per piece and do not
 * change the gradient, but they make f_C continuous, which a line search needs.
 *
 * Because t depends on ||x||, l_C is a GLM with a per-example f_C: the objective helpers take the
 * clipping norm C and compute t row by row. Writing p = clamp(u, u_L, u_H), f_C(u) = f(p) + f_C'(u)(u - p),
 * which is how it is evaluated below: p is needed only for clipped examples, where
 * f'(u) is beyond +-t and p = `marginForDerivative(+-t)`.
 *
 * Rounding: t is computed as C (1 - 2^-48) / ||x|| so that every clipped gradient's norm,
 * computed in floating point, stays <= C (the sensitivity the accountant is told).
 */
import { requirePositiveOrInfinity } from '../../validate.js';
import type { GlmLoss, MarginDomain } from './types.js';

/** 1 - 2^-48: headroom of ~16 ulps for the rounding of t, f_C' and the norm. */
export const CLIP_SAFETY = 1 - 2 ** -48;

/**
 * Rows whose computed norm is below this are clipped as if their norm were this. A squared norm
 * below 2^-1000 may have lost precision or underflowed to 0 (a row of entries 1e-170 computes
 * ||x||^2 = 0, and t = C / 0 = Infinity would leave its gradient unclipped: with a tiny C and a
 * large margin, f'(z) x could exceed C). With the floor, t = C 2^500 and |f_C'| ||x|| <= C for
 * every row of true norm below 2^-500 (the squared norm's absolute error, at most d 2^-1074, is
 * within CLIP_SAFETY's headroom for d < 2^27); a zero row's gradient is 0 whatever t.
 */
export const SMALLEST_CLIP_ROW_NORM = 2 ** -500;

/**
 * The derivative bound t = C / ||x||_2 (times CLIP_SAFETY) that clips the per-example gradient of
 * a row with norm `rowNorm` to `clipNorm` (norms below `SMALLEST_CLIP_ROW_NORM` count as that).
 * Infinity (no clipping) when C is Infinity.
 */
export function clipThreshold(clipNorm: number, rowNorm: number): number {
  if (clipNorm === Infinity) return Infinity;
  return (clipNorm * CLIP_SAFETY) / Math.max(rowNorm, SMALLEST_CLIP_ROW_NORM);
}

/**
 * f_C'(z; y) = clamp(f'(z; y), -t, t), and +0 where f'(z; y) is NaN (a margin that overflowed:
 * Infinity - Infinity), as every clipped sum does (`per-example.ts`, "A NaN derivative"): a NaN
 * would pass a plain clamp and make the objective's gradient, and the minimiser released, NaN or
 * not depending on one row.
 */
export function clippedDerivative(loss: GlmLoss, z: number, y: number, threshold: number): number {
  const g = loss.derivative(z, y);
  return g > threshold ? threshold : g < -threshold ? -threshold : g !== g ? 0 : g;
}

/** f_C(z; y) for the threshold t (see the module comment); 0 where f'(z; y) is NaN (`clippedDerivative`). */
export function clippedValue(loss: GlmLoss, z: number, y: number, threshold: number): number {
  const g = loss.derivative(z, y);
  if (g <= threshold && g >= -threshold) return loss.value(z, y);
  if (g !== g) return 0;
  return clippedValueBeyond(loss, z, y, g > 0 ? threshold : -threshold);
}

/**
 * @internal f_C(z; y) on a linear piece, where f'(z; y) is beyond +-t and `slope` = sign(f'(z)) t:
 * f(p) + slope (z - p) with p = u_L or u_H = `marginForDerivative(slope)`.
 */
export function clippedValueBeyond(loss: GlmLoss, z: number, y: number, slope: number): number {
  const p = loss.marginForDerivative(slope, y);
  // p exists because the range of f' contains f'(z) and approaches 0 (GlmLoss contract); the
  // guard only protects against a loss that breaks the contract.
  if (!Number.isFinite(p)) return loss.value(z, y);
  return loss.value(p, y) + slope * (z - p);
}

/** f_C''(z; y): f'' where f' is strictly inside (-t, t), 0 on the linear pieces. */
export function clippedSecondDerivative(loss: GlmLoss, z: number, y: number, threshold: number): number {
  const g = loss.derivative(z, y);
  return g < threshold && g > -threshold ? loss.secondDerivative(z, y) : 0;
}

/**
 * The clipped-gradient loss f_C for one fixed threshold t = C / ||x||_2, as a `GlmLoss` (useful
 * for single rows and for testing; the objective helpers compute t per row instead). Its
 * derivative bound is min(t, sup|f'|) and its curvature bound that of f (`003` Thm. F.3).
 */
export function clippedGradientLoss(loss: GlmLoss, threshold: number): GlmLoss {
  requirePositiveOrInfinity('threshold', threshold);
  return Object.freeze({
    name: `clipped(${loss.name})`,
    labels: loss.labels,
    parameters: Object.freeze({ ...loss.parameters, threshold }),
    value: (z: number, y: number) => clippedValue(loss, z, y, threshold),
    derivative: (z: number, y: number) => clippedDerivative(loss, z, y, threshold),
    values(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
      for (let k = 0; k < count; k++) out[k] = clippedValue(loss, z[k], y[k], threshold);
    },
    derivatives(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
      for (let k = 0; k < count; k++) out[k] = clippedDerivative(loss, z[k], y[k], threshold);
    },
    secondDerivative: (z: number, y: number) => clippedSecondDerivative(loss, z, y, threshold),
    marginForDerivative: (g: number, y: number) => (g > -threshold && g < threshold ? loss.marginForDerivative(g, y) : NaN),
    derivativeBound: (domain?: MarginDomain) => Math.min(threshold, loss.derivativeBound(domain)),
    curvatureBound: loss.curvatureBound,
  });
}
