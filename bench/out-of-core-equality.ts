/**
 * The out-of-core check at full size (the tests run it on a 38 MB file): a run under a memory cap
 * must train on every row, as the in-memory run does.
 *
 *   node --import tsx bench/out-of-core-equality.ts [--rows N] [--caps 64MiB,256MB] [--steps T] [--format csv|parquet] [--method dpgd|dpsgd] [--dir DIR]
 *
 * Writes N x 20 seeded random numbers and a 0/1 label (DuckDB, `setseed`) as CSV (or Parquet) in
 * DIR (default: a temp dir, removed at the end), then runs `dpfit train --json --seed 1` in memory
 * and with `--max-memory CAP` for each cap, each as a child under /usr/bin/time (peak RSS), and
 * prints per run the rows trained on (from --diagnostics), the time, the peak RSS, and whether
 * stdout and the model file are the in-memory run's byte for byte. Before DuckDB streams were
 * checked against a count of their rows, `--max-memory 256MB` on the 2e6-row CSV trained on 165380
 * rows and printed its report anyway.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parseMemorySize } from '../src/data/node/stream-rows.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const k = args.indexOf(name);
  return k >= 0 ? args[k + 1] : fallback;
};
const rows = Number(flag('--rows', '2000000'));
const caps = flag('--caps', '64MiB,256MB').split(',');
const steps = flag('--steps', '2');
const format = flag('--format', 'csv');
const method = flag('--method', 'dpgd');
const given = flag('--dir', '');
const dir = given === '' ? mkdtempSync(join(tmpdir(), 'dpfit-bench-ooc-eq-')) : given;
if (given !== '') mkdirSync(dir, { recursive: true });
const D = 20;
const columns = Array.from({ length: D }, (_, j) => `x${j}`);

try {
  const data = join(dir, `rows-${rows}.${format}`);
  const schemaPath = join(dir, 'schema.json');
  writeFileSync(schemaPath, JSON.stringify({ version: 1, provenance: 'declared', columns: [...columns.map((name) => ({ name, type: 'numeric', lower: -1, upper: 1 })), { name: 'y', type: 'label', positive: [1], negative: [0] }] }));
  if (!existsSync(data)) {
    const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
    const connection = await instance.connect();
    await connection.run('SELECT setseed(0.5)');
    const select = `SELECT ${columns.map((c) => `round(random() * 2 - 1, 6) AS ${c}`).join(', ')}, CAST(random() < 0.5 AS INTEGER) AS y FROM range(${rows})`;
    await connection.run(`COPY (${select}) TO '${data}' (FORMAT ${format === 'csv' ? 'csv, HEADER true' : 'parquet'})`);
    connection.closeSync();
    instance.closeSync();
  }
  console.log(`${rows} x ${D} ${format}, ${(statSync(data).size / 2 ** 20).toFixed(0)} MiB; dpfit train --method ${method} --steps ${steps} --seed 1 --json`);

  const train = (cap: string | undefined): { line: string; stdout: string; model: string } => {
    const out = join(dir, 'model.json');
    const diagnostics = join(dir, 'diagnostics.json');
    rmSync(out, { force: true });
    rmSync(diagnostics, { force: true });
    const started = performance.now();
    const run = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, '--import', 'tsx', 'test/helpers/dpfit-process.ts', 'train', '--data', data, '--schema', schemaPath, '--method', method, '--steps', steps,
      '--epsilon', '1', '--delta', '1e-6', '--seed', '1', '--json', '--out', out, '--diagnostics', diagnostics, ...(cap === undefined ? [] : ['--max-memory', cap])], { encoding: 'utf8', maxBuffer: 1 << 26 });
    const seconds = (performance.now() - started) / 1000;
    const peakMiB = Number(run.stderr.trim().split('\n').pop()) / 1024;
    const trained = existsSync(diagnostics) ? JSON.parse(readFileSync(diagnostics, 'utf8')).diagnostics.rows : undefined;
    const capText = cap === undefined ? '' : ` = ${((peakMiB * 2 ** 20) / parseMemorySize('--max-memory', cap)).toFixed(2)}x the cap`;
    const error = run.status === 0 ? '' : `\n    ${run.stderr.split('\n').filter((l) => l.startsWith('dpfit: ') && !l.includes('WARNING')).join(' ')}`;
    const line = `exit ${run.status}, ${trained ?? 'no'} rows trained on, ${seconds.toFixed(1)} s, peak RSS ${peakMiB.toFixed(0)} MiB${capText}${error}`;
    return { line, stdout: run.stdout, model: existsSync(out) ? readFileSync(out, 'utf8') : '' };
  };

  const memory = train(undefined);
  console.log(`  in memory:              ${memory.line}`);
  for (const cap of caps) {
    const streamed = train(cap);
    const same = streamed.stdout !== '' && streamed.stdout === memory.stdout && streamed.model === memory.model;
    console.log(`  --max-memory ${cap.padEnd(9)} ${streamed.line}; stdout and model file ${same ? 'EQUAL to the in-memory run\'s, byte for byte' : 'DIFFER from the in-memory run\'s'}`);
  }
} finally {
  if (given === '') rmSync(dir, { recursive: true, force: true });
}
