/**
 * Huber loss of the residual r = z - y (robust regression; Huber 1964):
 * f = r^2 / 2 for |r| <= delta, delta (|r| - delta / 2) beyond. f' = clamp(r, -delta, delta) and
 * f'' = 1 inside, 0 outside (f'' jumps at |r| = delta: f is once continuously differentiable,
 * the case Chaudhuri, Monteleoni & Sarwate 2011, Cor. 13, cover for objective perturbation).
 * On rows with ||x||_2 <= R: L = delta R and beta = R^2, for any labels.
 */
import { requirePositive } from '../../../validate.js';
import type { GlmLoss, MarginDomain } from '../types.js';

/** The Huber loss with threshold delta > 0 (default 1). */
export function huberLoss(delta = 1): GlmLoss {
  requirePositive('delta', delta);
  const halfDelta = 0.5 * delta;
  const value = (z: number, y: number): number => {
    const r = z - y;
    const a = Math.abs(r);
    return a <= delta ? 0.5 * r * r : delta * (a - halfDelta);
  };
  const derivative = (z: number, y: number): number => {
    const r = z - y;
    return r > delta ? delta : r < -delta ? -delta : r;
  };
  return Object.freeze({
    name: 'huber',
    labels: 'real' as const,
    parameters: Object.freeze({ delta }),
    value,
    derivative,
    values(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
      for (let k = 0; k < count; k++) out[k] = value(z[k], y[k]);
    },
    derivatives(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
      for (let k = 0; k < count; k++) out[k] = derivative(z[k], y[k]);
    },
    secondDerivative(z: number, y: number): number {
      return Math.abs(z - y) <= delta ? 1 : 0;
    },
    marginForDerivative(g: number, y: number): number {
      return g > -delta && g < delta ? y + g : NaN;
    },
    derivativeBound(_domain?: MarginDomain): number {
      return delta;
    },
    curvatureBound: 1,
  });
}
