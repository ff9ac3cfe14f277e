/**
 * Federated training in-process (`src/federated`): the node runs the same maths as the
 * single-machine learners (bit for bit), accounts a whole session before releasing anything,
 * answers each step once, and the coordinator stops cleanly on refusals and malformed answers.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { twoPartySplit } from '../../src/data/synthetic.js';
import { InvalidParameterError } from '../../src/errors.js';
import { InMemoryLedger } from '../../src/accounting/budget/rule.js';
import { federate, type NodeClient } from '../../src/federated/coordinator.js';
import { inProcessClient } from '../../src/federated/in-process.js';
import { FederatedNode, NodeRefusal, type NodeData } from '../../src/federated/node.js';
import { parseSessionRequest } from '../../src/federated/protocol.js';
import { trainDpGd } from '../../src/learners/gradient/dp-gd.js';
import { trainRgmGd } from '../../src/learners/rgm/rgm-gd.js';
import { verifyModel } from '../../src/learners/verification/verify-model.js';
import { toDpfitJson } from '../../src/json-numbers.js';
import { seededRng } from '../../src/random/rng.js';
import { BALL_ROWS_BOUND, BALL_ROWS_D, ballRows } from '../helpers/federated-rows.js';

const D = BALL_ROWS_D;
const ROW_BOUND = BALL_ROWS_BOUND;
const rows = (n: number, seed: number) => ballRows(n, seed);


const node = (data: NodeData, name: string, budget: { epsilon: number; delta: number }, seed?: number) =>
  new FederatedNode(data, new InMemoryLedger(budget), { name, ...(seed === undefined ? {} : { rng: seededRng(seed) }) });

test('one rgm node through the protocol gives trainRgmGd\'s model bit for bit (same seed, same step size)', async () => {
  const data = rows(20_000, 1);
  const common = { steps: 30, regularization: 0.03, featureClip: ROW_BOUND, bClip: ROW_BOUND, rho: 0.02, epsilon: 1, delta: 1e-6 };
  const single = trainRgmGd(data, { ...common, learningRate: 1, rng: seededRng(7) });
  const result = await federate([inProcessClient(node(data, 'a', { epsilon: 2, delta: 1e-5 }, 7))], { method: 'rgm', ...common, learningRate: 1 });
  assert.equal(result.status, 'trained', result.message);
  assert.deepEqual(result.model?.theta, single.model?.theta);
  assert.equal(result.privacy.nodes[0].privacy.epsilon, single.privacy.epsilon);
  assert.equal(result.privacy.nodes[0].privacy.delta, single.privacy.delta);
});

test('one dpgd node through the protocol gives trainDpGd\'s model bit for bit (squared loss, same seed)', async () => {
  const data = rows(5000, 2);
  const single = trainDpGd(data, { loss: 'squared', clipNorm: 0.3, steps: 25, learningRate: 2, regularization: 0.03, epsilon: 1, delta: 1e-6, rng: seededRng(9) });
  const result = await federate([inProcessClient(node(data, 'a', { epsilon: 2, delta: 1e-5 }, 9))], { method: 'dpgd', steps: 25, regularization: 0.03, clipNorm: 0.3, epsilon: 1, delta: 1e-6, learningRate: 2 });
  assert.equal(result.status, 'trained', result.message);
  assert.deepEqual(result.model?.theta, single.model.theta);
});

test('two nodes: each node\'s own report, verifiable from the model file; an edited claim is caught', async () => {
  const { parties } = twoPartySplit({ ...rows(20_000, 3), featureNames: ['x1', 'x2', 'x3', 'x4'] }, { kind: 'label', rng: seededRng(4) });
  const nodes = parties.map((p, i) => node({ ...p, featureNames: ['x1', 'x2', 'x3', 'x4'], rowNormBound: ROW_BOUND, labelBound: 1 }, `n${i}`, { epsilon: 1, delta: 1e-5 }));
  const result = await federate(nodes.map((n) => inProcessClient(n)), { method: 'rgm', steps: 20, regularization: 0.03, epsilon: 0.8, delta: 1e-6, rho: 0.02 });
  assert.equal(result.status, 'trained', result.message);
  assert.equal(result.privacy.nodes.length, 2);
  for (const n of result.privacy.nodes) {
    assert.ok(n.privacy.epsilon <= 0.8 && n.privacy.guarantee === 'proven', JSON.stringify(n.privacy.epsilon));
    assert.equal(n.privacy.neighboringRelation, 'replaceOne');
  }
  const file = JSON.parse(toDpfitJson(result.model));
  const verdict = verifyModel(file);
  assert.equal(verdict.holds, true, verdict.problems.join('; '));
  assert.equal(verdict.nodes?.length, 2);
  file.privacy.nodes[1].privacy.epsilon = 0.1;
  const edited = verifyModel(file);
  assert.equal(edited.holds, false);
  assert.match(edited.problems[0], /^node n1: privacy\.epsilon = 0\.1 is below/);
});

test('the budget: a session is accounted whole before anything is released; what would exceed it is refused (403), nothing recorded', async () => {
  const data = rows(3000, 5);
  const ledger = new InMemoryLedger({ epsilon: 1, delta: 1e-6 });
  const a = new FederatedNode(data, ledger, { name: 'a' });
  const request = { method: 'dpgd', steps: 10, regularization: 0.03, clipNorm: 0.5, epsilon: 0.7, delta: 1e-6 };
  const plan = await a.openSession(request, 'test');
  assert.ok(plan.privacy.epsilon <= 0.7);
  const before = await ledger.spent();
  assert.equal(before.entries, 1);
  await assert.rejects(a.openSession(request, 'test'), (e: unknown) => e instanceof NodeRefusal && e.status === 403 && /over its budget 1/.test(e.message));
  assert.deepEqual(await ledger.spent(), before);
  // Non-private sessions need an infinite budget.
  await assert.rejects(a.openSession({ method: 'nonprivate', steps: 1, regularization: 0 }, 'test'), (e: unknown) => e instanceof NodeRefusal && e.status === 403);
});

test('each step is answered once and never beyond T; unknown sessions and bad thetas are refused', async () => {
  const a = node(rows(2000, 6), 'a', { epsilon: 5, delta: 1e-5 });
  const plan = await a.openSession({ method: 'dpgd', steps: 2, regularization: 0, clipNorm: 1, epsilon: 1, delta: 1e-6 }, 'test');
  const theta = [0, 0, 0, 0];
  assert.equal(a.gradient({ session: plan.session, step: 0, theta }).gradient?.length, D);
  assert.throws(() => a.gradient({ session: plan.session, step: 0, theta }), (e: unknown) => e instanceof NodeRefusal && e.status === 409 && /already answered/.test(e.message));
  assert.throws(() => a.gradient({ session: plan.session, step: 2, theta }), (e: unknown) => e instanceof NodeRefusal && e.status === 409 && /beyond/.test(e.message));
  assert.throws(() => a.gradient({ session: '0'.repeat(32), step: 0, theta }), (e: unknown) => e instanceof NodeRefusal && e.status === 404);
  assert.throws(() => a.gradient({ session: plan.session, step: 1, theta: [0, 0, 0] }), InvalidParameterError);
  assert.throws(() => a.gradient({ session: plan.session, step: 1, theta: [0, 0, 0, 'x'] }), InvalidParameterError);
  assert.throws(() => a.gradient({ session: plan.session, step: 1, theta: [0, 0, 0, 1e400] }), InvalidParameterError);
});

test('session requests are parsed strictly: unknown fields, missing targets, parameters of another method', () => {
  const bad: [unknown, RegExp][] = [
    [{ method: 'dpgd', steps: 1, regularization: 0, clipNorm: 1, epsilon: 1, delta: 1e-6, extra: 1 }, /request\.extra must be absent/],
    [{ method: 'dpgd', steps: 1, regularization: 0, epsilon: 1, delta: 1e-6 }, /request\.clipNorm/],
    [{ method: 'rgm', steps: 1, regularization: 0, delta: 1e-6 }, /request\.epsilon/],
    [{ method: 'nonprivate', steps: 1, regularization: 0, epsilon: 1 }, /request\.epsilon must be absent/],
    [{ method: 'rgm', steps: 0, regularization: 0, epsilon: 1, delta: 1e-6 }, /request\.steps/],
    [{ method: 'rgm', steps: 1, regularization: -1, epsilon: 1, delta: 1e-6 }, /request\.regularization/],
    [{ method: 'magic', steps: 1, regularization: 0 }, /request\.method/],
    [[], /request must be a JSON object/],
  ];
  for (const [request, pattern] of bad) assert.throws(() => parseSessionRequest(request), (e: unknown) => e instanceof InvalidParameterError && pattern.test(e.message), JSON.stringify(request));
});

test('the coordinator stops cleanly: a refusing node, a failed PTR, a malformed answer, nodes with other features', async () => {
  const data = rows(3000, 8);
  // A node whose budget cannot pay: the run stops before any gradient, the other node's session is reported.
  const rich = node(data, 'rich', { epsilon: 10, delta: 1e-5 });
  const poor = node(data, 'poor', { epsilon: 0.1, delta: 1e-5 });
  const refused = await federate([inProcessClient(rich), inProcessClient(poor)], { method: 'dpgd', steps: 5, regularization: 0, clipNorm: 1, epsilon: 1, delta: 1e-6 });
  assert.equal(refused.status, 'stopped');
  assert.match(refused.message, /node poor .* refused its session/);
  assert.equal(refused.model, undefined);
  assert.deepEqual(refused.privacy.nodes.map((n) => n.node), ['rich']);
  // PTR rejects a rho no dataset of this size meets: no gradient is asked.
  const strict = await federate([inProcessClient(node(data, 'a', { epsilon: 10, delta: 1e-5 }))], { method: 'rgm', steps: 5, regularization: 0, epsilon: 5, delta: 1e-6, rho: 10 });
  assert.equal(strict.status, 'stopped');
  assert.match(strict.message, /Propose-Test-Release test rejected/);
  // A hostile node answering NaN: the run stops, it does not crash.
  const honest = inProcessClient(node(data, 'h', { epsilon: 10, delta: 1e-5 }));
  const hostile: NodeClient = { ...inProcessClient(node(data, 'x', { epsilon: 10, delta: 1e-5 })), gradient: async (r) => ({ session: r.session, step: r.step, gradient: [NaN, 0, 0, 0] }) };
  const broken = await federate([honest, hostile], { method: 'dpgd', steps: 3, regularization: 0, clipNorm: 1, epsilon: 1, delta: 1e-6 });
  assert.equal(broken.status, 'stopped');
  assert.match(broken.message, /malformed gradient/);
  // Nodes must share the features.
  const other = { ...rows(100, 9), featureNames: ['a', 'b', 'c', 'd'] };
  await assert.rejects(federate([inProcessClient(node(data, 'p', { epsilon: 1, delta: 1e-5 })), inProcessClient(node(other, 'q', { epsilon: 1, delta: 1e-5 }))], { method: 'nonprivate', steps: 1, regularization: 0 }), /the same features/);
});

test('the budget rule refuses a negative or NaN extra delta (it would lower the sum and grant more than the budget)', async () => {
  const { InMemoryLedger: Ledger } = await import('../../src/accounting/budget/rule.js');
  const { gaussianEvent } = await import('../../src/accounting/events/constructors.js');
  const ledger = new Ledger({ epsilon: 10, delta: 1e-6 });
  for (const extraDelta of [-1e-6, Number.NaN, 1]) {
    const decision = await ledger.reserve({ client: 't', description: 'x', event: gaussianEvent(5), extraDelta });
    assert.equal(decision.granted, false);
  }
  assert.equal((await ledger.spent()).entries, 0);
});
