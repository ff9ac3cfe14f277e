/**
 * Training speed: one DP-GD step — clipped per-example logistic gradients over
 * the full data, summed — over 1e6 x 20 rows, against numpy's best version of the same step and
 * against the memory limit, all measured in one run (rounds interleaved, medians: the machine is
 * shared).
 *
 * Fairness. numpy gets its best version: row norms and clip thresholds computed once (as dpfit
 * caches them), in-place ufuncs, BLAS for x @ theta and c @ x; OPENBLAS_CORETYPE and
 * OPENBLAS_L2_SIZE are removed from ITS environment only (they force an older kernel), and it runs
 * with 1 and with 2 BLAS threads, in float64 and float32 (float32 numpy also accumulates in
 * float32; dpfit's float32 storage accumulates in float64). The kernel numpy runs (OpenBLAS core
 * name and config, threadpoolctl when installed) is printed.
 *
 * The memory limit: a pass that only reads the same bytes (a stream sum) cannot be beaten by a
 * step that must read them too. It is measured by the WebAssembly SIMD stream sum (the fastest
 * reader in this process; a plain JavaScript loop is printed beside it) and by numpy's x.sum(),
 * for the float64 and the float32 storage. The two differ by the page size: numpy madvises its
 * arrays onto 2 MiB transparent huge pages (printed), which Node cannot request, and streaming
 * over 4 KiB pages is slower on this machine (a C stream sum over 160 MB: 12.9 ms on 4 KiB pages,
 * 9.0 ms on huge pages). Both ratios are printed. Targets: dpfit on one thread faster
 * than numpy's best float64 on one thread, and within 1.5x of the stream-sum limit of the storage
 * it uses.
 *
 * `npm run bench -- train`, or standalone: `node --import tsx bench/train.ts`.
 */
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { median, startPythonSession, type PythonSession } from './reference.js';
import { clipThresholds } from '../src/learners/glm/clip-thresholds.js';
import { allocateFeatures, featureMemoryOf, kernelsFor, storeLabels } from '../src/learners/glm/kernels/feature-memory.js';
import { logisticLoss } from '../src/learners/glm/losses/logistic.js';
import { createClippedGradientPool } from '../src/learners/glm/parallel/parallel-clipped-sum.js';
import { sumClippedGradients, sumStoredClippedGradients } from '../src/learners/glm/per-example.js';
import type { FeatureArray } from '../src/learners/glm/types.js';
import { fillGaussian } from '../src/random/continuous.js';
import { seededRng } from '../src/random/rng.js';

const N = 1_000_000;
const D = 20;
/** Alternations of all variants, and rounds per variant per alternation. */
const ALTERNATIONS = 5;
const ROUNDS = 3;

