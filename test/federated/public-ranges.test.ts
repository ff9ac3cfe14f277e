/**
 * The public ranges of the federated node (`src/federated/public-ranges.ts`): the ball
 * every theta is projected onto, the node's data checked against its public bounds at
 * construction, the envelope checks that refuse a plan before the data are read, the depth limit
 * of in-process messages, and the coordinator's projected iterate.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError } from '../../src/errors.js';
import { InMemoryLedger } from '../../src/accounting/budget/rule.js';
import { federate } from '../../src/federated/coordinator.js';
import { inProcessClient } from '../../src/federated/in-process.js';
import { FederatedNode, type NodeData } from '../../src/federated/node.js';
import { defaultThetaRadius, projectIntoBall, rgmEnvelope } from '../../src/federated/public-ranges.js';
import { projectOntoBall } from '../../src/learners/rgm/rgm-grid.js';
import { seededRng } from '../../src/random/rng.js';

const norm = (v: Float64Array) => Math.hypot(...v);

function data(n: number, seed: number, d = 3): NodeData {
  const rng = seededRng(seed);
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < d; k++) x[i * d + k] = (rng.nextDouble() - 0.5) / d;
    y[i] = rng.nextDouble() < 0.5 ? 1 : -1;
  }
  return { x, y, n, d, featureNames: Array.from({ length: d }, (_, k) => `x${k}`), rowNormBound: 1, labelBound: 1 };
}

test('projectIntoBall: any finite theta (+-1.79e308 included) lands in the ball without overflow; points inside, and projectOntoBall\'s outputs, stay bit for bit', () => {
  const M = 1.79e308;
  for (const radius of [1e-30, 1, 11.5, 1e30]) {
    for (const theta of [[M, -M, M, -M], [M, M, M, M], [1e308, -1e308, 5e-324, 0], [M, 0, 0, 0], [-5e-324, 5e-324, 0, 1e-300], [3, -4, 12, 0]]) {
      const p = projectIntoBall(Float64Array.from(theta), radius);
      assert.ok(p.every(Number.isFinite) && norm(p) <= radius, `${theta} onto ${radius}: ${p} (norm ${norm(p)})`);
    }
    const inside = Float64Array.of(0.1, -0.2, 0.3).map((v) => (v * radius) / 2);
    assert.deepEqual(projectIntoBall(Float64Array.from(inside), radius), inside);
    for (const d of [1, 4, 100]) {
      const rng = seededRng(d);
      const theta = Float64Array.from({ length: d }, () => (rng.nextDouble() - 0.5) * radius * 10);
      projectOntoBall(theta, radius);
      assert.deepEqual(projectIntoBall(Float64Array.from(theta), radius), theta);
    }
  }
  assert.deepEqual(projectIntoBall(new Float64Array(3), 1), new Float64Array(3));
});

test('the default ball contains the ridge minimiser of any data within the bounds (2 L / sqrt(mu)), and allows margins of 2^40 L without regularization', () => {
  for (const seed of [1, 2, 3]) {
    for (const mu of [1e-3, 0.03, 1]) {
      const { x, y, n, d } = data(200, seed);
      // theta* = (X^T X / n + mu I)^-1 X^T y / n, by Gauss-Jordan on the 3 x 3 system.
      const a = Array.from({ length: d }, (_, r) => [...Array.from({ length: d }, (_, c) => x.reduce((s, _v, i) => (i < n ? s + x[i * d + r] * x[i * d + c] : s), 0) / n + (r === c ? mu : 0)), y.reduce((s, v, i) => s + v * x[i * d + r], 0) / n]);
      for (let c = 0; c < d; c++) {
        for (let r = 0; r < d; r++) {
          if (r === c) continue;
          const f = a[r][c] / a[c][c];
          for (let k = 0; k <= d; k++) a[r][k] -= f * a[c][k];
        }
      }
      const minimiser = Float64Array.from(a, (row, r) => row[d] / row[r]);
      assert.ok(norm(minimiser) <= defaultThetaRadius({ rowNormBound: 1, labelBound: 1 }, mu) / 2, `${norm(minimiser)} at mu ${mu}`);
    }
  }
  assert.equal(defaultThetaRadius({ rowNormBound: 2, labelBound: 3 }, 0), (2 ** 40 * 3) / 2);
  assert.equal(defaultThetaRadius({ rowNormBound: 1e-30, labelBound: 1e30 }, 0), 1e30);
});

test('a node refuses, at construction, data outside its public bounds, naming the row (the data owner\'s error, never a coordinator\'s)', () => {
  const ledger = new InMemoryLedger({ epsilon: 1, delta: 1e-6 });
  const base = data(10, 4);
  const cases: [Partial<NodeData>, RegExp][] = [
    [{ x: Float64Array.from(base.x, (v, k) => (k === 4 ? 2 : v)) }, /^data row 1's L2 norm must be <= rowNormBound 1/],
    [{ x: Float64Array.from(base.x, (v, k) => (k === 7 ? Number.NaN : v)) }, /^data\.x\[2\]\[1\] must be a finite number; the value is not shown/],
    [{ y: Float64Array.from(base.y, (v, i) => (i === 3 ? 1.5 : v)) }, /^(?!.*1\.5)data\.y\[3\] must be a finite number with \|y\| <= labelBound 1; the value is not shown/],
    [{ rowNormBound: 1e31 }, /^data\.rowNormBound must be in \[1e-30, 1e\+30\]/],
    [{ labelBound: 0 }, /^data\.labelBound must be in \[1e-30, 1e\+30\]/],
  ];
  for (const [edit, pattern] of cases) {
    assert.throws(() => new FederatedNode({ ...base, ...edit }, ledger, { name: 'a' }), (e: unknown) => e instanceof InvalidParameterError && pattern.test(e.message), JSON.stringify(Object.keys(edit)));
  }
  // Rows normalised to the bound may exceed it by rounding.
  const rounded = { ...base, x: Float64Array.from(base.x, (v, k) => (k < 3 ? [0.6, 0.8, 0][k] * (1 + 2e-16) : v)) };
  assert.doesNotThrow(() => new FederatedNode(rounded, ledger, { name: 'a' }));
});

test('in process too, a message nested deeper than 8 levels is an InvalidParameterError (no stack overflow while describing it)', async () => {
  const node = new FederatedNode(data(10, 5), new InMemoryLedger({ epsilon: 1, delta: 1e-6 }), { name: 'a' });
  let deep: unknown = 1;
  for (let i = 0; i < 100_000; i++) deep = [deep];
  await assert.rejects(node.openSession({ method: deep }, 't'), (e: unknown) => e instanceof InvalidParameterError && /^request \(its JSON nesting depth\) must be at most 8/.test(e.message));
  assert.throws(() => node.gradient({ session: '0'.repeat(32), step: 0, theta: deep }), (e: unknown) => e instanceof InvalidParameterError && /nesting depth/.test(e.message));
  assert.throws(() => node.gradient({ session: '0'.repeat(32), step: 0, theta: [[[[[[[[[1]]]]]]]]] }), InvalidParameterError);
});

test('the rgm envelope refuses, from public values, a plan whose noise at the edge of the ball would leave the exact sampler\'s range', () => {
  const plan = { granularity: 2 ** -20, gamma: 0.01, baselineSteps: 2048, d: 4, gradientBound: 40, thetaRadius: 40 };
  assert.doesNotThrow(() => rgmEnvelope(plan));
  assert.throws(() => rgmEnvelope({ ...plan, gamma: 1e6, gradientBound: 1e6 }), (e: unknown) => e instanceof InvalidParameterError && /^request\.thetaRadius must be small enough that RGM's noise at the edge of the ball stays within its exact sampler \(std <= 2\^46 grid steps, here up to 2\^[0-9.]+\): give a smaller thetaRadius, or a larger epsilon, got 40$/.test(e.message));
  assert.throws(() => rgmEnvelope({ ...plan, granularity: 2 ** 950 }), /noise grid <= 2\^944/);
});

test('the coordinator sends one public ball to every node, and projects its iterate onto it: a learning rate far too large stays finite', async () => {
  const nodes = [data(500, 6), data(400, 7)].map((d, i) => new FederatedNode(d, new InMemoryLedger({ epsilon: 10, delta: 1e-5 }), { name: `n${i}`, rng: seededRng(i) }));
  const result = await federate(nodes.map((n) => inProcessClient(n)), { method: 'dpgd', steps: 20, regularization: 0.04, clipNorm: 1, epsilon: 1, delta: 1e-6, learningRate: 1e6 });
  assert.equal(result.status, 'trained', result.message);
  for (const outcome of result.nodes) assert.equal(outcome.plan?.thetaRadius, 10); // 2 L / sqrt(0.04)
  const theta = Float64Array.from(result.model?.theta ?? []);
  assert.ok(theta.every(Number.isFinite) && norm(theta) <= 10, String(theta));
  // A ball given by the caller is the one every node uses.
  const given = await federate(nodes.map((n) => inProcessClient(n)), { method: 'dpgd', steps: 1, regularization: 0.04, clipNorm: 1, epsilon: 1, delta: 1e-6, thetaRadius: 3 });
  assert.deepEqual(given.nodes.map((o) => o.plan?.thetaRadius), [3, 3]);
  await assert.rejects(federate(nodes.map((n) => inProcessClient(n)), { method: 'nonprivate', steps: 1, regularization: 0, thetaRadius: 1e31 }), /^InvalidParameterError: thetaRadius must be in \[1e-30, 1e\+30\]/);
});
