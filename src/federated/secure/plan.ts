/**
 * A node's plan for a dpgd session under secure aggregation (`004` Sec. 5.4; `coordinator.ts`):
 * the K nodes' clipped gradient sums are summed by masking (`masks.ts`), each node adding only a
 * SHARE of the noise, and the coordinator sees only the sum plus K shares. Everything here is
 * computed from public values (the request, the node's public n), so every node of the session
 * computes the same grid, share and modulus, and the ledger reserves the event before any record
 * is read.
 *
 * Accounting (`mechanisms/distributed-gaussian-grid.ts`, with its proof): a record of node i is
 * protected by the shares its observer does not know. The coordinator alone knows none; a node
 * knows its own; a coalition of the coordinator and c nodes knows c shares. The session counts
 * m = K - 1 - t shares (`collusion` t >= 0): its guarantee holds against the coordinator together
 * with any t + 1 nodes other than node i, provided the other nodes add their shares (a node that
 * adds none counts as one of the t + 1). The noise is calibrated so that the sum of m shares meets
 * the node's target over the whole session (T adaptive releases, `000` eq. 81's clipped sums with
 * sensitivity 2c, replace-one: a neighbour changes one record of one node).
 *
 * Against a coordinator that does not follow the protocol (it may relay its own keys instead of the
 * nodes', or invent nodes) only the node's own share protects it: `ownShare` is that guarantee
 * (the same session accounted with m = 1), reported beside the headline, never charged as it.
 *
 * The modulus 2^bits: the decoded sum must not wrap. Per coordinate, node i's rounded clipped sum
 * is at most (n_i c + slack)/g + 1/2 in absolute value (every clipped gradient has norm <= c,
 * slack the public bound on the sum's floating-point error), so the K values add to at most
 * (N c + K slack)/g + K/2 with N = sum n_i; the K shares add to a subgaussian variable with variance
 * proxy K s^2 (each D_s is subgaussian with parameter s^2, as Canonne, Kamath & Steinke 2020 show:
 * E e^{lambda X} = e^{lambda^2 s^2 / 2} rho_s(lambda s^2) / rho_s(0), and rho_s(c) <= rho_s(0) since its
 * Fourier series has positive coefficients), so |noise| > 40 sqrt(K) s with probability
 * <= 2 e^{-800} per coordinate and step.
 * bits = the bit length of that bound + 2 (sign and margin). A wrap, were it to happen, would only
 * spoil that step's gradient: the sum modulo 2^bits is a post-processing of the sum. A bound that
 * needs more than MAX_MODULUS_BITS is refused.
 */
import type { DpEvent } from '../../accounting/events/types.js';
import { selfComposeEvent } from '../../accounting/events/constructors.js';
import { calibrateNoiseMultiplier, rdpAtOrder } from '../../accounting/calibration/calibrate.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } from '../../accounting/gaussian/gaussian-composition.js';
import { InvalidParameterError } from '../../errors.js';
import { clippedSumRoundingBound } from '../../learners/glm/per-example.js';
import { planDistributedGaussianGrid, type DistributedGridPlan } from '../../mechanisms/distributed-gaussian-grid.js';

/** The largest modulus of the masked sums (2^bits). */
export const MAX_MODULUS_BITS = 120;
/** Nodes of one secure session at most (the accounting lemma allows 2^16 shares; masks cost K^2 / 2 PRG streams per step). */
export const MAX_SECURE_NODES = 1000;
/** Standard deviations of the summed noise covered by the modulus (tail 2 e^{-800}, file comment). */
const TAIL_STDS = 40;

/** What the coordinator asks of every node of a secure session (public values only). */
export interface SecureAggregationRequest {
  readonly mode: 'secure';
  /** K: the session's nodes. */
  readonly nodes: number;
  /** t: the session counts K - 1 - t shares (file comment). */
  readonly collusion: number;
  /** N: the nodes' rows together (public, as each n_i is). */
  readonly totalRows: number;
  /** The largest n_i (its floating-point error bound enters the sensitivity). */
  readonly maxNodeRows: number;
}

