/**
 * The coordinator's side of the wire: messages from a node are untrusted JSON (a node may be
 * another version, misconfigured, or hostile), so they are read field by field. Numbers that may
 * be infinite (a budget or a non-private session's epsilon) travel as "Infinity"
 * (`toDpfitJson`). A malformed message is a DpfitError 'FETCH_FAILED' naming the node and the
 * field (exit 3 in the CLI), never a crash of the coordinator.
 */
import { DpfitError } from '../errors.js';
import { toDpfitJson } from '../json-numbers.js';
import { parsePrivacyReport } from '../learners/models/model.js';
import { FEDERATED_METHODS, PROTOCOL, type FederatedMethod, type GradientAnswer, type NodeInfo, type SessionPlan } from './protocol.js';
import { MAX_MODULUS_BITS, MAX_SECURE_NODES, type SecureAggregationPlan } from './secure/plan.js';
import { residueDigits } from './secure/masks.js';

/** A message as it travels (JSON text, Infinity as "Infinity"). */
export const encodeMessage = (value: unknown): string => toDpfitJson(value);

function malformed(label: string, field: string, value: unknown, expected: string): DpfitError {
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 60)) : JSON.stringify(value)?.slice(0, 60);
  return new DpfitError('FETCH_FAILED', `${label}: the node's answer is malformed: ${field} must be ${expected}, got ${shown}`);
}

function object(label: string, field: string, value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw malformed(label, field, value, 'a JSON object');
  return value as Record<string, unknown>;
}

function num(label: string, field: string, value: unknown, ok: (x: number) => boolean, expected: string): number {
  const x = value === 'Infinity' ? Infinity : value;
  if (typeof x !== 'number' || Number.isNaN(x) || !ok(x)) throw malformed(label, field, value, expected);
  return x;
}

const finiteNumber = (x: number) => Number.isFinite(x);
const count = (x: number) => Number.isSafeInteger(x) && x >= 1;

function method(label: string, field: string, value: unknown): FederatedMethod {
  if (typeof value !== 'string' || !(FEDERATED_METHODS as readonly string[]).includes(value)) throw malformed(label, field, value, FEDERATED_METHODS.join(' | '));
  return value as FederatedMethod;
}

function session(label: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || !/^[0-9a-f]{32}$/.test(value)) throw malformed(label, field, value, 'a session id (32 hex digits)');
  return value;
}

/** A node's `NodeInfo`. */
export function readNodeInfo(label: string, json: unknown): NodeInfo {
  const r = object(label, 'info', json);
  if (r.protocol !== PROTOCOL) throw malformed(label, 'info.protocol', r.protocol, `"${PROTOCOL}" (is this a dpfit node of the same version?)`);
  const d = num(label, 'info.d', r.d, count, 'an integer >= 1');
  if (!Array.isArray(r.featureNames) || r.featureNames.length !== d || !r.featureNames.every((f) => typeof f === 'string')) {
    throw malformed(label, 'info.featureNames', r.featureNames, `${d} feature names`);
  }
  if (typeof r.name !== 'string' || r.name.length === 0 || r.name.length > 200) throw malformed(label, 'info.name', r.name, 'a name of 1 to 200 characters');
  const budget = object(label, 'info.budget', r.budget);
  const spent = object(label, 'info.spent', r.spent);
  if (!Array.isArray(r.methods)) throw malformed(label, 'info.methods', r.methods, 'a list of methods');
  return {
    protocol: PROTOCOL,
    name: r.name,
    n: num(label, 'info.n', r.n, count, 'an integer >= 1'),
    d,
    featureNames: r.featureNames as string[],
    rowNormBound: num(label, 'info.rowNormBound', r.rowNormBound, (x) => x > 0 && finiteNumber(x), 'a finite number > 0'),
    labelBound: num(label, 'info.labelBound', r.labelBound, (x) => x > 0 && finiteNumber(x), 'a finite number > 0'),
    budget: { epsilon: num(label, 'info.budget.epsilon', budget.epsilon, (x) => x > 0, 'a number > 0'), delta: num(label, 'info.budget.delta', budget.delta, (x) => x >= 0 && x < 1, 'in [0, 1)') },
    spent: {
      epsilon: num(label, 'info.spent.epsilon', spent.epsilon, (x) => x >= 0, 'a number >= 0'),
      delta: num(label, 'info.spent.delta', spent.delta, (x) => x >= 0 && x <= 1, 'in [0, 1]'),
      entries: num(label, 'info.spent.entries', spent.entries, (x) => Number.isSafeInteger(x) && x >= 0, 'an integer >= 0'),
    },
    methods: r.methods.map((m, i) => method(label, `info.methods[${i}]`, m)),
    task: r.task === 'classification' || r.task === 'regression' ? r.task : (() => { throw malformed(label, 'info.task', r.task, "'classification' or 'regression'"); })(),
    ...(r.schema === undefined ? {} : { schema: object(label, 'info.schema', r.schema) }),
  };
}

