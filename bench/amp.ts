/**
 * Issue 28's AMP row against the real peer: dpfit's Approximate Minima Perturbation
 * (`trainAmp`, epsilon 1, delta 1e-5, `003` Sec. 5's settings) and diffprivlib's
 * LogisticRegression(epsilon=1, data_norm=sqrt(2), fit_intercept=False) (objective perturbation
 * by its Vector mechanism, then scipy's L-BFGS-B with its defaults: tol 1e-4 on the largest
 * gradient entry of the mean loss, 100 iterations) fitted on the same encoded UCI Adult rows
 * (32561 x 146, the shipped schema: unit rows plus a bias column, so no row is clipped by either
 * and diffprivlib needs no intercept of its own), each in its own process, rounds interleaved in
 * one run (so that the load of a shared machine falls on both alike), CPU time of the whole
 * fit call (validation, noise, optimiser, and for dpfit the privacy report), medians, the test
 * accuracy of every fit beside it. dpfit also runs with the L-BFGS memory it had before issue 28
 * (10 pairs) in the same rounds. Target: dpfit within 1.5x of diffprivlib.
 *
 * diffprivlib is not vendored: the bench imports it from DPFIT_DIFFPRIVLIB_PATH (a directory added
 * to PYTHONPATH, e.g. a checkout of IBM/differential-privacy-library) with the interpreter
 * DPFIT_DIFFPRIVLIB_PYTHON (default python3), which needs numpy, scipy and scikit-learn; one BLAS
 * thread. Without it the row says so and dpfit's numbers are printed alone. Needs
 * `data/adult/adult.data` and `adult.test` (or DPFIT_ADULT_DIR).
 *
 * `npm run bench -- amp`, or standalone: `node --import tsx bench/amp.ts`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median, startPythonSession } from './reference.js';
import { recordSpeed } from './speed-summary.js';
import { adultSchema } from '../src/data/adult.js';
import { loadDataset } from '../src/data/node/read.js';
import { evaluate } from '../src/learners/models/model.js';
import { DEFAULT_AMP_MEMORY, trainAmp } from '../src/learners/perturbation/approximate-minima-perturbation.js';
import { seededRng } from '../src/random/rng.js';

const ROUNDS = 7;
const EPSILON = 1;
const DELTA = 1e-5;
const R = Math.SQRT2;

const DIFFPRIVLIB = (dir: string, d: number) => `
import sys, time, json, warnings
import numpy as np, scipy, sklearn
import diffprivlib
from diffprivlib.models import LogisticRegression
from sklearn.exceptions import ConvergenceWarning
X = np.fromfile('${join(dir, 'train-x.f64')}', dtype=np.float64).reshape(-1, ${d}); y = np.fromfile('${join(dir, 'train-y.f64')}', dtype=np.float64)
tX = np.fromfile('${join(dir, 'test-x.f64')}', dtype=np.float64).reshape(-1, ${d}); ty = np.fromfile('${join(dir, 'test-y.f64')}', dtype=np.float64)
def fit(seed):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        m = LogisticRegression(epsilon=${EPSILON}, data_norm=${R}, fit_intercept=False, random_state=seed).fit(X, y)
    return m, any(issubclass(w.category, ConvergenceWarning) for w in caught)
fit(0)
print(json.dumps({'diffprivlib': diffprivlib.__version__, 'sklearn': sklearn.__version__, 'numpy': np.__version__, 'scipy': scipy.__version__, 'maxNorm': float(np.linalg.norm(X, axis=1).max())}))
for line in sys.stdin:
    seed = int(line.split()[1])
    c = time.process_time(); w = time.perf_counter()
    m, unconverged = fit(seed)
    cpu = (time.process_time() - c) * 1000; wall = (time.perf_counter() - w) * 1000
    print(cpu, wall, int(m.n_iter_[0]), float(m.score(tX, ty)), int(unconverged))
`;

function machine(): string {
  let model = 'unknown CPU';
  try {
    model = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? model;
  } catch {
    // not Linux
  }
  return `${model}, ${availableParallelism()} CPUs; Node ${process.versions.node}, V8 ${process.versions.v8}`;
}

function pythonEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS']) env[name] = '1';
  const extra = process.env.DPFIT_DIFFPRIVLIB_PATH;
  if (extra) env.PYTHONPATH = [extra, process.env.PYTHONPATH].filter(Boolean).join(':');
  return env;
}

const mean = (v: number[]) => v.reduce((a, b) => a + b, 0) / v.length;
const std = (v: number[]) => Math.sqrt(mean(v.map((x) => (x - mean(v)) ** 2)));

export async function runAmpBench(): Promise<void> {
  const dir = process.env.DPFIT_ADULT_DIR ?? 'data/adult';
  if (!existsSync(join(dir, 'adult.data')) || !existsSync(join(dir, 'adult.test'))) {
    process.stdout.write('AMP: skipped (no data/adult/adult.data and adult.test; `dpfit data fetch adult --dir data/adult`, or DPFIT_ADULT_DIR)\n');
    return;
  }
  const schema = adultSchema();
  const train = (await loadDataset(join(dir, 'adult.data'), schema)).dataset;
  const test = (await loadDataset(join(dir, 'adult.test'), schema)).dataset;
  const tmp = mkdtempSync(join(tmpdir(), 'dpfit-amp-bench-'));
  try {
    const bytes = (a: Float64Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    writeFileSync(join(tmp, 'train-x.f64'), bytes(train.x));
    writeFileSync(join(tmp, 'train-y.f64'), bytes(train.y));
    writeFileSync(join(tmp, 'test-x.f64'), bytes(test.x));
    writeFileSync(join(tmp, 'test-y.f64'), bytes(test.y));
    const python = await startPythonSession(DIFFPRIVLIB(tmp, train.d), 1_800_000, { env: pythonEnv(), python: process.env.DPFIT_DIFFPRIVLIB_PYTHON ?? 'python3' });
    try {
      const loadBefore = loadavg();
      process.stdout.write(`machine: ${machine()}; load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before\n`);
      if (python === undefined) {
        process.stdout.write('diffprivlib: not available (set DPFIT_DIFFPRIVLIB_PATH to a directory holding the diffprivlib package, and DPFIT_DIFFPRIVLIB_PYTHON to a python3 with numpy, scipy and scikit-learn); dpfit alone\n');
      } else {
        const info = JSON.parse(python.banner) as Record<string, string | number>;
        process.stdout.write(`diffprivlib ${info.diffprivlib} (scikit-learn ${info.sklearn}, numpy ${info.numpy}, scipy ${info.scipy}), 1 BLAS thread; largest row norm ${Number(info.maxNorm).toPrecision(17)} <= data_norm = sqrt(2): no row clipped\n`);
      }
      const runs: { key: string; label: string; memory: number }[] = [
        { key: 'dpfit', label: `dpfit trainAmp (L-BFGS memory ${DEFAULT_AMP_MEMORY}, the default)`, memory: DEFAULT_AMP_MEMORY },
        { key: 'dpfit10', label: 'dpfit trainAmp (L-BFGS memory 10, before issue 28)', memory: 10 },
      ];
      const cpu = new Map<string, number[]>();
      const iterations = new Map<string, number[]>();
      const accuracy = new Map<string, number[]>();
      const unconverged: number[] = [];
      const push = (m: Map<string, number[]>, key: string, v: number) => m.set(key, [...(m.get(key) ?? []), v]);
      for (const { memory } of runs) trainAmp(train, { epsilon: EPSILON, delta: DELTA, rowNormBound: R, rng: seededRng(0), memory });
      for (let round = 0; round < ROUNDS; round++) {
        const seed = round + 1;
        for (const { key, memory } of runs) {
          const start = process.cpuUsage();
          const r = trainAmp(train, { epsilon: EPSILON, delta: DELTA, rowNormBound: R, rng: seededRng(seed), memory });
          const used = process.cpuUsage(start);
          push(cpu, key, (used.user + used.system) / 1000);
          push(iterations, key, Number(r.diagnostics.iterations));
          push(accuracy, key, 100 * (evaluate(r.model, test).accuracy ?? NaN));
        }
        if (python !== undefined) {
          const [c, , nit, acc, warned] = await python.ask(`fit ${seed}`);
          push(cpu, 'diffprivlib', c);
          push(iterations, 'diffprivlib', nit);
          push(accuracy, 'diffprivlib', 100 * acc);
          unconverged.push(warned);
        }
      }
      process.stdout.write(`load average ${loadavg().map((l) => l.toFixed(2)).join(' ')} after\n`);
      process.stdout.write(`\nUCI Adult, ${train.n} x ${train.d} (test ${test.n}), epsilon ${EPSILON} (dpfit with delta ${DELTA.toExponential()}, diffprivlib pure DP), in process, CPU time of the fit, medians of ${ROUNDS} interleaved rounds (seeds 1-${ROUNDS}; accuracy mean ± std over them)\n`);
      const row = (label: string, key: string, note = '') => {
        const acc = accuracy.get(key) ?? [NaN];
        const it = iterations.get(key) ?? [NaN];
        process.stdout.write(`  ${label.padEnd(62)} ${median(cpu.get(key) ?? [NaN]).toFixed(0).padStart(6)} ms  (${Math.min(...it)}-${Math.max(...it)} iterations, test accuracy ${mean(acc).toFixed(2)} ± ${std(acc).toFixed(2)} %)${note}\n`);
      };
      for (const { key, label } of runs) row(label, key);
      if (python !== undefined) {
        const stopped = unconverged.filter((u) => u === 1).length;
        row('diffprivlib LogisticRegression(epsilon=1, data_norm=sqrt(2))', 'diffprivlib', stopped > 0 ? `; ${stopped} of ${ROUNDS} fits stopped at max_iter without converging` : '');
        const ratio = median(cpu.get('dpfit') ?? [NaN]) / median(cpu.get('diffprivlib') ?? [NaN]);
        process.stdout.write(`  ratios: dpfit / diffprivlib = ${ratio.toFixed(2)} (issue 28's target <= 1.5); before issue 28 ${(median(cpu.get('dpfit10') ?? [NaN]) / median(cpu.get('diffprivlib') ?? [NaN])).toFixed(2)}\n`);
      }
      recordSpeed({ work: 'AMP on UCI Adult, in process', peer: 'diffprivlib LogisticRegression', ratio: python === undefined ? NaN : median(cpu.get('dpfit') ?? [NaN]) / median(cpu.get('diffprivlib') ?? [NaN]), target: 1.5, clock: 'CPU' });
    } finally {
      python?.close();
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runAmpBench();
