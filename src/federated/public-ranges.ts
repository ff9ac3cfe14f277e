/**
 * What a federated node lets reach the arithmetic on its records. In `000` Sec. 6's
 * local model the coordinator is the adversary: if a value it sends could make the computation
 * on the data fail (NaN, an overflow, a sampler out of range), the status of the answer would be
 * decided by the records — an exact, unaccounted release (one HTTP status is one bit per request).
 * So every number of a request is checked against a PUBLIC range and theta is projected onto a
 * PUBLIC ball before any record is read, and the node's data are checked once, at construction,
 * against the node's public bounds. Within these ranges nothing the node computes can fail, for
 * any request and any data set within the bounds (proof below); what falls outside is refused from
 * the request and public values alone, before the data are touched.
 *
 * Ranges (`SCALE` = [1e-30, 1e30], inside [2^-99, 2^99]):
 *   - node: rowNormBound R and labelBound L in SCALE; every row finite with computed ||x|| <=
 *     R (1 + 1e-12) (the schema's row transforms meet R up to rounding), every |y| <= L;
 *   - request: clipNorm C, featureClip R_c, rho, thetaRadius Theta in SCALE, regularization mu in
 *     {0} u SCALE, bClip B in [1e-60, 1e60] (a feature scale times a label scale), epsilon in
 *     [1e-8, 1e8] (farther out the calibrated noise is astronomically large or nil).
 *
 * Why nothing overflows (u = 2^-53, n <= 2^53, ||theta|| <= Theta after the projection):
 *   - margins x.theta and every partial sum of them are <= ||x|| ||theta|| (1 + d u) < 2^200
 *     (Cauchy-Schwarz), residuals x.theta - y < 2^201, squared row norms < 2^201;
 *   - dpgd: the clip threshold t = C / ||x|| is finite or +Infinity, never NaN; the clamped
 *     coefficient is finite, each term c x_j < 2^301, each row's clipped gradient has norm <=
 *     C (1 + (d + 8) u) when ||x|| >= 2^-480 (the squared norm is then computed to relative
 *     precision, `clippedSumRoundingBound`) and < 2^201 2^-480 < 1e-30 <= C otherwise, so the sum
 *     of n rows is < 2^154 and rounds to the noise grid; a release is (k + K) g with |k| <= 2^52
 *     (the grid's clamp) and |K| < 2^53 (the exact sampler), so it is < 2^54 g, which `dpgdEnvelope`
 *     keeps below 2^1000 (a fact about the plan, checked before the data), and mu theta < 2^200;
 *   - nonprivate and rgm: A~ = (1/n) sum x~ x~^T + mu I has entries < 2^201, b~ < 2^200, so
 *     A~ theta - b~ < 2^320; PTR's statistic n (lambda_min - rho) / R_c^2 - 1 < 2^460; RGM's exact
 *     sampler takes variances gamma ||k||^2 + s_b^2 <= 2^92 grid steps^2 only, and ||k|| is at most
 *     a public bound Q / g (`rgmEnvelope`: Q bounds ||A~ theta - b~|| on the ball), so the plan is
 *     refused when that public bound exceeds the sampler's range — otherwise which theta makes the
 *     sampler throw would depend on the data.
 */
import { InvalidParameterError, dataValueError } from '../errors.js';

/** The public range of every scale a request or a node's bounds may give (`SCALE` above). */
export const MIN_SCALE = 1e-30;
export const MAX_SCALE = 1e30;
/** bClip B bounds a product x y: a feature scale times a label scale. */
export const MIN_PRODUCT_SCALE = 1e-60;
export const MAX_PRODUCT_SCALE = 1e60;
/** epsilon of a session: farther out the calibrated noise is astronomically large or nil. */
export const MIN_SESSION_EPSILON = 1e-8;
export const MAX_SESSION_EPSILON = 1e8;
/** Without regularization no public bound holds the minimiser: the default ball allows margins of 2^40 L (`defaultThetaRadius`). */
export const UNREGULARIZED_MARGIN_FACTOR = 2 ** 40;

/** Largest grid g of a release: (2^52 + 2^53) g stays below 2^1000. */
const MAX_RELEASE_GRID = 2 ** 944;
/** The exact discrete Gaussian sampler's largest variance, in grid steps squared (`random/exact.ts`). */
const MAX_SAMPLER_VARIANCE = 2 ** 92;
/** Rows may exceed the public bound by rounding only (as `glm/data.ts` `checkedRowNormBound` allows). */
const ROW_NORM_SLACK = 1 + 1e-12;

export const scaleRange = `in [${MIN_SCALE}, ${MAX_SCALE}]`;
export const inScale = (x: number): boolean => x >= MIN_SCALE && x <= MAX_SCALE;

/** The node's own data against its public bounds (file comment): the data owner's error, at start-up, never a coordinator's. */
export interface BoundedData {
  readonly x: Float64Array;
  readonly y: Float64Array;
  readonly n: number;
  readonly d: number;
  readonly rowNormBound: number;
  readonly labelBound: number;
}

