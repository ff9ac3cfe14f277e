/**
 * Neighbour test of `dpfit audit --one-run` as a command (docs/threat-model.md, "The one-run
 * audit"): run on two neighbouring data FILES (DP-GD: one row replaced; DP-SGD with a declared
 * --dataset-size: one row removed), with --json and as text, each with its own --ledger, and
 * compare everything its adversary observes — exit status, stdout, stderr, the ledger's entries
 * (event, relation, description, budget, spent) — but the audit's noisy numbers (the right
 * guesses, the bound computed from them, and whether it exceeds the claim), which are
 * post-processing of the accounted training. The canaries, their count, the guesses' count and
 * the accountant's epsilon are fixed before the data are read. The library's own neighbour test is
 * in test/audit/one-run.test.ts (seeded, the same numbers but the post-processed ones).
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { assertIndistinguishable, observedText } from '../helpers/neighbour-diff.js';
import { peopleFixture, runCli } from '../helpers/people.js';

const fixture = peopleFixture('dpfit-audit-one-run-nb-', 1200, 31);
const [header, first, ...rest] = fixture.lines;
const replaced = join(fixture.dir, 'replaced.csv');
writeFileSync(replaced, `${[header, '79,1,yes', ...rest].join('\n')}\n`);
const removed = join(fixture.dir, 'removed.csv');
writeFileSync(removed, `${[header, ...rest].join('\n')}\n`);
assert.ok(first !== '79,1,yes');

/** The text report's noisy parts: the bound, REFUTED or not, and the right guesses. */
const maskText = (text: string) =>
  text
    .replace(/epsilon >= [\d.e+-]+/, 'epsilon >= <noisy>')
    .replace(/ {2}(REFUTED|not refuted)/, '  <noisy>')
    .replace(/guesses {4}\d+ right/, 'guesses    <noisy> right');

async function observe(data: string, method: 'dpgd' | 'dpsgd', args: readonly string[], tag: string) {
  const ledger = join(fixture.dir, `${tag}.ledger`);
  const common = ['audit', '--one-run', '--method', method, '--epsilon', '4', '--delta', '1e-5', '--data', data, '--schema', fixture.schema, '--canaries', '100', '--dataset-size', '1200', ...args, '--ledger', ledger, '--budget-epsilon', '20', '--budget-delta', '1e-4'];
  const json = await runCli(...common, '--json');
  const text = await runCli(...common);
  const shown = await runCli('ledger', 'show', ledger, '--json');
  const ledgerView = JSON.parse(shown.stdout) as { entries: Record<string, unknown>[] } & Record<string, unknown>;
  return {
    json: { code: json.code, stdout: observedText(json.stdout), stderr: json.stderr },
    text: { code: text.code, stdout: maskText(text.stdout).split('\n'), stderr: text.stderr },
    ledger: { ...ledgerView, entries: ledgerView.entries.map(({ event, relation, description, extraDelta }) => ({ event, relation, description, extraDelta })) },
  };
}

/** The noisy numbers, and the ledger's own file name (the test's choice, not the data's). */
const NOISY = { released: ['json.stdout.epsilonLower', 'json.stdout.correct', 'json.stdout.violated'], volatile: ['ledger.ledger'] };

test('audit --one-run on neighbouring files: the same status, output, errors and ledger but the noisy numbers', { timeout: 240_000 }, async () => {
  const a = await observe(fixture.data, 'dpgd', ['--steps', '10'], 'gd-a');
  const b = await observe(replaced, 'dpgd', ['--steps', '10'], 'gd-b');
  assert.equal(a.json.code, 0, a.json.stderr);
  assert.equal(a.ledger.entries.length, 2);
  assertIndistinguishable(a, b, NOISY, 'audit --one-run, dpgd, a row replaced');
  // DP-SGD with the count declared: one row fewer is the same command (1199 records against a declared 1200 would be refused for dpgd, not for dpsgd).
  const c = await observe(fixture.data, 'dpsgd', ['--epochs', '2', '--batch-size', '100'], 'sgd-a');
  const d = await observe(removed, 'dpsgd', ['--epochs', '2', '--batch-size', '100'], 'sgd-b');
  assert.equal(c.json.code, 0, c.json.stderr);
  assertIndistinguishable(c, d, NOISY, 'audit --one-run, dpsgd, a row removed');
});
