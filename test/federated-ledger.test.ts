/**
 * The persistent privacy ledger (`src/federated/ledger.ts`, issue 13): grants exactly what fits
 * the budget, persists across reopen, never lets its budget be raised, serialises concurrent
 * reservations, survives kill -9 without losing a granted release or exceeding the budget, and is
 * locked against a second process; `dpfit ledger show` prints it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { gaussianEvent, laplaceEvent } from '../src/accounting/events.js';
import { rdpEpsilon } from '../src/accounting/rdp/accountant.js';
import { DataFormatError, InvalidParameterError } from '../src/errors.js';
import { spentBudget } from '../src/federated/budget.js';
import { PrivacyLedger } from '../src/federated/ledger.js';
import { seededRng } from '../src/random/rng.js';
import { runCli } from './helpers/people.js';

const BUDGET = { epsilon: 1, delta: 1e-6 };
const dir = () => mkdtempSync(join(tmpdir(), 'dpfit-ledger-'));
const entry = (z: number, extraDelta = 0) => ({ client: 'test', description: `gaussian z = ${z}`, event: gaussianEvent(z), extraDelta });

/** How many Gaussian(z) releases fit the budget, by the same rule (computed, not hard-coded). */
function fitting(z: number): number {
  let k = 0;
  while (spentBudget(Array.from({ length: k + 1 }, () => entry(z)), BUDGET).epsilon <= BUDGET.epsilon) k++;
  return k;
}

test('grants exactly what fits, refuses the next with a reason; spent never exceeds the budget', async () => {
  const path = join(dir(), 'a.ledger');
  const ledger = await PrivacyLedger.open(path, BUDGET);
  const z = 20;
  const k = fitting(z);
  assert.ok(k >= 3 && k < 200, `k = ${k}`);
  for (let i = 0; i < k; i++) {
    const d = await ledger.reserve(entry(z));
    assert.equal(d.granted, true);
    assert.ok(d.spent.epsilon <= 1);
  }
  const refused = await ledger.reserve(entry(z));
  assert.equal(refused.granted, false);
  assert.match((refused as { reason: string }).reason, /over its budget 1/);
  assert.equal((await ledger.spent()).entries, k);
  // A delta paid outside RDP that reaches the budget's delta is refused whatever epsilon.
  const ptr = await ledger.reserve({ client: 'test', description: 'ptr', event: laplaceEvent(1e6), extraDelta: 1e-6 });
  assert.equal(ptr.granted, false);
  await ledger.close();
});

