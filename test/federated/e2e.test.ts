/**
 * Federated training end to end: two `dpfit node serve` processes on loopback and `dpfit federate`.
 *   - the model equals the in-process run of the same protocol with the same seeds;
 *   - a wrong token is refused (exit 3, one line), before any node releases anything;
 *   - a node refuses the session that would exceed its budget (exit 4), and still refuses it after
 *     a restart on the same ledger (the spent budget is on disk).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { loadNodeData } from '../../src/cli/commands/node.js';
import { readSchemaFile } from '../../src/data/node/read.js';
import { InMemoryLedger } from '../../src/accounting/budget/rule.js';
import { federate } from '../../src/federated/coordinator.js';
import { inProcessClient } from '../../src/federated/in-process.js';
import { FederatedNode } from '../../src/federated/node.js';
import { seededRng } from '../../src/random/rng.js';
import { peopleFixture, runCli } from '../helpers/people.js';

const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** Starts `dpfit node serve ARGS` and resolves with its URL once it listens. */
function serve(args: string[]): Promise<{ url: string; child: ChildProcess; stderr: () => string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/dpfit-process.ts', 'node', 'serve', '--listen', '127.0.0.1:0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let text = '';
  return new Promise((resolve, reject) => {
    child.stderr?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      const match = /serving .* on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (match !== null) resolve({ url: match[1], child, stderr: () => text });
    });
    child.on('exit', (code) => reject(new Error(`node serve exited with ${code}: ${text}`)));
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => {
      children.delete(child);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

test('two node processes + dpfit federate: the in-process model, a refused token, a refused budget that survives a restart', { timeout: 120_000 }, async () => {
  const a = peopleFixture('dpfit-fed-a-', 20_000, 11);
  const b = peopleFixture('dpfit-fed-b-', 15_000, 12);
  const dir = a.dir;
  const token = join(dir, 'token');
  writeFileSync(token, `${'f00d'.repeat(10)}\n`);
  const wrongToken = join(dir, 'wrong-token');
  writeFileSync(wrongToken, `${'beef'.repeat(10)}\n`);
  const budget = ['--budget-epsilon', '1', '--budget-delta', '1e-6'];
  const nodeArgs = (data: string, name: string, seed: string) => ['--data', data, '--schema', a.schema, '--ledger', join(dir, `${name}.ledger`), '--token-file', token, '--name', name, '--seed', seed, ...budget];
  const [nodeA, nodeB] = await Promise.all([serve(nodeArgs(a.data, 'a', '1')), serve(nodeArgs(b.data, 'b', '2'))]);
  const nodes = `${nodeA.url},${nodeB.url}`;
  const run = ['--method', 'rgm', '--delta', '1e-7', '--steps', '20', '--rho', '0.04'];

  // ---- a wrong token: refused before anything is asked
  const refusedToken = await runCli('federate', '--nodes', nodes, '--token-file', wrongToken, '--epsilon', '0.7', ...run);
  assert.equal(refusedToken.code, 3, refusedToken.stderr);
  assert.equal(refusedToken.stderr.trim().split('\n').length, 1);
  assert.match(refusedToken.stderr, /refused the token/);

  // ---- the run, and the same protocol in-process with the same seeds
  const model = join(dir, 'federated.json');
  const trained = await runCli('federate', '--nodes', nodes, '--token-file', token, '--epsilon', '0.7', ...run, '--out', model, '--json');
  assert.equal(trained.code, 0, trained.stderr);
  const file = JSON.parse(readFileSync(model, 'utf8'));
  assert.equal(file.format, 'dpfit-federated-model/1');
  const schema = await readSchemaFile(a.schema);
  const local = await Promise.all(
    [
      [a.data, 'a', 1],
      [b.data, 'b', 2],
    ].map(async ([data, name, seed]) => new FederatedNode(await loadNodeData(data as string, schema), new InMemoryLedger({ epsilon: 1, delta: 1e-6 }), { name: name as string, rng: seededRng(seed as number) })),
  );
  const inProcess = await federate(local.map((n) => inProcessClient(n)), { method: 'rgm', steps: 20, regularization: 0.03, epsilon: 0.7, delta: 1e-7, rho: 0.04 });
  assert.equal(inProcess.status, 'trained', inProcess.message);
  assert.deepEqual(file.theta, inProcess.model?.theta);
  assert.deepEqual(
    file.privacy.nodes.map((n: { node: string; privacy: { epsilon: number } }) => [n.node, n.privacy.epsilon]),
    inProcess.privacy.nodes.map((n) => [n.node, n.privacy.epsilon]),
  );
  // Binary labels: a ridge classifier, with the nodes' public schema embedded, so it evaluates as any model.
  assert.equal(file.task, 'classification');
  assert.equal(file.schema.columns.length, 3);
  const evaluated = await runCli('evaluate', '--model', model, '--data', b.data, '--json');
  assert.equal(evaluated.code, 0, evaluated.stderr);
  assert.ok(JSON.parse(evaluated.stdout).accuracy > 0.6, evaluated.stdout);
  // Re-accountable from the file (seeded nodes: the claim holds, and says guarantee none).
  const verified = await runCli('verify', model, '--json');
  assert.equal(verified.code, 0, verified.stderr);
  assert.equal(JSON.parse(verified.stdout).holds, true);

  // ---- over budget: 0.7 spent, 0.9 more does not fit in 1; refused now and after a restart
  const again = ['federate', '--nodes', nodes, '--token-file', token, '--epsilon', '0.9', ...run];
  const refused = await runCli(...again);
  assert.equal(refused.code, 4, refused.stderr);
  assert.match(refused.stderr, /refuses the session: it would bring the epsilon of everything granted to .* over its budget 1/);
  await stop(nodeA.child);
  const restarted = await serve(nodeArgs(a.data, 'a', '1'));
  const afterRestart = await runCli('federate', '--nodes', `${restarted.url},${nodeB.url}`, '--token-file', token, '--epsilon', '0.9', ...run);
  assert.equal(afterRestart.code, 4, afterRestart.stderr);
  assert.match(afterRestart.stderr, /refuses the session/);
  await Promise.all([stop(restarted.child), stop(nodeB.child)]);
});
