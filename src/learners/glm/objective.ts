/**
 * The regularised (and possibly perturbed, possibly clipped) GLM objective of `003` Sec. 2.2 and
 * Alg. 1:
 *
 *   L(theta) = sum_i l(theta; x_i, y_i) + lambda/2 ||theta||^2 + b . theta,
 *
 * where b is the objective-perturbation noise (absent: b = 0) and l is either the loss itself or,
 * given a clipping norm C, the clipped-gradient loss l_C of `003` App. F.2 (see
 * `clipped-gradient.ts`). Value, gradient and Hessian; the gradient is what `lbfgs` and `newton`
 * consume.
 */
import { InvalidParameterError } from '../../errors.js';
import type { Objective } from '../../math/lbfgs.js';
import { requireNonNegative, requirePositiveOrInfinity } from '../../validate.js';
import { clippedSecondDerivative, clippedValueBeyond, clipThreshold } from './clipped-gradient.js';
import { checkGlmShape, checkTheta, rowNorms, validateGlmData } from './data.js';
import { claimSlot, featureMemoryOf, kernelsFor, releaseSlot, slotPointers, storeFeatures, type FeatureMemory } from './kernels/feature-memory.js';
import { accumulateBlock, BLOCK, marginsBlock } from './kernels/kernels.js';
import type { WasmKernelExports } from './kernels/wasm-kernels.js';
import type { GlmData, GlmLoss } from './types.js';

export interface GlmObjectiveOptions {
  /** lambda >= 0 (default 0). */
  regularization?: number;
  /** b, length d: the linear perturbation b . theta of objective perturbation (default none). */
  linear?: Float64Array;
  /**
   * C > 0: replace every l by the clipped-gradient loss l_C of `003` App. F.2, so each
   * per-example gradient has norm <= C. Default Infinity: no clipping.
   */
  clipNorm?: number;
}

interface Resolved {
  lambda: number;
  b: Float64Array | null;
  clipNorm: number;
}

function resolve(options: GlmObjectiveOptions, d: number): Resolved {
  const lambda = requireNonNegative('regularization', options.regularization ?? 0);
  const clipNorm = requirePositiveOrInfinity('clipNorm', options.clipNorm ?? Infinity);
  const b = options.linear ?? null;
  if (b !== null) checkTheta(b, d, 'linear');
  return { lambda, b, clipNorm };
}

/**
 * Cascade (pairwise) summation of per-block partial sums: block k's partial is merged like a
 * binary counter, so every partial passes through at most log2(blocks) + 1 additions before the
 * final collection (Higham, "Accuracy and Stability of Numerical Algorithms", Sec. 4.2). It keeps
 * the gradient's worst-case rounding error proportional to log n instead of n, which the
 * certified minimisers' checks rely on (`glmGradientRoundingBound`).
 */
class CascadeSum {
  private readonly levels: Float64Array[] = [];
  private readonly used: boolean[] = [];
  constructor(private readonly d: number) {}

  /** Adds `part` (a block's partial sum; it is consumed as scratch). */
  push(part: Float64Array): void {
    let level = 0;
    let carry = part;
    while (this.used[level]) {
      const held = this.levels[level];
      for (let j = 0; j < this.d; j++) carry[j] += held[j];
      this.used[level] = false;
      level++;
    }
    if (this.levels[level] === undefined) this.levels[level] = new Float64Array(this.d);
    this.levels[level].set(carry);
    this.used[level] = true;
  }

  /** Writes the total into `out` (lowest levels first). */
  total(out: Float64Array): void {
    out.fill(0);
    for (let level = 0; level < this.levels.length; level++) {
      if (!this.used[level]) continue;
      const held = this.levels[level];
      for (let j = 0; j < this.d; j++) out[j] += held[j];
    }
  }
}

