/**
 * A privacy budget across runs (`src/cli/ledger-flags.ts`, `dpfit train --ledger`, issue 27):
 *   - five `train` runs on one ledger, the sixth refused with exit 4 BEFORE any data are read (its
 *     --data is a path that does not exist, then a FIFO nobody writes to: reading either would
 *     fail or block, so the refusal came first); the budget's fit is checked by composing the
 *     five model files' events independently of the ledger (exact Gaussian composition and RDP);
 *   - the budget flags' rules ($DPFIT_LEDGER, a new ledger needs both, a raise is refused, a
 *     method whose event is not planned is refused, --dataset-size is required);
 *   - a run killed (SIGKILL) between its reservation and its release leaves the reservation counted;
 *   - `dpfit ledger show` while a `dpfit node serve` process uses the ledger, and the node's
 *     `GET /budget` answers the same object.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseEvent } from '../../src/accounting/events/json.js';
import { composeEvent } from '../../src/accounting/events/constructors.js';
import type { DpEvent } from '../../src/accounting/events/types.js';
import { gaussianCompositionEpsilon } from '../../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../src/accounting/rdp/accountant.js';
import { peopleFixture, runCli } from '../helpers/people.js';

const children = new Set<ChildProcess>();
after(() => {
  for (const child of children) child.kill('SIGKILL');
});

/** The epsilon of releasing all `events` at delta, computed without the ledger: min(exact Gaussian composition, RDP). */
function composedEpsilon(events: DpEvent[], delta: number): number {
  const all = composeEvent(events);
  return Math.min(rdpEpsilon(all, delta).epsilon, gaussianCompositionEpsilon(all, delta)?.epsilon ?? Infinity);
}

const BUDGET_EPSILON = 1.3;
const BUDGET_DELTA = 1e-5;

test('five train runs on one ledger, the sixth refused (exit 4) before reading its data', { timeout: 300_000 }, async () => {
  const f = peopleFixture('dpfit-ledger-cli-', 400, 3);
  const ledger = join(f.dir, 'owner.ledger');
  const args = (data: string, out: string) => [
    'train', '--data', data, '--schema', f.schema, '--method', 'dpgd', '--epsilon', '0.5', '--delta', '1e-5', '--dataset-size', '400', '--ledger', ledger, '--out', out, '--json',
  ];
  const events: DpEvent[] = [];
  for (let i = 1; i <= 5; i++) {
    // The first run creates the ledger with its budget; the others leave the flags out (the stored budget applies).
    const extra = i === 1 ? ['--budget-epsilon', String(BUDGET_EPSILON), '--budget-delta', String(BUDGET_DELTA)] : [];
    const run = await runCli(...args(f.data, join(f.dir, `m${i}.json`)), ...extra);
    assert.equal(run.code, 0, run.stderr);
    events.push(parseEvent(JSON.stringify(JSON.parse(readFileSync(join(f.dir, `m${i}.json`), 'utf8')).privacy.event)));
  }
  // Independently: the five fit, a sixth identical run does not.
  assert.ok(composedEpsilon(events, BUDGET_DELTA) <= BUDGET_EPSILON);
  assert.ok(composedEpsilon([...events, events[0]], BUDGET_DELTA) > BUDGET_EPSILON);

  // The sixth: --data does not exist. Refused by the budget (exit 4), not by the missing file (exit 3).
  const absent = join(f.dir, 'absent.csv');
  const sixth = await runCli(...args(absent, join(f.dir, 'm6.json')));
  assert.equal(sixth.code, 4, sixth.stderr);
  assert.equal(sixth.stdout, '');
  assert.equal(sixth.stderr.trim().split('\n').length, 1);
  assert.match(sixth.stderr, /this run is refused, nothing was read or released: over the privacy budget \(epsilon 1\.3, delta 0\.00001\): spent epsilon [\d.]+ over 5 release\(s\); this release needs epsilon 0\.5 on its own, everything with it [\d.]+/);
  // The printed numbers are rounded up: never below what the accountants give.
  const spentPrinted = Number(/spent epsilon ([\d.]+)/.exec(sixth.stderr)?.[1]);
  const afterPrinted = Number(/everything with it ([\d.]+)/.exec(sixth.stderr)?.[1]);
  assert.ok(spentPrinted >= composedEpsilon(events, BUDGET_DELTA) && spentPrinted < composedEpsilon(events, BUDGET_DELTA) + 1e-3);
  assert.ok(afterPrinted >= composedEpsilon([...events, events[0]], BUDGET_DELTA));
  assert.equal(existsSync(join(f.dir, 'm6.json')), false);

  // A FIFO nobody writes to: a run that read it would block forever; the refusal comes first.
  const fifo = join(f.dir, 'fifo.csv');
  execFileSync('mkfifo', [fifo]);
  const blocked = await runCli(...args(fifo, join(f.dir, 'm7.json')));
  assert.equal(blocked.code, 4, blocked.stderr);

  // The ledger holds the five (nothing for the refused runs), by the same rule.
  const shown = await runCli('ledger', 'show', ledger, '--json');
  assert.equal(shown.code, 0, shown.stderr);
  const json = JSON.parse(shown.stdout);
  assert.equal(json.spent.entries, 5);
  assert.ok(Math.abs(json.spent.epsilon - composedEpsilon(events, BUDGET_DELTA)) <= 1e-12 * BUDGET_EPSILON);
  assert.deepEqual(json.budget, { epsilon: BUDGET_EPSILON, delta: BUDGET_DELTA });
  assert.ok(json.remaining.epsilon <= BUDGET_EPSILON - json.spent.epsilon);
  assert.match(json.entries[0].client, /^dpfit train \(.*, pid \d+\)$/);
});

