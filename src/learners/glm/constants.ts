/**
 * The constants L (Lipschitz) and beta (smoothness) of a GLM loss for rows with
 * ||x||_2 <= R, as the objective-perturbation theorems use them (`003` Thm. 2.8, 3.1, 3.2, 4.1),
 * and label checks. Constants are privacy inputs, so products are rounded up (docs/design.md:
 * "every rounding ... errs on the side of more epsilon").
 */
import { InvalidParameterError, dataValueError } from '../../errors.js';
import { requirePositive } from '../../validate.js';
import type { GlmConstants, GlmLoss } from './types.js';

export interface GlmConstantsOptions {
  /** R: bound on every row norm ||x_i||_2 (> 0; `003` assumes R = 1 after row normalisation). */
  rowNormBound: number;
  /** B: bound on |y_i| (only the squared loss uses it; default Infinity). */
  labelBound?: number;
  /** P: bound on ||theta||_2 over the parameter domain (only the squared loss uses it; default Infinity). */
  parameterNormBound?: number;
}

const view = new DataView(new ArrayBuffer(8));

/** The smallest double > x, for finite x >= 0. */
function nextUp(x: number): number {
  if (x === 0) return Number.MIN_VALUE;
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) + 1n);
  return view.getFloat64(0);
}

const SPLITTER = 134217729; // 2^27 + 1 (Veltkamp splitting)

/**
 * a * b for a, b >= 0 rounded towards +Infinity: the rounded product when it is exact, its
 * successor when rounding went down (Dekker's exact product error, "A floating-point technique
 * for extending the available precision", 1971). Valid while the product neither overflows nor
 * underflows; an infinite factor or product gives Infinity.
 */
export function mulUp(a: number, b: number): number {
  const p = a * b;
  if (!Number.isFinite(p) || p === 0) return p;
  const ca = SPLITTER * a;
  const aHi = ca - (ca - a);
  const aLo = a - aHi;
  const cb = SPLITTER * b;
  const bHi = cb - (cb - b);
  const bLo = b - bHi;
  const err = aHi * bHi - p + aHi * bLo + aLo * bHi + aLo * bLo; // exact a*b - p
  return err > 0 ? nextUp(p) : p;
}

function requireBound(param: string, value: number | undefined): number {
  if (value === undefined) return Infinity;
  if (typeof value !== 'number' || !(value >= 0)) throw new InvalidParameterError(param, value, '>= 0 (Infinity allowed)');
  return value;
}

/**
 * L = sup|f'| * R and beta = sup f'' * R^2 for rows with ||x||_2 <= R (`003` Thm. 3.1/3.2; see
 * `types.ts`). For the squared loss sup|f'| = sup|z - y| <= R P + B needs a label bound B and a
 * parameter-norm bound P; without them L is Infinity, and learners that need a finite L must
 * refuse (objective perturbation is over the unconstrained R^d, so there P is Infinity: use the
 * clipped-gradient loss of `003` App. F.2 instead, whose L is the clipping norm C).
 *
 * @example glmConstants(logisticLoss, {rowNormBound: 1}) // {lipschitz: 1, smoothness: 0.25}
 */
export function glmConstants(loss: GlmLoss, options: GlmConstantsOptions): GlmConstants {
  const r = requirePositive('rowNormBound', options.rowNormBound);
  const labelBound = requireBound('labelBound', options.labelBound);
  const parameterNormBound = requireBound('parameterNormBound', options.parameterNormBound);
  const marginBound = parameterNormBound === 0 ? 0 : mulUp(r, parameterNormBound);
  const derivative = loss.derivativeBound({ marginBound, labelBound });
  return {
    lipschitz: mulUp(derivative, r),
    smoothness: mulUp(loss.curvatureBound, mulUp(r, r)),
  };
}

/**
 * Checks that every label suits the loss ('signed': exactly -1 or +1; 'real': finite). Throws
 * `InvalidParameterError` naming the first bad label.
 */
export function checkLabels(loss: GlmLoss, y: Float64Array): void {
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    const ok = loss.labels === 'signed' ? v === 1 || v === -1 : Number.isFinite(v);
    if (!ok) {
      const expected = loss.labels === 'signed' ? '-1 or +1 (convert {0, 1} labels with toSignedLabels)' : 'a finite number';
      throw dataValueError(`y[${i}]`, expected, `${loss.name} loss`);
    }
  }
}

/**
 * Maps binary labels to the {-1, +1} convention of the classification losses: 0 -> -1, 1 -> +1,
 * -1 and +1 unchanged (a new array). Throws `InvalidParameterError` for any other value.
 */
export function toSignedLabels(y: Float64Array): Float64Array {
  // Labels in shared memory stay shared (worker threads then read them without another copy).
  const out = typeof SharedArrayBuffer !== 'undefined' && y.buffer instanceof SharedArrayBuffer ? new Float64Array(new SharedArrayBuffer(y.length * 8)) : new Float64Array(y.length);
  for (let i = 0; i < y.length; i++) {
    const v = y[i];
    if (v === 1) out[i] = 1;
    else if (v === 0 || v === -1) out[i] = -1;
    else throw dataValueError(`y[${i}]`, 'a binary label: 0, 1, -1 or +1');
  }
  return out;
}
