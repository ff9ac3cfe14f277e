/**
 * A data-holding node of the federated protocol (`protocol.ts`; `000` Sec. 6, App. C): it keeps
 * its records, answers privatised gradients of its local ridge objective
 *
 *   f_i(theta) = (1/n_i) sum_j 1/2 (x_j.theta - y_j)^2 + mu/2 |theta|^2      (`000` eq. 9)
 *
 * and enforces its own budget. A session is a whole run of T gradients with one mechanism:
 *
 *   - `rgm` (`000` eq. 83): the node's own PTR test and RGM-GD noise, exactly the maths of
 *     `trainRgmGd` (`planRgmGd`, `runRgmPtr`, `noisyRgmGradient`): (eta, R_rel) come from public
 *     constants (R_c, B, rho, the node's n), which is `000` Sec. 6's point — no knowledge of the
 *     other nodes is needed. The ball is the plan's (the grid's error bound needs it), or the
 *     request's thetaRadius when smaller.
 *   - `dpgd` (`000` eq. 81): per-example gradients clipped to c, exact discrete Gaussian noise on
 *     a grid (`dpGdStepNoise`, sensitivity 2c replace-one), divided by the public n; T steps
 *     calibrated exactly (T Gaussians are one, `exactGaussianCompositionNoiseMultiplier`).
 *   - `nonprivate` (`000` eq. 80): the exact gradient; its event is non-private, so only a node
 *     whose budget epsilon is Infinity grants it.
 *
 * Accounting happens before anything is released: `openSession` calibrates the noise from public
 * quantities, builds the event of the WHOLE session and reserves it in the ledger (refused:
 * `BudgetExceededError`, nothing released). Only then does it read its data (PTR for rgm). A
 * session answers each step at most once and never more than T steps: repeated questions would be
 * fresh releases the ledger did not grant.
 *
 * The coordinator is untrusted (`public-ranges.ts`): every request is parsed against
 * public ranges, every theta is projected onto the session's public ball (`thetaRadius`, in the
 * plan) before the data are touched, the node's rows are checked against its public bounds at
 * construction, and `openSession` refuses, before reserving anything, a plan whose noise could
 * leave the finite range. So every valid gradient request is answered with finite numbers, and
 * every refusal is decided from the request and public values alone.
 *
 * Replace-one neighbours within the node's data (n public), as `000` App. B.4; the guarantee is
 * local: it holds for the node's records whatever the coordinator and the other nodes do.
 */
import { randomBytes } from 'node:crypto';
import type { DpEvent } from '../accounting/events/types.js';
import { NON_PRIVATE_EVENT, selfComposeEvent } from '../accounting/events/constructors.js';
import { eventToJson } from '../accounting/events/json.js';
import { calibrateNoiseMultiplier, rdpAtOrder } from '../accounting/calibration/calibrate.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } from '../accounting/gaussian/gaussian-composition.js';
import { BudgetExceededError, InvalidParameterError } from '../errors.js';
import { dpGdStepNoise } from '../learners/gradient/dp-gd.js';
import type { SumNoise } from '../learners/gradient/clipped-sum-noise.js';
import { clipThresholds } from '../learners/glm/clip-thresholds.js';
import { sumClippedGradients } from '../learners/glm/per-example.js';
import { squaredLoss } from '../learners/glm/losses/squared.js';
import type { GlmData } from '../learners/glm/types.js';
import { nonPrivateReport, privacyReport } from '../learners/models/privacy-report.js';
import { gaussianFeatureRho } from '../learners/rgm/propose-test-release.js';
import { clipAndAggregate, noisyRgmGradient, planRgmGd, requireClipMatrix, ridgeGradient, runRgmPtr, type ClippedData, type RgmGdPrivacyReport, type RgmPlan } from '../learners/rgm/rgm-gd.js';
import { defaultRng, type Rng } from '../random/rng.js';
import type { BudgetLedger } from '../accounting/budget/rule.js';
import { defaultThetaRadius, dpgdEnvelope, MAX_SCALE, projectIntoBall, requireDataWithinBounds, rgmEnvelope } from './public-ranges.js';
import { FEDERATED_METHODS, PROTOCOL, parseGradientRequest, parseSessionRequest, type GradientAnswer, type NodeInfo, type SessionPlan, type SessionRequest } from './protocol.js';
import { optionNames, rejectUnknownOptions } from '../validate.js';
import { addGaussianGridNoise, type GaussianGridPlan } from '../mechanisms/grid-noise.js';
import { maskValues, newMaskKeys, pairSecrets, type MaskKeys, type PairSecrets } from './secure/masks.js';
import { planSecureDpgd } from './secure/plan.js';

