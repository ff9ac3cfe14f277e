/**
 * Federated dpgd with secure aggregation, in-process (`src/federated/secure/`, `coordinator.ts`):
 *   - end to end: K = 5 nodes reach the local-noise mode's accuracy at the same epsilon with
 *     sqrt(K - 1) times less noise on the averaged gradient; the model file verifies, an edited
 *     claim is caught, and each node's ledger charged exactly its plan's event;
 *   - abort: a node failing mid-run stops it, that step releases nothing, no model;
 *   - refusals: rgm, one node, collusion out of range, a node that did not opt in;
 *   - the neighbour test: two runs on neighbouring data (one record of one node replaced) show the
 *     coordinator the same everything but the noisy sum (plans, statuses, errors, message sizes).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError } from '../../../src/errors.js';
import { InMemoryLedger, spentBudget } from '../../../src/accounting/budget/rule.js';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { federate, type FederateOptions, type NodeClient } from '../../../src/federated/coordinator.js';
import { inProcessClient } from '../../../src/federated/in-process.js';
import { FederatedNode, type NodeData } from '../../../src/federated/node.js';
import { toDpfitJson } from '../../../src/json-numbers.js';
import { verifyModel } from '../../../src/learners/verification/verify-model.js';
import { seededRng } from '../../../src/random/rng.js';
import { assertIndistinguishable } from '../../helpers/neighbour-diff.js';
import { BALL_ROWS_D, ballRows, signAccuracy } from '../../helpers/federated-rows.js';

const D = BALL_ROWS_D;
const rows = (n: number, seed: number) => ballRows(n, seed, ['a', 'b', 'c', 'e']);
const accuracy = signAccuracy;


const run: Omit<FederateOptions, 'aggregation'> = { method: 'dpgd', steps: 40, regularization: 0.03, clipNorm: 0.5, epsilon: 0.3, delta: 1e-6 };
const nodesOf = (datasets: readonly NodeData[], seed: number, secure = true) =>
  datasets.map((data, i) => new FederatedNode(data, new InMemoryLedger({ epsilon: 10, delta: 1e-5 }), { name: `n${i}`, rng: seededRng(seed + i), secureAggregation: secure }));


test('K = 5 nodes: secure aggregation matches local noise in accuracy at the same epsilon with sqrt(K - 1) less noise; the file verifies; the ledgers charged the plans', async () => {
  const datasets = [0, 1, 2, 3, 4].map((i) => rows(3000, 20 + i));
  const accuracies: Record<string, number[]> = { local: [], secure: [] };
  const noise: Record<string, number> = {};
  for (const seed of [1, 100, 200]) {
    for (const aggregation of ['local', 'secure'] as const) {
      const nodes = nodesOf(datasets, seed);
      const result = await federate(nodes.map((n) => inProcessClient(n)), { ...run, aggregation });
      assert.equal(result.status, 'trained', result.message);
      accuracies[aggregation].push(accuracy(result.model?.theta as number[], datasets));
      // Every node's claim meets the target, and its ledger holds exactly its plan's event.
      for (const [i, block] of result.privacy.nodes.entries()) {
        assert.ok(block.privacy.epsilon <= 0.3 && block.privacy.epsilon > 0.29, `${block.privacy.epsilon}`);
        const spent = await (nodes[i] as unknown as { ledger: InMemoryLedger }).ledger.spent();
        assert.deepEqual(spent, spentBudget([{ event: parseEvent(block.privacy.event), extraDelta: 0 }], { epsilon: 10, delta: 1e-5 }));
      }
      if (aggregation === 'secure') {
        const sum = result.privacy.aggregation;
        assert.ok(sum !== undefined && sum.countedShares === 4 && sum.nodes === 5);
        noise.secure = sum.sumNoiseStd / sum.totalRows;
        // The own-share fallback is the same session with one share: far weaker.
        assert.ok(sum.ownShare.epsilon > 1.5 * 0.3);
        const file = JSON.parse(toDpfitJson(result.model));
        const verification = verifyModel(file);
        assert.ok(verification.holds, verification.problems.join('; '));
        file.privacy.nodes[0].privacy.epsilon = 0.1;
        assert.equal(verifyModel(file).holds, false);
        const file2 = JSON.parse(toDpfitJson(result.model));
        file2.privacy.aggregation.countedShares = 40;
        assert.equal(verifyModel(file2).holds, false, 'a changed share count contradicts the summary');
      } else {
        // Local: the mean of K node gradients, each with noise g s / n.
        const stds = result.privacy.nodes.map((b) => ((b.privacy.granularity as number) * Number(/"gridNoiseStd":(\d+)/.exec(JSON.stringify(b.privacy.event))?.[1])) / 3000);
        noise.local = Math.sqrt(stds.reduce((a, s) => a + s * s, 0)) / stds.length;
      }
    }
  }
  const ratio = noise.local / noise.secure;
  assert.ok(Math.abs(ratio - 2) < 0.01, `noise ratio ${ratio} (sqrt(K - 1) = 2)`);
  const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
  assert.ok(mean(accuracies.secure) >= mean(accuracies.local) - 0.01, JSON.stringify(accuracies));
});

/** A client that fails at step `at` (the network, say). */
function failingAt(client: NodeClient, at: number): NodeClient {
  return { ...client, gradient: async (request) => (request.step === at ? Promise.reject(new Error('connection reset')) : client.gradient(request)) };
}