test('persists across reopen; a budget can be lowered, never raised; a read-only open sees the stored budget', async () => {
  const path = join(dir(), 'a.ledger');
  const first = await PrivacyLedger.open(path, BUDGET);
  assert.equal((await first.reserve(entry(25))).granted, true);
  assert.equal((await first.reserve(entry(30, 1e-8))).granted, true);
  const spent = await first.spent();
  await first.close();
  const reopened = await PrivacyLedger.open(path, BUDGET);
  assert.deepEqual(await reopened.spent(), spent);
  assert.deepEqual((await reopened.entries()).map((e) => [e.id, e.description, e.extraDelta]), [[1, 'gaussian z = 25', 0], [2, 'gaussian z = 30', 1e-8]]);
  await reopened.close();
  await assert.rejects(PrivacyLedger.open(path, { epsilon: 2, delta: 1e-6 }), (e: unknown) => e instanceof InvalidParameterError && /--budget-epsilon must be at most the ledger's stored budget 1/.test(e.message));
  await assert.rejects(PrivacyLedger.open(path, { epsilon: 1, delta: 1e-5 }), (e: unknown) => e instanceof InvalidParameterError && /--budget-delta/.test(e.message));
  const lower = await PrivacyLedger.open(path, { epsilon: 0.5, delta: 1e-6 });
  assert.equal(lower.budget.epsilon, 0.5);
  await lower.close();
  const readOnly = await PrivacyLedger.openReadOnly(path);
  assert.deepEqual(readOnly.budget, BUDGET);
  await readOnly.close();
  await assert.rejects(PrivacyLedger.openReadOnly(join(dir(), 'absent.ledger')), DataFormatError);
  const notLedger = join(dir(), 'x.ledger');
  writeFileSync(notLedger, 'hello');
  await assert.rejects(PrivacyLedger.open(notLedger, BUDGET), (e: unknown) => e instanceof DataFormatError && /not a dpfit ledger/.test(e.message));
});

test('50 concurrent reservations that together exceed the budget: exactly the ones that fit are granted', async () => {
  const ledger = await PrivacyLedger.open(join(dir(), 'a.ledger'), BUDGET);
  const z = 20;
  const decisions = await Promise.all(Array.from({ length: 50 }, () => ledger.reserve(entry(z))));
  const granted = decisions.filter((d) => d.granted).length;
  assert.equal(granted, fitting(z));
  assert.ok(granted < 50);
  assert.ok((await ledger.spent()).epsilon <= 1);
  await ledger.close();
});

test('kill -9 at random moments: every printed grant is on disk, spent never decreases nor exceeds the budget', { timeout: 120_000 }, async () => {
  const path = join(dir(), 'a.ledger');
  const rng = seededRng(20261124);
  const z = 60; // ~hundreds of releases fit: the child is killed long before it finishes
  let previous = 0;
  let kills = 0;
  for (let round = 0; round < 6; round++) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/ledger-child.ts', path, String(z)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Wait for the first grant of this round, then kill after a random delay.
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (out.includes('granted') || out.includes('done') || child.exitCode !== null) {
          clearInterval(check);
          resolve();
        }
      }, 5);
    });
    await new Promise((r) => setTimeout(r, Math.floor(rng.nextDouble() * 150)));
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      kills++;
    }
    const code = await exited;
    assert.ok(code === null || code === 0, `child failed: ${err}`);
    const printed = [...out.matchAll(/granted (\d+)/g)].map((m) => Number(m[1]));
    const ledger = await PrivacyLedger.open(path, BUDGET);
    const ids = new Set((await ledger.entries()).map((e) => e.id));
    for (const id of printed) assert.ok(ids.has(id), `granted ${id} was printed but is not in the ledger`);
    const spent = await ledger.spent();
    assert.ok(spent.epsilon >= previous, `spent went down: ${spent.epsilon} < ${previous}`);
    assert.ok(spent.epsilon <= 1, `spent ${spent.epsilon} over the budget`);
    previous = spent.epsilon;
    await ledger.close();
    if (out.includes('done')) break;
  }
  assert.ok(kills >= 1, 'the child was never killed mid-run');
  assert.ok(previous > 0);
});

test('a second process cannot open a ledger in use; dpfit ledger show prints it (and --json), exit 3 for a missing file', { timeout: 60_000 }, async () => {
  const path = join(dir(), 'a.ledger');
  const ledger = await PrivacyLedger.open(path, BUDGET);
  await ledger.reserve(entry(10));
  const other = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/dpfit-process.ts', 'ledger', 'show', '--ledger', path], { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  other.stderr.on('data', (c) => (err += c));
  const code = await new Promise<number | null>((resolve) => other.on('exit', resolve));
  assert.equal(code, 3, err);
  assert.match(err, /in use by another process/);
  await ledger.close();
  const shown = await runCli('ledger', 'show', '--ledger', path);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /budget \(epsilon = 1, delta = 0\.000001\); spent epsilon = .* over 1 release/);
  assert.match(shown.stdout, /#1 .* test: epsilon .* gaussian z = 10/);
  const json = JSON.parse((await runCli('ledger', 'show', '--ledger', path, '--json')).stdout);
  assert.equal(json.entries.length, 1);
  assert.equal(json.entries[0].epsilon, rdpEpsilon(gaussianEvent(10), 1e-6).epsilon);
  const missing = await runCli('ledger', 'show', '--ledger', join(dir(), 'none.ledger'));
  assert.equal(missing.code, 3);
  assert.equal(missing.stderr.trim().split('\n').length, 1);
});
