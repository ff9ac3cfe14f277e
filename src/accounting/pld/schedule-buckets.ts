/**
 * Long heterogeneous compositions for the PLD accountant: noise and sampling schedules.
 *
 * Every distinct mechanism costs the PLD accountant a discretisation and a Fourier transform of
 * the whole composed window (~60 ms at 1e5 DP-SGD steps), so 1e5 steps that each have their own
 * noise multiplier would take hours. Two reductions, both valid by post-processing:
 *
 * - Continuous Gaussians, when there are more than `EXACT_GAUSSIANS` distinct ones, are merged
 *   into ONE Gaussian with 1/z^2 = sum count_i / z_i^2: their composition IS that Gaussian
 *   (its privacy loss is N(mu, 2 mu) with mu = 1/(2 z^2), and independent normal losses add;
 *   Dong, Roth & Su 2022, Cor. 3.3). z is rounded down (up) for the upper (lower) bound.
 * - Poisson-subsampled Gaussians, when there are more than `EXACT_SCHEDULE_MECHANISMS` distinct ones
 *   and the grid has at most a quarter as many cells, are put in buckets: for the upper bound
 *   (`'down'`) z is rounded DOWN to the geometric grid 2^(k/P) and q UP (to 1 at most); for the lower
 *   bound (`'up'`) z up and q down. Rounding is safe because each rounded pair is a post-processing
 *   of the other (so its privacy profile is smaller), in both directions of the subsampled pair
 *   (q N(1, z^2) + (1 - q) N(0, z^2), N(0, z^2)): adding independent N(0, z'^2 - z^2) noise maps the
 *   pair at z to the pair at z' > z, and the data-independent map "keep x with probability q / q',
 *   else replace it by a fresh N(0, z^2) draw" maps the pair at q' to the pair at q < q'. So the
 *   rounded-down pair dominates the step's pair and the rounded-up one is dominated by it, and
 *   composition preserves both (apply the maps step by step). Sampling probabilities are rounded
 *   only when there are more than `EXACT_SAMPLING_PROBABILITIES` distinct ones.
 *
 * The accountant reports the upper bound from the `'down'` buckets and `epsilonLower` from a
 * second accountant with the `'up'` buckets (at relative accuracy 1e-3), so `epsilon -
 * epsilonLower` shows what the buckets cost. With P = 256 points per doubling
 * (`DEFAULT_PLD_SCHEDULE_GRID`) z moves by < 0.27 %. Measured on 1e5 DP-SGD steps, q = 0.01,
 * z_t from 0.8 to 1.3, delta = 1e-5 (`npm run bench -- schedule`): P = 256 gives [25.486, 25.644]
 * in ~18 s (180 buckets), P = 1024 gives [25.543, 25.587] in ~80 s, so the default's epsilon is
 * at most 0.4 % above the exact composition's (and 6 % below RDP's 27.246).
 */
import { geometricBracket } from '../geometric-grid.js';
import { sampledGaussianModels, type PldComponent } from './event-components.js';

/** Grid points per doubling of z (and q) for the PLD buckets. */
export const DEFAULT_PLD_SCHEDULE_GRID = 256;
/** Up to this many distinct subsampled Gaussians, each is composed exactly. */
export const EXACT_SCHEDULE_MECHANISMS = 64;
/** Up to this many distinct continuous Gaussians, each is composed as is (not merged). */
export const EXACT_GAUSSIANS = 16;
/** Up to this many distinct sampling probabilities, none is rounded. */
export const EXACT_SAMPLING_PROBABILITIES = 16;

export type NoiseRounding = 'down' | 'up';

/** The grid node at or below x (`'below'`) or at or above it (`'above'`): nodes 2^(k/P), deterministic in k. */
export function gridNode(x: number, pointsPerDoubling: number, side: 'below' | 'above'): number {
  const { lo, hi } = geometricBracket(x, pointsPerDoubling);
  return side === 'below' || lo === x ? lo : hi;
}

