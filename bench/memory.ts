/**
 * Peak memory of training: `dpfit train --method dpgd` on a 2e6 x 20 CSV, measured as
 * the maximum resident set size of the process (`/usr/bin/time -f %M`), next to the numeric data
 * size n (d + 1) 8 bytes (the features and labels as float64). Target: at most 1.5x. Two builds:
 * the compiled JavaScript that `bin/dpfit.js` runs (compiled by tsc into .bench-cache/dist for
 * this bench) and the sources through tsx (whose loader adds ~40 MiB, in the worker thread too).
 * The bare start-up of each (`--version`) is printed, since it is part of the peak.
 *
 * The CSV and the build are written to .bench-cache/ (gitignored; never committed).
 * `npm run bench -- memory`, or `node --import tsx bench/memory.ts [ROWS]`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SYNTHETIC_FEATURES, writeSyntheticCsv } from './synthetic-csv.js';

const D = SYNTHETIC_FEATURES;
const CACHE = join(process.cwd(), '.bench-cache');


/** Peak RSS in bytes of `node COMMAND ARGS`, or undefined without /usr/bin/time. */
function peakRss(command: string[], args: string[]): { bytes: number; status: number | null; stderr: string } | undefined {
  if (!existsSync('/usr/bin/time')) return undefined;
  const run = spawnSync('/usr/bin/time', ['-f', 'peak-rss-kb %M', process.execPath, ...command, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const m = /peak-rss-kb (\d+)/.exec(run.stderr);
  if (m === null) return undefined;
  return { bytes: Number(m[1]) * 1024, status: run.status, stderr: run.stderr.replace(/peak-rss-kb \d+\s*$/, '').trim() };
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

export async function runMemoryBench(rows = 2_000_000): Promise<void> {
  mkdirSync(CACHE, { recursive: true });
  const csv = join(CACHE, `train-${rows}x${D}.csv`);
  const schema = join(CACHE, `train-${D}.schema.json`);
  if (!existsSync(csv)) {
    process.stdout.write(`generating ${csv} (once)...\n`);
    await writeSyntheticCsv(`${csv}.tmp`, rows);
    const { renameSync } = await import('node:fs');
    renameSync(`${csv}.tmp`, csv);
  }
  writeFileSync(schema, JSON.stringify({
    version: 1,
    rowTransform: 'normalize',
    columns: [
      ...Array.from({ length: D }, (_, j) => ({ name: `x${j}`, type: 'numeric', lower: -1, upper: 1 })),
      { name: 'y', type: 'label', positive: ['yes'], negative: ['no'] },
    ],
  }));
  const numeric = rows * (D + 1) * 8;
  process.stdout.write(`peak RSS of dpfit train --method dpgd on ${rows} x ${D} (CSV ${mb(statSync(csv).size)}; numeric data n (d + 1) 8 bytes = ${mb(numeric)})\n`);
  // The compiled build, as bin/dpfit.js runs it (tsc into .bench-cache/dist; a runner beside it resolves node_modules).
  const tsc = spawnSync(process.execPath, [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json', '--outDir', join(CACHE, 'dist')], { encoding: 'utf8' });
  const runner = join(CACHE, 'run-dpfit.mjs');
  writeFileSync(runner, "const { main } = await import('./dist/cli/main.js');\nprocess.exitCode = await main(process.argv.slice(2));\n");
  const builds: [string, string[]][] = [['sources through tsx', ['--import', 'tsx', 'src/cli/main.ts']]];
  if (existsSync(join(CACHE, 'dist', 'cli', 'main.js'))) builds.unshift(['compiled (what bin/dpfit.js runs)', [runner]]);
  else process.stdout.write(`  compiled build: tsc failed (${tsc.stdout.split('\n')[0]}); sources only\n`);
  const train = ['train', '--data', csv, '--schema', schema, '--method', 'dpgd', '--steps', '3', '--epsilon', '1', '--json'];
  for (const [name, command] of builds) {
    const bare = peakRss(command, ['--version']);
    if (bare === undefined) {
      process.stdout.write('  /usr/bin/time not available: skipped\n');
      return;
    }
    const run = peakRss(command, train);
    if (run === undefined || run.status !== 0) {
      process.stdout.write(`  ${name}: failed (${run?.stderr.split('\n').pop() ?? 'no output'})\n`);
      continue;
    }
    process.stdout.write(`  ${name}: ${mb(run.bytes)} = ${(run.bytes / numeric).toFixed(2)}x the numeric data (target <= 1.5x); start-up alone ${mb(bare.bytes)}\n`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runMemoryBench(process.argv[2] === undefined ? undefined : Number(process.argv[2]));
