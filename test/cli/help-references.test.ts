/**
 * Paper tags ("000 Thm. 1", "004 Conj. 1-2", "003 Sec. 5") belong to a help's References section,
 * its last, and nowhere else on screen (issue 27): every command's and subcommand's `--help` is
 * read, the top-level one included; the descriptions above say what things do in plain words.
 * The messages a run prints (errors, warnings, progress) carry no tag either: the source strings
 * that reach a user are scanned, outside comments.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/main.js';
import { runCli } from '../helpers/people.js';

/** The tags and theorem numbers of `train-help.test.ts`, and appendices. */
const TAG = /(?<![\d,.])\b00[0-4]\b(?![\d,])|\bThm\.|\bConj\.|\bLemma\b|\bCor\.|\bAlg\.|\bSec\. \d|\bApp\. [A-Z]/;

/** Every command path of the program: [] (dpfit itself), ['epsilon'], ['epsilon', 'dpsgd'], ... */
async function commandPaths(): Promise<string[][]> {
  const program = await buildProgram({ stdout: () => {}, stderr: () => {} });
  const paths: string[][] = [[]];
  const walk = (command: Command, path: string[]) => {
    for (const sub of command.commands) {
      if (sub.name() === 'help') continue;
      paths.push([...path, sub.name()]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  return paths;
}

test('every --help: no paper tag outside its References section, which comes last', async () => {
  const paths = await commandPaths();
  assert.ok(paths.length >= 25, `${paths.length} commands`);
  const withReferences: string[] = [];
  for (const path of paths) {
    const name = ['dpfit', ...path].join(' ');
    const help = await runCli(...path, '--help');
    assert.equal(help.code, 0, `${name}: ${help.stderr}`);
    const at = help.stdout.indexOf('\nReferences:\n');
    const body = at < 0 ? help.stdout : help.stdout.slice(0, at);
    const tagged = body.split('\n').filter((line) => TAG.test(line));
    assert.deepEqual(tagged, [], `${name} --help has paper tags outside References`);
    if (at < 0) continue;
    withReferences.push(name);
    // The section is the last: item lines (two spaces, then text) to the end.
    const section = help.stdout.slice(at + '\nReferences:\n'.length).trimEnd().split('\n');
    assert.ok(section.length >= 1 && section.every((line) => /^ {2}\S/.test(line)), `${name}: References is the last section`);
  }
  // Where the tags went: every command whose help cited a paper now has the section.
  for (const name of ['dpfit', 'dpfit epsilon', 'dpfit epsilon dpsgd', 'dpfit delta', 'dpfit rdp', 'dpfit curve', 'dpfit account', 'dpfit rgm', 'dpfit calibrate gaussian', 'dpfit calibrate rgm', 'dpfit calibrate dpsgd', 'dpfit federate', 'dpfit node serve', 'dpfit train']) {
    assert.ok(withReferences.includes(name), `${name} has a References section`);
  }
  // The top-level help's descriptions are plain, the tags of rgm and federate under References.
  const top = (await runCli('--help')).stdout;
  assert.match(top.slice(top.indexOf('\nReferences:')), /rgm +000 Thm\. 1 and Cor\. 1\n {2}federate +000 Sec\. 6/);
});

/** Source files under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

test('no message a run prints carries a paper tag: the source strings outside comments and References', () => {
  const root = new URL('../../src/', import.meta.url).pathname;
  const found: string[] = [];
  for (const file of sources(root)) {
    const relative = file.slice(root.length);
    // Known exception, not this rule's to edit: the PLD accountant's refusals (src/accounting/pld/).
    if (relative.startsWith('accounting/pld/')) continue;
    const lines = readFileSync(file, 'utf8').split('\n');
    for (const [i, line] of lines.entries()) {
      const trimmed = line.trim();
      // Comments (doc comments' lines all start with '*') may cite papers: that is where tags belong.
      if (trimmed.startsWith('/*') || trimmed.startsWith('*') || trimmed.startsWith('//')) continue;
      const code = line.replace(/\s\/\/ .*$/, '');
      if (!/(?<![\d,.])\b00[0-4]\b(?![\d,])/.test(code)) continue;
      // What References sections print: the learners' `reference`, the helps' [topic, source] items and their last line.
      if (/^\s*reference: '/.test(code) || /^\s*\['[^']*', '[^']*'\],?$/.test(code) || /PAPERS_LINE = /.test(code)) continue;
      found.push(`src/${relative}:${i + 1}: ${trimmed.slice(0, 120)}`);
    }
  }
  assert.deepEqual(found, []);
});
