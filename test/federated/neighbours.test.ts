/**
 * The neighbour test of the federated node's HTTP surface (harness:
 * test/helpers/neighbour-diff.ts). The adversary is the coordinator of `000` Sec. 6's local model:
 * it sends whatever it likes and sees statuses, bodies and error texts. Two nodes on neighbouring
 * data sets D and D' (one row replaced, n public) behind the real HTTP server get the same scripted
 * requests — normal dpgd, rgm and nonprivate sessions, adversarial thetas, parameters at and beyond
 * their public ranges, replayed and out-of-range steps, unknown sessions, malformed, 100k-deep and
 * oversized bodies, wrong tokens — and everything they answer must agree but the released gradients
 * (compared by shape and finiteness) and the session ids.
 *
 * D' differs from D in one row, (0.6, 0.6, 0.6, 0.6): on the earlier code, theta = (M, -M, M, -M) with
 * M = 1.79e308 made that row's margin NaN (the two halves of the dot product overflow to +Inf and
 * -Inf) and the node answered 400 "value[0] must be a finite number" on D' and 200 on D.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, test } from 'node:test';
import { InMemoryLedger } from '../../src/accounting/budget/rule.js';
import { startNodeServer, type RunningNodeServer } from '../../src/federated/http-server.js';
import { FederatedNode, type NodeData } from '../../src/federated/node.js';
import { seededRng } from '../../src/random/rng.js';
import { assertIndistinguishable } from '../helpers/neighbour-diff.js';

const TOKEN = '0123456789abcdef0123456789abcdef';
const M = 1.79e308;
const servers: RunningNodeServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** n rows of 4 features in [-0.45, 0.43] (norm <= 0.9 < R = 1.5), labels +-1; D' replaces row 0. */
function dataset(neighbour: boolean, n = 2000): NodeData {
  const d = 4;
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < d; k++) x[i * d + k] = (((i * 7 + k * 13) % 19) / 19 - 0.5) * 0.9;
    y[i] = i % 3 === 0 ? 1 : -1;
  }
  if (neighbour) {
    x.fill(0.6, 0, d);
    y[0] = -y[0];
  }
  return { x, y, n, d, featureNames: ['a', 'b', 'c', 'e'], rowNormBound: 1.5, labelBound: 1 };
}

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** One raw HTTP request (declared: a Content-Length sent without the body, to test the limit). */
function call(url: string, method: string, path: string, options: { token?: string | null; type?: string; body?: string; declared?: number } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const token = options.token === undefined ? TOKEN : options.token;
    const req = request(new URL(path, url), {
      method,
      headers: {
        ...(token === null ? {} : { authorization: `Bearer ${token}` }),
        ...(options.body === undefined && options.declared === undefined ? {} : { 'content-type': options.type ?? 'application/json' }),
        ...(options.declared === undefined ? {} : { 'content-length': options.declared }),
      },
    }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => {
        req.destroy();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', (error) => reject(error));
    if (options.declared !== undefined) req.write('{"method":"dpgd"');
    else {
      if (options.body !== undefined) req.write(options.body);
      req.end();
    }
  });
}

/** Session ids are volatile: error texts name them, so they are masked there. */
const masked = (answer: Answer): Answer => (typeof (answer.body as { error?: unknown })?.error === 'string'
  ? { ...answer, body: { ...(answer.body as object), error: (answer.body as { error: string }).error.replace(/[0-9a-f]{32}/g, '<session>') } }
  : answer);

interface Run {
  readonly observed: Answer[];
  readonly log: string[];
  /** Answers of gradient requests that are valid (must be 200 with finite numbers). */
  readonly valid: Answer[];
}

async function startNode(data: NodeData, name: string, budget: { epsilon: number; delta: number }, seed: number, log: string[]): Promise<string> {
  const node = new FederatedNode(data, new InMemoryLedger(budget), { name, rng: seededRng(seed) });
  const server = await startNodeServer(node, { host: '127.0.0.1', port: 0, token: TOKEN, log: (line) => log.push(line) });
  servers.push(server);
  return server.url;
}