const NUMPY = `
import sys, time, ctypes, glob, os, json, numpy as np
def openblas():
    # numpy's bundled OpenBLAS (scipy-openblas): the core it runs, its config and threads.
    libs = os.path.join(os.path.dirname(np.__file__), '..', 'numpy.libs')
    info = {}
    for path in glob.glob(os.path.join(libs, '*openblas*')):
        lib = ctypes.CDLL(path)
        for prefix, suffix in (('scipy_openblas', '64_'), ('openblas', '64_'), ('openblas', '')):
            core = getattr(lib, f'{prefix}_get_corename{suffix}', None)
            if core is None: continue
            core.restype = ctypes.c_char_p
            config = getattr(lib, f'{prefix}_get_config{suffix}')
            config.restype = ctypes.c_char_p
            info = {'core': core().decode(), 'config': config().decode(), 'threads': getattr(lib, f'{prefix}_get_num_threads{suffix}')()}
            break
    try:
        import threadpoolctl
        info['threadpoolctl'] = [{k: p.get(k) for k in ('internal_api', 'num_threads', 'architecture', 'version')} for p in threadpoolctl.threadpool_info()]
    except ImportError:
        pass
    return info
rng = np.random.default_rng(1)
n, d, C = ${N}, ${D}, 1.0
x64 = rng.standard_normal((n, d)) / np.sqrt(d)
y64 = np.where(rng.random(n) < 0.5, -1.0, 1.0)
theta64 = rng.standard_normal(d) * 0.1
def prepare(dtype):
    x = np.ascontiguousarray(x64, dtype=dtype); y = y64.astype(dtype); theta = theta64.astype(dtype)
    t = (C / np.maximum(np.sqrt(np.einsum('ij,ij->i', x, x)), 1e-30)).astype(dtype)   # cached, as dpfit does
    negy = -y; buf = np.empty(n, dtype=dtype)
    def step():
        np.dot(x, theta, out=buf)                 # z
        np.multiply(buf, y, out=buf); np.exp(buf, out=buf); np.add(buf, 1, out=buf)  # 1 + exp(y z)
        np.divide(negy, buf, out=buf)             # f'(z; y) = -y / (1 + exp(y z))
        np.clip(buf, -t, t, out=buf)              # |f'| ||x|| <= C
        return buf @ x
    return x, step
sides = {'f64': prepare(np.float64), 'f32': prepare(np.float32)}
for _, step in sides.values(): step()
def huge_pages():
    # numpy madvises large arrays onto transparent huge pages (2 MiB): how much of its memory is on them.
    try:
        with open('/proc/self/smaps_rollup') as f:
            for line in f:
                if line.startswith('AnonHugePages:'): return int(line.split()[1]) // 1024
    except OSError:
        return None
print(json.dumps({'numpy': np.__version__, 'blas': openblas(), 'hugePagesMiB': huge_pages()}))
for line in sys.stdin:
    kind, rounds = line.split()
    x, step = sides[kind.replace('sum', '')]
    run = x.sum if kind.endswith('sum') else step
    times, cpus = [], []
    for _ in range(int(rounds)):
        s = time.perf_counter(); c = time.process_time(); run()
        times.append((time.perf_counter() - s) * 1000); cpus.append((time.process_time() - c) * 1000)
    print(' '.join(map(str, times + cpus)))
`;

/** The numpy session's environment: OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE removed, `threads` BLAS threads. */
function numpyEnv(threads: number): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  delete env.OPENBLAS_L2_SIZE;
  for (const name of ['OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS']) env[name] = String(threads);
  return env;
}

/** A plain JavaScript stream sum (a yardstick beside the SIMD one), four accumulators. */
function jsStreamSum(a: Float64Array): number {
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  const n = a.length;
  for (let i = 0; i + 3 < n; i += 4) {
    s0 += a[i];
    s1 += a[i + 1];
    s2 += a[i + 2];
    s3 += a[i + 3];
  }
  return s0 + s1 + s2 + s3;
}

function fill(x: FeatureArray, source: Float64Array): FeatureArray {
  x.set(source);
  return x;
}