export interface NodeData extends GlmData {
  readonly featureNames: readonly string[];
  /** Public bound on every row's L2 norm (the schema's). */
  readonly rowNormBound: number;
  /** Public bound on |y|. */
  readonly labelBound: number;
  /** 'classification' when y holds binary labels as -1/+1 (default 'regression'). */
  readonly task?: 'classification' | 'regression';
}

export interface FederatedNodeOptions {
  readonly name: string;
  /** The node's public schema (its JSON), told to coordinators with the node's info. */
  readonly schema?: unknown;
  readonly rng?: Rng;
  /** Sessions kept open at once (older finished sessions are forgotten first). Default 64. */
  readonly maxSessions?: number;
  /**
   * Take part in secure aggregation (`SessionRequest.aggregation`, `secure/plan.ts`). Default false:
   * a secure session's guarantee rests on the coordinator following the protocol and on the other
   * nodes adding their shares, where a local session's holds whatever they do, so the node's
   * operator opts in (`dpfit node serve --allow-secure-aggregation`).
   */
  readonly secureAggregation?: boolean;
}

/** A secure session's state: its keys, the pair secrets once the peers are known, and how to compute the clipped sum. */
interface SecureState {
  readonly keys: MaskKeys;
  readonly nodes: number;
  readonly bits: number;
  readonly grid: Pick<GaussianGridPlan, 'granularity' | 'gridNoiseStd'>;
  readonly clippedSum: (theta: Float64Array, out: Float64Array) => Float64Array;
  secrets?: PairSecrets;
}

interface Session {
  readonly plan: SessionPlan;
  readonly answered: Uint8Array;
  readonly gradientOf: (theta: Float64Array, out: Float64Array) => Float64Array;
  readonly secure?: SecureState;
  done: number;
}

/** A refused request that the protocol maps to its own HTTP status (403 budget, 404 session, 409 step). */
export class NodeRefusal extends BudgetExceededError {
  constructor(
    readonly status: 403 | 404 | 409,
    message: string,
  ) {
    super(message);
  }
}

const FEDERATED_NODE_OPTIONS = optionNames<FederatedNodeOptions>({ name: true, schema: true, rng: true, maxSessions: true, secureAggregation: true });

export class FederatedNode {
  readonly name: string;
  private readonly rng: Rng;
  private readonly schema: unknown;
  private readonly maxSessions: number;
  private readonly secureAggregation: boolean;
  private readonly sessions = new Map<string, Session>();
  /** Clipped sufficient statistics by (R_c, B, mu): computed once per parameter set. */
  private readonly clippedCache = new Map<string, ClippedData>();

  constructor(
    private readonly data: NodeData,
    private readonly ledger: BudgetLedger,
    options: FederatedNodeOptions,
  ) {
    rejectUnknownOptions(options, FEDERATED_NODE_OPTIONS, 'FederatedNode');
    if (!(data.x instanceof Float64Array) || data.x.length !== data.n * data.d) throw new InvalidParameterError('data.x', data.x, `a Float64Array of length n * d = ${data.n * data.d}`);
    if (!(data.y instanceof Float64Array) || data.y.length !== data.n) throw new InvalidParameterError('data.y', data.y, `a Float64Array of length n = ${data.n}`);
    if (data.featureNames.length !== data.d) throw new InvalidParameterError('data.featureNames', data.featureNames.length, `${data.d} names`);
    // Every row within the public bounds: what makes every request's arithmetic finite (public-ranges.ts).
    requireDataWithinBounds(data);
    this.name = options.name;
    this.rng = options.rng ?? defaultRng();
    this.schema = options.schema;
    this.maxSessions = options.maxSessions ?? 64;
    this.secureAggregation = options.secureAggregation ?? false;
  }