/** Throws InvalidParameterError naming the first bound the node's data or public bounds break. */
export function requireDataWithinBounds(data: BoundedData): void {
  const { x, y, n, d, rowNormBound: R, labelBound: L } = data;
  if (!(typeof R === 'number' && inScale(R))) throw new InvalidParameterError('data.rowNormBound', R, `${scaleRange} (the node's public bound on every row's L2 norm)`);
  if (!(typeof L === 'number' && inScale(L))) throw new InvalidParameterError('data.labelBound', L, `${scaleRange} (the node's public bound on |y|)`);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = i * d; j < (i + 1) * d; j++) {
      if (!Number.isFinite(x[j])) throw dataValueError(`data.x[${i}][${j - i * d}]`, 'a finite number');
      s += x[j] * x[j];
    }
    const norm = Math.sqrt(s);
    if (!(norm <= R * ROW_NORM_SLACK)) throw dataValueError(`data row ${i}'s L2 norm`, `<= rowNormBound ${R} (the node's public bound; clip or normalise the rows, or declare a larger bound in the schema)`);
    if (!(Math.abs(y[i]) <= L)) throw dataValueError(`data.y[${i}]`, `a finite number with |y| <= labelBound ${L}`);
  }
}

/**
 * The public default of a session's ball ||theta|| <= Theta, from the node's public bounds and
 * mu only. With mu > 0 the minimiser of any average of ridge objectives with labels |y| <= L (the
 * clipped objective of dpgd too: its loss is >= 0 and equals y^2/2 at theta = 0) has
 * mu/2 ||theta*||^2 <= F(theta*) <= F(0) <= L^2/2, so Theta = 2 L / sqrt(mu) contains it with room;
 * without regularization no bound exists and the ball allows margins |x.theta| up to 2^40 L.
 * Capped to `MAX_SCALE`.
 */
export function defaultThetaRadius(bounds: { readonly rowNormBound: number; readonly labelBound: number }, regularization: number): number {
  const { rowNormBound: R, labelBound: L } = bounds;
  const minimiser = regularization > 0 ? (2 * L) / Math.sqrt(regularization) : Infinity;
  return Math.min(minimiser, (UNREGULARIZED_MARGIN_FACTOR * L) / R, MAX_SCALE);
}

/**
 * Projects any finite theta (coordinates up to +-1.8e308 included) onto the ball of radius r, in
 * place, without overflow: a theta whose computed norm is <= r (1 - 1e-9)(1 + 1e-10) is left as it
 * is (so a point `learners/rgm/rgm-grid.ts` `projectOntoBall` already projected stays bit for bit);
 * any other is scaled by its largest coordinate first, then onto r (1 - 1e-9). Either way the exact
 * norm is <= r for d up to 4e6.
 */
export function projectIntoBall(theta: Float64Array, radius: number): Float64Array {
  const d = theta.length;
  const inside = Math.min(radius * (1 - 1e-9) * (1 + 1e-10), radius / (1 + (d + 4) * Number.EPSILON));
  let largest = 0;
  for (let j = 0; j < d; j++) largest = Math.max(largest, Math.abs(theta[j]));
  if (largest === 0) return theta;
  if (largest <= inside) {
    // Every square is < 2^200: the plain norm cannot overflow.
    let s = 0;
    for (let j = 0; j < d; j++) s += theta[j] * theta[j];
    if (Math.sqrt(s) <= inside) return theta;
  }
  let s = 0;
  for (let j = 0; j < d; j++) {
    const v = theta[j] / largest;
    s += v * v;
  }
  const factor = (radius * (1 - 1e-9)) / Math.sqrt(s);
  for (let j = 0; j < d; j++) theta[j] = (theta[j] / largest) * factor;
  return theta;
}

/** A release (k + K) g stays finite: (2^52 + 2^53) g < 2^1000 (file comment). */
function requireFiniteGrid(granularity: number, what: string): void {
  if (!(granularity <= MAX_RELEASE_GRID)) {
    throw new InvalidParameterError(what, granularity, `a noise grid <= 2^944 (released values must stay finite); ask for a larger epsilon or smaller clipping`);
  }
}

/**
 * dpgd's answer (noisy sum) / n + mu theta is finite for every theta in the ball and every data set
 * within the bounds (file comment) when the plan's grid g is: checked from public values only.
 */
export function dpgdEnvelope(granularity: number): void {
  requireFiniteGrid(granularity, 'the dpgd noise grid');
}

/**
 * RGM's exact sampler accepts the variance gamma ||k||^2 + s_b^2 (grid steps) for every theta in the
 * ball and every data set within the bounds: ||k|| <= Q / g + sqrt(d) with Q a public bound on the
 * computed ||A~ theta - b~|| (file comment). Refused from public values only, before the data.
 */
export function rgmEnvelope(plan: {
  readonly granularity: number;
  readonly gamma: number;
  readonly baselineSteps: number;
  readonly d: number;
  /** A public bound on ||A~ theta - b~|| computed, for ||theta|| <= thetaRadius. */
  readonly gradientBound: number;
  readonly thetaRadius: number;
}): void {
  const { granularity: g, gamma, baselineSteps, d, gradientBound } = plan;
  requireFiniteGrid(g, 'the rgm noise grid');
  const steps = Math.min(gradientBound / g + Math.sqrt(d), 2 ** 52 * Math.sqrt(d));
  const variance = gamma * steps * steps * (1 + 1e-9) + baselineSteps * baselineSteps;
  if (!(variance <= MAX_SAMPLER_VARIANCE)) {
    throw new InvalidParameterError(
      'request.thetaRadius',
      plan.thetaRadius,
      `small enough that RGM's noise at the edge of the ball stays within its exact sampler (std <= 2^46 grid steps, here up to 2^${Math.log2(Math.sqrt(variance)).toFixed(1)}): give a smaller thetaRadius, or a larger epsilon`,
    );
  }
}
