/**
 * The node's HTTP surface (`src/federated/http-server.ts`): authentication, limits,
 * status codes with JSON bodies, and 50 concurrent session requests that together exceed the
 * budget (exactly what fits is granted; the spent epsilon never exceeds the budget).
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, test } from 'node:test';
import { InMemoryLedger, spentBudget } from '../../src/accounting/budget/rule.js';
import { httpNodeClient } from '../../src/federated/http-client.js';
import { startNodeServer, type RunningNodeServer } from '../../src/federated/http-server.js';
import { FederatedNode, type NodeData } from '../../src/federated/node.js';
import { parseEvent } from '../../src/accounting/events/json.js';

const TOKEN = '0123456789abcdef0123456789abcdef';
const servers: RunningNodeServer[] = [];
after(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

function data(n: number): NodeData {
  const d = 3;
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < d; k++) x[i * d + k] = (((i * 7 + k * 13) % 17) / 17 - 0.5) * 0.5;
    y[i] = i % 2 === 0 ? 1 : -1;
  }
  return { x, y, n, d, featureNames: ['a', 'b', 'c'], rowNormBound: 0.5, labelBound: 1 };
}

async function start(ledger = new InMemoryLedger({ epsilon: 1, delta: 1e-6 }), maxBodyBytes?: number) {
  const node = new FederatedNode(data(500), ledger, { name: 'n' });
  const server = await startNodeServer(node, { host: '127.0.0.1', port: 0, token: TOKEN, ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }) });
  servers.push(server);
  return { server, ledger };
}

/** A raw request: status and parsed body. */
function raw(url: string, method: string, path: string, options: { token?: string; type?: string; body?: string } = {}): Promise<{ status: number; body: { error?: string; status?: number } }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, url), {
      method,
      headers: {
        ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
        ...(options.type === undefined ? {} : { 'content-type': options.type }),
      },
    }, (res) => {
      let text = '';
      res.on('data', (c) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

test('HTTP: 401 without or with a wrong token, 404/405 routes, 415 non-JSON, 400 malformed, 413 over the body limit — each a JSON body', async () => {
  const { server } = await start(undefined, 2048);
  const cases: [string, string, Parameters<typeof raw>[3], number, RegExp][] = [
    ['GET', '/info', {}, 401, /bearer token/],
    ['GET', '/info', { token: 'x'.repeat(32) }, 401, /bearer token/],
    ['GET', '/nope', { token: TOKEN }, 404, /no route/],
    ['GET', '/sessions', { token: TOKEN }, 405, /no route/],
    ['POST', '/sessions', { token: TOKEN, type: 'text/plain', body: '{}' }, 415, /JSON/],
    ['POST', '/sessions', { token: TOKEN, type: 'application/json', body: '{"method":' }, 400, /not JSON/],
    ['POST', '/sessions', { token: TOKEN, type: 'application/json', body: '{"method":"magic","steps":1,"regularization":0}' }, 400, /request\.method/],
    ['POST', '/gradient', { token: TOKEN, type: 'application/json', body: JSON.stringify({ session: '0'.repeat(32), step: 0, theta: [0, 0, 0] }) }, 404, /no session/],
    ['POST', '/sessions', { token: TOKEN, type: 'application/json', body: `{"pad":"${'x'.repeat(4096)}"}` }, 413, /limit of 2048 bytes/],
  ];
  for (const [method, path, options, status, pattern] of cases) {
    const answer = await raw(server.url, method, path, options).catch((e) => { throw new Error(`${method} ${path} ${options?.body?.slice(0, 20)}: ${e.message}`); });
    assert.equal(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.body)}`);
    assert.equal(answer.body.status, status);
    assert.match(answer.body.error ?? '', pattern);
  }
  const info = await raw(server.url, 'GET', '/info', { token: TOKEN });
  assert.equal(info.status, 200);
});

test('HTTP: 50 concurrent sessions that together exceed the budget: exactly those that fit are granted, spent <= budget', async () => {
  const { server, ledger } = await start(new InMemoryLedger({ epsilon: 1, delta: 1e-6 }));
  const client = httpNodeClient(server.url, TOKEN);
  const session = { method: 'dpgd' as const, steps: 5, regularization: 0, clipNorm: 1, epsilon: 0.2, delta: 1e-8 };
  const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => client.openSession(session)));
  const granted = outcomes.filter((o) => o.status === 'fulfilled');
  const refused = outcomes.filter((o) => o.status === 'rejected');
  assert.ok(granted.length >= 1 && refused.length >= 1, `${granted.length} granted`);
  for (const r of refused) assert.match(String((r as PromiseRejectedResult).reason.message), /over its budget 1/);
  const spent = await ledger.spent();
  assert.equal(spent.entries, granted.length);
  assert.ok(spent.epsilon <= 1, String(spent.epsilon));
  // Exactly what fits: one more of the same session would not.
  const event = parseEvent((granted[0] as PromiseFulfilledResult<{ privacy: { event: unknown } }>).value.privacy.event);
  const oneMore = spentBudget(Array.from({ length: granted.length + 1 }, () => ({ event, extraDelta: 0 })), { epsilon: 1, delta: 1e-6 });
  assert.ok(oneMore.epsilon > 1, `${granted.length + 1} sessions would cost ${oneMore.epsilon}`);
});
