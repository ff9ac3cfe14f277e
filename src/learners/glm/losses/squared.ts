/**
 * Squared loss f(z; y) = (z - y)^2 / 2 (least squares; with the regulariser lambda/2 ||theta||^2
 * it is ridge regression, whose minimiser is (X^T X + lambda I)^{-1} X^T y). f' = z - y and
 * f'' = 1, so beta = R^2 on rows with ||x||_2 <= R; but f' is unbounded: the loss is Lipschitz
 * only for bounded labels |y| <= B and a bounded parameter domain ||theta||_2 <= P, where
 * |f'| <= R P + B. Otherwise L is Infinity and private learners that need L must refuse (or use
 * clipping: per-example gradients for DP-GD, the clipped-gradient loss of `003` App. F.2 for AMP).
 */
import type { GlmLoss, MarginDomain } from '../types.js';

export const squaredLoss: GlmLoss = Object.freeze({
  name: 'squared',
  labels: 'real' as const,
  parameters: Object.freeze({}),
  value(z: number, y: number): number {
    const r = z - y;
    return 0.5 * r * r;
  },
  derivative(z: number, y: number): number {
    return z - y;
  },
  values(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
    for (let k = 0; k < count; k++) {
      const r = z[k] - y[k];
      out[k] = 0.5 * r * r;
    }
  },
  derivatives(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
    for (let k = 0; k < count; k++) out[k] = z[k] - y[k];
  },
  secondDerivative(_z: number, _y: number): number {
    return 1;
  },
  marginForDerivative(g: number, y: number): number {
    return Number.isFinite(g) ? y + g : NaN;
  },
  derivativeBound(domain: MarginDomain = {}): number {
    // sup |z - y| over |z| <= marginBound, |y| <= labelBound.
    return (domain.marginBound ?? Infinity) + (domain.labelBound ?? Infinity);
  },
  curvatureBound: 1,
});
