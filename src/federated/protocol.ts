/**
 * The federated protocol (`000` Sec. 6 and App. C): several nodes, each holding its own records,
 * train one ridge model by gradient descent (`000` eq. 79) on gradients each node privatises
 * itself (local DP: a node's guarantee is for its own records, against everyone else, the
 * coordinator included). The same messages travel in-process (`in-process.ts`) and over HTTP/JSON
 * (`http-server.ts`, `http-client.ts`): one code path for the maths.
 *
 * Messages:
 *   - `NodeInfo` (GET /info): what a node makes public before anything is released — its shape,
 *     its row count (public under replace-one neighbours, as `000` App. B.4 assumes), the public
 *     bounds of its schema, its budget and what it has spent.
 *   - `SessionRequest` (POST /sessions): a whole run of T steps with one mechanism at a target
 *     (epsilon, delta) for this node. The node calibrates its noise from public quantities,
 *     accounts the WHOLE run against its budget in its ledger before releasing anything, and
 *     answers a `SessionPlan` (the event it committed to, its privacy report, public constants).
 *   - `GradientRequest` (POST /sessions/:id/gradient): the privatised gradient at theta for step t
 *     of a session; each step is answered at most once, never beyond T.
 *
 * Every request is untrusted JSON (the coordinator is the adversary of `000` Sec. 6's local
 * model): the parsers below accept exactly the documented fields, nested at most
 * `MAX_MESSAGE_DEPTH` deep, with finite numbers in PUBLIC ranges (`public-ranges.ts`: within them
 * nothing the node computes on its records can overflow, turn NaN or fail), and throw
 * InvalidParameterError naming the field, the value and the range otherwise — from the request
 * alone, before any record is read. theta may be any finite vector: the node projects it onto the
 * session's public ball ||theta|| <= thetaRadius before using it (post-processing of a public
 * value), and says which ball in the plan; the coordinator runs projected gradient descent on it.
 */
import { InvalidParameterError } from '../errors.js';
import type { PrivacyReport } from '../learners/models/privacy-report.js';
import { MAX_SECURE_NODES, type SecureAggregationPlan, type SecureAggregationRequest } from './secure/plan.js';
import { inScale, MAX_PRODUCT_SCALE, MAX_SESSION_EPSILON, MIN_PRODUCT_SCALE, MIN_SESSION_EPSILON, scaleRange } from './public-ranges.js';

export const PROTOCOL = 'dpfit-federated/1';

/** `rgm`: `000` eq. 83 with local PTR; `dpgd`: clipped Gaussian, `000` eq. 81; `nonprivate`: eq. 80 (only for a node whose budget is infinite). */
export type FederatedMethod = 'rgm' | 'dpgd' | 'nonprivate';
export const FEDERATED_METHODS: readonly FederatedMethod[] = ['rgm', 'dpgd', 'nonprivate'];

export interface NodeInfo {
  readonly protocol: typeof PROTOCOL;
  readonly name: string;
  /** Rows (public under replace-one neighbours). */
  readonly n: number;
  readonly d: number;
  readonly featureNames: readonly string[];
  /** Public bound on every row's L2 norm (from the schema). */
  readonly rowNormBound: number;
  /** Public bound on |y|. */
  readonly labelBound: number;
  readonly budget: { readonly epsilon: number; readonly delta: number };
  readonly spent: { readonly epsilon: number; readonly delta: number; readonly entries: number };
  readonly methods: readonly FederatedMethod[];
  /** 'classification': binary labels used as -1/+1 (a ridge classifier: predict the sign); else 'regression'. */
  readonly task: 'classification' | 'regression';
  /** The node's PUBLIC schema (JSON), when it has one: embedded in the model so that it can be evaluated. */
  readonly schema?: unknown;
}