export async function runTrainBench(): Promise<void> {
  const rng = seededRng(1);
  const source = fillGaussian(rng, new Float64Array(N * D), 1 / Math.sqrt(D));
  const y = new Float64Array(new SharedArrayBuffer(N * 8)).map(() => (rng.nextDouble() < 0.5 ? -1 : 1));
  const theta = fillGaussian(rng, new Float64Array(D), 0.1);
  const plain = { x: source, y, n: N, d: D };
  // Features, labels and thresholds in one feature memory, as the CLI's loader leaves them
  // (labels in the side region; clipThresholds puts the thresholds next to them).
  const stored = (precision: 'float64' | 'float32') => {
    const x = fill(allocateFeatures(N, D, precision), source);
    return { ...plain, x, y: storeLabels(x, D, y) };
  };
  const data64 = stored('float64');
  const data32 = stored('float32');
  const t64 = clipThresholds(data64, 1);
  const t32 = clipThresholds(data32, 1);
  const m64 = featureMemoryOf(data64.x, D);
  const m32 = featureMemoryOf(data32.x, D);
  const k64 = m64 === undefined ? null : kernelsFor(m64.memory);
  const k32 = m32 === undefined ? null : kernelsFor(m32.memory);
  const threads = availableParallelism();
  const pool = await createClippedGradientPool({ threads });
  const out = new Float64Array(D);
  const variants: [string, () => unknown][] = [
    ['dpfit float64, 1 thread', () => sumStoredClippedGradients(logisticLoss, data64, theta, { clipNorm: 1, thresholds: t64, out })],
    ['dpfit float32, 1 thread', () => sumStoredClippedGradients(logisticLoss, data32, theta, { clipNorm: 1, thresholds: t32, out })],
    [`dpfit float64, ${threads} threads`, () => pool.sumClippedGradients(logisticLoss, data64, theta, { clipNorm: 1, thresholds: t64, out })],
    [`dpfit float32, ${threads} threads`, () => pool.sumClippedGradients(logisticLoss, data32, theta, { clipNorm: 1, thresholds: t32, out })],
    ['dpfit before issue 16 (norms every step, scalar JS), 1 thread', () => sumClippedGradients(logisticLoss, plain, theta, { clipNorm: 1, out })],
    ['stream sum float64, WebAssembly SIMD', () => k64?.streamSum64((m64 as { xOffset: number }).xOffset, N * D)],
    ['stream sum float32, WebAssembly SIMD', () => k32?.streamSum32((m32 as { xOffset: number }).xOffset, N * D)],
    ['stream sum float64, plain JavaScript', () => jsStreamSum(data64.x as Float64Array)],
  ];
  if (k64 === null || k32 === null) process.stdout.write('  (WebAssembly SIMD unavailable: the SIMD rows time nothing)\n');
  // Wall-clock and CPU times (the process's user + system time: on a shared machine it leaves out
  // the time this process waited for a CPU; meaningful for the one-thread rows only).
  const times = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  const cpuTimes = new Map<string, number[]>(variants.map(([name]) => [name, []]));
  for (let r = 0; r < 2; r++) for (const [, run] of variants) run(); // warm-up: JIT, workers
  const sessions: [number, PythonSession | undefined][] = [];
  for (const t of [1, 2]) sessions.push([t, await startPythonSession(NUMPY, 600_000, { env: numpyEnv(t) })]);
  const numpyKinds = ['f64', 'f32', 'f64sum', 'f32sum'];
  try {
    for (let a = 0; a < ALTERNATIONS; a++) {
      for (const [name, run] of variants) {
        for (let r = 0; r < ROUNDS; r++) {
          const start = performance.now();
          const cpu = process.cpuUsage();
          run();
          (times.get(name) as number[]).push(performance.now() - start);
          const used = process.cpuUsage(cpu);
          (cpuTimes.get(name) as number[]).push((used.user + used.system) / 1000);
        }
      }
      for (const [t, session] of sessions) {
        if (session === undefined) continue;
        for (const kind of numpyKinds) {
          const key = `numpy ${kind} ${t}`;
          const answer = await session.ask(`${kind} ${ROUNDS}`);
          times.set(key, [...(times.get(key) ?? []), ...answer.slice(0, ROUNDS)]);
          cpuTimes.set(key, [...(cpuTimes.get(key) ?? []), ...answer.slice(ROUNDS)]);
        }
      }
    }
  } finally {
    for (const [, session] of sessions) session?.close();
    await pool.close();
  }
  const ms = (name: string): number => median(times.get(name) ?? [NaN]);
  const cpuMs = (name: string): number => median(cpuTimes.get(name) ?? [NaN]);
  const rounds = ALTERNATIONS * ROUNDS;
  /** A row: wall-clock median, and the CPU-time median for one-thread rows. */
  const line = (name: string, key = name) => {
    const oneThread = !/\b[2-9]\d* (BLAS )?threads\b/.test(name);
    const cpu = oneThread ? `${cpuMs(key).toFixed(1).padStart(9)} ms` : '';
    process.stdout.write(`  ${name.padEnd(62)} ${ms(key).toFixed(1).padStart(6)} ms${cpu}\n`);
  };
  process.stdout.write(`one DP-GD step: clipped per-example logistic gradients, ${N} x ${D}, clip thresholds cached on both sides (medians of ${rounds}: wall clock, and CPU time for one thread)\n`);
  const numpyAvailable = sessions.some(([, s]) => s !== undefined);
  if (numpyAvailable) {
    const banner = JSON.parse((sessions.find(([, s]) => s !== undefined)?.[1] as PythonSession).banner) as { numpy: string; blas: Record<string, unknown>; hugePagesMiB: number | null };
    process.stdout.write(`  numpy ${banner.numpy}; OpenBLAS ${JSON.stringify(banner.blas)} (OPENBLAS_CORETYPE, OPENBLAS_L2_SIZE unset for numpy)\n`);
    process.stdout.write(`  numpy's memory on transparent huge pages: ${banner.hugePagesMiB ?? 'unknown'} MiB; dpfit's: none (4 KiB pages)\n`);
    for (const [t, session] of sessions) {
      if (session === undefined) continue;
      line(`numpy float64, ${t} BLAS thread${t > 1 ? 's' : ''}`, `numpy f64 ${t}`);
      line(`numpy float32, ${t} BLAS thread${t > 1 ? 's' : ''}`, `numpy f32 ${t}`);
    }
  } else process.stdout.write('  numpy: not available (skipped)\n');
  for (const [name] of variants) line(name);
  if (numpyAvailable) {
    line('numpy x.sum() float64 (1 thread)', 'numpy f64sum 1');
    line('numpy x.sum() float32 (1 thread)', 'numpy f32sum 1');
  }
  // The limits: the fastest stream sum over the same bytes, (a) in this process, whose memory is
  // on 4 KiB pages (Node cannot ask for transparent huge pages), and (b) anywhere, numpy's x.sum()
  // included (its arrays are on 2 MiB pages when the kernel allows: fewer TLB misses, and the
  // hardware prefetcher does not stop at every 4 KiB boundary).
  for (const [clock, t] of [['wall clock', ms], ['CPU time', cpuMs]] as const) {
    const own64 = Math.min(t('stream sum float64, WebAssembly SIMD'), t('stream sum float64, plain JavaScript'));
    const own32 = t('stream sum float32, WebAssembly SIMD');
    const limit64 = Math.min(own64, numpyAvailable ? t('numpy f64sum 1') : Infinity);
    const limit32 = Math.min(own32, numpyAvailable ? t('numpy f32sum 1') : Infinity);
    const one64 = t('dpfit float64, 1 thread');
    const one32 = t('dpfit float32, 1 thread');
    process.stdout.write(`ratios of the medians by ${clock} (acceptance of issue 16):\n`);
    const ratio = (what: string, step: number, limit: number, where: string) => process.stdout.write(`  ${what} step / ${where} (${limit.toFixed(1)} ms): ${(step / limit).toFixed(2)}x (target <= 1.5x)\n`);
    ratio('float64', one64, own64, 'float64 stream-sum limit of this process (4 KiB pages)');
    ratio('float32', one32, own32, 'float32 stream-sum limit of this process (4 KiB pages)');
    ratio('float64', one64, limit64, 'fastest float64 stream sum measured (any process)');
    ratio('float32', one32, limit32, 'fastest float32 stream sum measured (any process)');
    if (numpyAvailable && sessions[0][1] !== undefined) {
      const numpy64 = t('numpy f64 1');
      process.stdout.write(`  numpy float64 1 thread / dpfit float64 1 thread: ${(numpy64 / one64).toFixed(2)}; / dpfit float32 1 thread: ${(numpy64 / one32).toFixed(2)} (target > 1: dpfit faster)\n`);
      process.stdout.write(`  numpy float32 1 thread / dpfit float32 1 thread: ${(t('numpy f32 1') / one32).toFixed(2)}\n`);
    }
    process.stdout.write(`  before / after (float64, 1 thread): ${(t('dpfit before issue 16 (norms every step, scalar JS), 1 thread') / one64).toFixed(2)}x faster\n`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runTrainBench();