const thetas: readonly (readonly number[])[] = [
  [0, 0, 0, 0],
  [0.1, -0.2, 0.3, 0.4],
  [M, -M, M, -M],
  [-M, M, -M, M],
  [M, M, M, M],
  [1e308, -1e308, 1e308, -1e308],
  [1e308, 1e308, -1e308, -1e308],
  [M, -1e308, 5e-324, 0],
  [-0, 1e-300, -5e-324, 1e300],
];

/** The scripted coordinator (file comment), run against a private node (finite budget) and an open one (budget Infinity). */
async function script(data: NodeData): Promise<Run> {
  const log: string[] = [];
  const p = await startNode(data, 'p', { epsilon: 1e9, delta: 1e-2 }, 1, log);
  const o = await startNode(data, 'o', { epsilon: Infinity, delta: 1e-2 }, 2, log);
  const observed: Answer[] = [];
  const valid: Answer[] = [];
  const see = async (answer: Promise<Answer>): Promise<Answer> => {
    const a = masked(await answer);
    observed.push(a);
    return a;
  };
  const post = (url: string, path: string, body: unknown) => see(call(url, 'POST', path, { body: typeof body === 'string' ? body : JSON.stringify(body) }));
  const open = async (url: string, session: Record<string, unknown>): Promise<string | undefined> => ((await post(url, '/sessions', session)).body as { session?: string }).session;
  const gradient = (url: string, session: string | undefined, step: number, theta: readonly number[] | string) =>
    post(url, '/gradient', typeof theta === 'string' ? `{"session":${JSON.stringify(session ?? '')},"step":${step},"theta":${theta}}` : { session: session ?? '', step, theta });
  /** Asks step 0, 1, ... of a session with every adversarial theta: each a valid request. */
  const adversarial = async (url: string, session: string | undefined, first = 0) => {
    for (const [k, theta] of thetas.entries()) valid.push(await gradient(url, session, first + k, theta));
  };

  // ---- public description, authentication, routes, malformed and oversized bodies
  await see(call(p, 'GET', '/info'));
  await see(call(o, 'GET', '/info'));
  await see(call(p, 'GET', '/info', { token: null }));
  await see(call(p, 'GET', '/info', { token: 'f'.repeat(32) }));
  await see(call(p, 'POST', '/sessions', { token: 'f'.repeat(32), body: JSON.stringify({ method: 'dpgd', steps: 1, regularization: 0, clipNorm: 1, epsilon: 1, delta: 1e-6 }) }));
  await see(call(p, 'GET', '/nope'));
  await see(call(p, 'GET', '/sessions'));
  await see(call(p, 'POST', '/sessions', { type: 'text/plain', body: '{}' }));
  for (const body of ['{"method":', '[]', '"dpgd"', '{"method":"magic","steps":1,"regularization":0}', '{"method":"dpgd","steps":1,"regularization":0,"clipNorm":1,"epsilon":1,"delta":1e-6,"extra":1}', '{"method":"dpgd"}']) await post(p, '/sessions', body);
  const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  await post(p, '/sessions', `{"method":${deep}}`);
  await post(p, '/gradient', `{"session":"${'0'.repeat(32)}","step":0,"theta":${deep}}`);
  await post(p, '/sessions', `{"method":"dpgd","x":${'{"a":'.repeat(20)}1${'}'.repeat(20)}}`);
  await see(call(p, 'POST', '/sessions', { declared: 2 * 1024 * 1024 }));
  await see(call(p, 'POST', '/gradient', { declared: 64 * 1024 * 1024 }));

  // ---- dpgd: a normal session, then every adversarial theta, replays, steps out of range
  const dpgd = { method: 'dpgd', steps: 30, regularization: 0.05, clipNorm: 1, epsilon: 2, delta: 1e-6 };
  const s1 = await open(p, dpgd);
  await adversarial(p, s1);
  await gradient(p, s1, 0, [0, 0, 0, 0]); // answered already: 409
  await gradient(p, s1, 30, [0, 0, 0, 0]); // beyond T: 409
  for (const step of [-1, 1.5, 1e6, 1e300]) await gradient(p, s1, step, [0, 0, 0, 0]);
  for (const theta of ['[0,0,0]', '[0,0,0,"x"]', '[0,0,0,1e400]', '[0,0,0,-1e999]', '[0,0,0,null]', '{"0":1}']) await gradient(p, s1, 20, theta);
  await gradient(p, '0'.repeat(32), 0, [0, 0, 0, 0]); // unknown session: 404
  await gradient(p, 'not-a-session', 0, [0, 0, 0, 0]);
  await post(p, '/gradient', { session: s1, step: 21, theta: [0, 0, 0, 0], extra: 1 });

  // ---- dpgd parameters at and beyond their public ranges
  for (const clipNorm of [1e306, 5e-324, 1e31, 1e-31]) await open(p, { ...dpgd, clipNorm });
  for (const regularization of [1e300, 1e-40, -1]) await open(p, { ...dpgd, regularization });
  for (const thetaRadius of [1e31, 0, -1]) await open(p, { ...dpgd, thetaRadius });
  for (const epsilon of [1e-300, 1e300]) await open(p, { ...dpgd, epsilon });
  for (const steps of [0, 1e6 + 1, 2.5]) await open(p, { ...dpgd, steps });
  for (const limit of [{ clipNorm: 1e30 }, { clipNorm: 1e-30 }, { regularization: 1e30 }, { thetaRadius: 1e30 }, { thetaRadius: 1e-30 }, { clipNorm: 1e30, thetaRadius: 1e30, regularization: 1e30 }, { epsilon: 1e-8 }, { epsilon: 1e8 }]) {
    await adversarial(p, await open(p, { ...dpgd, steps: thetas.length, ...limit }));
  }
  const long = await open(p, { ...dpgd, steps: 1e6 });
  await adversarial(p, long, 1e6 - thetas.length);
  await gradient(p, long, 1e6, [0, 0, 0, 0]); // beyond the parser's range: 400

  // ---- rgm: a normal session (its PTR passes on D and D'), parameters at their limits
  const rgm = { method: 'rgm', steps: thetas.length, regularization: 0.05, featureClip: 1, rho: 0.05, epsilon: 5, delta: 1e-5 };
  await adversarial(p, await open(p, rgm));
  await adversarial(p, await open(p, { ...rgm, thetaRadius: 1e-30 }));
  for (const limit of [{ featureClip: 1e30 }, { featureClip: 1e-30 }, { bClip: 1e60 }, { bClip: 1e-60 }, { rho: 1e30 }, { rho: 1e-30 }, { regularization: 1e30 }, { bClip: 1e61 }, { clipNorm: 1 }]) {
    const session = await open(p, { ...rgm, ...limit });
    // Whatever the node decided from public values, it decided it on D and D' alike; a granted session answers every theta.
    if (session !== undefined && (observed.at(-1)?.body as { ptr?: { passed: boolean } }).ptr?.passed === true) await adversarial(p, session);
  }

  // ---- nonprivate: refused on a finite budget, answered on an infinite one
  await open(p, { method: 'nonprivate', steps: 1, regularization: 0 });
  await adversarial(o, await open(o, { method: 'nonprivate', steps: thetas.length, regularization: 0 }));
  await adversarial(o, await open(o, { method: 'nonprivate', steps: thetas.length, regularization: 1e30, thetaRadius: 1e30 }));
  await open(o, { method: 'nonprivate', steps: 1, regularization: 0, epsilon: 1 });

  // ---- what was spent
  await see(call(p, 'GET', '/info'));
  await see(call(o, 'GET', '/info'));
  return { observed, log, valid };
}

