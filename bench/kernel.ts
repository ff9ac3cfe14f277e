/**
 * Issue 28's kernel rows, each beside its peer in the same run (rounds interleaved, medians of CPU
 * time on one thread; the machine is shared, so ratios mean more than times):
 *
 * 1. The clipped logistic gradient step (DP-GD's step: per-example gradients clipped to norm 1,
 *    summed), 1e6 x 20 rows, one thread, float64 and float32 storage: dpfit's released path
 *    (`sumStoredClippedGradients`, clip thresholds and labels cached in the feature memory, the
 *    exact fused kernel), the same rows through the fused kernel's relaxed-SIMD variant
 *    (f64x2.relaxed_madd, `wasm-logistic-step.ts`; enabled here with V8's
 *    `--experimental-wasm-relaxed-simd`, Node 20 has it only behind that flag), numpy's best
 *    one-thread version of the same step on the SAME bytes (whole arrays, and 8192-row blocks that
 *    stay in cache; thresholds cached as dpfit caches them; OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE
 *    removed from its environment, one BLAS thread; numpy's float32 computes in float32; dpfit's
 *    float32 step computes its margins, derivatives and clamp in float32 and its sums in fixed
 *    point, exactly, `float32-logistic.ts`, `fixed-point.ts`; the float64 update it replaced is
 *    timed beside it),
 *    and one stream over the same bytes (the WebAssembly SIMD stream sum, and numpy's x.sum()).
 *    Targets: dpfit faster than numpy's best, and within 2x of the stream.
 * 2. AMP on UCI Adult in process (`trainAmp`, epsilon 1, delta 1e-5, `003` Sec. 5's settings), next
 *    to scipy's L-BFGS-B on the same objective (the same lambda, b drawn with the same sigma, the
 *    logistic loss on the same encoded rows, no row clipped: checked) stopped by the same test
 *    (||gradient||_2 below what dpfit's L-BFGS aims at), and at the settings diffprivlib's
 *    LogisticRegression passes to it (gtol 1e-4, maxiter 100, on the mean loss; diffprivlib itself,
 *    the issue's peer, is measured by `bench/amp.ts`). One evaluation of the objective (value and
 *    gradient) is timed on each side too, dpfit's JavaScript kernels beside its SIMD ones. Needs
 *    `data/adult/adult.data` and `adult.test` (or DPFIT_ADULT_DIR); skipped without them.
 *
 * The machine (CPU model, AVX-512 flags) is printed with the numbers.
 *
 * `npm run bench -- kernel`, or standalone: `node --import tsx bench/kernel.ts`.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { median, startPythonSession, type PythonSession } from './reference.js';
import { recordSpeed } from './speed-summary.js';
import { adultSchema } from '../src/data/adult.js';
import { loadDataset } from '../src/data/node/read.js';
import { clipThresholds } from '../src/learners/glm/clip-thresholds.js';
import { toSignedLabels } from '../src/learners/glm/constants.js';
import { allocateFeatures, featureMemoryOf, kernelsFor, slotPointers, storeLabels } from '../src/learners/glm/kernels/feature-memory.js';
import { encodeModule, op, V128, wasmApi } from '../src/learners/glm/kernels/wasm-binary.js';
import { fusedBlockRows, logisticStepFor, relaxedSimdAvailable } from '../src/learners/glm/kernels/wasm-logistic-step.js';
import { fixedPointScale } from '../src/learners/glm/kernels/fixed-point.js';
import { logisticLoss } from '../src/learners/glm/losses/logistic.js';
import { glmObjective, withKernelFeatures } from '../src/learners/glm/objective.js';
import { sumStoredClippedGradients } from '../src/learners/glm/per-example.js';
import { evaluate } from '../src/learners/models/model.js';
import { trainAmp } from '../src/learners/perturbation/approximate-minima-perturbation.js';
import { objectiveNoiseGrid } from '../src/learners/perturbation/objective-perturbation.js';
import { fillGaussian } from '../src/random/continuous.js';
import { seededRng } from '../src/random/rng.js';

const N = 1_000_000;
const D = 20;
const ALTERNATIONS = 5;
const ROUNDS = 3;
const AMP_ROUNDS = 5;

/** Whether the engine validates f64x2.relaxed_madd now (before the flag is set: the default). */
function relaxedValidates(): boolean {
  const probe = encodeModule([{ name: 'p', params: [], results: [V128], locals: [], body: [op.v128Zero, op.v128Zero, op.v128Zero, op.f64x2RelaxedMadd] }], { shared: false, pages: 1, maxPages: 1 });
  return wasmApi?.validate(probe) ?? false;
}

