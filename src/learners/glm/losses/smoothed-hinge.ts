/**
 * Quadratically smoothed hinge loss with smoothing h > 0 (Shalev-Shwartz & Zhang, "Stochastic
 * Dual Coordinate Ascent Methods for Regularized Loss Minimization", JMLR 2013, Sec. 5), for
 * labels y in {-1, +1} and margin m = y z:
 *
 *   phi(m) = 0                  for m >= 1,
 *            (1 - m)^2 / (2h)   for 1 - h < m < 1,
 *            1 - m - h / 2      for m <= 1 - h,
 *
 * f(z; y) = phi(y z), f' = y phi'(y z) in [-1, 1], f'' = phi''(y z) in {0, 1/h}. On rows with
 * ||x||_2 <= R: L = R and beta = R^2 / h. As h -> 0 it tends to the hinge max(0, 1 - m).
 */
import { requirePositive } from '../../../validate.js';
import type { GlmLoss, MarginDomain } from '../types.js';

/** The smoothed hinge with smoothing h > 0 (default 1). */
export function smoothedHingeLoss(smoothing = 1): GlmLoss {
  const h = requirePositive('smoothing', smoothing);
  const invH = 1 / h;
  const kink = 1 - h;
  const value = (z: number, y: number): number => {
    const m = y * z;
    if (m >= 1) return 0;
    if (m <= kink) return 1 - m - 0.5 * h;
    const r = 1 - m;
    return (0.5 * r * r) * invH;
  };
  const derivative = (z: number, y: number): number => {
    const m = y * z;
    if (m >= 1) return 0;
    if (m <= kink) return -y;
    return -y * (1 - m) * invH;
  };
  return Object.freeze({
    name: 'smoothedHinge',
    labels: 'signed' as const,
    parameters: Object.freeze({ smoothing: h }),
    value,
    derivative,
    values(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
      for (let k = 0; k < count; k++) out[k] = value(z[k], y[k]);
    },
    derivatives(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
      for (let k = 0; k < count; k++) out[k] = derivative(z[k], y[k]);
    },
    secondDerivative(z: number, y: number): number {
      const m = y * z;
      return m > kink && m < 1 ? invH : 0;
    },
    marginForDerivative(g: number, y: number): number {
      // g = y phi'(m) with phi'(m) = -(1 - m) / h for m in (1 - h, 1)  =>  m = 1 + h g y.
      const q = g * y;
      if (!(q > -1 && q < 0)) return NaN;
      return y * (1 + h * q);
    },
    derivativeBound(_domain?: MarginDomain): number {
      return 1;
    },
    curvatureBound: invH,
  });
}