/** A secure session's aggregation block. */
function aggregationPlan(label: string, value: unknown): SecureAggregationPlan {
  const r = object(label, 'plan.aggregation', value);
  if (r.mode !== 'secure') throw malformed(label, 'plan.aggregation.mode', r.mode, "'secure'");
  const int = (key: string, ok: (x: number) => boolean, expected: string) => num(label, `plan.aggregation.${key}`, r[key], (x) => Number.isSafeInteger(x) && ok(x), expected);
  const positive = (key: string) => num(label, `plan.aggregation.${key}`, r[key], (x) => x > 0 && finiteNumber(x), 'a finite number > 0');
  const own = object(label, 'plan.aggregation.ownShare', r.ownShare);
  return {
    mode: 'secure',
    nodes: int('nodes', (x) => x >= 2 && x <= MAX_SECURE_NODES, `an integer in [2, ${MAX_SECURE_NODES}]`),
    collusion: int('collusion', (x) => x >= 0, 'an integer >= 0'),
    countedShares: int('countedShares', (x) => x >= 1, 'an integer >= 1'),
    totalRows: int('totalRows', (x) => x >= 1, 'an integer >= 1'),
    granularity: positive('granularity'),
    shareNoiseStd: positive('shareNoiseStd'),
    sumNoiseStd: positive('sumNoiseStd'),
    modulusBits: int('modulusBits', (x) => x >= 2 && x <= MAX_MODULUS_BITS, `an integer in [2, ${MAX_MODULUS_BITS}]`),
    ownShare: {
      epsilon: num(label, 'plan.aggregation.ownShare.epsilon', own.epsilon, (x) => x > 0, 'a number > 0'),
      delta: num(label, 'plan.aggregation.ownShare.delta', own.delta, (x) => x > 0 && x < 1, 'in (0, 1)'),
    },
  };
}