export interface SessionRequest {
  readonly method: FederatedMethod;
  readonly steps: number;
  /** Target epsilon of this node's whole session (absent for nonprivate). */
  readonly epsilon?: number;
  /** Target delta of this node's whole session (absent for nonprivate). */
  readonly delta?: number;
  /** mu >= 0: ridge on the average loss, f(theta) = (1/n) sum 1/2 (x.theta - y)^2 + mu/2 |theta|^2 (`000` eq. 9). */
  readonly regularization: number;
  /** dpgd: the clipping threshold c of per-example gradients (`000` eq. 81). */
  readonly clipNorm?: number;
  /** rgm: R_c (default: the node's public row-norm bound, so that no row is clipped). */
  readonly featureClip?: number;
  /** rgm: B, the clip of the products x~ y (default R_c times the label bound: nothing clipped). */
  readonly bClip?: number;
  /** rgm: the proposed rho of PTR (default: `000` Prop. 3's value for Gaussian rows). */
  readonly rho?: number;
  readonly ptrEpsilonFraction?: number;
  readonly ptrDeltaFraction?: number;
  /**
   * Calibrate to Renyi DP at this order (`000` App. C: alpha = 2): `epsilon` is then the session's
   * RDP at `rdpOrder`; `delta` still sets PTR's delta and the reported (epsilon, delta).
   */
  readonly rdpOrder?: number;
  /**
   * Theta: the public ball ||theta|| <= Theta onto which the node projects every theta of the
   * session before its data are touched (`public-ranges.ts` `projectIntoBall`). Default, from
   * public values only (`defaultThetaRadius`): 2 L / sqrt(mu), which contains the minimiser of any
   * average of the nodes' objectives (L = the largest label bound), 2^40 L / R without
   * regularization; for rgm, RGM's own ball 2 B / (rho lambda_min(C)) (and 2 B / mu), or this one
   * when smaller. `federate` sends one Theta to every node (the largest default of the nodes).
   */
  readonly thetaRadius?: number;
  /**
   * dpgd only: secure aggregation (`secure/plan.ts`, `004` Sec. 5.4): the node releases its clipped
   * sum with only a share of the noise, masked so that only the sum over the session's nodes can be
   * read. Its guarantee then rests on the coordinator following the protocol and on at most t + 1
   * other nodes colluding; a node accepts it only when started with `secureAggregation`.
   */
  readonly aggregation?: SecureAggregationRequest;
}

export interface SessionPlan {
  readonly protocol: typeof PROTOCOL;
  readonly session: string;
  readonly node: string;
  readonly method: FederatedMethod;
  readonly steps: number;
  /**
   * What this node's session releases and what it guarantees for the node's records: the
   * privacy-report shape every dpfit model carries (event, epsilon, delta, relation, guarantee).
   * For rgm, `delta` includes PTR's delta_ptr (`extraDelta`), paid outside the RDP conversion.
   */
  readonly privacy: PrivacyReport;
  readonly extraDelta: number;
  /** Public smoothness bound L of the node's objective (its step-size constraint). */
  readonly smoothness: number;
  /** rgm: gamma, the relative noise (`000` Thm. 2 asks tau <= 1/((1 + d gamma) L)). */
  readonly gamma?: number;
  /** rgm: the released PTR outcome; when it failed, the node answers no gradient. */
  readonly ptr?: { readonly passed: boolean; readonly epsilon: number; readonly delta: number; readonly threshold: number };
  /** dpgd: the noise multiplier of each step (std / sensitivity of the clipped sum). */
  readonly noiseMultiplier?: number;
  /** The ball the node projects every theta onto (`SessionRequest.thetaRadius`); absent from older nodes. */
  readonly thetaRadius?: number;
  /** Secure aggregation: the session's shared parameters and the node's guarantee from its own share alone. */
  readonly aggregation?: SecureAggregationPlan;
  /** Secure aggregation: the node's fresh X25519 public key for this session (`secure/masks.ts`). */
  readonly publicKey?: string;
}

export interface GradientRequest {
  readonly session: string;
  readonly step: number;
  readonly theta: readonly number[];
  /** Secure sessions: the public keys of the session's K nodes, in one order, the same at every step. */
  readonly peers?: readonly string[];
}

export interface GradientAnswer {
  readonly session: string;
  readonly step: number;
  /** The released gradient of the node's average objective (regulariser included) at theta (local sessions). */
  readonly gradient?: readonly number[];
  /** Secure sessions: the node's masked integer vector, d residues mod 2^bits in fixed-width hex (`secure/masks.ts`). */
  readonly masked?: readonly string[];
}

/** The protocol's messages nest 2 levels (a gradient request holds theta); deeper values are refused before anything walks them. */
export const MAX_MESSAGE_DEPTH = 8;

