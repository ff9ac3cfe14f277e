/**
 * The coordinator of the federated protocol (`protocol.ts`): `000` App. C eq. (79),
 *
 *   theta_{t+1} = theta_t - tau * (1/m) sum_i g_t^(i),
 *
 * with g_t^(i) the privatised gradient node i releases at theta_t. The coordinator sees only
 * released values; each node's guarantee is its own (local DP), reported per node.
 *
 * Step size. App. C takes tau = 0.5 / max_i lambda_max(A^(i)), eigenvalues of the nodes' private
 * covariances; dpfit uses the nodes' PUBLIC smoothness bounds L_i = R_i^2 + mu (rows of norm
 * <= R_i), and for RGM `000` Thm. 2's tau <= 1/((1 + d gamma_i) L_i) (see `learners/rgm/rgm-gd.ts`
 * on the factor d): tau = 1 / max_i ((1 + d gamma_i) L_i), or the caller's learning rate.
 *
 * Projection. Every node projects the theta it is asked about onto its session's public ball
 * ||theta|| <= Theta (`SessionRequest.thetaRadius`: the coordinator sends the largest of the nodes'
 * public defaults for dpgd and nonprivate, which contains the minimiser, or the caller's); the
 * coordinator projects its iterate onto the smallest ball of the plans after every step (projected
 * gradient descent, as `trainRgmGd` does on RGM's ball), so that what it asks is what is answered.
 *
 * A node that refuses its session (budget, PTR failure) or stops answering ends the run: nothing
 * more is asked of any node, and the result says what each node granted (its session's event,
 * whose whole budget the node has reserved) and why the run stopped. No model is returned then.
 *
 * Secure aggregation (`aggregation: 'secure'`, dpgd only; `secure/plan.ts`, `004` Sec. 5.4): each
 * node releases its clipped gradient SUM with a share of the noise, masked (`secure/masks.ts`); the
 * coordinator learns only the sum over the nodes, and runs
 *
 *   theta_{t+1} = theta_t - tau * (noisy sum / N + mu theta_t),   N = sum_i n_i,
 *
 * gradient descent on the pooled objective (the same as eq. 79 when the n_i are equal). Each node's
 * plan counts K - 1 - t noise shares (`collusion` t), about sqrt(K - 1 - t) times less noise per node
 * than local noise at the same epsilon. A node that fails during a step aborts the run: that step
 * releases nothing (`secure/round.ts`).
 */
import { DpfitError, InvalidParameterError } from '../errors.js';
import { squaredLoss } from '../learners/glm/losses/squared.js';
import { localPerNodeSummary } from '../learners/models/local-per-node.js';
import { projectOntoBall } from '../learners/rgm/rgm-grid.js';
import { linearModel, type LinearModel } from '../learners/models/model.js';
import type { GradientAnswer, GradientRequest, NodeInfo, SessionPlan, SessionRequest } from './protocol.js';
import type { FederatedMethod } from './protocol.js';
import { defaultThetaRadius, inScale, scaleRange } from './public-ranges.js';
import { optionNames, rejectUnknownOptions } from '../validate.js';
import { secureAggregationSummary } from '../learners/models/local-per-node.js';
import type { SecureAggregationPlan } from './secure/plan.js';
import { secureStep } from './secure/round.js';

/** How the coordinator talks to one node (in-process, or HTTP). */
export interface NodeClient {
  /** Where the node is (a URL, or a name in-process). */
  readonly label: string;
  info(): Promise<NodeInfo>;
  openSession(request: SessionRequest): Promise<SessionPlan>;
  gradient(request: GradientRequest): Promise<GradientAnswer>;
}

