/**
 * The persistent privacy ledger (`src/federated/ledger.ts`): grants exactly what fits
 * the budget (k computed from the accountants, not hard-coded), refuses with a reason, persists
 * across reopen, never lets its budget be raised, serialises concurrent reservations, survives
 * kill -9 without losing an announced grant or exceeding the budget, is locked against a second
 * process; `dpfit ledger show` prints it.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { DpEvent } from '../../src/accounting/events/types.js';
import { NON_PRIVATE_EVENT, gaussianEvent, laplaceEvent, selfComposeEvent, shuffledSgdConjectureEvent } from '../../src/accounting/events/constructors.js';
import { gaussianCompositionEpsilon } from '../../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../src/accounting/rdp/accountant.js';
import { DataFormatError, InvalidParameterError } from '../../src/errors.js';
import { spentBudget } from '../../src/accounting/budget/rule.js';
import { MAX_CLIENT_LENGTH, PrivacyLedger } from '../../src/federated/ledger.js';
import { seededRng } from '../../src/random/rng.js';
import { runCli } from '../helpers/people.js';

const BUDGET = { epsilon: 1, delta: 1e-5 };
const dir = () => mkdtempSync(join(tmpdir(), 'dpfit-ledger-'));
const entry = (event: DpEvent, extraDelta = 0, client = 'test') => ({ client, description: `release of ${JSON.stringify(event)}`, event, extraDelta });
const gaussian = (z: number, extraDelta = 0) => entry(gaussianEvent(z), extraDelta);

/**
 * The epsilon of k composed gaussian(z) at delta, computed independently of the ledger: the
 * smaller of RDP and the exact Gaussian composition (k Gaussians are one Gaussian).
 */
function epsilonOfGaussians(z: number, k: number, delta: number): number {
  const event = selfComposeEvent(gaussianEvent(z), k);
  return Math.min(rdpEpsilon(event, delta).epsilon, gaussianCompositionEpsilon(event, delta)?.epsilon ?? Infinity);
}

/** The largest k such that k releases gaussian(z) fit `budget`. */
function fitting(z: number, budget = BUDGET): number {
  let k = 0;
  while (epsilonOfGaussians(z, k + 1, budget.delta) <= budget.epsilon) k++;
  return k;
}

