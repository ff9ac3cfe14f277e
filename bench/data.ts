/**
 * Reading a 1e6 x 20 numeric CSV (the issue's target: at most ~2.5 s on these machines): dpfit's
 * built-in reader, with declared and with inferred column types, next to papaparse (the baseline a
 * JS programmer reaches for) and DuckDB's reader, all measured in the same run on the same file
 * (docs/design.md, "Benchmarks": ratios mean more than absolute times here).
 * `npm run bench -- data`, or standalone: `node --import tsx bench/data.ts`.
 *
 * The file (~208 MB: 1e6 rows of 20 values with 6 decimals, plus a header) is generated from a
 * seeded generator in a temporary directory and deleted at the end. Each reader runs 3 times; the
 * median is printed. Every reader's result is checked against the others (same row count, same
 * column sums) so that no reader is timed doing less work.
 */
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Papa from 'papaparse';
import { readCsvWithDuckDb } from '../src/data/node/duckdb.js';
import { readCsvFile } from '../src/data/node/read.js';
import { numericTableToDataset, type RawTable } from '../src/data/table.js';
import { seededRng } from '../src/random/rng.js';

const ROWS = 1_000_000;
const COLUMNS = 20;
const RUNS = 3;

/** Writes the benchmark CSV: header c1..c20 (c20 is used as the label), values in (-100, 100) with 6 decimals. */
async function writeCsv(path: string): Promise<void> {
  const rng = seededRng(20261122);
  const out = createWriteStream(path);
  out.write(`${Array.from({ length: COLUMNS }, (_, j) => `c${j + 1}`).join(',')}\n`);
  let block = '';
  for (let i = 0; i < ROWS; i++) {
    let line = '';
    for (let j = 0; j < COLUMNS; j++) line += (j > 0 ? ',' : '') + (rng.nextDouble() * 200 - 100).toFixed(6);
    block += `${line}\n`;
    if (block.length > 1 << 20) {
      if (!out.write(block)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      block = '';
    }
  }
  out.write(block);
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
}

function columnSums(table: RawTable): number[] {
  return table.columns.map((c) => {
    if (c.kind !== 'numeric') return NaN;
    let s = 0;
    for (const v of c.values) s += v;
    return s;
  });
}

async function median(run: () => Promise<number[]>): Promise<{ seconds: number; sums: number[] }> {
  const times: number[] = [];
  let sums: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const start = performance.now();
    sums = await run();
    times.push((performance.now() - start) / 1000);
  }
  times.sort((a, b) => a - b);
  return { seconds: times[Math.floor(RUNS / 2)], sums };
}

export async function runDataBench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'dpfit-bench-data-'));
  const path = join(dir, 'numeric-1e6x20.csv');
  try {
    const generated = performance.now();
    await writeCsv(path);
    const size = (await stat(path)).size;
    process.stdout.write(`file: ${ROWS} rows x ${COLUMNS} columns, ${(size / 1e6).toFixed(0)} MB (generated in ${((performance.now() - generated) / 1000).toFixed(1)} s)\n`);

    const cases: { name: string; run: () => Promise<number[]> }[] = [
      {
        name: 'dpfit readCsvFile, declared numeric',
        run: async () => columnSums(await readCsvFile(path, { columnTypes: 'numeric' })),
      },
      {
        name: 'dpfit readCsvFile, inferred types (sampled, confirmed in 1 pass)',
        run: async () => columnSums(await readCsvFile(path)),
      },
      {
        name: 'dpfit readCsvFile + numericTableToDataset (row-major x, y)',
        run: async () => {
          const table = await readCsvFile(path, { columnTypes: 'numeric' });
          const data = numericTableToDataset(table, { label: `c${COLUMNS}` });
          if (data.n !== ROWS) throw new Error('row count');
          return columnSums(table);
        },
      },
      {
        name: 'dpfit readCsvWithDuckDb, declared numeric (DuckDB threads: default)',
        run: async () => columnSums(await readCsvWithDuckDb(path, { columnTypes: 'numeric' })),
      },
      {
        name: 'papaparse 5.7 (baseline: readFile + parse, dynamicTyping, fastMode)',
        run: async () => {
          const text = await readFile(path, 'utf8');
          const parsed = Papa.parse<number[]>(text, { dynamicTyping: true, skipEmptyLines: true, fastMode: true });
          const rows = parsed.data.slice(1); // header
          const sums = new Array<number>(COLUMNS).fill(0);
          for (const row of rows) for (let j = 0; j < COLUMNS; j++) sums[j] += row[j];
          if (rows.length !== ROWS) throw new Error(`papaparse read ${rows.length} rows`);
          return sums;
        },
      },
    ];

    // papaparse runs last: its ~2e7 boxed values would otherwise be collected during dpfit's runs.
    const results = [];
    for (const c of cases) results.push({ name: c.name, ...(await median(c.run)) });
    const base = results[results.length - 1];
    for (const r of results) {
      for (let j = 0; j < COLUMNS; j++) {
        if (Math.abs(r.sums[j] - base.sums[j]) > 1e-6 * Math.max(1, Math.abs(base.sums[j]))) throw new Error(`${r.name}: column ${j + 1} differs from the baseline`);
      }
    }
    const width = Math.max(...results.map((r) => r.name.length));
    process.stdout.write(`${'reader'.padEnd(width)}  seconds (median of ${RUNS})  vs papaparse\n`);
    for (const r of results) {
      process.stdout.write(`${r.name.padEnd(width)}  ${r.seconds.toFixed(2).padStart(23)}  ${`${(base.seconds / r.seconds).toFixed(2)}x faster`.padStart(12)}\n`);
    }
    const ours = results[0].seconds;
    process.stdout.write(
      `target: <= ~2.5 s for this file (issue "Data"); dpfit ${ours.toFixed(2)} s: ${ours <= 2.5 ? 'met' : 'not met'} in this run. ` +
        `papaparse took ${base.seconds.toFixed(1)} s here (about 2 s for it on an idle machine of this kind).\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runDataBench();
}