export interface FederateOptions {
  readonly method: FederatedMethod;
  readonly steps: number;
  /** Each node's target for the whole run (absent for nonprivate). */
  readonly epsilon?: number;
  readonly delta?: number;
  /** Calibrate each node to Renyi DP at this order (`epsilon` is then the RDP; `000` App. C: 2). */
  readonly rdpOrder?: number;
  /** mu of `000` eq. 9 (App. C: 0.03). */
  readonly regularization: number;
  /** dpgd: the clipping threshold, one for all nodes or one per node (`000` eq. 81). */
  readonly clipNorm?: number | readonly number[];
  /** rgm: R_c, B, rho for every node (defaults: each node's public bounds, Prop. 3's rho). */
  readonly featureClip?: number;
  readonly bClip?: number;
  /** rgm: the proposed rho of PTR, one for all nodes or one per node (each node's own guess). */
  readonly rho?: number | readonly number[];
  /** rgm: the shares of epsilon and delta given to each node's PTR test (defaults 0.1 and 0.5). */
  readonly ptrEpsilonFraction?: number;
  readonly ptrDeltaFraction?: number;
  /**
   * The ball ||theta|| <= thetaRadius of every node's session (file comment). Default: for dpgd and
   * nonprivate the largest of the nodes' public defaults (`defaultThetaRadius`), for rgm each
   * node's own RGM ball.
   */
  readonly thetaRadius?: number;
  /** Step size tau (default: from the nodes' public constants, file comment). */
  readonly learningRate?: number;
  /** Called after every step with the new iterate (public: computed from released gradients only). */
  readonly onStep?: (step: number, steps: number, theta: Float64Array) => void;
  /** 'local' (default): each node adds its own full noise. 'secure': dpgd with secure aggregation (file comment). */
  readonly aggregation?: 'local' | 'secure';
  /** Secure aggregation: t, the session counts K - 1 - t noise shares (default 0; `secure/plan.ts`). */
  readonly collusion?: number;
}

/** What one node granted, or why it did not. */
export interface NodeOutcome {
  readonly node: string;
  readonly label: string;
  readonly plan?: SessionPlan;
  readonly error?: string;
}

/**
 * Local DP, node by node: each node's records are protected by that node's own report. `summary`
 * and `nodeNames` say which nodes took part (`learners/models/local-per-node.ts`); `dpfit verify` checks
 * that each of them carries its block in `nodes`.
 */
export interface FederatedPrivacy {
  /** 'localPerNode': each node's own noise; 'secureAggregation': the sum's noise, shared (`aggregation`). */
  readonly kind: 'localPerNode' | 'secureAggregation';
  /** Secure aggregation: the session's shared parameters (the same in every node's plan). */
  readonly aggregation?: SecureAggregationPlan;
  readonly summary: string;
  readonly nodeNames: readonly string[];
  readonly nodes: readonly { readonly node: string; readonly label: string; readonly privacy: SessionPlan['privacy']; readonly extraDelta: number }[];
}

/**
 * A model trained by `federate`: ridge coefficients (`000` eq. 9) with the per-node privacy block.
 * Its own format: it has no single (epsilon, delta), so readers that expect one must not take it
 * for a `dpfit-linear-model/1`.
 */
export interface FederatedModel extends Omit<LinearModel, 'format' | 'privacy'> {
  readonly format: 'dpfit-federated-model/1';
  readonly privacy: FederatedPrivacy;
}

