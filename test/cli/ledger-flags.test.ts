/**
 * A privacy budget across runs (`src/cli/ledger-flags.ts`, `dpfit train --ledger`, issue 27):
 *   - five `train` runs on one ledger, the sixth refused with exit 4 BEFORE any data are read (its
 *     --data is a path that does not exist, then a FIFO nobody writes to: reading either would
 *     fail or block, so the refusal came first); the budget's fit is checked by composing the
 *     five model files' events independently of the ledger (exact Gaussian composition and RDP);
 *     with dpgd (Gaussians) and with amp (objective perturbation and a Gaussian, RDP), whose
 *     budget is set from the release planned from the schema alone, which every model file and
 *     ledger entry then carries;
 *   - four amp runs in separate processes racing for a budget that fits two: exactly two train,
 *     two are refused (exit 4, no model), the ledger holds two entries within the budget;
 *   - the budget flags' rules ($DPFIT_LEDGER, a new ledger needs both, a raise is refused,
 *     --dataset-size is required); a run with no guarantee (objpert, --seed) is charged as
 *     non-private: a finite budget refuses it before reading, saying why;
 *   - one ledger holds one neighbouring relation: after dpsgd, dpgd and output are refused before
 *     reading, amp is granted, and the file keeps the relation;
 *   - a run killed (SIGKILL) between its reservation and its release leaves the reservation counted;
 *   - `dpfit ledger show` while a `dpfit node serve` process uses the ledger, and the node's
 *     `GET /budget` answers the same object.
 * Every method, one-vs-rest, --tune, --max-memory and --db: test/cli/ledger-methods.test.ts.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { composeEvent } from '../../src/accounting/events/constructors.js';
import type { DpEvent } from '../../src/accounting/events/types.js';
import { gaussianCompositionEpsilon } from '../../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../src/accounting/rdp/accountant.js';
import { eventToJson, parseEvent } from '../../src/accounting/events/json.js';
import { parseSchema } from '../../src/data/schema/parse.js';
import { schemaFeatureNames, schemaLabelBound, schemaRowNormBound } from '../../src/data/schema/bounds.js';
import { PrivacyLedger } from '../../src/federated/ledger.js';
import { plannedTrainingRelease, type TrainOptions } from '../../src/learners/train.js';
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

/** The release `dpfit train --method amp --epsilon E --delta 1e-5` plans on the people schema, from the schema alone (what the CLI reserves). */
function plannedAmpEvent(schemaFile: string, epsilon: number): DpEvent {
  const schema = parseSchema(JSON.parse(readFileSync(schemaFile, 'utf8')));
  const featureNames = schemaFeatureNames(schema);
  const shape = { d: featureNames.length, featureNames, bounds: { rowNormBound: schemaRowNormBound(schema), labelBound: schemaLabelBound(schema) } };
  return plannedTrainingRelease(shape, { method: 'amp', loss: 'logistic', epsilon, delta: 1e-5 } as TrainOptions).planned.event;
}

/** A budget between what five and six `event`s spend (RDP, or exact for Gaussians), three significant digits. */
function budgetForFive(event: DpEvent, delta: number): number {
  const five = composedEpsilon(Array(5).fill(event), delta);
  const six = composedEpsilon(Array(6).fill(event), delta);
  const budget = Number(((five + six) / 2).toPrecision(3));
  assert.ok(five <= budget && budget < six, `${five} ${budget} ${six}`);
  return budget;
}

test('five amp runs on one ledger, the sixth refused (exit 4) before reading its data; each entry is the model\'s event', { timeout: 300_000 }, async () => {
  const f = peopleFixture('dpfit-ledger-amp-', 400, 8);
  const ledger = join(f.dir, 'owner.ledger');
  // AMP uses no n (its release keeps it private): no --dataset-size.
  const args = (data: string, out: string) => ['train', '--data', data, '--schema', f.schema, '--method', 'amp', '--epsilon', '0.5', '--delta', '1e-5', '--ledger', ledger, '--out', out, '--json'];
  const planned = plannedAmpEvent(f.schema, 0.5);
  const budget = budgetForFive(planned, BUDGET_DELTA);
  for (let i = 1; i <= 5; i++) {
    const extra = i === 1 ? ['--budget-epsilon', String(budget), '--budget-delta', String(BUDGET_DELTA)] : [];
    const run = await runCli(...args(f.data, join(f.dir, `m${i}.json`)), ...extra);
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(readFileSync(join(f.dir, `m${i}.json`), 'utf8')).privacy.event, eventToJson(planned));
  }
  for (const data of [join(f.dir, 'absent.csv'), join(f.dir, 'fifo.csv')]) {
    if (data.endsWith('fifo.csv')) execFileSync('mkfifo', [data]);
    const sixth = await runCli(...args(data, join(f.dir, 'm6.json')));
    assert.equal(sixth.code, 4, sixth.stderr);
    assert.equal(sixth.stderr.trim().split('\n').length, 1);
    assert.match(sixth.stderr, new RegExp(`this run is refused, nothing was read or released: over the privacy budget \\(epsilon ${budget}, delta 0\\.00001\\): spent epsilon [\\d.]+ over 5 release\\(s\\)`));
    assert.equal(existsSync(join(f.dir, 'm6.json')), false);
  }
  const shown = JSON.parse((await runCli('ledger', 'show', ledger, '--json')).stdout);
  assert.equal(shown.spent.entries, 5);
  for (const entry of shown.entries) assert.deepEqual(entry.event, eventToJson(planned));
  assert.ok(shown.spent.epsilon <= budget);
});