/** What a node tells of its secure session (the same for every node of it). */
export interface SecureAggregationPlan {
  readonly mode: 'secure';
  readonly nodes: number;
  readonly collusion: number;
  /** m = K - 1 - t: the shares the headline guarantee counts. */
  readonly countedShares: number;
  readonly totalRows: number;
  /** g: the grid every node rounds its clipped sum to. */
  readonly granularity: number;
  /** s: each node's discrete Gaussian share, in grid steps. */
  readonly shareNoiseStd: number;
  /** g sqrt(K) s: the std of the noise of the summed clipped gradients (one coordinate, one step). */
  readonly sumNoiseStd: number;
  /** The masks' modulus is 2^modulusBits. */
  readonly modulusBits: number;
  /** The node's guarantee from its own share alone (a coordinator that breaks the protocol). */
  readonly ownShare: { readonly epsilon: number; readonly delta: number };
}

export interface SecureDpgdPlan {
  readonly noise: DistributedGridPlan;
  /** The session's event (T releases of the sum of m shares). */
  readonly event: DpEvent;
  readonly aggregation: SecureAggregationPlan;
  /** The multiplier the calibration asked for. */
  readonly noiseMultiplier: number;
}

/** Bit length of a positive integer given as a finite double (rounded up). */
function bitLength(x: number): number {
  return Math.ceil(Math.log2(x + 1)) + 1;
}

/**
 * The secure dpgd plan of a node with n rows in d coordinates (file comment). Throws
 * InvalidParameterError naming the request's field when the request cannot hold.
 */
export function planSecureDpgd(params: {
  readonly n: number;
  readonly d: number;
  readonly clipNorm: number;
  readonly epsilon: number;
  readonly delta: number;
  readonly steps: number;
  readonly rdpOrder?: number;
  readonly aggregation: SecureAggregationRequest;
}): SecureDpgdPlan {
  const { n, d, clipNorm, epsilon, delta, steps, rdpOrder, aggregation } = params;
  const { nodes: K, collusion: t, totalRows: N, maxNodeRows } = aggregation;
  if (!(maxNodeRows >= n)) throw new InvalidParameterError('request.aggregation.maxNodeRows', maxNodeRows, `>= this node's public row count ${n}`);
  if (!(N >= n + K - 1)) throw new InvalidParameterError('request.aggregation.totalRows', N, `>= this node's ${n} rows plus one per other node (${n + K - 1})`);
  const m = K - 1 - t;
  const slack = 2 * clippedSumRoundingBound(maxNodeRows, clipNorm, d);
  const gridFor = (z: number) => planDistributedGaussianGrid({ sensitivity: 2 * clipNorm, noiseMultiplier: z, dimension: d, shares: K, countedShares: m, roundingSlack: slack });
  const z =
    rdpOrder === undefined
      ? exactGaussianCompositionNoiseMultiplier(epsilon, delta, steps)
      : calibrateNoiseMultiplier((zz) => selfComposeEvent(gridFor(zz).event, steps), { targetEpsilon: epsilon, delta, accountant: rdpAtOrder(rdpOrder) }).noiseMultiplier;
  const noise = gridFor(z);
  const g = noise.granularity;
  const bound = (N * clipNorm + K * slack) / g + K / 2 + TAIL_STDS * Math.sqrt(K) * noise.shareNoiseStd + 1;
  const modulusBits = bitLength(bound * (1 + 1e-9)) + 1;
  if (!(Number.isFinite(bound) && modulusBits <= MAX_MODULUS_BITS)) {
    throw new InvalidParameterError('request.aggregation', `${K} nodes, ${N} rows, clipNorm ${clipNorm}`, `a sum that fits a modulus of 2^${MAX_MODULUS_BITS} (it needs 2^${modulusBits}: fewer rows or a larger epsilon)`);
  }
  const event = selfComposeEvent(noise.event, steps);
  const own = gaussianCompositionEpsilon(selfComposeEvent(noise.shareEvent, steps), delta);
  return {
    noise,
    event,
    noiseMultiplier: z,
    aggregation: Object.freeze({
      mode: 'secure' as const,
      nodes: K,
      collusion: t,
      countedShares: m,
      totalRows: N,
      granularity: g,
      shareNoiseStd: noise.shareNoiseStd,
      sumNoiseStd: noise.sumNoiseStd,
      modulusBits,
      ownShare: Object.freeze({ epsilon: own?.epsilon ?? Infinity, delta }),
    }),
  };
}