function spawnChild(args: string[]): { child: ChildProcessWithoutNullStreams; out: () => string; err: () => string; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/ledger-child.ts', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (c) => (out += c));
  child.stderr.on('data', (c) => (err += c));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, out: () => out, err: () => err, exit };
}

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const start = Date.now();
  while (!condition()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

test('grants exactly the k releases that fit (1, 1e-5), refuses the next with a reason; spent never exceeds the budget', async () => {
  const ledger = await PrivacyLedger.open(join(dir(), 'a.ledger'), BUDGET);
  const z = 20;
  const k = fitting(z);
  assert.ok(k >= 3 && k < 100, `k = ${k}`);
  assert.ok(epsilonOfGaussians(z, k + 1, BUDGET.delta) > BUDGET.epsilon);
  let previous = 0;
  for (let i = 1; i <= k; i++) {
    const d = await ledger.reserve(gaussian(z));
    assert.equal(d.granted, true, `release ${i} of ${k} refused: ${(d as { reason?: string }).reason}`);
    assert.equal((d as { id: number }).id, i);
    assert.ok(d.spent.epsilon > previous && d.spent.epsilon <= BUDGET.epsilon, `spent ${d.spent.epsilon}`);
    assert.equal(d.spent.entries, i);
    assert.ok(Math.abs(d.spent.epsilon - epsilonOfGaussians(z, i, BUDGET.delta)) <= 1e-9);
    previous = d.spent.epsilon;
  }
  const refused = await ledger.reserve(gaussian(z));
  assert.equal(refused.granted, false);
  assert.match((refused as { reason: string }).reason, /over its budget 1/);
  assert.deepEqual(refused.spent, await ledger.spent());
  // Whatever the event, nothing more fits once the delta paid outside RDP reaches the budget's delta.
  assert.equal((await ledger.reserve(entry(laplaceEvent(1e9), 1e-5))).granted, false);
  // A non-private event fits no finite budget; an event the accountant cannot handle is refused with its reason.
  assert.equal((await ledger.reserve(entry(NON_PRIVATE_EVENT))).granted, false);
  const conjecture = await ledger.reserve(entry(shuffledSgdConjectureEvent({ datasetSize: 1000, noiseMultiplier: 5, epochs: 1, fraction: 0.1 })));
  assert.equal(conjecture.granted, false);
  assert.match((conjecture as { reason: string }).reason, /cannot be accounted: .*conjecture/);
  // A malformed event (a hand-made object) is refused, never stored.
  const malformed = await ledger.reserve(entry({ kind: 'gaussian', noiseMultiplier: -1 } as DpEvent));
  assert.equal(malformed.granted, false);
  assert.match((malformed as { reason: string }).reason, /not a valid event/);
  // A negative or NaN extra delta would lower the sum: a caller's error, thrown.
  for (const bad of [-1e-9, NaN, 1]) await assert.rejects(ledger.reserve(gaussian(1e6, bad)), (e: unknown) => e instanceof InvalidParameterError && e.param === 'extraDelta');
  const spent = await ledger.spent();
  assert.equal(spent.entries, k);
  assert.ok(spent.epsilon <= BUDGET.epsilon);
  assert.equal(spent.delta, BUDGET.delta);
  assert.equal((await ledger.entries()).length, k);
  await ledger.close();
  await assert.rejects(ledger.reserve(gaussian(z)), /closed/);
});

test('a budget with epsilon Infinity grants non-private releases; an empty ledger spent (0, 0)', async () => {
  const ledger = await PrivacyLedger.open(join(dir(), 'a.ledger'), { epsilon: Infinity, delta: 1e-5 });
  assert.deepEqual(await ledger.spent(), { epsilon: 0, delta: 0, entries: 0 });
  const d = await ledger.reserve(entry(NON_PRIVATE_EVENT));
  assert.equal(d.granted, true);
  assert.deepEqual(d.spent, { epsilon: Infinity, delta: 1e-5, entries: 1 });
  // Closing waits for pending work; closing twice at once is one close.
  const pending = ledger.reserve(entry(NON_PRIVATE_EVENT));
  await Promise.all([ledger.close(), ledger.close()]);
  assert.equal((await pending).granted, true);
  for (const [budget, param] of [
    [{ epsilon: 0, delta: 1e-5 }, '--budget-epsilon'],
    [{ epsilon: NaN, delta: 1e-5 }, '--budget-epsilon'],
    [{ epsilon: 1, delta: 1 }, '--budget-delta'],
    [{ epsilon: 1, delta: -1e-9 }, '--budget-delta'],
  ] as const) {
    await assert.rejects(PrivacyLedger.open(join(dir(), 'b.ledger'), budget), (e: unknown) => e instanceof InvalidParameterError && e.param === param);
  }
});

test('grouped accounting equals the per-entry rule of budget.ts on a mixed ledger', async () => {
  const ledger = await PrivacyLedger.open(join(dir(), 'a.ledger'), { epsilon: 5, delta: 1e-5 });
  const mix = [gaussian(30), entry(laplaceEvent(40)), gaussian(30, 1e-7), gaussian(50), entry(laplaceEvent(40)), gaussian(30), gaussian(50, 3e-8)];
  for (const e of mix) assert.equal((await ledger.reserve(e)).granted, true);
  const spent = await ledger.spent();
  const expected = spentBudget(mix, ledger.budget);
  assert.equal(spent.entries, expected.entries);
  assert.equal(spent.delta, expected.delta);
  assert.ok(Math.abs(spent.epsilon - expected.epsilon) <= 1e-12 * expected.epsilon, `${spent.epsilon} vs ${expected.epsilon}`);
  await ledger.close();
});

test('persists across reopen; the budget can never be raised; a lower cap must cover what was spent and is not stored', async () => {
  const path = join(dir(), 'a.ledger');
  const first = await PrivacyLedger.open(path, BUDGET);
  assert.equal((await first.reserve(gaussian(25))).granted, true);
  // A client name is stored truncated, as valid Unicode (the emoji cut in half becomes U+FFFD).
  assert.equal((await first.reserve(entry(gaussianEvent(30), 1e-8, `${'x'.repeat(MAX_CLIENT_LENGTH - 1)}\u{1F600}${'y'.repeat(100)}`))).granted, true);
  const spent = await first.spent();
  const entries = await first.entries();
  // A second handle in this process (the file is not held open: each operation opens and closes it) sees the same ledger.
  const second = await PrivacyLedger.open(path, BUDGET);
  assert.deepEqual(await second.entries(), entries);
  await second.close();
  await first.close();
  await assert.rejects(first.spent(), (e: unknown) => e instanceof DataFormatError && /closed/.test(e.message));
  assert.equal(entries[1].client, `${'x'.repeat(MAX_CLIENT_LENGTH - 1)}\uFFFD`);

  const reopened = await PrivacyLedger.open(path, BUDGET);
  assert.deepEqual(await reopened.spent(), spent);
  assert.deepEqual(await reopened.entries(), entries);
  assert.deepEqual(
    entries.map((e) => [e.id, e.description, e.extraDelta, e.event]),
    [
      [1, entry(gaussianEvent(25)).description, 0, gaussianEvent(25)],
      [2, entry(gaussianEvent(30)).description, 1e-8, gaussianEvent(30)],
    ],
  );
  assert.ok(!Number.isNaN(Date.parse(entries[0].time)));
  assert.equal((await reopened.reserve(gaussian(25))).granted, true);
  await reopened.close();

  const raise = (param: string) => (e: unknown) => e instanceof InvalidParameterError && e.param === param && /stored budget \(epsilon = 1, delta = 0\.00001\)/.test(e.message) && /never be raised/.test(e.message);
  await assert.rejects(PrivacyLedger.open(path, { epsilon: 2, delta: 1e-5 }), raise('--budget-epsilon'));
  await assert.rejects(PrivacyLedger.open(path, { epsilon: Infinity, delta: 1e-5 }), raise('--budget-epsilon'));
  await assert.rejects(PrivacyLedger.open(path, { epsilon: 1, delta: 1e-4 }), raise('--budget-delta'));
  // A lower cap is accepted when it covers what was spent, refused below it.
  const lower = await PrivacyLedger.open(path, { epsilon: 0.9, delta: 1e-5 });
  assert.deepEqual(lower.budget, { epsilon: 0.9, delta: 1e-5 });
  assert.deepEqual(lower.storedBudget, BUDGET);
  await lower.close();
  await assert.rejects(PrivacyLedger.open(path, { epsilon: 0.01, delta: 1e-5 }), (e: unknown) => e instanceof InvalidParameterError && e.param === '--budget-epsilon' && /already spent/.test(e.message));
  await assert.rejects(PrivacyLedger.open(path, { epsilon: 1, delta: 1e-8 }), (e: unknown) => e instanceof InvalidParameterError && e.param === '--budget-delta' && /outside RDP/.test(e.message));

  const readOnly = await PrivacyLedger.openReadOnly(path);
  assert.deepEqual(readOnly.budget, BUDGET);
  assert.equal((await readOnly.entries()).length, 3);
  await assert.rejects(readOnly.reserve(gaussian(25)), (e: unknown) => e instanceof DataFormatError && /read-only/.test(e.message));
  await readOnly.close();

  await assert.rejects(PrivacyLedger.openReadOnly(join(dir(), 'absent.ledger')), (e: unknown) => e instanceof DataFormatError && /no such ledger file/.test(e.message));
  const text = join(dir(), 'x.ledger');
  writeFileSync(text, 'hello');
  await assert.rejects(PrivacyLedger.open(text, BUDGET), (e: unknown) => e instanceof DataFormatError && /dpfit ledger/.test(e.message));
  // A DuckDB database that is not a ledger is refused and left alone (no tables added to it).
  const other = join(dir(), 'other.duckdb');
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const db = await DuckDBInstance.create(other);
  const c = await db.connect();
  await c.run('CREATE TABLE t (x INTEGER)');
  c.closeSync();
  db.closeSync();
  const size = statSync(other).size;
  await assert.rejects(PrivacyLedger.open(other, BUDGET), (e: unknown) => e instanceof DataFormatError && /is not a dpfit ledger/.test(e.message));
  assert.equal(statSync(other).size, size);
});

test('50 concurrent reservations that together exceed the budget: exactly the ones that fit are granted', async () => {
  const ledger = await PrivacyLedger.open(join(dir(), 'a.ledger'), BUDGET);
  const z = 20;
  const decisions = await Promise.all(Array.from({ length: 50 }, () => ledger.reserve(gaussian(z))));
  const granted = decisions.filter((d) => d.granted);
  assert.equal(granted.length, fitting(z));
  assert.ok(granted.length < 50);
  assert.deepEqual(
    granted.map((d) => (d as { id: number }).id),
    Array.from({ length: granted.length }, (_, i) => i + 1),
  );
  for (const d of decisions) assert.ok(d.spent.epsilon <= BUDGET.epsilon);
  const spent = await ledger.spent();
  assert.equal(spent.entries, granted.length);
  assert.ok(spent.epsilon <= BUDGET.epsilon);
  await ledger.close();
});

test('kill -9 at random instants: every announced grant is on disk, spent never decreases nor exceeds the budget', { timeout: 240_000 }, async () => {
  const path = join(dir(), 'a.ledger');
  const rng = seededRng(20261124);
  const z = 200; // ~2000 releases fit: the child is killed long before it is done
  let previousEpsilon = 0;
  let previousIds = new Set<number>();
  let kills = 0;
  let announced = 0;
  for (let round = 0; round < 6; round++) {
    const { child, out, err, exit } = spawnChild([path, String(z), String(BUDGET.epsilon), String(BUDGET.delta)]);
    // After the first grant of this round, a random delay (fixed seed), then SIGKILL.
    await until(() => out().includes('granted') || child.exitCode !== null, 'a first grant');
    await new Promise((r) => setTimeout(r, Math.floor(rng.nextDouble() * 200)));
    if (child.exitCode === null) {
      child.kill('SIGKILL');
      kills++;
    }
    const code = await exit;
    assert.ok(code === null || code === 0, `child failed: ${err()}`);
    const printed = [...out().matchAll(/granted (\d+)/g)].map((m) => Number(m[1]));
    announced += printed.length;
    const ledger = await PrivacyLedger.open(path, BUDGET);
    const ids = new Set((await ledger.entries()).map((e) => e.id));
    for (const id of printed) assert.ok(ids.has(id), `grant ${id} was announced but is not in the ledger`);
    for (const id of previousIds) assert.ok(ids.has(id), `entry ${id} disappeared`);
    const spent = await ledger.spent();
    assert.equal(spent.entries, ids.size);
    assert.ok(spent.epsilon >= previousEpsilon, `spent went down: ${spent.epsilon} < ${previousEpsilon}`);
    assert.ok(spent.epsilon <= BUDGET.epsilon, `spent ${spent.epsilon} over the budget`);
    previousEpsilon = spent.epsilon;
    previousIds = ids;
    await ledger.close();
  }
  assert.ok(kills >= 5, `the child was killed mid-run only ${kills} times`);
  assert.ok(announced >= 6 && previousIds.size >= announced);
});

test('eight processes racing reservations that together exceed the budget: the granted total never exceeds it, exactly the k that fit are granted', { timeout: 300_000 }, async () => {
  const path = join(dir(), 'race.ledger');
  const z = 20; // fitting(20) releases fit (1, 1e-5): far fewer than eight processes ask for
  const k = fitting(z);
  await (await PrivacyLedger.open(path, BUDGET)).close(); // created once: the children race on reservations only
  const children = Array.from({ length: 8 }, () => spawnChild([path, String(z), String(BUDGET.epsilon), String(BUDGET.delta)]));
  const codes = await Promise.all(children.map((c) => c.exit));
  children.forEach((c, i) => assert.equal(codes[i], 0, c.err()));
  const announced = children.flatMap((c) => [...c.out().matchAll(/granted (\d+)/g)].map((m) => Number(m[1])));
  // Every grant announced once, ids 1..k, none more: the processes' reservations were decided one after the other.
  assert.deepEqual([...announced].sort((a, b) => a - b), Array.from({ length: k }, (_, i) => i + 1));
  assert.ok(children.filter((c) => /granted/.test(c.out())).length >= 2, 'at least two processes got grants (they raced)');
  const ledger = await PrivacyLedger.openReadOnly(path);
  const spent = await ledger.spent();
  await ledger.close();
  assert.equal(spent.entries, k);
  assert.ok(spent.epsilon <= BUDGET.epsilon);
  assert.ok(epsilonOfGaussians(z, k + 1, BUDGET.delta) > BUDGET.epsilon);
});

test('readable while another process reserves; a process that holds the file open (an older dpfit) makes an open wait, then refuse naming its PID', { timeout: 120_000 }, async () => {
  const path = join(dir(), 'a.ledger');
  await (await PrivacyLedger.open(path, BUDGET)).close();
  const writer = spawnChild([path, '200', String(BUDGET.epsilon), String(BUDGET.delta)]);
  try {
    await until(() => writer.out().includes('granted') || writer.child.exitCode !== null, 'the writer to reserve', 60_000);
    // While it keeps reserving: every show is one consistent snapshot, and what was spent only grows.
    let previous = 0;
    for (let i = 0; i < 3; i++) {
      const shown = await runCli('ledger', 'show', path, '--json');
      assert.equal(shown.code, 0, shown.stderr);
      const json = JSON.parse(shown.stdout);
      assert.equal(json.entries.length, json.spent.entries);
      assert.ok(json.spent.entries >= previous);
      previous = json.spent.entries;
    }
  } finally {
    writer.child.kill('SIGKILL');
    await writer.exit;
  }
  const holder = spawnChild([path, '10', String(BUDGET.epsilon), String(BUDGET.delta), 'hold']);
  try {
    await until(() => holder.out().includes('open') || holder.child.exitCode !== null, 'the holder to open the file', 60_000);
    assert.equal(holder.child.exitCode, null, holder.err());
    const inUse = (e: unknown) => e instanceof DataFormatError && /is in use by another process \(PID \d+\) for more than 0\.3 s/.test(e.message);
    await assert.rejects(PrivacyLedger.open(path, BUDGET, { lockTimeoutMs: 300 }), inUse);
    await assert.rejects(PrivacyLedger.openReadOnly(path, { lockTimeoutMs: 300 }), inUse);
  } finally {
    holder.child.stdin.end();
    await holder.exit;
  }
  assert.match(holder.out(), /done/);
  // Released: this process can open it now.
  await (await PrivacyLedger.open(path, BUDGET)).close();
});

test('dpfit ledger show prints the budget, what was spent and one line per release (and --json); a missing file is exit 3', async () => {
  const path = join(dir(), 'a.ledger');
  const ledger = await PrivacyLedger.open(path, BUDGET);
  await ledger.reserve({ client: 'coordinator A', description: 'dpgd session 1', event: gaussianEvent(10), extraDelta: 0 });
  await ledger.reserve({ client: 'evil\n\u001b[31mclient', description: 'rgm session\nfake line', event: laplaceEvent(50), extraDelta: 2e-6 });
  await ledger.reserve({ client: 'coordinator A', description: 'dpgd session 2', event: gaussianEvent(10), extraDelta: 0 });
  const spent = await ledger.spent();
  await ledger.close();

  const empty = join(dir(), 'empty.ledger');
  await (await PrivacyLedger.open(empty, BUDGET)).close();
  const none = await runCli('ledger', 'show', '--ledger', empty);
  assert.equal(none.code, 0, none.stderr);
  assert.match(none.stdout, /budget \(epsilon = 1, delta = 0\.00001\); nothing granted yet/);

  const shown = await runCli('ledger', 'show', '--ledger', path);
  assert.equal(shown.code, 0, shown.stderr);
  const lines = shown.stdout.trimEnd().split('\n');
  assert.equal(lines.length, 4, shown.stdout);
  assert.match(lines[0], /budget \(epsilon = 1, delta = 0\.00001\); spent epsilon = [\d.]+ at delta = 0\.00001 over 3 release\(s\)/);
  assert.match(lines[1], /^ {2}#1 \d{4}-\d\d-\d\dT[\d:.]+Z coordinator A: epsilon [\d.]+ — dpgd session 1$/);
  assert.match(lines[2], /#2 .* evil\\u000a\\u001b\[31mclient: epsilon [\d.]+ \(incl\. delta 0\.000002 outside RDP\) — rgm session\\u000afake line$/);
  assert.match(lines[3], /#3 .* dpgd session 2$/);

  const run = await runCli('ledger', 'show', '--ledger', path, '--json');
  assert.equal(run.code, 0, run.stderr);
  const json = JSON.parse(run.stdout);
  assert.deepEqual(json.budget, BUDGET);
  assert.deepEqual(json.spent, spent);
  assert.deepEqual(
    json.entries.map((e: { id: number; client: string; extraDelta: number }) => [e.id, e.client, e.extraDelta]),
    [
      [1, 'coordinator A', 0],
      [2, 'evil\n\u001b[31mclient', 2e-6],
      [3, 'coordinator A', 0],
    ],
  );
  // Each release alone, by the ledger's rule: a Gaussian exactly, Laplace by RDP at delta - its extra delta.
  assert.equal(json.entries[0].epsilon, spentBudget([entry(gaussianEvent(10))], BUDGET).epsilon);
  assert.equal(json.entries[1].epsilon, rdpEpsilon(laplaceEvent(50), BUDGET.delta - 2e-6 * (1 + 4 * Number.EPSILON)).epsilon);
  assert.deepEqual(json.entries[0].event, { kind: 'gaussian', noiseMultiplier: 10 });
  assert.ok(json.entries[0].epsilon < json.spent.epsilon);

  const missing = await runCli('ledger', 'show', '--ledger', join(dir(), 'none.ledger'));
  assert.equal(missing.code, 3);
  assert.equal(missing.stdout, '');
  assert.match(missing.stderr, /none\.ledger: no such ledger file/);
  assert.equal(missing.stderr.trim().split('\n').length, 1);
});
