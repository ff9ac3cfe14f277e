/**
 * The import graph of one of dpfit's source modules: every module it reaches through static
 * imports and re-exports, `import type` and dynamic `import('...')` included (a bundler follows a
 * literal dynamic import, and a type-only import puts the module's declarations in a consumer's
 * type graph). Used by test/package/entries.test.ts to hold the browser-safe subpaths
 * (`dpfit/accounting`, `dpfit/mechanisms`, ...) to docs/architecture.md's rule: no `node:`
 * module, nothing under src/data/node, src/cli or src/federated.
 *
 * Usage: node --import tsx scripts/import-graph.ts src/entries/accounting.ts   (prints the graph)
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export interface ImportGraph {
  /** Every source module reached, as a path relative to the repository (`src/...ts`). */
  readonly modules: readonly string[];
  /** Every bare specifier (`node:fs`, `pg`, `@stdlib/...`) with the modules that import it. */
  readonly external: ReadonlyMap<string, readonly string[]>;
  /** For each module reached, the module that first imported it (the entry maps to undefined). */
  readonly parent: ReadonlyMap<string, string | undefined>;
}

/** The `.ts` file a relative specifier (written with `.js`, as NodeNext wants) names. */
function resolveRelative(from: string, specifier: string): string {
  const target = resolve(dirname(from), specifier);
  for (const candidate of [target.replace(/\.js$/, '.ts'), `${target}.ts`, resolve(target, 'index.ts')]) {
    if (existsSync(candidate)) return candidate;
  }
  throw new Error(`${relative(ROOT, from)}: cannot resolve '${specifier}'`);
}

/** Walks the graph from `entry` (a path to a `.ts` file, absolute or relative to the repository). */
export function importGraph(entry: string): ImportGraph {
  const start = resolve(ROOT, entry);
  const parent = new Map<string, string | undefined>([[relative(ROOT, start), undefined]]);
  const external = new Map<string, string[]>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    const name = relative(ROOT, file);
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    for (const { fileName: specifier } of info.importedFiles) {
      if (specifier.startsWith('.')) {
        const target = resolveRelative(file, specifier);
        const targetName = relative(ROOT, target);
        if (!parent.has(targetName)) {
          parent.set(targetName, name);
          queue.push(target);
        }
      } else {
        const importers = external.get(specifier) ?? [];
        if (!importers.includes(name)) importers.push(name);
        external.set(specifier, importers);
      }
    }
  }
  return { modules: [...parent.keys()].sort(), external, parent };
}

/** The chain of imports from the entry to `module`, for error messages. */
export function importChain(graph: ImportGraph, module: string): string {
  const chain: string[] = [];
  for (let at: string | undefined = module; at !== undefined; at = graph.parent.get(at)) chain.unshift(at);
  return chain.join(' -> ');
}

const isEntryPoint = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isEntryPoint) {
  for (const entry of process.argv.slice(2)) {
    const graph = importGraph(entry);
    process.stdout.write(`${entry}: ${graph.modules.length} modules\n`);
    for (const module of graph.modules) process.stdout.write(`  ${module}\n`);
    for (const [specifier, importers] of graph.external) process.stdout.write(`  external ${specifier} <- ${importers.join(', ')}\n`);
  }
}