/**
 * A public bound on ||computed gradient - exact gradient||_2 of L at theta, for n rows, d
 * coordinates, per-example gradients of norm <= termBound (the clip norm, or the loss's Lipschitz
 * constant for rows of norm <= R), regulariser lambda and perturbation norm ||b||. Every term of
 * a gradient coordinate passes through at most D roundings: 1 (c_i x_ij) + 3 (a group of four
 * rows) + BLOCK/4 + 3 (the block's partial) + 2 (log2(blocks) + 1) (cascade and collection) + 2
 * (lambda theta_j and b_j), so the error is <= gamma_D (n termBound + lambda ||theta|| + ||b||)
 * (Higham, Sec. 4.2; gamma_D = D u / (1 - D u), u = 2^-53), with termBound inflated by
 * (1 + (d + 8) u) for the rounding of the clipping threshold. CHANGE THIS BOUND if
 * `valueAndGradient`'s summation order changes.
 */
export function glmGradientRoundingBound(n: number, d: number, termBound: number, lambda: number, thetaNorm: number, bNorm: number): number {
  const u = Number.EPSILON / 2;
  const blocks = Math.max(1, Math.ceil(n / BLOCK));
  const depth = 1 + 3 + BLOCK / 4 + 3 + 2 * (Math.ceil(Math.log2(blocks)) + 1) + 2;
  const gamma = (depth * u) / (1 - depth * u);
  return gamma * (n * termBound * (1 + (d + 8) * u) + lambda * thetaNorm + bNorm) * (1 + 8 * u);
}

/** The WebAssembly kernels bound to the feature memory that holds x (`kernels/feature-memory.ts`). */
interface ObjectiveKernels {
  readonly info: FeatureMemory;
  readonly kernels: WasmKernelExports;
}

/** The kernels for x when it lives in a float64 feature memory and WebAssembly SIMD is available, else null. */
function objectiveKernels(x: Float64Array, d: number): ObjectiveKernels | null {
  const info = featureMemoryOf(x, d);
  if (info === undefined || info.precision !== 'float64') return null;
  const kernels = kernelsFor(info.memory);
  return kernels === null ? null : { info, kernels };
}

/**
 * Features with at least this many elements are worth a copy into a feature memory
 * (`withKernelFeatures`): the copy costs about one pass over the data, and every objective
 * evaluation then reads them with the SIMD kernels (Adult, 32561 x 146: about 2.5 times faster per
 * evaluation, `bench/kernel.ts`). Below it the JavaScript kernels are used (the same numbers).
 */
export const KERNEL_FEATURES_MIN_ELEMENTS = 65536;

/** Copies made by `withKernelFeatures`, by source array (an entry dies with its source). */
const kernelCopies = new WeakMap<Float64Array, Float64Array>();

/** Whether a and b (same length) hold the same bits (so -0 differs from 0). */
function sameBits(a: Float64Array, b: Float64Array): boolean {
  const u = new Uint32Array(a.buffer, a.byteOffset, 2 * a.length);
  const w = new Uint32Array(b.buffer, b.byteOffset, 2 * b.length);
  for (let k = 0; k < u.length; k++) if (u[k] !== w[k]) return false;
  return true;
}

/**
 * `data` with its features in a feature memory (`kernels/feature-memory.ts`), where
 * `glmObjective` computes the margins x theta and the gradient sums X^T c with the WebAssembly
 * SIMD kernels: a copy of x (the same bits) when x is not in one yet and has at least
 * KERNEL_FEATURES_MIN_ELEMENTS elements; `data` itself otherwise. The learners that minimise a
 * GLM objective (AMP, objective and output perturbation) call it once per run. The copy is kept
 * while x lives, so that repeated runs on the same features (tuning, one-vs-rest, audits) copy
 * once; before it is reused it is compared with x bit for bit (x may have been refilled), which
 * reads the data once, as the copy would.
 */
export function withKernelFeatures(data: GlmData): GlmData {
  const { x, n, d } = data;
  if (featureMemoryOf(x, d) !== undefined || x.length < KERNEL_FEATURES_MIN_ELEMENTS) return data;
  const known = kernelCopies.get(x);
  if (known !== undefined && featureMemoryOf(known, d) !== undefined && sameBits(known, x)) return { ...data, x: known };
  const stored = storeFeatures(x, n, d, 'float64');
  if (!(stored instanceof Float64Array) || featureMemoryOf(stored, d) === undefined) return data;
  kernelCopies.set(x, stored);
  return { ...data, x: stored };
}

