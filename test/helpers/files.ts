/**
 * Helpers for tests of what the CLI writes: a snapshot of a directory tree (every entry with its
 * kind, size and SHA-256, hidden temporary files included) to show that a failing command created,
 * removed or changed nothing, and the assertion every failure must pass (its exit status, exactly
 * one line on stderr without a stack trace, nothing on stdout).
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

/** path -> "dir" | "link:TARGET" | "SIZE:SHA256" for every entry below dir. */
export function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      const info = lstatSync(path);
      if (info.isDirectory()) {
        out.set(path, 'dir');
        walk(path);
      } else if (info.isSymbolicLink()) out.set(path, `link:${readlinkSync(path)}`);
      else if (info.isFile()) out.set(path, `${info.size}:${createHash('sha256').update(readFileSync(path)).digest('hex')}`);
      else out.set(path, 'special');
    }
  };
  walk(dir);
  return out;
}

/** What differs between two snapshots: "created P", "changed P", "removed P". */
export function snapshotChanges(before: Map<string, string>, after: Map<string, string>): string[] {
  const diff: string[] = [];
  for (const [path, value] of after) if (before.get(path) !== value) diff.push(before.has(path) ? `changed ${path}` : `created ${path}`);
  for (const path of before.keys()) if (!after.has(path)) diff.push(`removed ${path}`);
  return diff;
}

/**
 * What a CLI run breaks of the failure contract (for the fuzz suites, which collect rather than
 * assert): an exit status outside {0, 2, 3, 4}; on failure, more than one stderr line, a stack trace
 * or "internal error", or a file of the snapshot created, changed or removed.
 */
export function runContractProblems(code: number, stderr: string, before: Map<string, string>, after: Map<string, string>): string[] {
  const problems: string[] = [];
  if (![0, 2, 3, 4].includes(code)) problems.push(`exit ${code}`);
  if (code !== 0) {
    const text = stderr.trimEnd();
    if (text.includes('\n')) problems.push(`${text.split('\n').length} stderr lines`);
    if (/internal error|\n\s+at /.test(stderr)) problems.push('a stack trace or internal error');
    const touched = snapshotChanges(before, after);
    if (touched.length > 0) problems.push(touched.join(', '));
  }
  return problems;
}

/** Asserts that two snapshots are equal, listing what was created, removed or changed. */
export function assertUnchanged(before: Map<string, string>, after: Map<string, string>, what: string): void {
  const diff = snapshotChanges(before, after);
  assert.deepEqual(diff, [], `${what}: ${diff.join(', ')}`);
}

/** A failed command: the exit status, one stderr line matching `pattern` (no stack trace, no "undefined"), empty stdout. */
export function assertFailure(result: { code: number; stdout: string; stderr: string }, code: number, pattern: RegExp, what: string): void {
  assert.equal(result.code, code, `${what}: exit ${result.code}, stderr: ${result.stderr}`);
  assert.equal(result.stdout, '', `${what}: nothing on stdout`);
  const text = result.stderr.replace(/\n$/, '');
  assert.equal(text.split('\n').length, 1, `${what}: one stderr line, got: ${result.stderr}`);
  assert.match(text, /^dpfit: /, what);
  assert.doesNotMatch(text, /\bat .*\.[jt]s:\d+|internal error/, `${what}: no stack trace`);
  assert.doesNotMatch(text, /\bundefined\b/, `${what}: never "undefined"`);
  assert.match(text, pattern, what);
}