test('neighbours D, D\' behind the node\'s HTTP server: everything the coordinator observes agrees but the released gradients; every valid gradient request gets 200 and finite numbers', { timeout: 60_000 }, async () => {
  const [a, b] = [await script(dataset(false)), await script(dataset(true))];
  assertIndistinguishable(a.observed, b.observed, { released: ['*.body.gradient', '*.body.ptr.passed', '*.body.privacy.ptr.passed'], volatile: ['*.body.session'] }, 'the node over HTTP');
  for (const run of [a, b]) {
    assert.ok(run.valid.length >= 14 * thetas.length, `${run.valid.length} valid gradient requests`);
    for (const answer of run.valid) {
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const gradient = (answer.body as { gradient: unknown[] }).gradient;
      assert.ok(gradient.length === 4 && gradient.every((v) => typeof v === 'number' && Number.isFinite(v)), JSON.stringify(gradient));
    }
    // No internal error anywhere, no stack in a body or in the node's log.
    assert.ok(run.observed.every((o) => o.status !== 500), JSON.stringify(run.observed.find((o) => o.status === 500)));
    assert.ok(!run.observed.some((o) => JSON.stringify(o.body).includes('    at ')));
    assert.deepEqual(run.log.filter((line) => /\n\s*at |internal error/.test(line)), []);
  }
  // The limits answer as documented: depth 400, size 413, both without a stack.
  const statusOf = (pattern: RegExp) => a.observed.filter((o) => pattern.test(JSON.stringify(o.body))).map((o) => o.status);
  assert.deepEqual(statusOf(/nests JSON more than 8 levels deep/), [400, 400, 400]);
  assert.deepEqual(statusOf(/over the node's limit/), [413, 413]);
});

test('the status-bit attack fails: adversarial theta and clipNorm near 1e306 give the same status and text on D and D\', 10/10', { timeout: 60_000 }, async () => {
  // Variant 1 (theta = (M, -M, M, -M)): D and D' of the neighbour test.
  // Variant 2 (clipNorm 1e306, theta = 1e308): 359 rows whose clipped gradients sum just below the
  // largest double, and one zero row (D) or one more such row (D'): the sum overflowed on D' only.
  const overflow = (neighbour: boolean): NodeData => {
    const n = 360;
    const x = new Float64Array(n * 4).fill(0.3);
    if (!neighbour) x.fill(0, 0, 4);
    return { x, y: new Float64Array(n).fill(1), n, d: 4, featureNames: ['a', 'b', 'c', 'e'], rowNormBound: 1, labelBound: 1 };
  };
  const attack = async (data: NodeData, session: Record<string, unknown>, theta: number[]): Promise<Answer[]> => {
    const url = await startNode(data, 'n', { epsilon: 1e6, delta: 0.5 }, 3, []);
    const seen: Answer[] = [];
    for (let i = 0; i < 10; i++) {
      const plan = await call(url, 'POST', '/sessions', { body: JSON.stringify(session) });
      const id = (plan.body as { session?: string }).session;
      seen.push(masked(plan));
      if (id !== undefined) seen.push(await call(url, 'POST', '/gradient', { body: JSON.stringify({ session: id, step: 0, theta }) }));
    }
    return seen;
  };
  const variants: [NodeData, NodeData, Record<string, unknown>, number[]][] = [
    [dataset(false), dataset(true), { method: 'dpgd', steps: 1, regularization: 0, clipNorm: 1, epsilon: 1, delta: 1e-6 }, [M, -M, M, -M]],
    [overflow(false), overflow(true), { method: 'dpgd', steps: 1, regularization: 0, clipNorm: 1e306, epsilon: 1000, delta: 1e-6 }, [1e308, 1e308, 1e308, 1e308]],
    [overflow(false), overflow(true), { method: 'dpgd', steps: 1, regularization: 0, clipNorm: 1e30, epsilon: 1000, delta: 1e-6 }, [1e308, 1e308, 1e308, 1e308]],
  ];
  for (const [d, dPrime, session, theta] of variants) {
    const [onD, onDPrime] = [await attack(d, session, theta), await attack(dPrime, session, theta)];
    const statuses = (run: Answer[]) => run.map((a) => a.status).join(',');
    assertIndistinguishable(onD, onDPrime, { released: ['*.body.gradient'], volatile: ['*.body.session'] }, `clipNorm ${session.clipNorm}, theta ${theta}`);
    assert.equal(statuses(onD), statuses(onDPrime));
    // The bit the adversary wanted is no longer there: every answer on D' is the answer on D.
    assert.equal(new Set(onDPrime.map((a) => a.status)).size, 1, statuses(onDPrime));
  }
});