test('a node failing mid-run aborts it: that step releases nothing, no model, the message says why', async () => {
  const datasets = [0, 1, 2].map((i) => rows(500, 40 + i));
  const clients = nodesOf(datasets, 7).map((n) => inProcessClient(n));
  const thetas: number[][] = [];
  const result = await federate([clients[0], failingAt(clients[1], 3), clients[2]], { ...run, steps: 10, aggregation: 'secure', onStep: (_t, _T, theta) => thetas.push(Array.from(theta)) });
  assert.equal(result.status, 'stopped');
  assert.equal(result.model, undefined);
  assert.equal(result.stepsDone, 3);
  assert.equal(thetas.length, 3, 'no iterate after the failed step');
  assert.match(result.message, /step 4 of 10: node n1: connection reset; secure aggregation has no dropout recovery.*nothing of it is released/);
  assert.equal(result.privacy.kind, 'secureAggregation');
});

test('refused: rgm or nonprivate, one node, collusion out of range, per-node clip norms that differ, a node that did not opt in', async () => {
  const datasets = [0, 1, 2].map((i) => rows(300, 50 + i));
  const clients = nodesOf(datasets, 3).map((n) => inProcessClient(n));
  const refuses = (options: Partial<FederateOptions>, list = clients, pattern?: RegExp) =>
    assert.rejects(federate(list, { ...run, aggregation: 'secure', ...options } as FederateOptions), (e: unknown) => e instanceof InvalidParameterError && (pattern === undefined || pattern.test(e.message)));
  await refuses({ method: 'rgm', clipNorm: undefined, rho: 0.05 } as Partial<FederateOptions>, clients, /dpgd only/);
  await refuses({ method: 'nonprivate', clipNorm: undefined, epsilon: undefined, delta: undefined } as Partial<FederateOptions>, clients, /dpgd only/);
  await refuses({}, clients.slice(0, 1), /at least 2 nodes/);
  await refuses({ collusion: 2 }, clients, /collusion/);
  await refuses({ collusion: -1 }, clients, /collusion/);
  await refuses({ clipNorm: [0.5, 0.5, 0.4] }, clients, /one threshold/);
  await assert.rejects(federate(clients, { ...run, collusion: 1 }), /collusion/);
  // A node started without secureAggregation refuses the session (400-class), before reserving anything.
  const closed = nodesOf(datasets, 3, false);
  const result = await federate(closed.map((n) => inProcessClient(n)), { ...run, aggregation: 'secure' });
  assert.equal(result.status, 'stopped');
  assert.match(result.message, /does not take part in secure aggregation.*--allow-secure-aggregation/);
  assert.equal((await (closed[0] as unknown as { ledger: InMemoryLedger }).ledger.spent()).entries, 0);
});

test('collusion t: each node counts K - 1 - t shares, so its share grows by sqrt((K - 1) / (K - 1 - t))', async () => {
  const datasets = [0, 1, 2, 3, 4].map((i) => rows(300, 60 + i));
  const share = async (collusion: number) => {
    const result = await federate(nodesOf(datasets, 5).map((n) => inProcessClient(n)), { ...run, steps: 2, aggregation: 'secure', collusion });
    assert.equal(result.status, 'trained', result.message);
    const sum = result.privacy.aggregation;
    assert.equal(sum?.countedShares, 4 - collusion);
    return (sum?.shareNoiseStd as number) * (sum?.granularity as number);
  };
  const [s0, s2] = [await share(0), await share(2)];
  assert.ok(Math.abs(s2 / s0 - Math.sqrt(4 / 2)) < 1e-3, `${s2 / s0}`);
});

/** Everything the coordinator observes (wire messages as parsed, and their sizes), node by node. */
function recording(client: NodeClient, log: unknown[]): NodeClient {
  const seen = async <T>(what: string, value: Promise<T>): Promise<T> => {
    try {
      const v = await value;
      log.push({ what, bytes: toDpfitJson(v).length, value: v });
      return v;
    } catch (error) {
      log.push({ what, error: (error as Error).message });
      throw error;
    }
  };
  return { label: client.label, info: () => seen('info', client.info()), openSession: (r) => seen('plan', client.openSession(r)), gradient: (r) => seen('answer', client.gradient(r)) };
}

test('neighbour test: D and D\' (one record of node 0 replaced) show the coordinator the same plans, statuses, errors and message sizes; only the noisy sum differs', async () => {
  const observe = async (neighbour: boolean) => {
    const datasets = [0, 1, 2].map((i) => rows(400, 70 + i));
    if (neighbour) {
      datasets[0].x.fill(0.25, 0, D);
      datasets[0].y[0] = -datasets[0].y[0];
    }
    const log: unknown[] = [];
    const clients = nodesOf(datasets, 11).map((n) => recording(inProcessClient(n), log));
    const trained = await federate(clients, { ...run, steps: 5, aggregation: 'secure' });
    const aborted = await federate([clients[0], failingAt(clients[1], 2), clients[2]], { ...run, steps: 5, aggregation: 'secure' });
    const wrong = await Promise.allSettled([clients[0].gradient({ session: '0'.repeat(32), step: 0, theta: [0, 0, 0, 0], peers: [] })]);
    return { log, trained: { ...trained, nodes: undefined }, aborted: { ...aborted, nodes: undefined, cause: String(aborted.cause) }, wrong: wrong.map((w) => (w.status === 'rejected' ? String(w.reason) : 'ok')) };
  };
  const [a, b] = [await observe(false), await observe(true)];
  assertIndistinguishable(a, b, {
    // The released noisy sum (through theta) and the masked residues (uniform): compared by shape.
    released: ['trained.model.theta', 'log.*.value.masked'],
    // Fresh per session whatever the data: session ids and keys.
    volatile: ['log.*.value.session', 'log.*.value.publicKey', 'trained.privacy.nodes.*.privacy.randomness', 'aborted.privacy.nodes.*.privacy.randomness'],
  }, 'the secure-aggregation coordinator');
});
