/**
 * Logistic loss f(z; y) = log(1 + exp(-y z)) for labels y in {-1, +1} (the convention of `003`;
 * map {0, 1} labels with `toSignedLabels`). f'(z; y) = -y sigma(-y z) with |f'| < 1, and
 * f''(z; y) = sigma(z) sigma(-z) <= 1/4 (at z = 0), so on rows with ||x||_2 <= R the per-example
 * loss has L = R and beta = R^2 / 4 (`003` Sec. 5 uses R = 1 after row normalisation).
 *
 * f' uses `deterministicExp` (within 4 ulp of e^x), the exp of the WebAssembly SIMD gradient
 * kernel, so that every path of a clipped-gradient sum gives the same bits (`per-example.ts`).
 */
import { deterministicExp } from '../../../math/exp.js';
import type { GlmLoss, MarginDomain } from '../types.js';

/** log(1 + exp(t)) without overflow (Mächler 2012 branch points, as `log1pExp` in math). */
function softplus(t: number): number {
  if (t <= -37) return Math.exp(t);
  if (t <= 18) return Math.log1p(Math.exp(t));
  if (t <= 33.3) return t + Math.exp(-t);
  return t;
}

/** 1 / (1 + exp(-t)); exact limits 0 and 1, no NaN. */
function sigmoid(t: number): number {
  return 1 / (1 + Math.exp(-t));
}

export const logisticLoss: GlmLoss = Object.freeze({
  name: 'logistic',
  labels: 'signed' as const,
  parameters: Object.freeze({}),
  value(z: number, y: number): number {
    return softplus(-y * z);
  },
  derivative(z: number, y: number): number {
    return -y / (1 + deterministicExp(y * z)); // -y sigma(-y z)
  },
  values(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
    for (let k = 0; k < count; k++) out[k] = softplus(-y[k] * z[k]);
  },
  derivatives(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void {
    for (let k = 0; k < count; k++) {
      const yk = y[k];
      out[k] = -yk / (1 + deterministicExp(yk * z[k]));
    }
  },
  secondDerivative(z: number, _y: number): number {
    // sigma(z)(1 - sigma(z)) written without the cancellation of 1 - sigma(z) for large z.
    return sigmoid(z) * sigmoid(-z);
  },
  marginForDerivative(g: number, y: number): number {
    // g = -y sigma(-y u)  <=>  sigma(-y u) = -g y =: q in (0, 1)  <=>  u = -y log(q / (1 - q)).
    const q = -g * y;
    if (!(q > 0 && q < 1)) return NaN;
    return -y * (Math.log(q) - Math.log1p(-q));
  },
  derivativeBound(_domain?: MarginDomain): number {
    return 1;
  },
  curvatureBound: 0.25,
});