function machine(): string {
  let model = 'unknown CPU';
  let avx512 = 'unknown';
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    model = /^model name\s*:\s*(.*)$/m.exec(info)?.[1] ?? model;
    const flags = /^flags\s*:\s*(.*)$/m.exec(info)?.[1].split(' ') ?? [];
    const wide = flags.filter((f) => f.startsWith('avx512'));
    avx512 = wide.length > 0 ? `AVX-512 present (${wide.join(' ')})` : 'no AVX-512';
  } catch {
    // not Linux: leave unknown
  }
  return `${model}; ${avx512}; Node ${process.versions.node}, V8 ${process.versions.v8}`;
}

const NUMPY = (dir: string, adult: boolean) => `
import sys, time, json, numpy as np
from scipy.optimize import minimize
from scipy.special import expit
n, d, C = ${N}, ${D}, 1.0
x64 = np.fromfile('${join(dir, 'x.f64')}', dtype=np.float64).reshape(n, d)
y64 = np.fromfile('${join(dir, 'y.f64')}', dtype=np.float64)
theta64 = np.fromfile('${join(dir, 'theta.f64')}', dtype=np.float64)
B = 8192
def prepare(dtype):
    x = np.ascontiguousarray(x64, dtype=dtype); y = y64.astype(dtype); theta = theta64.astype(dtype)
    t = (C / np.maximum(np.sqrt(np.einsum('ij,ij->i', x, x)), 1e-30)).astype(dtype)   # cached, as dpfit caches them
    negy = -y; buf = np.empty(n, dtype=dtype); blk = np.empty(B, dtype=dtype)
    def full():
        np.dot(x, theta, out=buf)
        np.multiply(buf, y, out=buf); np.exp(buf, out=buf); np.add(buf, 1, out=buf)
        np.divide(negy, buf, out=buf)             # f'(z; y) = -y / (1 + exp(y z))
        np.clip(buf, -t, t, out=buf)              # |f'| ||x|| <= C
        return buf @ x
    def blocked():
        g = np.zeros(d, dtype=dtype)
        for s in range(0, n, B):
            xb = x[s:s + B]; b = blk[:len(xb)]
            np.dot(xb, theta, out=b)
            np.multiply(b, y[s:s + B], out=b); np.exp(b, out=b); np.add(b, 1, out=b)
            np.divide(negy[s:s + B], b, out=b)
            np.clip(b, -t[s:s + B], t[s:s + B], out=b)
            g += b @ xb
        return g
    return {'': blocked, 'full': full, 'sum': x.sum}
runs = {}
for name, dtype in (('f64', np.float64), ('f32', np.float32)):
    for suffix, f in prepare(dtype).items():
        f(); runs[name + suffix] = f
adult = ${adult ? 'True' : 'False'}
if adult:
    ax = np.fromfile('${join(dir, 'adult-x.f64')}', dtype=np.float64); an = len(np.fromfile('${join(dir, 'adult-y.f64')}', dtype=np.float64))
    ax = ax.reshape(an, -1); ay = np.fromfile('${join(dir, 'adult-y.f64')}', dtype=np.float64)   # labels -1/+1
    tx = np.fromfile('${join(dir, 'test-x.f64')}', dtype=np.float64).reshape(-1, ax.shape[1]); ty = np.fromfile('${join(dir, 'test-y.f64')}', dtype=np.float64)
    def objective(lam, b, mean):
        scale = 1.0 / an if mean else 1.0
        def f(w):
            z = ax @ w; m = ay * z
            v = np.logaddexp(0, -m).sum() * scale + 0.5 * lam * w @ w + b @ w
            g = ax.T @ (-ay * expit(-m)) * scale + lam * w + b
            return v, g
        return f
    def fit(lam, sigma, tol, seed, mean, gtol, maxiter):
        b = np.random.default_rng(seed).standard_normal(ax.shape[1]) * sigma
        f = objective(lam, b, mean); last = {}
        def fun(w):
            v, g = f(w); last['w'] = w.copy(); last['g'] = g; return v, g
        def stop(w):
            if tol > 0 and np.array_equal(w, last['w']) and np.linalg.norm(last['g']) <= tol: raise StopIteration
        r = minimize(fun, np.zeros(ax.shape[1]), jac=True, method='L-BFGS-B', callback=stop,
                     options={'maxcor': 10, 'maxiter': maxiter, 'gtol': gtol, 'ftol': 0.0 if tol > 0 else 2.2e-9, 'maxfun': 20 * maxiter + 20})
        acc = float(np.mean(np.sign(tx @ r.x) == np.where(ty > 0, 1, -1)))
        return r.nit, r.nfev, float(np.linalg.norm(f(r.x)[1])), acc
import scipy
print(json.dumps({'numpy': np.__version__, 'scipy': scipy.__version__}))
for line in sys.stdin:
    words = line.split(); kind, rounds = words[0], int(words[1])
    times, cpus, extra = [], [], []
    for _ in range(rounds):
        s = time.perf_counter(); c = time.process_time()
        if kind == 'objective':
            lam, sigma = float(words[2]), float(words[3])
            objective(lam, np.zeros(ax.shape[1]), False)(np.full(ax.shape[1], 0.01))
        elif kind in ('amp', 'dpl'):
            lam, sigma, tol = float(words[2]), float(words[3]), float(words[4])
            extra = list(fit(lam, sigma, tol, 1, False, 0.0, 5000) if kind == 'amp' else fit(lam / an, sigma / an, 0.0, 1, True, 1e-4, 100))
        else:
            runs[kind]()
        times.append((time.perf_counter() - s) * 1000); cpus.append((time.process_time() - c) * 1000)
    print(' '.join(map(str, times + cpus + extra)))
`;

function numpyEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.OPENBLAS_CORETYPE;
  delete env.OPENBLAS_L2_SIZE;
  for (const name of ['OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS']) env[name] = '1';
  return env;
}

/** CPU milliseconds of one call. */
function cpuMs(run: () => unknown): number {
  const start = process.cpuUsage();
  run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

async function adultSets(): Promise<{ train: { x: Float64Array; y: Float64Array; n: number; d: number }; test: { x: Float64Array; y: Float64Array; n: number; d: number } } | undefined> {
  const dir = process.env.DPFIT_ADULT_DIR ?? 'data/adult';
  if (!existsSync(join(dir, 'adult.data')) || !existsSync(join(dir, 'adult.test'))) return undefined;
  const schema = adultSchema();
  return { train: (await loadDataset(join(dir, 'adult.data'), schema)).dataset, test: (await loadDataset(join(dir, 'adult.test'), schema)).dataset };
}

export async function runKernelBench(): Promise<void> {
  const relaxedByDefault = relaxedValidates();
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  process.stdout.write(`machine: ${machine()}\n`);
  process.stdout.write(`WebAssembly relaxed SIMD: ${relaxedByDefault ? 'available by default' : 'not available by default'}; ${relaxedSimdAvailable() ? 'enabled for this run by --experimental-wasm-relaxed-simd' : 'unavailable even with the flag'}\n`);

  const rng = seededRng(1);
  const source = fillGaussian(rng, new Float64Array(N * D), 1 / Math.sqrt(D));
  const labels = new Float64Array(N).map(() => (rng.nextDouble() < 0.5 ? -1 : 1));
  const theta = fillGaussian(rng, new Float64Array(D), 0.1);
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-kernel-bench-'));
  const sets = await adultSets();
  try {
    writeFileSync(join(dir, 'x.f64'), new Uint8Array(source.buffer));
    writeFileSync(join(dir, 'y.f64'), new Uint8Array(labels.buffer));
    writeFileSync(join(dir, 'theta.f64'), new Uint8Array(theta.buffer));
    if (sets !== undefined) {
      writeFileSync(join(dir, 'adult-x.f64'), new Uint8Array(sets.train.x.buffer, sets.train.x.byteOffset, sets.train.x.byteLength));
      writeFileSync(join(dir, 'adult-y.f64'), new Uint8Array(toSignedLabels(sets.train.y).buffer));
      writeFileSync(join(dir, 'test-x.f64'), new Uint8Array(sets.test.x.buffer, sets.test.x.byteOffset, sets.test.x.byteLength));
      writeFileSync(join(dir, 'test-y.f64'), new Uint8Array(toSignedLabels(sets.test.y).buffer));
    }
    const python = await startPythonSession(NUMPY(dir, sets !== undefined), 1_800_000, { env: numpyEnv() });
    try {
      await kernelRows(source, labels, theta, python);
      if (sets === undefined) process.stdout.write('Adult AMP: skipped (no data/adult/adult.data and adult.test; `dpfit data fetch adult --dir data/adult`)\n');
      else await ampRows(sets.train, sets.test, python);
    } finally {
      python?.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function kernelRows(source: Float64Array, labels: Float64Array, theta: Float64Array, python: PythonSession | undefined): Promise<void> {
  const out = new Float64Array(D);
  const dpfit: [string, () => unknown][] = [];
  for (const precision of ['float64', 'float32'] as const) {
    const x = allocateFeatures(N, D, precision);
    x.set(source);
    const data = { x, y: storeLabels(x, D, labels), n: N, d: D };
    const thresholds = clipThresholds(data, 1);
    const info = featureMemoryOf(x, D);
    if (info === undefined) throw new Error('no feature memory (WebAssembly SIMD unavailable)');
    const kernels = kernelsFor(info.memory);
    const ptr = slotPointers(info, 7, D);
    const bits = precision === 'float64' ? 64 : 32;
    dpfit.push([`dpfit ${precision} (released path, exact)`, () => sumStoredClippedGradients(logisticLoss, data, theta, { clipNorm: 1, thresholds, out })]);
    new Float64Array(info.memory.buffer, ptr.theta, D).set(theta);
    const rowBytes = (D * bits) / 8;
    // Both variants of the fused kernel by themselves, over the released path's 1024-row blocks
    // (the rows of whole fused blocks; no chunks, no remainder rows).
    const rows = N - (N % fusedBlockRows(precision));
    // Float32 rows: the fixed-point update (`fixed-point.ts`, what the released path runs at C = 1),
    // and the float64 update it replaced (what C = Infinity still runs) for comparison.
    const update = precision === 'float32' ? 'fixed' : 'float64';
    const scale = fixedPointScale(1, D);
    const variants = [['exact', 'exact variant alone', update], ['fused', 'relaxed-SIMD variant alone', update]] as (readonly ['exact' | 'fused', string, 'float64' | 'fixed'])[];
    if (precision === 'float32') variants.push(['exact', 'exact variant alone, float64 update', 'float64']);
    for (const [variant, label, kind] of variants) {
      const step = logisticStepFor(info.memory, D, precision, variant, kind);
      if (step === null) continue;
      dpfit.push([`dpfit ${precision} (${label})`, () => {
        new Float64Array(info.memory.buffer, ptr.part, D).fill(0);
        for (let b = 0; b < rows; b += 1024) step(info.xOffset + b * rowBytes, ptr.theta, data.y.byteOffset + 8 * b, thresholds.values.byteOffset + 8 * b, Math.min(1024, rows - b), ptr.part, ptr.fused, scale?.sigma, scale?.unit);
      }]);
    }
    dpfit.push([`stream sum ${precision}, WebAssembly SIMD`, () => (precision === 'float64' ? kernels?.streamSum64(info.xOffset, N * D) : kernels?.streamSum32(info.xOffset, N * D))]);
  }
  const peers = python === undefined ? [] : ['f64', 'f64full', 'f32', 'f32full', 'f64sum', 'f32sum'];
  const times = new Map<string, number[]>();
  const push = (key: string, values: number[]) => times.set(key, [...(times.get(key) ?? []), ...values]);
  for (let r = 0; r < 2; r++) for (const [, run] of dpfit) run();
  for (let a = 0; a < ALTERNATIONS; a++) {
    for (const [name, run] of dpfit) for (let r = 0; r < ROUNDS; r++) push(name, [cpuMs(run)]);
    for (const kind of peers) push(`numpy ${kind}`, (await (python as PythonSession).ask(`${kind} ${ROUNDS}`)).slice(ROUNDS, 2 * ROUNDS));
  }
  const ms = (key: string) => median(times.get(key) ?? [NaN]);
  process.stdout.write(`\nclipped logistic gradient step, ${N} x ${D}, one thread (CPU time, medians of ${ALTERNATIONS * ROUNDS}, interleaved)\n`);
  if (python !== undefined) process.stdout.write(`  numpy ${JSON.parse(python.banner).numpy}, OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset, 1 BLAS thread\n`);
  else process.stdout.write('  numpy: not available (skipped)\n');
  const row = (label: string, key: string) => process.stdout.write(`  ${label.padEnd(58)} ${ms(key).toFixed(2).padStart(7)} ms\n`);
  for (const [name] of dpfit) row(name, name);
  const numpyNames: Record<string, string> = { f64: 'numpy float64, 8192-row blocks', f64full: 'numpy float64, whole arrays', f32: 'numpy float32, 8192-row blocks', f32full: 'numpy float32, whole arrays', f64sum: 'numpy x.sum() float64', f32sum: 'numpy x.sum() float32' };
  for (const kind of peers) row(numpyNames[kind], `numpy ${kind}`);
  process.stdout.write('  ratios:\n');
  for (const [precision, short] of [['float64', 'f64'], ['float32', 'f32']] as const) {
    const exact = ms(`dpfit ${precision} (released path, exact)`);
    const alone = ms(`dpfit ${precision} (exact variant alone)`);
    const relaxed = ms(`dpfit ${precision} (relaxed-SIMD variant alone)`);
    const stream = ms(`stream sum ${precision}, WebAssembly SIMD`);
    if (python !== undefined) {
      const best = Math.min(ms(`numpy ${short}`), ms(`numpy ${short}full`));
      process.stdout.write(`    ${precision}: numpy's best / dpfit = ${(best / exact).toFixed(2)} (target > 1: dpfit faster); with the relaxed variant ${(best / relaxed).toFixed(2)}\n`);
    }
    const work = `clipped logistic step, ${N} x ${D}, ${precision}, 1 thread`;
    recordSpeed({ work, peer: "numpy's best one-thread", ratio: python === undefined ? NaN : exact / Math.min(ms(`numpy ${short}`), ms(`numpy ${short}full`)), target: 1, clock: 'CPU' });
    recordSpeed({ work, peer: 'one stream over the same bytes', ratio: exact / stream, target: 2, clock: 'CPU' });
    process.stdout.write(`    ${precision}: dpfit / stream over the same bytes = ${(exact / stream).toFixed(2)}x (target <= 2); relaxed variant ${(relaxed / stream).toFixed(2)}x; exact / relaxed variant alone = ${(alone / relaxed).toFixed(2)}\n`);
  }
}

async function ampRows(
  train: { x: Float64Array; y: Float64Array; n: number; d: number }, test: { x: Float64Array; y: Float64Array; n: number; d: number }, python: PythonSession | undefined,
): Promise<void> {
  const options = { epsilon: 1, delta: 1e-5, rowNormBound: Math.SQRT2 };
  const first = trainAmp(train, { ...options, rng: seededRng(1) });
  const lambda = first.diagnostics.regularization as number;
  const sigma = first.diagnostics.noiseStd;
  const tau = first.diagnostics.gradTolerance as number;
  // What dpfit's L-BFGS aims at (`approximate-minima-perturbation.ts`): min(tau / 2, (tau - the grid's coupling cost) / 2).
  const aim = Math.min(tau / 2, (tau - objectiveNoiseGrid(sigma, train.d, tau).toleranceCost) / 2);
  // No row is clipped on these rows (||x_i|| <= C and |f'| < 1), so the peers' plain logistic loss is the same objective.
  const signed = { ...train, y: toSignedLabels(train.y) };
  let maxNorm = 0;
  for (let i = 0; i < train.n; i++) {
    let s = 0;
    for (let j = 0; j < train.d; j++) s += train.x[i * train.d + j] ** 2;
    maxNorm = Math.max(maxNorm, Math.sqrt(s));
  }
  const clipNorm = first.diagnostics.clipNorm as number;
  const theta = new Float64Array(train.d).fill(0.01);
  const grad = new Float64Array(train.d);
  const simd = glmObjective(logisticLoss, withKernelFeatures(signed), { regularization: lambda, clipNorm });
  const scalar = glmObjective(logisticLoss, signed, { regularization: lambda, clipNorm });
  const dpfitRuns: [string, () => unknown][] = [
    ['dpfit trainAmp (whole run: calibration, noise, L-BFGS, certificate)', () => trainAmp(train, { ...options, rng: seededRng(1) })],
    ['dpfit objective value + gradient, SIMD kernels', () => simd(theta, grad)],
    ['dpfit objective value + gradient, JavaScript kernels', () => scalar(theta, grad)],
  ];
  const times = new Map<string, number[]>();
  const push = (key: string, values: number[]) => times.set(key, [...(times.get(key) ?? []), ...values]);
  const extra = new Map<string, number[]>();
  for (const [, run] of dpfitRuns) run();
  for (let a = 0; a < AMP_ROUNDS; a++) {
    for (const [name, run] of dpfitRuns) push(name, [cpuMs(run)]);
    if (python === undefined) continue;
    for (const [key, line] of [['objective', `objective 3 ${lambda} ${sigma}`], ['amp', `amp 1 ${lambda} ${sigma} ${aim}`], ['dpl', `dpl 1 ${lambda} ${sigma} 0`]] as const) {
      const answer = await python.ask(line);
      const rounds = key === 'objective' ? 3 : 1;
      push(`numpy ${key}`, answer.slice(rounds, 2 * rounds));
      extra.set(key, answer.slice(2 * rounds));
    }
  }
  const ms = (key: string) => median(times.get(key) ?? [NaN]);
  const accuracy = 100 * (evaluate(first.model, test).accuracy ?? NaN);
  process.stdout.write(`\nAMP on UCI Adult in process, ${train.n} x ${train.d}, epsilon 1, delta 1e-5 (CPU time, medians of ${AMP_ROUNDS}; lambda ${lambda.toPrecision(4)}, sigma ${sigma.toPrecision(4)}, L-BFGS aims at ||grad||_2 <= ${aim.toPrecision(4)}; largest row norm ${maxNorm.toFixed(4)} <= C = ${clipNorm.toFixed(4)}: no row clipped)\n`);
  if (python !== undefined) process.stdout.write(`  scipy ${JSON.parse(python.banner).scipy}, 1 BLAS thread\n`);
  const row = (label: string, key: string, note = '') => process.stdout.write(`  ${label.padEnd(72)} ${ms(key).toFixed(1).padStart(8)} ms${note}\n`);
  row(dpfitRuns[0][0], dpfitRuns[0][0], `  (${first.diagnostics.iterations} iterations, test accuracy ${accuracy.toFixed(2)} %)`);
  if (python !== undefined) {
    const [nit, nfev, gnorm, acc] = extra.get('amp') ?? [];
    row('scipy L-BFGS-B, same objective, same stopping test', 'numpy amp', `  (${nit} iterations, ${nfev} evaluations, ||grad|| ${Number(gnorm).toPrecision(3)}, test accuracy ${(100 * acc).toFixed(2)} %)`);
    const [nit2, nfev2, , acc2] = extra.get('dpl') ?? [];
    row('scipy L-BFGS-B at diffprivlib\'s settings (gtol 1e-4, maxiter 100, mean loss)', 'numpy dpl', `  (${nit2} iterations, ${nfev2} evaluations, test accuracy ${(100 * acc2).toFixed(2)} %)`);
  }
  row(dpfitRuns[1][0], dpfitRuns[1][0]);
  row(dpfitRuns[2][0], dpfitRuns[2][0]);
  if (python !== undefined) row('numpy objective value + gradient (X @ w, X.T @ c)', 'numpy objective');
  process.stdout.write('  ratios:\n');
  if (python !== undefined) {
    process.stdout.write(`    dpfit AMP / scipy at the same stopping test = ${(ms(dpfitRuns[0][0]) / ms('numpy amp')).toFixed(2)}\n`);
    process.stdout.write(`    dpfit AMP / scipy at diffprivlib's settings = ${(ms(dpfitRuns[0][0]) / ms('numpy dpl')).toFixed(2)} (diffprivlib itself: bench amp)\n`);
    process.stdout.write(`    one evaluation: numpy / dpfit SIMD = ${(ms('numpy objective') / ms(dpfitRuns[1][0])).toFixed(2)}\n`);
  }
  process.stdout.write(`    one evaluation: dpfit JavaScript / SIMD kernels = ${(ms(dpfitRuns[2][0]) / ms(dpfitRuns[1][0])).toFixed(2)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runKernelBench();