/** Refuses a value nested deeper than MAX_MESSAGE_DEPTH, level by level (no recursion; stops at the first level too deep). */
function requireShallow(value: unknown, what: string): void {
  const isNode = (v: unknown): v is object => v !== null && typeof v === 'object';
  let level: object[] = isNode(value) ? [value] : [];
  for (let depth = 1; level.length > 0; depth++) {
    if (depth > MAX_MESSAGE_DEPTH) throw new InvalidParameterError(`${what} (its JSON nesting depth)`, depth, `at most ${MAX_MESSAGE_DEPTH} (the protocol's messages nest 2 levels)`);
    const next: object[] = [];
    for (const v of level) for (const child of Object.values(v)) if (isNode(child)) next.push(child);
    level = next;
  }
}

/** A JSON object with exactly the allowed keys (others refused), for `what`. */
function record(value: unknown, what: string, allowed: readonly string[]): Record<string, unknown> {
  requireShallow(value, what);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new InvalidParameterError(what, value, 'a JSON object');
  const out = value as Record<string, unknown>;
  for (const key of Object.keys(out)) {
    if (!allowed.includes(key)) throw new InvalidParameterError(`${what}.${key}`, out[key], `absent (fields: ${allowed.join(', ')})`);
  }
  return out;
}

function finite(value: unknown, what: string, check: (x: number) => boolean, range: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || !check(value)) throw new InvalidParameterError(what, value, range);
  return value;
}

function optionalFinite(value: unknown, what: string, check: (x: number) => boolean, range: string): number | undefined {
  return value === undefined ? undefined : finite(value, what, check, range);
}

/** Sessions may not be longer than this many steps (a node answers at most this many gradients per session). */
export const MAX_SESSION_STEPS = 1_000_000;

const SESSION_FIELDS = ['method', 'steps', 'epsilon', 'delta', 'regularization', 'clipNorm', 'featureClip', 'bClip', 'rho', 'ptrEpsilonFraction', 'ptrDeltaFraction', 'rdpOrder', 'thetaRadius', 'aggregation'];

/** Largest row count a secure session may name (the rows of all its nodes). */
const MAX_TOTAL_ROWS = 2 ** 40;

/** The untrusted `aggregation` block of a session request. */
function parseAggregation(value: unknown): SecureAggregationRequest {
  const r = record(value, 'request.aggregation', ['mode', 'nodes', 'collusion', 'totalRows', 'maxNodeRows']);
  if (r.mode !== 'secure') throw new InvalidParameterError('request.aggregation.mode', r.mode, "'secure' (absent: each node adds its own full noise)");
  const nodes = finite(r.nodes, 'request.aggregation.nodes', (x) => Number.isInteger(x) && x >= 2 && x <= MAX_SECURE_NODES, `an integer in [2, ${MAX_SECURE_NODES}]`);
  const collusion = finite(r.collusion, 'request.aggregation.collusion', (x) => Number.isInteger(x) && x >= 0 && x <= nodes - 2, `an integer in [0, ${nodes - 2}] (the guarantee counts nodes - 1 - collusion >= 1 shares)`);
  const rows = (key: string) => finite(r[key], `request.aggregation.${key}`, (x) => Number.isInteger(x) && x >= 1 && x <= MAX_TOTAL_ROWS, `an integer in [1, 2^40]`);
  return { mode: 'secure', nodes, collusion, totalRows: rows('totalRows'), maxNodeRows: rows('maxNodeRows') };
}

