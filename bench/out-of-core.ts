/**
 * Issue 28's loading and out-of-core rows, measured side by side in one run on one file (a
 * seeded 2e6 x 20 CSV with a yes/no label, in .bench-cache/, gitignored):
 *
 * - loading: `loadDataset` as `train --method dpgd` calls it (rows encoded into shared memory),
 *   the same on two threads (the opt-in parallel reader, `data/node/parallel-csv.ts`),
 *   `loadDataset` with its default store, dpfit's raw CSV reader (`readCsvFile`, no encoding),
 *   `loadDataset` as train and on two threads run from the TypeScript sources (tsx compiles the
 *   modules, the worker's included: what the built package does not pay),
 *   and the peer, polars' `read_csv` (nodejs-polars: set DPFIT_POLARS_PATH to a directory where
 *   `npm i -E nodejs-polars@0.25.2 nodejs-polars-linux-x64-gnu@0.25.2` was run, or have it
 *   resolvable from here; absent, the row says so). Each reader runs in a fresh process (so each
 *   pays for its fresh memory, as a user's run does), 5 rounds interleaved (3 for the steps), medians printed.
 *   The loaders run the built package (`dist/`, what users run: `npm run build` first) when it is
 *   newer than every source file, else the sources through tsx (the output says which).
 * - out of core: the opening pass of `openStreamedDataset` under a forced `--max-memory` (encodes
 *   every record once into the temporary file) against `loadDataset`, and a DP-GD step out of
 *   core against a step in memory (the worker pool on every CPU, as `dpfit train` runs it), in
 *   one process per round, their runs interleaved, medians of the steps after each run's first;
 *   and beside them the physical limit: the copy of the features from the page cache alone (the
 *   temporary file read in the steps' blocks on one thread, timed like a step), against which
 *   the out-of-core step's CPU splits into the copy and the kernels' work.
 *
 * Wall-clock seconds and CPU seconds are printed with ratios, and the machine (CPU model, CPUs,
 * load average before and after). `npm run bench -- ooc [ROWS]`, or
 * `node --import tsx bench/out-of-core.ts [ROWS]`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { seededRng } from '../src/random/rng.js';
import { SYNTHETIC_FEATURES, writeSyntheticCsv } from './synthetic-csv.js';
import { recordSpeed } from './speed-summary.js';

const D = SYNTHETIC_FEATURES;
const CACHE = join(process.cwd(), '.bench-cache');
const ROUNDS = 3;
/** Rounds of the loaders (a few seconds each; their ratios move by 10-20 % from round to round on a shared machine). */
const LOAD_ROUNDS = 5;
const STEPS = 5;
/** Interleaved runs per process (out of core, then in memory). */
const RUNS = 3;
/** The forced cap of the out-of-core runs. */
const MAX_MEMORY = '512MB';


const SCHEMA = {
  version: 1,
  rowTransform: 'normalize',
  columns: [...Array.from({ length: D }, (_, j) => ({ name: `x${j}`, type: 'numeric', lower: -1, upper: 1 })), { name: 'y', type: 'label', positive: ['yes'], negative: ['no'] }],
};

/** nodejs-polars, from DPFIT_POLARS_PATH or from here; undefined when absent. */
function polars(): { readCSV(path: string): { height: number } } | undefined {
  for (const base of [process.env.DPFIT_POLARS_PATH, process.cwd()]) {
    if (base === undefined || base === '') continue;
    try {
      return createRequire(join(resolve(base), 'package.json'))('nodejs-polars');
    } catch {
      // not there
    }
  }
  return undefined;
}

function cpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** The compiled package beside the sources, when every source file is older than it. */
function builtRoot(): string | undefined {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const built = join(root, 'dist', 'data', 'node', 'read.js');
  if (!existsSync(built)) return undefined;
  const builtAt = statSync(built).mtimeMs;
  const newest = (dir: string): number => Math.max(0, ...readdirSync(dir, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(join(dir, e.name)) : e.name.endsWith('.ts') ? statSync(join(dir, e.name)).mtimeMs : 0)));
  return newest(join(root, 'src')) <= builtAt ? '../dist' : undefined;
}