/** What the buckets did (for the accountant's warnings). */
export interface BucketInfo {
  /** Distinct subsampled Gaussians put in buckets, and the number of buckets. */
  readonly mechanisms: number;
  readonly buckets: number;
  readonly pointsPerDoubling: number;
  /** Distinct continuous Gaussians merged into one (0: none). */
  readonly mergedGaussians: number;
}

/**
 * The components to compose: `components` with long schedules reduced as in the module comment,
 * rounded in `direction`. Returns the input unchanged (and no info) when nothing applies.
 */
export function bucketComponents(
  components: readonly PldComponent[],
  pointsPerDoubling: number,
  direction: NoiseRounding,
): { components: readonly PldComponent[]; info?: BucketInfo } {
  const gaussians = components.filter((c) => c.sampledGaussian !== undefined && c.sampledGaussian.q >= 1);
  const sampled = components.filter((c) => c.sampledGaussian !== undefined && c.sampledGaussian.q < 1);
  const mergeGaussians = gaussians.length > EXACT_GAUSSIANS;
  let buckets: Map<string, PldComponent> | undefined;
  if (sampled.length > EXACT_SCHEDULE_MECHANISMS && Number.isFinite(pointsPerDoubling)) {
    const roundQ = new Set(sampled.map((c) => c.sampledGaussian!.q)).size > EXACT_SAMPLING_PROBABILITIES;
    const candidate = new Map<string, { q: number; z: number; count: number }>();
    for (const c of sampled) {
      const { q, z } = c.sampledGaussian!;
      const zNode = gridNode(z, pointsPerDoubling, direction === 'down' ? 'below' : 'above');
      const qNode = roundQ ? Math.min(1, gridNode(q, pointsPerDoubling, direction === 'down' ? 'above' : 'below')) : q;
      const key = qNode >= 1 ? `gaussian:${zNode}` : `poissonSampled:${qNode}:gaussian:${zNode}`;
      const entry = candidate.get(key);
      if (entry === undefined) candidate.set(key, { q: qNode, z: zNode, count: c.count });
      else entry.count += c.count;
    }
    if (candidate.size <= sampled.length / 4) {
      buckets = new Map();
      for (const [key, { q, z, count }] of candidate) {
        buckets.set(key, { key, count, models: () => sampledGaussianModels(q, z), sampledGaussian: { q, z } });
      }
    }
  }
  if (!mergeGaussians && buckets === undefined) return { components };
  const out: PldComponent[] = [];
  const others = components.filter((c) => c.sampledGaussian === undefined || (!mergeGaussians && c.sampledGaussian.q >= 1) || (buckets === undefined && c.sampledGaussian.q < 1));
  // Bucket counts may exceed what a merged component can hold only past 2^53 compositions, which
  // pldComponents already refuses for the inputs.
  const merged = new Map<string, PldComponent>();
  const put = (c: PldComponent) => {
    const known = merged.get(c.key);
    merged.set(c.key, known === undefined ? c : { ...known, count: known.count + c.count });
  };
  for (const c of others) put(c);
  if (buckets !== undefined) for (const c of buckets.values()) put(c);
  if (mergeGaussians) {
    // sum of count / z^2 with its rounding (< (n + 2) EPS relative), then z = 1/sqrt, rounded outward.
    let precision = 0;
    for (const c of gaussians) precision += c.count / (c.sampledGaussian!.z * c.sampledGaussian!.z);
    const slack = (gaussians.length + 8) * Number.EPSILON;
    const z = direction === 'down' ? (1 / Math.sqrt(precision * (1 + slack))) * (1 - 4 * Number.EPSILON) : (1 / Math.sqrt(precision * (1 - slack))) * (1 + 4 * Number.EPSILON);
    put({ key: `gaussian:${z}`, count: 1, models: () => sampledGaussianModels(1, z), sampledGaussian: { q: 1, z } });
  }
  for (const c of merged.values()) out.push(c);
  return {
    components: out,
    info: {
      mechanisms: buckets === undefined ? 0 : sampled.length,
      buckets: buckets?.size ?? 0,
      pointsPerDoubling,
      mergedGaussians: mergeGaussians ? gaussians.length : 0,
    },
  };
}