test('the budget flags: $DPFIT_LEDGER, a new ledger needs both, no raise, a planned method and a declared --dataset-size', { timeout: 120_000 }, async () => {
  const f = peopleFixture('dpfit-ledger-flags-', 200, 4);
  const ledger = join(f.dir, 'owner.ledger');
  const base = ['train', '--data', f.data, '--schema', f.schema, '--method', 'dpgd', '--epsilon', '0.5', '--delta', '1e-5', '--json'];
  const expectExit = async (code: number, pattern: RegExp, ...argv: string[]) => {
    const run = await runCli(...argv);
    assert.equal(run.code, code, `${argv.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, pattern);
    assert.equal(run.stderr.trim().split('\n').length, 1);
  };
  await expectExit(2, /--budget-epsilon.*given with --ledger/, ...base, '--budget-epsilon', '1');
  await expectExit(2, /--budget-delta.*does not exist yet/, ...base, '--dataset-size', '200', '--ledger', ledger, '--budget-epsilon', '1');
  assert.equal(existsSync(ledger), false);
  await expectExit(2, /--dataset-size is required with --ledger/, ...base, '--ledger', ledger, '--budget-epsilon', '1', '--budget-delta', '1e-5');
  await expectExit(2, /--ledger.*used with --method dpsgd or dpgd/, 'train', '--data', f.data, '--schema', f.schema, '--method', 'output', '--epsilon', '0.5', '--delta', '1e-5', '--ledger', ledger, '--budget-epsilon', '1', '--budget-delta', '1e-5');
  // $DPFIT_LEDGER names the ledger when --ledger is not given.
  process.env.DPFIT_LEDGER = ledger;
  try {
    const first = await runCli(...base, '--dataset-size', '200', '--budget-epsilon', '1', '--budget-delta', '1e-5');
    assert.equal(first.code, 0, first.stderr);
    await expectExit(2, /--budget-epsilon.*never be raised/, ...base, '--dataset-size', '200', '--budget-epsilon', '2');
    // A lower cap for this run: refused here because the run does not fit under it (exit 4).
    await expectExit(4, /over the privacy budget \(epsilon 0\.6,/, ...base, '--dataset-size', '200', '--budget-epsilon', '0.6');
    const shown = await runCli('ledger', 'show', '--json');
    assert.equal(shown.code, 0, shown.stderr);
    assert.deepEqual(JSON.parse(shown.stdout).budget, { epsilon: 1, delta: 1e-5 });
    assert.equal(JSON.parse(shown.stdout).spent.entries, 1);
  } finally {
    delete process.env.DPFIT_LEDGER;
  }
});

/** Starts `dpfit ARGS` as its own process. */
function dpfitProcess(args: string[]): { child: ChildProcess; stderr: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/dpfit-process.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let text = '';
  child.stderr?.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => {
    children.delete(child);
    resolve(code);
  }));
  return { child, stderr: () => text, exit };
}

async function until(condition: () => Promise<boolean> | boolean, what: string, timeoutMs = 90_000): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a run killed between its reservation and its release leaves the reservation counted', { timeout: 180_000 }, async () => {
  const f = peopleFixture('dpfit-ledger-crash-', 100, 5);
  const ledger = join(f.dir, 'owner.ledger');
  const fifo = join(f.dir, 'fifo.csv');
  execFileSync('mkfifo', [fifo]);
  // The run reserves, then blocks opening --data (a FIFO nobody writes to): killed there, before any release.
  const run = dpfitProcess(['train', '--data', fifo, '--schema', f.schema, '--method', 'dpgd', '--epsilon', '0.5', '--delta', '1e-5', '--dataset-size', '100', '--ledger', ledger, '--budget-epsilon', '1', '--budget-delta', '1e-5', '--out', join(f.dir, 'm.json')]);
  const entries = async () => {
    if (!existsSync(ledger)) return 0;
    const shown = await runCli('ledger', 'show', ledger, '--json');
    return shown.code === 0 ? JSON.parse(shown.stdout).spent.entries : 0;
  };
  await until(async () => (await entries()) === 1 || run.child.exitCode !== null, 'the reservation');
  // Killed while it still runs; or it already stopped by itself after reserving (dpfit refuses a FIFO
  // as --data once it looks at the file): either way a run that ended without a release keeps its reservation.
  if (run.child.exitCode === null) run.child.kill('SIGKILL');
  else assert.notEqual(run.child.exitCode, 0, run.stderr());
  await run.exit;
  assert.equal(existsSync(join(f.dir, 'm.json')), false);
  const shown = await runCli('ledger', 'show', ledger, '--json');
  assert.equal(JSON.parse(shown.stdout).spent.entries, 1);
  assert.ok(JSON.parse(shown.stdout).spent.epsilon > 0.49);
});

test('dpfit ledger show while a dpfit node serve process uses the ledger; GET /budget answers the same object', { timeout: 180_000 }, async () => {
  const f = peopleFixture('dpfit-ledger-node-', 500, 6);
  const ledger = join(f.dir, 'node.ledger');
  const token = join(f.dir, 'token');
  const secret = 'c0ffee'.repeat(6);
  writeFileSync(token, `${secret}\n`);
  const node = dpfitProcess(['node', 'serve', '--listen', '127.0.0.1:0', '--data', f.data, '--schema', f.schema, '--ledger', ledger, '--token-file', token, '--budget-epsilon', '1', '--budget-delta', '1e-6', '--seed', '1']);
  await until(() => /serving .* on http/.test(node.stderr()) || node.child.exitCode !== null, 'the node to listen');
  assert.equal(node.child.exitCode, null, node.stderr());
  const url = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(node.stderr())?.[1] as string;
  // A training run of the same owner shares the node's budget while it serves.
  const trained = await runCli('train', '--data', f.data, '--schema', f.schema, '--method', 'dpgd', '--epsilon', '0.3', '--delta', '1e-7', '--dataset-size', '500', '--ledger', ledger, '--json');
  assert.equal(trained.code, 0, trained.stderr);
  const shown = await runCli('ledger', 'show', ledger, '--json');
  assert.equal(shown.code, 0, shown.stderr);
  const text = await runCli('ledger', 'show', ledger);
  assert.match(text.stdout, /budget \(epsilon = 1, delta = 0\.000001\); spent epsilon = [\d.]+ at delta = 0\.000001 over 1 release\(s\); remaining epsilon = [\d.]+/);
  const answer = await fetch(`${url}/budget`, { headers: { authorization: `Bearer ${secret}` } });
  assert.equal(answer.status, 200);
  const { ledger: _path, ...summary } = JSON.parse(shown.stdout);
  assert.deepEqual(await answer.json(), summary);
  const unauthorised = await fetch(`${url}/budget`);
  assert.equal(unauthorised.status, 401);
  node.child.kill('SIGTERM');
  await node.exit;
});