/** Parses an untrusted session request (field rules in `SessionRequest`). */
export function parseSessionRequest(value: unknown): SessionRequest {
  const r = record(value, 'request', SESSION_FIELDS);
  const method = r.method;
  if (typeof method !== 'string' || !(FEDERATED_METHODS as readonly string[]).includes(method)) {
    throw new InvalidParameterError('request.method', method, `one of ${FEDERATED_METHODS.join(', ')}`);
  }
  const steps = finite(r.steps, 'request.steps', (x) => Number.isInteger(x) && x >= 1 && x <= MAX_SESSION_STEPS, `an integer in [1, ${MAX_SESSION_STEPS}]`);
  // Public ranges (`public-ranges.ts`): within them no record can make the node's arithmetic fail.
  const regularization = finite(r.regularization, 'request.regularization', (x) => x === 0 || inScale(x), `0 or ${scaleRange}`);
  const scale = (key: string) => optionalFinite(r[key], `request.${key}`, inScale, scaleRange);
  const unit = (key: string) => optionalFinite(r[key], `request.${key}`, (x) => x > 0 && x < 1, 'in (0, 1)');
  const request: SessionRequest = {
    method: method as FederatedMethod,
    steps,
    regularization,
    epsilon: optionalFinite(r.epsilon, 'request.epsilon', (x) => x >= MIN_SESSION_EPSILON && x <= MAX_SESSION_EPSILON, `in [${MIN_SESSION_EPSILON}, ${MAX_SESSION_EPSILON}]`),
    delta: unit('delta'),
    clipNorm: scale('clipNorm'),
    featureClip: scale('featureClip'),
    bClip: optionalFinite(r.bClip, 'request.bClip', (x) => x >= MIN_PRODUCT_SCALE && x <= MAX_PRODUCT_SCALE, `in [${MIN_PRODUCT_SCALE}, ${MAX_PRODUCT_SCALE}]`),
    rho: scale('rho'),
    ptrEpsilonFraction: unit('ptrEpsilonFraction'),
    ptrDeltaFraction: unit('ptrDeltaFraction'),
    rdpOrder: optionalFinite(r.rdpOrder, 'request.rdpOrder', (x) => x > 1 && x <= 1e6, 'a Renyi order in (1, 1e6]'),
    thetaRadius: scale('thetaRadius'),
    aggregation: r.aggregation === undefined ? undefined : parseAggregation(r.aggregation),
  };
  const given = (key: keyof SessionRequest) => request[key] !== undefined;
  if (method === 'nonprivate') {
    for (const key of ['epsilon', 'delta', 'clipNorm', 'featureClip', 'bClip', 'rho', 'ptrEpsilonFraction', 'ptrDeltaFraction', 'rdpOrder'] as const) {
      if (given(key)) throw new InvalidParameterError(`request.${key}`, request[key], 'absent for method nonprivate (no noise is added)');
    }
  } else {
    if (!given('epsilon')) throw new InvalidParameterError('request.epsilon', undefined, `given for method ${method}`);
    if (!given('delta')) throw new InvalidParameterError('request.delta', undefined, `given for method ${method}`);
  }
  if (method === 'dpgd') {
    if (!given('clipNorm')) throw new InvalidParameterError('request.clipNorm', undefined, 'given for method dpgd (the clipping threshold c of the per-example gradients)');
    for (const key of ['featureClip', 'bClip', 'rho', 'ptrEpsilonFraction', 'ptrDeltaFraction'] as const) {
      if (given(key)) throw new InvalidParameterError(`request.${key}`, request[key], 'absent for method dpgd (an rgm parameter)');
    }
  }
  if (method !== 'dpgd' && given('aggregation')) {
    throw new InvalidParameterError('request.aggregation', 'secure', `absent for method ${method} (secure aggregation covers dpgd only: ${method === 'rgm' ? "rgm's noise is relative to each node's own gradient, so shares of it do not add up to one mechanism" : 'nonprivate adds no noise to share'})`);
  }
  if (method === 'rgm' && given('clipNorm')) throw new InvalidParameterError('request.clipNorm', request.clipNorm, 'absent for method rgm (RGM clips features and products: featureClip, bClip)');
  return Object.freeze(Object.fromEntries(Object.entries(request).filter(([, v]) => v !== undefined))) as SessionRequest;
}

/** Parses an untrusted gradient request for a node of dimension d (any finite theta: the node projects it onto the session's ball). */
export function parseGradientRequest(value: unknown, d: number): GradientRequest {
  const r = record(value, 'request', ['session', 'step', 'theta', 'peers']);
  if (typeof r.session !== 'string' || !/^[0-9a-f]{32}$/.test(r.session)) throw new InvalidParameterError('request.session', r.session, 'a session id (32 hex digits) from POST /sessions');
  const step = finite(r.step, 'request.step', (x) => Number.isInteger(x) && x >= 0 && x < MAX_SESSION_STEPS, `an integer in [0, ${MAX_SESSION_STEPS})`);
  if (!Array.isArray(r.theta) || r.theta.length !== d) throw new InvalidParameterError('request.theta', r.theta, `an array of ${d} finite numbers`);
  const theta = r.theta.map((v, j) => finite(v, `request.theta[${j}]`, () => true, 'a finite number'));
  if (r.peers === undefined) return { session: r.session, step, theta };
  if (!Array.isArray(r.peers) || r.peers.length > MAX_SECURE_NODES || !r.peers.every((p) => typeof p === 'string' && p.length <= 64)) {
    throw new InvalidParameterError('request.peers', r.peers, `a list of at most ${MAX_SECURE_NODES} public keys (strings)`);
  }
  return { session: r.session, step, theta, peers: r.peers as string[] };
}
