/**
 * The house rules of docs/architecture.md ("Floors and the one-way rule"), held against the code:
 * the import graph of src/ (static, type-only and dynamic imports, as `scripts/import-graph.ts`
 * reads them) has no cycle between files, no cycle between the rooms of any folder (its files and
 * subfolders), no import from a floor to a higher one in the order the document lists, and no
 * folder with more than 15 source files at its root.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');
const MAX_FILES_PER_FOLDER = 15;

/** Every .ts file under `dir`, relative to src/ (`learners/train.ts`). */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts')) out.push(relative(SRC, path));
  }
  return out.sort();
}

/** file -> the src files it imports (relative specifiers only). */
function importEdges(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const targets: string[] = [];
    for (const { fileName } of ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true).importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const base = relative(SRC, resolve(SRC, dirname(file), fileName));
      const target = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')].find((candidate) => known.has(candidate));
      assert.ok(target !== undefined, `${file} imports '${fileName}', which is no source file`);
      targets.push(target);
    }
    edges.set(file, targets);
  }
  return edges;
}

/** The strongly connected components of more than one node (Tarjan). */
function cycles(nodes: Iterable<string>, next: (node: string) => Iterable<string>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop() as string;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) visit(v);
  return found;
}

/** The floors, top first, as docs/architecture.md lists them: each a list of rooms of src/ (`cli/`, `errors.ts`). */
function documentedFloors(): string[][] {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith('Floors and the one-way rule'));
  assert.ok(section !== undefined, 'docs/architecture.md has its section "Floors and the one-way rule"');
  const block = /```text\n([\s\S]*?)```/.exec(section);
  assert.ok(block !== null, 'the section lists the floors in a text block');
  return block[1].trim().split('\n').map((line) => line.split(/\s+/).filter((room) => room.length > 0).map((room) => room.replace(/\/$/, '')));
}

const files = sourceFiles(SRC);
const edges = importEdges(files);

describe("the house: docs/architecture.md's rules hold for src/", () => {
  it('no import cycle between files', () => {
    assert.deepEqual(cycles(files, (f) => edges.get(f) ?? []), []);
  });

  it('no cycle between the rooms of any folder (its files and subfolders): every folder has floors', () => {
    const folders = new Set(files.map((f) => dirname(f)).flatMap((d) => d.split('/').map((_, i, parts) => parts.slice(0, i + 1).join('/'))));
    folders.add('.');
    const problems: string[] = [];
    for (const folder of folders) {
      const prefix = folder === '.' ? '' : `${folder}/`;
      const roomOf = (file: string) => (file.startsWith(prefix) ? file.slice(prefix.length).split('/')[0] : undefined);
      const roomEdges = new Map<string, Set<string>>();
      for (const [from, targets] of edges) {
        const a = roomOf(from);
        if (a === undefined) continue;
        for (const to of targets) {
          const b = roomOf(to);
          if (b === undefined || b === a) continue;
          if (!roomEdges.has(a)) roomEdges.set(a, new Set());
          roomEdges.get(a)?.add(b);
        }
      }
      for (const cycle of cycles(roomEdges.keys(), (room) => roomEdges.get(room) ?? [])) problems.push(`${folder}: ${cycle.join(' <-> ')}`);
    }
    assert.deepEqual(problems, []);
  });

  it('every import goes down the floors of docs/architecture.md, or stays in its own room', () => {
    const floors = documentedFloors();
    const floorOf = new Map(floors.flatMap((rooms, floor) => rooms.map((room) => [room, floor] as const)));
    const rooms = new Set(files.map((f) => f.split('/')[0]));
    assert.deepEqual([...rooms].filter((room) => !floorOf.has(room)).sort(), [], 'every room of src/ is on a floor');
    assert.deepEqual([...floorOf.keys()].filter((room) => !rooms.has(room)).sort(), [], 'every room on a floor exists');
    const upward: string[] = [];
    for (const [from, targets] of edges) {
      const a = from.split('/')[0];
      for (const to of targets) {
        const b = to.split('/')[0];
        // floors are listed top first: a lower floor has a larger index
        if (a !== b && (floorOf.get(b) as number) <= (floorOf.get(a) as number)) upward.push(`${from} -> ${to}`);
      }
    }
    assert.deepEqual(upward, []);
  });

  it(`no folder holds more than ${MAX_FILES_PER_FOLDER} source files at its root`, () => {
    const counts = new Map<string, number>();
    for (const file of files) counts.set(dirname(file), (counts.get(dirname(file)) ?? 0) + 1);
    assert.deepEqual([...counts].filter(([, n]) => n > MAX_FILES_PER_FOLDER).map(([folder, n]) => `src/${folder}: ${n}`), []);
  });
});