  /** The node's public description (`NodeInfo`). */
  async info(): Promise<NodeInfo> {
    const spent = await this.ledger.spent();
    const { n, d, featureNames, rowNormBound, labelBound } = this.data;
    return {
      protocol: PROTOCOL,
      name: this.name,
      n,
      d,
      featureNames: [...featureNames],
      rowNormBound,
      labelBound,
      budget: { ...this.ledger.budget },
      spent,
      methods: FEDERATED_METHODS,
      task: this.data.task ?? 'regression',
      ...(this.schema === undefined ? {} : { schema: this.schema }),
    };
  }

  /**
   * Opens a session (file comment): plan from public quantities, reserve the whole session's event
   * in the ledger, then (rgm) run PTR on the data. Throws NodeRefusal(403) when the budget refuses,
   * InvalidParameterError for a bad request.
   */
  async openSession(raw: unknown, client: string): Promise<SessionPlan> {
    const request = parseSessionRequest(raw);
    const prepared = this.prepare(request);
    // Every session is replace-one within the node (n public): its ledger holds replace-one releases.
    const decision = await this.ledger.reserve({ client, description: prepared.description, event: prepared.event, extraDelta: prepared.extraDelta, relation: 'replaceOne' });
    if (!decision.granted) throw new NodeRefusal(403, `node ${this.name} refuses the session: ${decision.reason}`);
    // Granted and recorded: only now is the data read.
    const session = prepared.start();
    const id = randomBytes(16).toString('hex');
    const plan: SessionPlan = { ...session.plan, ...(session.secure === undefined ? {} : { publicKey: session.secure.keys.publicKey }), session: id };
    this.forgetOldSessions();
    this.sessions.set(id, { ...session, plan, answered: new Uint8Array(request.steps), done: 0 });
    return plan;
  }

  /** The privatised gradient of step t of a session (each step once); in a secure session, the masked share of the sum. */
  gradient(raw: unknown): GradientAnswer {
    const request = parseGradientRequest(raw, this.data.d);
    const session = this.sessions.get(request.session);
    if (session === undefined) throw new NodeRefusal(404, `node ${this.name} has no session ${request.session}`);
    const { plan } = session;
    if (plan.ptr !== undefined && !plan.ptr.passed) throw new NodeRefusal(409, `node ${this.name}: session ${request.session} released only its failed PTR test; it answers no gradient`);
    if (request.step >= plan.steps) throw new NodeRefusal(409, `node ${this.name}: step ${request.step} is beyond the session's ${plan.steps} granted steps`);
    if (session.answered[request.step] === 1) throw new NodeRefusal(409, `node ${this.name}: step ${request.step} of session ${request.session} was already answered (a second answer would be a release the ledger did not grant)`);
    if (session.secure !== undefined) return this.secureGradient(session, session.secure, request);
    if (request.peers !== undefined) throw new InvalidParameterError('request.peers', request.peers.length, 'absent: the session is not a secure-aggregation session');
    session.answered[request.step] = 1;
    session.done++;
    // The public projection first: only a theta in the session's ball reaches the data.
    const theta = projectIntoBall(Float64Array.from(request.theta), plan.thetaRadius as number);
    const out = session.gradientOf(theta, new Float64Array(this.data.d));
    return { session: request.session, step: request.step, gradient: Array.from(out) };
  }