/**
 * One evaluation, block by block (BLOCK rows: margins, the loss's values and derivatives, the
 * clipped-gradient loss's changes, the block's gradient sum into the cascade). With `wasm` the
 * margins and the block's gradient sum come from the SIMD kernels (`wasm-kernels.ts` `margins64`,
 * `accumulate64`) on the same BLOCK-row blocks, which compute the JavaScript kernels' numbers bit
 * for bit (`test/learners/glm/kernel-paths.test.ts`, `objective.test.ts`): the value, the gradient,
 * and so every optimiser's path and the minimiser it returns are the same on either path, and
 * `glmGradientRoundingBound` covers both.
 */
function valueAndGradient(
  loss: GlmLoss, data: GlmData, theta: Float64Array, grad: Float64Array, o: Resolved, norms: Float64Array | null,
  wasm: ObjectiveKernels | null = null,
): number {
  const slot = wasm === null ? -1 : claimSlot(wasm.info);
  try {
    return evaluate(loss, data, theta, grad, o, norms, slot < 0 ? null : wasm, slot);
  } finally {
    if (slot >= 0) releaseSlot((wasm as ObjectiveKernels).info, slot);
  }
}

function evaluate(
  loss: GlmLoss, data: GlmData, theta: Float64Array, grad: Float64Array, o: Resolved, norms: Float64Array | null,
  wasm: ObjectiveKernels | null, slot: number,
): number {
  const { x, y, n, d } = data;
  let z: Float64Array = new Float64Array(BLOCK);
  const yb = new Float64Array(BLOCK);
  const v = new Float64Array(BLOCK);
  let c: Float64Array = new Float64Array(BLOCK);
  const part = new Float64Array(d);
  const cascade = new CascadeSum(d);
  // The slot's scratch (`feature-memory.ts`): theta, the block's margins z and coefficients c, its partial sum.
  let ptr = { theta: 0, z: 0, c: 0, t: 0, part: 0 };
  let partView: Float64Array = part;
  if (wasm !== null) {
    ptr = slotPointers(wasm.info, slot, d);
    const buffer = wasm.info.memory.buffer;
    new Float64Array(buffer, ptr.theta, d).set(theta);
    z = new Float64Array(buffer, ptr.z, BLOCK);
    c = new Float64Array(buffer, ptr.c, BLOCK);
    partView = new Float64Array(buffer, ptr.part, d);
  }
  let total = 0;
  for (let start = 0; start < n; start += BLOCK) {
    const m = Math.min(BLOCK, n - start);
    if (wasm === null) marginsBlock(x, y, d, theta, start, m, undefined, z, yb, null);
    else {
      wasm.kernels.margins64(wasm.info.xOffset + 8 * start * d, d, ptr.theta, m, ptr.z);
      for (let k = 0; k < m; k++) yb[k] = y[start + k];
    }
    loss.values(z, yb, v, m);
    loss.derivatives(z, yb, c, m);
    if (norms !== null) {
      // Clipped-gradient loss (003 App. F.2): only rows with |f'| > t change.
      for (let k = 0; k < m; k++) {
        const t = clipThreshold(o.clipNorm, norms[start + k]);
        if (c[k] > t || c[k] < -t) {
          const slope = c[k] > 0 ? t : -t;
          v[k] = clippedValueBeyond(loss, z[k], yb[k], slope);
          c[k] = slope;
        } else if (c[k] !== c[k]) {
          // A NaN derivative (an overflowed margin) becomes +0, as in every clipped sum (`clippedDerivative`).
          v[k] = 0;
          c[k] = 0;
        }
      }
    }
    for (let k = 0; k < m; k++) total += v[k];
    partView.fill(0);
    if (wasm === null) accumulateBlock(x, d, start, m, undefined, c, part);
    else {
      wasm.kernels.accumulate64(wasm.info.xOffset + 8 * start * d, d, m, ptr.c, ptr.part);
      part.set(partView);
    }
    cascade.push(part);
  }
  cascade.total(grad);
  let sq = 0;
  let lin = 0;
  for (let j = 0; j < d; j++) {
    sq += theta[j] * theta[j];
    grad[j] += o.lambda * theta[j];
    if (o.b !== null) {
      lin += o.b[j] * theta[j];
      grad[j] += o.b[j];
    }
  }
  return total + 0.5 * o.lambda * sq + lin;
}