/** The loaders' modules: from the built package (`root` '../dist') or the sources ('../src', through tsx). */
async function loaderModules(root: string) {
  const from = <T>(path: string): Promise<T> => import(new URL(`${root}/${path}`, import.meta.url).href) as Promise<T>;
  return {
    read: await from<typeof import('../src/data/node/read.js')>('data/node/read.js'),
    parallel: await from<typeof import('../src/data/node/parallel-csv.js')>('data/node/parallel-csv.js'),
    memory: await from<typeof import('../src/learners/glm/kernels/feature-memory.js')>('learners/glm/kernels/feature-memory.js'),
  };
}

/** One measurement in this (child) process; prints one JSON line. */
async function child(what: string, csv: string, schemaPath: string, rows: number): Promise<void> {
  const modules = await loaderModules(process.env.DPFIT_BENCH_ROOT ?? '../src');
  const { loadDataset, readCsvFile, readSchemaFile } = modules.read;
  const schema = await readSchemaFile(schemaPath);
  const { growingFeatures } = modules.memory;
  const time = async <T>(run: () => Promise<T> | T): Promise<{ wall: number; cpu: number; value: T }> => {
    const cpu = cpuSeconds();
    const wall = performance.now();
    const value = await run();
    return { wall: (performance.now() - wall) / 1000, cpu: cpuSeconds() - cpu, value };
  };
  const print = (result: Record<string, unknown>): void => {
    process.stdout.write(`${JSON.stringify(result)}\n`);
  };
  if (what === 'polars') {
    const pl = polars();
    if (pl === undefined) return print({ absent: true });
    const { wall, cpu, value } = await time(() => pl.readCSV(csv));
    if (value.height !== rows) throw new Error(`polars read ${value.height} rows`);
    return print({ wall, cpu });
  }
  if (what === 'raw') {
    const { wall, cpu, value } = await time(() => readCsvFile(csv));
    if (value.rowCount !== rows) throw new Error('rows');
    return print({ wall, cpu });
  }
  if (what.startsWith('load-')) {
    // load-train: as train --method dpgd (the store in shared memory); load-parallel: the same with the opt-in reader on two threads, polars' thread count here.
    const parallel = what.startsWith('load-parallel') ? { parallel: modules.parallel.encodeCsvParallel, threads: 2 } : {};
    const options = what === 'load-default' ? {} : { features: growingFeatures, ...parallel };
    const { wall, cpu, value } = await time(() => loadDataset(csv, schema, { droppedRows: 'zeroRows', ...options }));
    if (value.dataset.n !== rows) throw new Error('rows');
    return print({ wall, cpu });
  }
  // 'steps': the opening pass and the out-of-core steps, then loadDataset and the in-memory steps, in one process.
  const { openStreamedDataset, parseMemorySize } = await import('../src/data/node/stream-rows.js');
  const { trainDpGdStreamed } = await import('../src/learners/gradient/streamed.js');
  const { trainDpGd } = await import('../src/learners/gradient/dp-gd.js');
  const { createClippedGradientPool, poolGradientSummer, shareGlmData } = await import('../src/learners/glm/parallel/parallel-clipped-sum.js');
  const options = { loss: 'logistic', clipNorm: 1, steps: STEPS, learningRate: 1, noiseMultiplier: 1, delta: 1e-6 };
  const stepTimes = (): { onStep: () => void; wall: number[]; cpu: number[]; start: () => void } => {
    let lastWall = 0;
    let lastCpu = 0;
    const wall: number[] = [];
    const cpu: number[] = [];
    return {
      wall,
      cpu,
      start: () => {
        lastWall = performance.now();
        lastCpu = cpuSeconds();
      },
      onStep: () => {
        const nowWall = performance.now();
        const nowCpu = cpuSeconds();
        wall.push((nowWall - lastWall) / 1000);
        cpu.push(nowCpu - lastCpu);
        lastWall = nowWall;
        lastCpu = nowCpu;
      },
    };
  };
  // Both runs as `dpfit train` makes them: the worker pool on every CPU; their runs interleaved
  // (out of core, in memory, out of core, ...) so that both meet the same load.
  const pool = await createClippedGradientPool();
  const outOfCore = stepTimes();
  const inMemory = stepTimes();
  // The physical limit: the copy of every row's features from the page cache (the temporary file,
  // read as the steps read it: blocks of `streamedBlockRows` rows into one buffer that stays in the
  // caches), one thread, timed like a step.
  const copy = stepTimes();
  const { streamedBlockRows } = await import('../src/learners/glm/streamed-chunk.js');
  let streamedTheta: number[] = [];
  let memoryTheta: number[] = [];
  let opened;
  let loaded;
  try {
    opened = await time(() => openStreamedDataset(csv, schema, { maxMemory: parseMemorySize('--max-memory', MAX_MEMORY) }));
    const streamed = opened.value;
    try {
      loaded = await time(() => loadDataset(csv, schema, { droppedRows: 'zeroRows', features: growingFeatures }));
      const data = shareGlmData(loaded.value.dataset);
      for (let run = 0; run < RUNS; run++) {
        outOfCore.start();
        streamedTheta = (await trainDpGdStreamed(streamed.rows, { ...options, rng: seededRng(1), gradientSummer: poolGradientSummer(pool), onStep: outOfCore.onStep })).model.theta as number[];
        inMemory.start();
        memoryTheta = trainDpGd(data, { ...options, rng: seededRng(1), gradientSummer: poolGradientSummer(pool), onStep: inMemory.onStep }).model.theta as number[];
        const stored = streamed.rows.stored;
        if (stored !== undefined) {
          const B = streamedBlockRows(D, stored.precision, stored.segmentRows);
          const block = new Uint8Array(B * D * (stored.precision === 'float64' ? 8 : 4));
          for (let step = 0; step < STEPS; step++) {
            copy.start();
            for (let row = 0; row < rows; row += B) stored.readSync('x', row, Math.min(B, rows - row), block);
            copy.onStep();
          }
        }
      }
    } finally {
      streamed.close();
    }
  } finally {
    await pool.close();
  }
  if (JSON.stringify(streamedTheta) !== JSON.stringify(memoryTheta)) throw new Error('out of core and in memory released different models');
  print({
    firstPass: { wall: opened.wall, cpu: opened.cpu },
    load: { wall: loaded.wall, cpu: loaded.cpu },
    threads: pool.threads,
    outOfCore: { wall: outOfCore.wall, cpu: outOfCore.cpu },
    inMemory: { wall: inMemory.wall, cpu: inMemory.cpu },
    copy: { wall: copy.wall, cpu: copy.cpu },
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function runChild(what: string, csv: string, schemaPath: string, rows: number, root = '../src'): Record<string, unknown> {
  const self = fileURLToPath(import.meta.url);
  const run = spawnSync(process.execPath, ['--import', 'tsx', self, '--child', what, csv, schemaPath, String(rows)], { encoding: 'utf8', maxBuffer: 1 << 24, env: { ...process.env, DPFIT_BENCH_ROOT: root } });
  if (run.status !== 0) throw new Error(`${what}: exit ${run.status}: ${run.stderr.trim().split('\n').slice(-3).join(' ')}`);
  return JSON.parse(run.stdout.trim().split('\n').pop() as string);
}

const seconds = (s: number): string => `${s.toFixed(2)} s`;
const ms = (s: number): string => `${(s * 1000).toFixed(0)} ms`;

export async function runOutOfCoreBench(rows = 2_000_000): Promise<void> {
  mkdirSync(CACHE, { recursive: true });
  const csv = join(CACHE, `ooc-${rows}x${D}.csv`);
  const schemaPath = join(CACHE, `ooc-${D}.schema.json`);
  if (!existsSync(csv)) {
    process.stdout.write(`generating ${csv} (once)...\n`);
    await writeSyntheticCsv(`${csv}.tmp`, rows);
    renameSync(`${csv}.tmp`, csv);
  }
  writeFileSync(schemaPath, JSON.stringify(SCHEMA));
  const model = cpus()[0]?.model ?? 'unknown CPU';
  const before = loadavg();
  process.stdout.write(`machine: ${model}, ${cpus().length} CPUs (nproc ${availableParallelism()}), load average ${before.map((l) => l.toFixed(2)).join(' ')} (1, 5, 15 min) before\n`);
  process.stdout.write(`file: ${rows} x ${D} numbers + a yes/no label, ${(statSync(csv).size / 2 ** 20).toFixed(0)} MiB CSV; interleaved rounds (${LOAD_ROUNDS} of the loaders, ${ROUNDS} of the steps), medians\n`);

  const loaders = ['polars', 'raw', 'load-train', 'load-default', 'load-parallel', 'load-train-sources', 'load-parallel-sources'] as const;
  const built = builtRoot();
  process.stdout.write(built !== undefined ? 'loaders: the built package (dist/)\n' : 'loaders: the sources through tsx (no dist/ newer than src/: run `npm run build` to time what users run)\n');
  const loads: Record<string, { wall: number[]; cpu: number[]; absent?: boolean }> = Object.fromEntries(loaders.map((l) => [l, { wall: [], cpu: [] }]));
  const steps: Record<string, unknown>[] = [];
  for (let round = 0; round < Math.max(ROUNDS, LOAD_ROUNDS); round++) {
    for (const what of round < LOAD_ROUNDS ? loaders : []) {
      const result = runChild(what, csv, schemaPath, rows, what.endsWith('-sources') ? '../src' : (built ?? '../src')) as { wall?: number; cpu?: number; absent?: boolean };
      if (result.absent === true) loads[what].absent = true;
      else {
        loads[what].wall.push(result.wall as number);
        loads[what].cpu.push(result.cpu as number);
      }
    }
    if (round < ROUNDS) steps.push(runChild('steps', csv, schemaPath, rows));
  }
  const names: Record<string, string> = {
    polars: 'polars read_csv (nodejs-polars 0.25.2)',
    raw: 'dpfit readCsvFile (raw columns, no encoding)',
    'load-train': 'dpfit loadDataset, as train --method dpgd',
    'load-default': 'dpfit loadDataset, default store',
    'load-parallel': 'dpfit loadDataset as train, 2 threads (opt-in)',
    'load-train-sources': 'dpfit loadDataset as train, sources via tsx',
    'load-parallel-sources': 'the same on 2 threads, sources via tsx',
  };
  const peer = loads.polars.absent === true ? undefined : { wall: median(loads.polars.wall), cpu: median(loads.polars.cpu) };
  process.stdout.write('\nloading (read + encode), each in a fresh process\n');
  for (const what of loaders) {
    if (loads[what].absent === true) {
      process.stdout.write(`  ${names[what].padEnd(46)} not installed (set DPFIT_POLARS_PATH: see bench/out-of-core.ts)\n`);
      continue;
    }
    const wall = median(loads[what].wall);
    const cpu = median(loads[what].cpu);
    const ratio = peer === undefined || what === 'polars' ? '' : `  = ${(wall / peer.wall).toFixed(2)}x polars' wall, ${(cpu / peer.cpu).toFixed(2)}x its CPU`;
    process.stdout.write(`  ${names[what].padEnd(46)} ${seconds(wall).padStart(8)} wall ${seconds(cpu).padStart(8)} CPU${ratio}\n`);
  }
  if (loads['load-train'].wall.length > 0) {
    const train = { wall: median(loads['load-train'].wall), cpu: median(loads['load-train'].cpu) };
    const work = `loadDataset as train, ${rows} x ${D} CSV${built !== undefined ? '' : ' (sources)'}`;
    recordSpeed({ work, peer: 'polars read_csv', ratio: peer === undefined ? NaN : train.cpu / peer.cpu, target: 1.2, clock: 'CPU' });
    recordSpeed({ work, peer: 'polars read_csv', ratio: peer === undefined ? NaN : train.wall / peer.wall, target: 1.2, clock: 'wall' });
  }

  // Steps after each run's first (the first computes the clip thresholds, and out of core fills its segment memories).
  const later = (key: 'outOfCore' | 'inMemory' | 'copy', field: 'wall' | 'cpu'): number => median(steps.flatMap((s) => ((s[key] as Record<string, number[]>)[field]).filter((_, k) => k % STEPS !== 0)));
  const firstPass = { wall: median(steps.map((s) => (s.firstPass as { wall: number }).wall)), cpu: median(steps.map((s) => (s.firstPass as { cpu: number }).cpu)) };
  const load = { wall: median(steps.map((s) => (s.load as { wall: number }).wall)), cpu: median(steps.map((s) => (s.load as { cpu: number }).cpu)) };
  const outWall = later('outOfCore', 'wall');
  const memWall = later('inMemory', 'wall');
  const outCpu = later('outOfCore', 'cpu');
  const memCpu = later('inMemory', 'cpu');
  const copyWall = later('copy', 'wall');
  const copyCpu = later('copy', 'cpu');
  process.stdout.write(`\nout of core (--max-memory ${MAX_MEMORY}) against in memory, one process per round, ${RUNS} runs of each interleaved, ${STEPS} DP-GD steps a run (logistic, float64, the worker pool on every CPU in both), medians of the steps after each run's first; the same model\n`);
  process.stdout.write(`  opening pass (encode once to the temporary file) ${seconds(firstPass.wall)} wall ${seconds(firstPass.cpu)} CPU; loadDataset in the same process ${seconds(load.wall)} wall ${seconds(load.cpu)} CPU: ${(firstPass.wall / load.wall).toFixed(2)}x (target <= 1.5x)\n`);
  process.stdout.write(`  step out of core ${ms(outWall)} wall ${ms(outCpu)} CPU; in memory ${ms(memWall)} wall ${ms(memCpu)} CPU (pools of ${steps[0].threads} threads): ${(outWall / memWall).toFixed(2)}x wall (target <= 1.5x), ${(outCpu / memCpu).toFixed(2)}x CPU\n`);
  // What reading costs: the copy alone. The kernels on blocks still in the caches cost less than
  // on rows read back from DRAM, so out of core can take less than in memory + copy.
  process.stdout.write(`  physical limit: the copy of the features from the page cache alone (1 thread, the steps' blocks) ${ms(copyWall)} wall ${ms(copyCpu)} CPU = ${(copyCpu / memCpu).toFixed(2)}x the in-memory step's CPU; in memory + copy = ${((memCpu + copyCpu) / memCpu).toFixed(2)}x its CPU; the kernels' share of the out-of-core step (its CPU - the copy's) ${ms(outCpu - copyCpu)} = ${((outCpu - copyCpu) / memCpu).toFixed(2)}x the in-memory step's CPU\n`);
  recordSpeed({ work: `out-of-core DP-GD step (--max-memory ${MAX_MEMORY})`, peer: 'dpfit in memory', ratio: outCpu / memCpu, target: 1.5, clock: 'CPU' });
  recordSpeed({ work: `out-of-core DP-GD step (--max-memory ${MAX_MEMORY})`, peer: 'dpfit in memory', ratio: outWall / memWall, target: 1.5, clock: 'wall' });
  recordSpeed({ work: 'out-of-core opening pass', peer: 'loadDataset', ratio: firstPass.wall / load.wall, target: 1.5, clock: 'wall' });
  process.stdout.write(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} after\n`);
}

if (process.argv[2] === '--child') {
  const [, , , what, csv, schemaPath, rows] = process.argv;
  await child(what, csv, schemaPath, Number(rows));
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await runOutOfCoreBench(process.argv[2] === undefined ? undefined : Number(process.argv[2]));
}
