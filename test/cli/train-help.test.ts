/**
 * `dpfit train --help` teaches the basics on one screen (issue 27): the flags every run takes, the
 * methods in words, examples; each method's own flags with `--method M --help`; everything with
 * `--help-all`. Paper tags appear only under References.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LEARNERS } from '../../src/learners/registry.js';
import { cliName } from '../../src/learners/learner.js';
import { runCli } from '../helpers/people.js';

const TAG = /\b00[0-4]\b|\bThm\.|\bConj\.|\bLemma\b|\bCor\.|\bAlg\.|\bSec\. \d/;

/** The flags listed in the options block of a help text. */
function flagsOf(help: string): Set<string> {
  const options = help.slice(help.indexOf('Options:'), help.indexOf('\nMethods (--method):'));
  return new Set([...options.matchAll(/^ {2}(?:-\w, )?(--[\w-]+)/gm)].map((m) => m[1] as string));
}

/** Commander attribute name -> flag: clipNorm -> --clip-norm. */
const flag = (attribute: string) => `--${attribute.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

test('train --help: one screen, every method in words, no paper tag outside References', async () => {
  const help = await runCli('train', '--help');
  assert.equal(help.code, 0);
  assert.ok(help.stdout.split('\n').length <= 70, `${help.stdout.split('\n').length} lines`);
  assert.doesNotMatch(help.stdout.slice(0, help.stdout.indexOf('\nReferences:')), TAG);
  for (const learner of LEARNERS) assert.match(help.stdout, new RegExp(`^ {2}${cliName(learner.method)} +${learner.summary.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 'm'));
  assert.match(help.stdout, /dpfit train --method M --help/);
  assert.ok(!flagsOf(help.stdout).has('--batch-size'), 'method flags wait for --method M --help');
});

test('train --method M --help: the common flags and exactly M\'s own (plus tuning for composable runs)', async () => {
  const all = flagsOf((await runCli('train', '--help-all')).stdout);
  const first = flagsOf((await runCli('train', '--help')).stdout);
  for (const learner of LEARNERS) {
    const help = await runCli('train', '--method', cliName(learner.method), '--help');
    assert.equal(help.code, 0);
    const shown = flagsOf(help.stdout);
    for (const attribute of learner.cli.flags) assert.ok(shown.has(flag(attribute)), `${learner.method}: ${flag(attribute)}`);
    for (const f of shown) assert.ok(first.has(f) || learner.cli.flags.map(flag).includes(f) || ['--tune', '--tune-learning-rates', '--validation', '--metric', '--dataset-size'].includes(f), `${learner.method} shows ${f}`);
    assert.equal(shown.has('--tune'), learner.composite !== undefined, `${learner.method}: tuning shown iff its runs compose`);
    assert.ok([...shown].every((f) => all.has(f)));
  }
});

test('train --help-all: every flag and the rules; the same text as --help-all --help', async () => {
  const alone = await runCli('train', '--help-all');
  const withHelp = await runCli('train', '--help-all', '--help');
  assert.equal(alone.code, 0);
  assert.equal(alone.stdout, withHelp.stdout);
  for (const f of ['--db', '--max-memory', '--partition-key', '--batch-size', '--rho', '--tune', '--accept-no-guarantee']) assert.ok(flagsOf(alone.stdout).has(f), f);
  assert.match(alone.stdout, /Limits \(exit 2, before any work\)/);
  assert.doesNotMatch(alone.stdout.slice(0, alone.stdout.indexOf('\nReferences:')), TAG);
});