  /**
   * A secure session's step (`secure/masks.ts`): the peers' keys fixed at the first step (the same
   * list at every step), then the clipped sum at the projected theta, rounded to the session's grid
   * plus this node's discrete Gaussian share (`addGaussianGridNoise`), as integers, masked.
   * Everything checked before the step is marked answered comes from the request alone.
   */
  private secureGradient(session: Session, secure: SecureState, request: ReturnType<typeof parseGradientRequest>): GradientAnswer {
    if (request.peers === undefined) throw new InvalidParameterError('request.peers', undefined, `the ${secure.nodes} public keys of the secure session's nodes`);
    if (secure.secrets === undefined) secure.secrets = pairSecrets(secure.keys, request.peers, secure.nodes);
    else if (request.peers.length !== secure.secrets.peers.length || request.peers.some((p, j) => p !== secure.secrets?.peers[j])) {
      throw new InvalidParameterError('request.peers', 'a different list', "the list of the session's first step (the nodes and their order are fixed for the session)");
    }
    session.answered[request.step] = 1;
    session.done++;
    const theta = projectIntoBall(Float64Array.from(request.theta), session.plan.thetaRadius as number);
    const out = secure.clippedSum(theta, new Float64Array(this.data.d));
    addGaussianGridNoise(out, secure.grid as GaussianGridPlan, this.rng);
    // (k + K) g with g a power of two: dividing by g is exact, and k + K is an integer below 2^53.
    const values = Array.from(out, (v) => BigInt(v / secure.grid.granularity));
    return { session: request.session, step: request.step, masked: maskValues(values, secure.secrets, request.step, secure.bits) };
  }

  private forgetOldSessions(): void {
    while (this.sessions.size >= this.maxSessions) {
      const oldest = [...this.sessions.entries()].sort((a, b) => Number(b[1].done >= b[1].plan.steps) - Number(a[1].done >= a[1].plan.steps))[0];
      this.sessions.delete(oldest[0]);
    }
  }