export interface FederatedResult {
  readonly status: 'trained' | 'stopped';
  readonly message: string;
  /** The model (status 'trained' only): ridge coefficients, with the per-node privacy block. */
  readonly model?: FederatedModel;
  readonly privacy: FederatedPrivacy;
  readonly nodes: readonly NodeOutcome[];
  readonly learningRate?: number;
  readonly stepsDone: number;
  /** Why the run stopped (status 'stopped'): the node's error, or undefined for a PTR rejection. */
  readonly cause?: unknown;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function privacyOf(outcomes: readonly NodeOutcome[], aggregation?: SecureAggregationPlan): FederatedPrivacy {
  const nodes = outcomes.filter((o) => o.plan !== undefined).map((o) => ({ node: o.node, label: o.label, privacy: (o.plan as SessionPlan).privacy, extraDelta: (o.plan as SessionPlan).extraDelta }));
  if (aggregation !== undefined) return { kind: 'secureAggregation', summary: secureAggregationSummary(nodes, aggregation), aggregation, nodeNames: nodes.map((n) => n.node), nodes };
  return { kind: 'localPerNode', summary: localPerNodeSummary(nodes), nodeNames: nodes.map((n) => n.node), nodes };
}

/** The session request for node i (validated again by the node); `thetaRadius` is the ball every node is sent, if any. */
function sessionRequest(options: FederateOptions, index: number, thetaRadius: number | undefined, aggregation?: SessionRequest['aggregation']): SessionRequest {
  const { method, steps, regularization } = options;
  const ball = { ...(thetaRadius === undefined ? {} : { thetaRadius }), ...(aggregation === undefined ? {} : { aggregation }) };
  if (method === 'nonprivate') return { method, steps, regularization, ...ball };
  const target = { epsilon: options.epsilon, delta: options.delta, ...(options.rdpOrder === undefined ? {} : { rdpOrder: options.rdpOrder }) };
  if (method === 'dpgd') {
    const clip = options.clipNorm;
    const clipNorm = typeof clip === 'number' ? clip : clip?.[index];
    return { method, steps, regularization, ...target, ...(clipNorm === undefined ? {} : { clipNorm }), ...ball };
  }
  const rho = typeof options.rho === 'number' ? options.rho : options.rho?.[index];
  const rgm = { featureClip: options.featureClip, bClip: options.bClip, rho, ptrEpsilonFraction: options.ptrEpsilonFraction, ptrDeltaFraction: options.ptrDeltaFraction };
  return { method, steps, regularization, ...target, ...Object.fromEntries(Object.entries(rgm).filter(([, v]) => v !== undefined)), ...ball };
}

const FEDERATE_OPTIONS = optionNames<FederateOptions>({ method: true, steps: true, epsilon: true, delta: true, rdpOrder: true, regularization: true, clipNorm: true, featureClip: true, bClip: true, rho: true, ptrEpsilonFraction: true, ptrDeltaFraction: true, thetaRadius: true, learningRate: true, onStep: true, aggregation: true, collusion: true });

/** The secure-aggregation options checked before any node is asked (file comment). */
function checkSecureOptions(options: FederateOptions, nodes: number): void {
  if (options.aggregation !== undefined && options.aggregation !== 'local' && options.aggregation !== 'secure') {
    throw new InvalidParameterError('aggregation', options.aggregation, "'local' (each node adds its own noise) or 'secure' (dpgd with secure aggregation)");
  }
  if (options.aggregation !== 'secure') {
    if (options.collusion !== undefined) throw new InvalidParameterError('collusion', options.collusion, "absent unless aggregation is 'secure'");
    return;
  }
  if (options.method !== 'dpgd') {
    throw new InvalidParameterError('aggregation', 'secure', `local with method ${options.method}: secure aggregation covers dpgd only (${options.method === 'rgm' ? "rgm's noise is relative to each node's own gradient, so shares of it do not add up to one mechanism" : 'nonprivate adds no noise to share'})`);
  }
  if (nodes < 2) throw new InvalidParameterError('nodes', nodes, 'at least 2 nodes with secure aggregation (one node has nothing to aggregate)');
  const t = options.collusion ?? 0;
  if (!(Number.isInteger(t) && t >= 0 && t <= nodes - 2)) throw new InvalidParameterError('collusion', t, `an integer in [0, ${nodes - 2}] (the guarantee counts nodes - 1 - collusion >= 1 noise shares)`);
  const clip = options.clipNorm;
  if (Array.isArray(clip) && clip.some((c) => c !== clip[0])) throw new InvalidParameterError('clipNorm', clip, 'one threshold for every node with secure aggregation (the nodes add to one sum of sensitivity 2c)');
}

/**
 * Runs `000` eq. (79) over the nodes (file comment). Throws only for bad options or nodes that do
 * not fit together (different features); a node's refusal or failure gives status 'stopped'.
 */
export async function federate(clients: readonly NodeClient[], options: FederateOptions): Promise<FederatedResult> {
  rejectUnknownOptions(options, FEDERATE_OPTIONS, 'federate');
  if (clients.length === 0) throw new InvalidParameterError('nodes', clients.length, 'at least one node');
  if (Array.isArray(options.clipNorm) && options.clipNorm.length !== clients.length) {
    throw new InvalidParameterError('clipNorm', options.clipNorm, `one threshold, or one per node (${clients.length})`);
  }
  if (Array.isArray(options.rho) && options.rho.length !== clients.length) throw new InvalidParameterError('rho', options.rho, `one value, or one per node (${clients.length})`);
  if (options.thetaRadius !== undefined && !inScale(options.thetaRadius)) throw new InvalidParameterError('thetaRadius', options.thetaRadius, scaleRange);
  checkSecureOptions(options, clients.length);
  const secure = options.aggregation === 'secure';
  // ---- the nodes' public descriptions: they must describe the same features
  const infos: NodeInfo[] = [];
  for (const client of clients) {
    try {
      infos.push(await client.info());
    } catch (error) {
      throw new DpfitError('FETCH_FAILED', `${client.label}: the node did not describe itself (${describe(error)}); nothing was asked of any node`);
    }
  }
  const names = new Set<string>();
  for (const [i, info] of infos.entries()) {
    if (info.d !== infos[0].d || info.featureNames.join('\u0000') !== infos[0].featureNames.join('\u0000')) {
      throw new InvalidParameterError('nodes', clients[i].label, `nodes with the same features (${clients[0].label} has ${infos[0].d}: ${infos[0].featureNames.join(', ')}; ${clients[i].label} has ${info.d}: ${info.featureNames.join(', ')})`);
    }
    if (names.has(info.name)) throw new InvalidParameterError('nodes', clients[i].label, `nodes with distinct names (${info.name} appears twice)`);
    names.add(info.name);
  }
  const d = infos[0].d;
  if (infos.some((info) => info.task !== infos[0].task)) throw new InvalidParameterError('nodes', clients.map((c) => c.label).join(','), 'nodes with the same task (all binary labels, or all numeric)');
  // The public schema goes into the model when every node tells the same one.
  const schemas = infos.map((info) => (info.schema === undefined ? undefined : JSON.stringify(info.schema)));
  const schema = schemas.every((s) => s !== undefined && s === schemas[0]) ? infos[0].schema : undefined;

  // ---- the ball of every session (file comment): public values only
  const thetaRadius = options.thetaRadius ?? (options.method === 'rgm' ? undefined : Math.max(...infos.map((info) => defaultThetaRadius(info, options.regularization))));

  // ---- sessions: every node accounts its whole run before anything is released
  const outcomes: NodeOutcome[] = [];
  let shared: SecureAggregationPlan | undefined;
  const stop = (message: string, stepsDone: number, cause?: unknown): FederatedResult => ({ status: 'stopped', message, privacy: privacyOf(outcomes, shared), nodes: outcomes, stepsDone, ...(cause === undefined ? {} : { cause }) });
  const aggregation: SessionRequest['aggregation'] = secure
    ? { mode: 'secure', nodes: clients.length, collusion: options.collusion ?? 0, totalRows: infos.reduce((a, info) => a + info.n, 0), maxNodeRows: Math.max(...infos.map((info) => info.n)) }
    : undefined;
  for (const [i, client] of clients.entries()) {
    try {
      const plan = await client.openSession(sessionRequest(options, i, thetaRadius, aggregation));
      outcomes.push({ node: infos[i].name, label: client.label, plan });
      if (secure) {
        // Every node must have planned the same sum (grid, share, modulus) and sent a key; else nothing is asked.
        const problem =
          plan.aggregation === undefined || plan.publicKey === undefined
            ? "its plan has no secure aggregation block or key (is it a dpfit node of this version?)"
            : shared !== undefined && JSON.stringify(plan.aggregation) !== JSON.stringify(shared)
              ? `it planned a different sum (${JSON.stringify(plan.aggregation)}) from the first node's (${JSON.stringify(shared)})`
              : undefined;
        if (problem !== undefined) {
          return stop(`node ${infos[i].name} (${client.label}): ${problem}; the run stops before any gradient (the nodes' sessions are spent as reserved)`, 0, new DpfitError('FETCH_FAILED', `${client.label}: ${problem}`));
        }
        shared ??= plan.aggregation;
      }
      if (plan.ptr !== undefined && !plan.ptr.passed) {
        return stop(`node ${infos[i].name} (${client.label}): its Propose-Test-Release test rejected rho, so it releases no gradient; the run stops (the nodes' sessions are spent as reserved)`, 0);
      }
    } catch (error) {
      outcomes.push({ node: infos[i].name, label: client.label, error: describe(error) });
      return stop(`node ${infos[i].name} (${client.label}) refused its session: ${describe(error)}`, 0, error);
    }
  }
  const plans = outcomes.map((o) => o.plan as SessionPlan);
  const tau = options.learningRate ?? 1 / Math.max(...plans.map((p) => (1 + d * (p.gamma ?? 0)) * p.smoothness));
  if (!(tau > 0 && Number.isFinite(tau))) throw new InvalidParameterError('learningRate', tau, 'a finite number > 0');
  // The smallest ball of the plans (older nodes name none).
  const radius = Math.min(...plans.map((p) => p.thetaRadius ?? Infinity));

  // ---- 000 eq. (79)
  const theta = new Float64Array(d);
  const mean = new Float64Array(d);
  if (shared !== undefined) {
    const sum = shared;
    const sessions = plans.map((p) => p.session);
    const peers = plans.map((p) => p.publicKey as string);
    for (let t = 0; t < options.steps; t++) {
      const step = await secureStep(clients, sessions, peers, t, theta, { d, bits: sum.modulusBits, granularity: sum.granularity });
      if ('failed' in step) {
        return { ...stop(`step ${t + 1} of ${options.steps}: node ${step.failed}; secure aggregation has no dropout recovery, so the masks of this step cannot cancel and nothing of it is released; the run stops`, t, step.cause), learningRate: tau };
      }
      // The released sum over N = sum n_i rows; the regulariser is the coordinator's (public theta).
      for (let j = 0; j < d; j++) theta[j] -= tau * (step.sum[j] / sum.totalRows + options.regularization * theta[j]);
      if (radius < Infinity) projectOntoBall(theta, radius);
      options.onStep?.(t + 1, options.steps, theta);
    }
  }
  for (let t = 0; t < (shared === undefined ? options.steps : 0); t++) {
    const request = (i: number): GradientRequest => ({ session: plans[i].session, step: t, theta: Array.from(theta) });
    let answers: GradientAnswer[];
    try {
      answers = await Promise.all(clients.map((client, i) => client.gradient(request(i))));
    } catch (error) {
      return { ...stop(`step ${t + 1} of ${options.steps}: a node failed (${describe(error)}); the run stops`, t, error), learningRate: tau };
    }
    mean.fill(0);
    for (const answer of answers) {
      const gradient = answer.gradient;
      if (gradient === undefined || gradient.length !== d || !gradient.every((v) => Number.isFinite(v))) {
        return { ...stop(`step ${t + 1}: a node answered a malformed gradient; the run stops`, t), learningRate: tau };
      }
      for (let j = 0; j < d; j++) mean[j] += gradient[j] / answers.length;
    }
    for (let j = 0; j < d; j++) theta[j] -= tau * mean[j];
    if (radius < Infinity) projectOntoBall(theta, radius);
    options.onStep?.(t + 1, options.steps, theta);
  }
  const privacy = privacyOf(outcomes, shared);
  const model: FederatedModel = {
    ...linearModel(squaredLoss, theta, infos[0].featureNames),
    format: 'dpfit-federated-model/1',
    // Binary labels were -1/+1: a ridge classifier (predict the sign of the margin).
    task: infos[0].task,
    privacy,
    ...(schema === undefined ? {} : { schema }),
  };
  const how = shared === undefined ? 'gradient descent on the mean of the nodes\' noisy gradients' : `gradient descent on the securely aggregated sum (${shared.countedShares} of ${shared.nodes} noise shares counted)`;
  return { status: 'trained', message: `${options.steps} steps of ${how} over ${clients.length} nodes (tau = ${tau})`, model, privacy, nodes: outcomes, learningRate: tau, stepsDone: options.steps };
}