/**
 * Value of L(theta) with its gradient written into `grad` (length d). Checks shapes only; use
 * `glmObjective` to validate the data once and optimise.
 */
export function glmValueAndGradient(
  loss: GlmLoss, data: GlmData, theta: Float64Array, grad: Float64Array, options: GlmObjectiveOptions = {},
): number {
  checkGlmShape(data);
  checkTheta(theta, data.d);
  if (!(grad instanceof Float64Array) || grad.length !== data.d) throw new InvalidParameterError('grad.length', grad?.length, `d = ${data.d}`);
  const o = resolve(options, data.d);
  return valueAndGradient(loss, data, theta, grad, o, o.clipNorm === Infinity ? null : rowNorms(data), objectiveKernels(data.x, data.d));
}

/**
 * L(theta) as an `Objective` for `lbfgs`/`newton`. Validates the data (shape, finite features,
 * labels) and the options once; the row norms needed for clipping are computed once.
 *
 * @example
 * const f = glmObjective(logisticLoss, data, {regularization: 1});
 * const {x: theta, converged} = lbfgs(f, new Float64Array(data.d), {gradTolerance: 1e-8});
 */
export function glmObjective(loss: GlmLoss, data: GlmData, options: GlmObjectiveOptions = {}): Objective {
  validateGlmData(loss, data);
  const o = resolve(options, data.d);
  const norms = o.clipNorm === Infinity ? null : rowNorms(data);
  const wasm = objectiveKernels(data.x, data.d);
  return (theta, grad) => valueAndGradient(loss, data, theta, grad, o, norms, wasm);
}

/**
 * Hessian of L at theta, sum_i f''(x_i . theta; y_i) x_i x_i^T + lambda I (row-major d x d, both
 * triangles filled), O(n d^2): for small d (Newton). With `clipNorm`, f'' is that of the
 * clipped-gradient loss (0 on its linear pieces). The b . theta term has no curvature.
 */
export function glmHessian(
  loss: GlmLoss, data: GlmData, theta: Float64Array, options: GlmObjectiveOptions = {}, out?: Float64Array,
): Float64Array {
  checkGlmShape(data);
  const { x, y, n, d } = data;
  checkTheta(theta, d);
  const o = resolve(options, d);
  const h = out ?? new Float64Array(d * d);
  if (h.length !== d * d) throw new InvalidParameterError('out.length', h.length, `d * d = ${d * d}`);
  h.fill(0);
  for (let i = 0; i < n; i++) {
    const off = i * d;
    let z = 0;
    let ss = 0;
    for (let j = 0; j < d; j++) {
      const v = x[off + j];
      z += v * theta[j];
      ss += v * v;
    }
    const w = o.clipNorm === Infinity
      ? loss.secondDerivative(z, y[i])
      : clippedSecondDerivative(loss, z, y[i], clipThreshold(o.clipNorm, Math.sqrt(ss)));
    if (w === 0) continue;
    for (let j = 0; j < d; j++) {
      const wx = w * x[off + j];
      const row = j * d;
      for (let k = 0; k <= j; k++) h[row + k] += wx * x[off + k];
    }
  }
  for (let j = 0; j < d; j++) {
    h[j * d + j] += o.lambda;
    for (let k = 0; k < j; k++) h[k * d + j] = h[j * d + k];
  }
  return h;
}

/** `glmHessian` as a `HessianCallback` for `newton` (same options as `glmObjective`). */
export function glmHessianCallback(loss: GlmLoss, data: GlmData, options: GlmObjectiveOptions = {}): (theta: Float64Array, out: Float64Array) => void {
  checkGlmShape(data);
  resolve(options, data.d);
  return (theta, out) => {
    glmHessian(loss, data, theta, options, out);
  };
}