  /**
   * Everything decided before the data is read: the event, the ball, the checks that keep every
   * answer finite (`public-ranges.ts`), the report when it is public, and how to start the session.
   */
  private prepare(request: SessionRequest): {
    description: string;
    event: DpEvent;
    extraDelta: number;
    start: () => { plan: Omit<SessionPlan, 'session'>; gradientOf: Session['gradientOf']; secure?: SecureState };
  } {
    const { n, d } = this.data;
    const { steps, regularization: mu } = request;
    const base = { protocol: PROTOCOL as typeof PROTOCOL, node: this.name, method: request.method, steps };
    switch (request.method) {
      case 'nonprivate': {
        const event = selfComposeEvent(NON_PRIVATE_EVENT, steps);
        const thetaRadius = request.thetaRadius ?? defaultThetaRadius(this.data, mu);
        const plan = { ...base, privacy: { ...nonPrivateReport(this.rng, 'replaceOne'), event: eventToJson(event) }, extraDelta: 0, smoothness: this.smoothness(this.data.rowNormBound, mu), thetaRadius };
        return {
          description: `nonprivate: ${steps} exact gradients (mu = ${mu}, ||theta|| <= ${thetaRadius})`,
          event,
          extraDelta: 0,
          start: () => {
            const exact = clipAndAggregate(this.data, requireClipMatrix(undefined, d).factor, Infinity, Infinity, mu);
            return { plan, gradientOf: (theta, out) => ridgeGradient(exact, theta, out) };
          },
        };
      }
      case 'dpgd': {
        const clipNorm = request.clipNorm as number;
        const epsilon = request.epsilon as number;
        const delta = request.delta as number;
        const order = request.rdpOrder;
        const thetaRadius = request.thetaRadius ?? defaultThetaRadius(this.data, mu);
        if (request.aggregation !== undefined) return this.prepareSecureDpgd(request, base, thetaRadius);
        const z =
          order === undefined
            ? exactGaussianCompositionNoiseMultiplier(epsilon, delta, steps)
            : calibrateNoiseMultiplier((m) => selfComposeEvent(dpGdStepNoise({ n, d }, clipNorm, m).event, steps), { targetEpsilon: epsilon, delta, accountant: rdpAtOrder(order) }).noiseMultiplier;
        const noise: SumNoise = dpGdStepNoise({ n, d }, clipNorm, z);
        dpgdEnvelope(noise.granularity as number);
        const event = selfComposeEvent(noise.event, steps);
        const privacy = privacyReport(event, delta, { relation: 'replaceOne', rng: this.rng, granularity: noise.granularity, pld: gaussianCompositionEpsilon });
        const plan = { ...base, privacy, extraDelta: 0, smoothness: this.smoothness(this.data.rowNormBound, mu), thetaRadius, noiseMultiplier: z };
        return {
          description: `dpgd: ${steps} clipped gradients (c = ${clipNorm}, z = ${z}, mu = ${mu}, ||theta|| <= ${thetaRadius}) at target ${order === undefined ? `(${epsilon}, ${delta})` : `RDP ${epsilon} at order ${order}`}`,
          event,
          extraDelta: 0,
          start: () => {
            const glm = { x: this.data.x, y: this.data.y, n, d };
            // Per-row clip thresholds, computed once for the session: the same sums as recomputing the norms per step (`per-example.ts`).
            const thresholds = clipThresholds(glm, clipNorm);
            return {
              plan,
              gradientOf: (theta, out) => {
                sumClippedGradients(squaredLoss, glm, theta, { clipNorm, out, thresholds });
                noise.add(out, this.rng);
                for (let j = 0; j < d; j++) out[j] = out[j] / n + mu * theta[j];
                return out;
              },
            };
          },
        };
      }
      case 'rgm': {
        const featureClip = request.featureClip ?? this.data.rowNormBound;
        const bClip = request.bClip ?? featureClip * this.data.labelBound;
        const clip = requireClipMatrix(undefined, d);
        const rho = request.rho ?? gaussianFeatureRho(d, featureClip);
        const plan: RgmPlan = planRgmGd({
          n,
          d,
          steps,
          regularization: mu,
          featureClip,
          bClip,
          clip,
          rho,
          epsilon: request.epsilon as number,
          delta: request.delta as number,
          ptrEpsilonFraction: request.ptrEpsilonFraction ?? 0.1,
          ptrDeltaFraction: request.ptrDeltaFraction ?? 0.5,
          ...(request.rdpOrder === undefined ? {} : { rdpOrder: request.rdpOrder }),
        });
        // RGM's own ball (its error bound needs it), or the request's when smaller.
        const thetaRadius = Math.min(request.thetaRadius ?? MAX_SCALE, plan.grid.thetaRadius);
        // ||A~ theta - b~|| computed: rows of norm <= min(R_c, R) (clipped, or within the node's bound), ||b~|| <= B, plus the grid's error bound.
        const rows = Math.min(featureClip, this.data.rowNormBound);
        const gradientBound = ((rows * rows + mu) * thetaRadius + bClip + plan.grid.computationError) * (1 + 1e-9);
        rgmEnvelope({ granularity: plan.grid.granularity, gamma: plan.gamma, baselineSteps: plan.baselineSteps, d, gradientBound, thetaRadius });
        return {
          description: `rgm: PTR + ${steps} RGM gradients (R_c = ${featureClip}, B = ${bClip}, rho = ${rho}, gamma = ${plan.gamma}, mu = ${mu}, ||theta|| <= ${thetaRadius}) at target (${plan.epsilon}, ${plan.delta})`,
          event: plan.event,
          extraDelta: plan.ptrDelta,
          start: () => {
            const key = `${featureClip}|${bClip}|${mu}`;
            let clipped = this.clippedCache.get(key);
            if (clipped === undefined) this.clippedCache.set(key, (clipped = clipAndAggregate(this.data, clip.factor, featureClip, bClip, mu)));
            const outcome = runRgmPtr(clipped, plan, this.rng);
            const report = privacyReport(plan.event, plan.rdpDelta, {
              relation: 'replaceOne',
              rng: this.rng,
              granularity: plan.grid.granularity,
              granularities: { ptr: outcome.granularity, gradient: plan.grid.granularity },
              warnings: [`delta = ${plan.rdpDelta} (RDP conversion of the composed event) + ${plan.ptrDelta} (PTR)`],
            });
            // The shape of trainRgmGd's report (`verifyModel` re-accounts the event at deltaComponents.rdp and checks the PTR part).
            const privacy: RgmGdPrivacyReport = Object.freeze({
              ...report,
              delta: plan.delta,
              ptr: { epsilon: plan.ptrEpsilon, delta: plan.ptrDelta, passed: outcome.passed, threshold: outcome.threshold },
              deltaComponents: { rdp: plan.rdpDelta, ptr: plan.ptrDelta },
            });
            const fixed = clipped;
            const smoothness = this.smoothness(featureClip, mu);
            return {
              plan: {
                ...base,
                privacy,
                extraDelta: plan.ptrDelta,
                smoothness,
                thetaRadius,
                gamma: plan.gamma,
                ptr: { passed: outcome.passed, epsilon: plan.ptrEpsilon, delta: plan.ptrDelta, threshold: outcome.threshold },
              },
              gradientOf: (theta, out) => noisyRgmGradient(fixed, plan, theta, this.rng, out),
            };
          },
        };
      }
    }
  }