test('concurrent amp runs in separate processes never overspend: exactly the k that fit train, the others are refused (exit 4)', { timeout: 300_000 }, async () => {
  const f = peopleFixture('dpfit-ledger-race-', 300, 9);
  const ledger = join(f.dir, 'race.ledger');
  const planned = plannedAmpEvent(f.schema, 1);
  // A budget that fits exactly k = 2 of the four runs (computed independently of the ledger).
  const two = composedEpsilon([planned, planned], BUDGET_DELTA);
  const three = composedEpsilon([planned, planned, planned], BUDGET_DELTA);
  const budget = Number(((two + three) / 2).toPrecision(3));
  assert.ok(two <= budget && budget < three);
  // Created once, by an empty open (the processes race on reservations only).
  await (await PrivacyLedger.open(ledger, { epsilon: budget, delta: BUDGET_DELTA })).close();
  const runs = Array.from({ length: 4 }, (_, i) =>
    dpfitProcess(['train', '--data', f.data, '--schema', f.schema, '--method', 'amp', '--epsilon', '1', '--delta', '1e-5', '--ledger', ledger, '--out', join(f.dir, `m${i}.json`), '--json']),
  );
  const codes = await Promise.all(runs.map((r) => r.exit));
  assert.deepEqual([...codes].sort(), [0, 0, 4, 4], runs.map((r) => r.stderr()).join('\n'));
  runs.forEach((r, i) => {
    assert.equal(existsSync(join(f.dir, `m${i}.json`)), codes[i] === 0);
    if (codes[i] === 4) assert.match(r.stderr(), /this run is refused, nothing was read or released: over the privacy budget/);
  });
  const shown = JSON.parse((await runCli('ledger', 'show', ledger, '--json')).stdout);
  assert.equal(shown.spent.entries, 2);
  assert.ok(shown.spent.epsilon <= budget);
  assert.deepEqual(new Set(shown.entries.map((e: { client: string }) => /pid (\d+)/.exec(e.client)?.[1])).size, 2, 'two processes hold the two grants');
});

test('the budget flags: $DPFIT_LEDGER, a new ledger needs both, no raise, a declared --dataset-size; a run with no guarantee is charged as non-private', { timeout: 120_000 }, async () => {
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
  // A run known to have no guarantee is charged as non-private: a finite budget refuses it before reading (--data is absent).
  const absent = join(f.dir, 'absent.csv');
  const charged = join(f.dir, 'charged.ledger');
  const budgetFlags = ['--ledger', charged, '--budget-epsilon', '1', '--budget-delta', '1e-5'];
  await expectExit(4, /needs epsilon Infinity on its own.*charged as a non-private release, which only --budget-epsilon Infinity holds: --method objpert has no guarantee/, 'train', '--data', absent, '--schema', f.schema, '--method', 'objpert', '--accept-no-guarantee', '--epsilon', '0.5', '--delta', '1e-5', ...budgetFlags);
  await expectExit(4, /charged as a non-private release.*--seed makes the noise reproducible/, 'train', '--data', absent, '--schema', f.schema, '--method', 'dpgd', '--epsilon', '0.5', '--delta', '1e-5', '--dataset-size', '200', '--seed', '1', ...budgetFlags);
  assert.equal(JSON.parse((await runCli('ledger', 'show', charged, '--json')).stdout).spent.entries, 0);
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

test('one ledger, one neighbouring relation: after a dpsgd run (add/remove-one) a dpgd run (replace-one) is refused before reading; the file keeps the relation', { timeout: 120_000 }, async () => {
  const f = peopleFixture('dpfit-ledger-relation-', 200, 10);
  const ledger = join(f.dir, 'owner.ledger');
  const run = (method: string, data: string, ...extra: string[]) =>
    runCli('train', '--data', data, '--schema', f.schema, '--method', method, '--epsilon', '0.5', '--delta', '1e-5', '--dataset-size', '200', '--ledger', ledger, '--json', ...extra);
  const first = await run('dpsgd', f.data, '--epochs', '1', '--budget-epsilon', '10', '--budget-delta', '1e-5');
  assert.equal(first.code, 0, first.stderr);
  for (const method of ['dpgd', 'output']) {
    const refused = await run(method, join(f.dir, 'absent.csv'));
    assert.equal(refused.code, 4, refused.stderr);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
    assert.match(refused.stderr, /this run is refused, nothing was read or released: not in this budget \(epsilon 10, delta 0\.00001\): its guarantee holds for replaceOne neighbours, and this budget already holds releases for addOrRemoveOne neighbours/);
  }
  // The same relation is granted (amp: add/remove-one); the relation is stored in the file, read by a fresh open.
  assert.equal((await run('amp', f.data)).code, 0);
  const reader = await PrivacyLedger.openReadOnly(ledger);
  const summary = await reader.summary();
  await reader.close();
  assert.equal(summary.relation, 'addOrRemoveOne');
  assert.equal(summary.spent.entries, 2);
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
