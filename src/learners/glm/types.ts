/**
 * Generalised linear model (GLM) losses l(theta; x, y) = f(x . theta; y) (docs/design.md,
 * "Conventions"; `003` Sec. 2.2). A loss is described by its scalar function f of the margin
 * z = x . theta, whose first two derivatives in z give the per-example gradient f'(z; y) x and
 * Hessian f''(z; y) x x^T, and by the bounds the privacy theorems need:
 *
 * - Lipschitz constant L of l in theta, i.e. a bound on ||grad l||_2 = |f'(z; y)| ||x||_2, which is
 *   sup |f'| * R for rows with ||x||_2 <= R (`003` Thm. 3.1, 3.2: "||grad l(theta; z)||_2 <= L");
 * - smoothness beta, a bound on the Hessian's largest eigenvalue f''(z; y) ||x||_2^2, i.e.
 *   sup f'' * R^2 (`003` Thm. 2.8: "grad^2 l(theta; z) <= beta I_d"; Thm. 3.1/3.2 need lambda > beta).
 */

/** The data a GLM helper reads: n rows of d features (row-major) and n labels. A `Dataset` fits. */
export interface GlmData {
  /** Row-major n x d features. */
  readonly x: Float64Array;
  /** n labels, in the loss's label convention (see `GlmLoss.labels`). */
  readonly y: Float64Array;
  readonly n: number;
  readonly d: number;
}

/**
 * Stored features: float64, or float32 (`--precision float32`: half the memory traffic). The
 * kernels read float32 values widened to float64, which is exact, and accumulate in float64, so a
 * pass over float32 storage computes exactly what it computes over the widened float64 values.
 */
export type FeatureArray = Float64Array | Float32Array;

/** `GlmData` whose features may be stored as float32 (read by the clipped-gradient sums only). */
export interface StoredGlmData {
  readonly x: FeatureArray;
  readonly y: Float64Array;
  readonly n: number;
  readonly d: number;
}

/**
 * Label convention of a loss: 'signed' means y in {-1, +1} (classification, as `003` uses
 * internally; convert {0, 1} labels with `toSignedLabels`), 'real' any finite y (regression).
 */
export type LabelKind = 'signed' | 'real';

/** Where margins and labels can lie, for losses whose derivative is unbounded (squared loss). */
export interface MarginDomain {
  /** Bound on |z| = |x . theta| (default Infinity). */
  marginBound?: number;
  /** Bound on |y| (default Infinity). */
  labelBound?: number;
}

/**
 * A convex GLM loss f(z; y). Requirements the helpers rely on: f is convex and differentiable
 * in z, f' is continuous, and for every label the closure of the range of f'(.; y) contains 0
 * (each of dpfit's losses attains or approaches its minimum), so the clipped-gradient loss of
 * `003` App. F.2 is well defined.
 *
 * The methods are called in the hot loops and do not validate their arguments. The batch methods
 * exist for speed: one call per block of rows keeps each loss's loop monomorphic.
 */
export interface GlmLoss {
  /** e.g. 'logistic'. */
  readonly name: string;
  readonly labels: LabelKind;
  /** Parameters that define the loss (e.g. `{delta: 1}` for Huber); serialisable. */
  readonly parameters: Readonly<Record<string, number>>;
  /** f(z; y). */
  value(z: number, y: number): number;
  /** f'(z; y) = d f / d z. */
  derivative(z: number, y: number): number;
  /** Batch form of `value`: out[k] = f(z[k]; y[k]) for k < count (the hot loops call this). */
  values(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void;
  /** Batch form of `derivative`: out[k] = f'(z[k]; y[k]) for k < count, the same numbers as `derivative`. */
  derivatives(z: Float64Array, y: Float64Array, out: Float64Array, count: number): void;
  /**
   * f''(z; y) where it exists; at the finitely many kinks of Huber and the smoothed hinge, one of
   * the one-sided values (always <= `curvatureBound`).
   */
  secondDerivative(z: number, y: number): number;
  /**
   * The margin u with f'(u; y) = g, for g strictly between inf_z f'(z; y) and sup_z f'(z; y);
   * NaN outside that open range. Where f' is constant on an interval with value g this returns
   * the left end, sup{u : f'(u; y) < g}, the u_L of `003` Thm. F.2 (for the losses here f' is
   * strictly increasing on the open range, so the ends coincide).
   */
  marginForDerivative(g: number, y: number): number;
  /** sup |f'(z; y)| over the domain (labels in the loss's convention); Infinity if unbounded. */
  derivativeBound(domain?: MarginDomain): number;
  /** sup_z f''(z; y) over all z and admissible labels. */
  readonly curvatureBound: number;
}

/** The constants of `003` Thm. 3.1/3.2 for a loss on rows with ||x||_2 <= rowNormBound. */
export interface GlmConstants {
  /** L: bound on every per-example gradient norm; Infinity when the loss is not Lipschitz on the domain. */
  lipschitz: number;
  /** beta: bound on the largest eigenvalue of every per-example Hessian. */
  smoothness: number;
}