  /**
   * A secure dpgd session (`secure/plan.ts`): the plan from public values, the event of the sum of
   * m = K - 1 - t shares reserved as the session's, and a fresh key pair when it starts. The node's
   * answers carry no regulariser: the coordinator adds mu theta to the decoded sum / N.
   */
  private prepareSecureDpgd(request: SessionRequest, base: Pick<SessionPlan, 'protocol' | 'node' | 'method' | 'steps'>, thetaRadius: number): ReturnType<FederatedNode['prepare']> {
    const aggregation = request.aggregation as NonNullable<SessionRequest['aggregation']>;
    if (!this.secureAggregation) {
      throw new InvalidParameterError('request.aggregation', 'secure', `absent: node ${this.name} does not take part in secure aggregation (its operator starts it with --allow-secure-aggregation, option secureAggregation)`);
    }
    const { n, d } = this.data;
    const { steps, regularization: mu } = request;
    const clipNorm = request.clipNorm as number;
    const delta = request.delta as number;
    const secure = planSecureDpgd({ n, d, clipNorm, epsilon: request.epsilon as number, delta, steps, ...(request.rdpOrder === undefined ? {} : { rdpOrder: request.rdpOrder }), aggregation });
    const g = secure.aggregation.granularity;
    dpgdEnvelope(g);
    const { nodes: K, collusion: t, countedShares: m, ownShare } = secure.aggregation;
    const privacy = privacyReport(secure.event, delta, {
      relation: 'replaceOne',
      rng: this.rng,
      granularity: g,
      pld: gaussianCompositionEpsilon,
      warnings: [
        `secure aggregation over ${K} nodes: epsilon counts the noise shares of ${m} = K - 1 - ${t} nodes (mechanisms/distributed-gaussian-grid.ts); it holds against the coordinator following the protocol together with up to ${t + 1} other nodes, provided the other nodes add their shares`,
        `against a coordinator that breaks the protocol (relays its own keys, invents nodes) only this node's own share protects its records: epsilon ${ownShare.epsilon} at delta ${ownShare.delta}`,
      ],
    });
    const plan = { ...base, privacy, extraDelta: 0, smoothness: this.smoothness(this.data.rowNormBound, mu), thetaRadius, noiseMultiplier: secure.noiseMultiplier, aggregation: secure.aggregation };
    return {
      description: `dpgd with secure aggregation: ${steps} clipped sums (c = ${clipNorm}, K = ${K} nodes, t = ${t}, share s = ${secure.aggregation.shareNoiseStd} steps of g = ${g}, mu = ${mu}, ||theta|| <= ${thetaRadius}) at target ${request.rdpOrder === undefined ? `(${request.epsilon}, ${delta})` : `RDP ${request.epsilon} at order ${request.rdpOrder}`} counting ${m} shares`,
      event: secure.event,
      extraDelta: 0,
      start: () => {
        const glm = { x: this.data.x, y: this.data.y, n, d };
        const thresholds = clipThresholds(glm, clipNorm);
        const clippedSum = (theta: Float64Array, out: Float64Array) => sumClippedGradients(squaredLoss, glm, theta, { clipNorm, out, thresholds }).sum;
        return {
          plan,
          gradientOf: () => {
            throw new InvalidParameterError('request', 'a plain gradient', 'a secure session answers masked sums only');
          },
          secure: { keys: newMaskKeys(), nodes: K, bits: secure.aggregation.modulusBits, grid: { granularity: g, gridNoiseStd: secure.aggregation.shareNoiseStd }, clippedSum },
        };
      },
    };
  }

  /** Public smoothness of the local objective: lambda_max(A~) <= R^2 + mu for rows of norm <= R. */
  private smoothness(rowNorm: number, mu: number): number {
    return rowNorm * rowNorm + mu;
  }
}