/** A node's `SessionPlan`; its privacy block is read as every model's (`parsePrivacyReport`). */
export function readSessionPlan(label: string, json: unknown): SessionPlan {
  const r = object(label, 'plan', json);
  if (r.protocol !== PROTOCOL) throw malformed(label, 'plan.protocol', r.protocol, `"${PROTOCOL}"`);
  let privacy;
  try {
    privacy = parsePrivacyReport(r.privacy, 'plan.privacy');
  } catch (error) {
    throw new DpfitError('FETCH_FAILED', `${label}: the node's answer is malformed: ${(error as Error).message}`);
  }
  const ptr = r.ptr === undefined ? undefined : object(label, 'plan.ptr', r.ptr);
  if (ptr !== undefined && typeof ptr.passed !== 'boolean') throw malformed(label, 'plan.ptr.passed', ptr.passed, 'true or false');
  if (typeof r.node !== 'string') throw malformed(label, 'plan.node', r.node, 'a name');
  return {
    protocol: PROTOCOL,
    session: session(label, 'plan.session', r.session),
    node: r.node,
    method: method(label, 'plan.method', r.method),
    steps: num(label, 'plan.steps', r.steps, count, 'an integer >= 1'),
    privacy,
    extraDelta: num(label, 'plan.extraDelta', r.extraDelta, (x) => x >= 0 && x < 1, 'in [0, 1)'),
    smoothness: num(label, 'plan.smoothness', r.smoothness, (x) => x > 0 && finiteNumber(x), 'a finite number > 0'),
    ...(r.gamma === undefined ? {} : { gamma: num(label, 'plan.gamma', r.gamma, (x) => x >= 0 && finiteNumber(x), 'a finite number >= 0') }),
    ...(r.noiseMultiplier === undefined ? {} : { noiseMultiplier: num(label, 'plan.noiseMultiplier', r.noiseMultiplier, (x) => x >= 0 && finiteNumber(x), 'a finite number >= 0') }),
    ...(r.thetaRadius === undefined ? {} : { thetaRadius: num(label, 'plan.thetaRadius', r.thetaRadius, (x) => x > 0 && finiteNumber(x), 'a finite number > 0') }),
    ...(r.aggregation === undefined ? {} : { aggregation: aggregationPlan(label, r.aggregation) }),
    ...(r.publicKey === undefined
      ? {}
      : { publicKey: typeof r.publicKey === 'string' && /^[A-Za-z0-9_-]{43}$/.test(r.publicKey) ? r.publicKey : (() => { throw malformed(label, 'plan.publicKey', r.publicKey, 'an X25519 public key (43 base64url characters)'); })() }),
    ...(ptr === undefined
      ? {}
      : {
          ptr: {
            passed: ptr.passed as boolean,
            epsilon: num(label, 'plan.ptr.epsilon', ptr.epsilon, (x) => x > 0, 'a number > 0'),
            delta: num(label, 'plan.ptr.delta', ptr.delta, (x) => x > 0 && x < 1, 'in (0, 1)'),
            threshold: num(label, 'plan.ptr.threshold', ptr.threshold, finiteNumber, 'a finite number'),
          },
        }),
  };
}

/**
 * A node's `GradientAnswer` for a session of dimension d: a gradient, or (secure sessions) d masked
 * residues in hex (their width is checked against the plan by the coordinator, `secure/masks.ts`).
 */
export function readGradientAnswer(label: string, json: unknown, d: number): GradientAnswer {
  const r = object(label, 'answer', json);
  if (r.masked !== undefined) {
    const width = residueDigits(MAX_MODULUS_BITS);
    if (!Array.isArray(r.masked) || r.masked.length !== d || !r.masked.every((h) => typeof h === 'string' && h.length >= 1 && h.length <= width && /^[0-9a-f]+$/.test(h))) {
      throw malformed(label, 'answer.masked', r.masked, `${d} residues of at most ${width} hex digits`);
    }
    if (r.gradient !== undefined) throw malformed(label, 'answer.gradient', r.gradient, 'absent beside masked residues');
    return {
      session: session(label, 'answer.session', r.session),
      step: num(label, 'answer.step', r.step, (x) => Number.isSafeInteger(x) && x >= 0, 'an integer >= 0'),
      masked: r.masked as string[],
    };
  }
  if (!Array.isArray(r.gradient) || r.gradient.length !== d) throw malformed(label, 'answer.gradient', r.gradient, `${d} finite numbers`);
  return {
    session: session(label, 'answer.session', r.session),
    step: num(label, 'answer.step', r.step, (x) => Number.isSafeInteger(x) && x >= 0, 'an integer >= 0'),
    gradient: r.gradient.map((v, j) => num(label, `answer.gradient[${j}]`, v, finiteNumber, 'a finite number')),
  };
}
