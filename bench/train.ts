/**
 * Training speed (issue 6): one DP-GD epoch — clipped per-example logistic gradients over the full
 * data, summed — over 1e6 x 20 rows, next to a numpy implementation of the same step when python3
 * with numpy is present (skipped otherwise). Target: not slower than numpy.
 *
 * Fairness: both sides do the same work every step — margins, f', the row norms (recomputed each
 * step on both sides: neither caches them), the clamp, and the weighted sum of rows. numpy runs
 * with its BLAS's default thread count, which the output states; dpfit is timed on one thread
 * (`sumClippedGradients`) and on a worker pool of `os.availableParallelism()` threads over shared
 * memory (`parallel-clipped-sum.ts`, the same numbers bit for bit). The machine is shared, so the
 * numpy and dpfit rounds are interleaved in one run and medians are reported.
 *
 * `npm run bench -- train`, or standalone: `node --import tsx bench/train.ts`.
 */
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { median, startPythonSession } from './reference.js';
import { logisticLoss } from '../src/learners/glm/logistic.js';
import { createClippedGradientPool, shareGlmData } from '../src/learners/glm/parallel-clipped-sum.js';
import { sumClippedGradients } from '../src/learners/glm/per-example.js';
import { fillGaussian } from '../src/random/continuous.js';
import { seededRng } from '../src/random/rng.js';

const N = 1_000_000;
const D = 20;
/** Alternations of (dpfit rounds, numpy rounds), and rounds per side per alternation. */
const ALTERNATIONS = 5;
const ROUNDS = 3;

const NUMPY = `
import sys, time, ctypes, glob, os, numpy as np
def blas_threads():
    # numpy's bundled OpenBLAS (scipy-openblas) exports its thread count; 'unknown' otherwise.
    libs = os.path.join(os.path.dirname(np.__file__), '..', 'numpy.libs')
    for path in glob.glob(os.path.join(libs, '*openblas*')):
        lib = ctypes.CDLL(path)
        for name in ('scipy_openblas_get_num_threads64_', 'openblas_get_num_threads64_', 'openblas_get_num_threads'):
            if hasattr(lib, name):
                return str(getattr(lib, name)())
    return 'unknown'
rng = np.random.default_rng(1)
n, d, C = ${N}, ${D}, 1.0
x = rng.standard_normal((n, d)) / np.sqrt(d)
y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
theta = rng.standard_normal(d) * 0.1
def step():
    z = x @ theta
    g = -y / (1.0 + np.exp(y * z))            # f'(z; y) of the logistic loss
    norms = np.sqrt(np.einsum('ij,ij->i', x, x))
    t = C / np.maximum(norms, 1e-300)
    c = np.clip(g, -t, t)                     # clip |f'| ||x|| to C
    return c @ x
step()
print(blas_threads(), np.__version__)
for line in sys.stdin:
    times = []
    for _ in range(int(line)):
        s = time.perf_counter(); step(); times.append((time.perf_counter() - s) * 1000)
    print(' '.join(map(str, times)))
`;

function ratioText(numpyMs: number, dpfitMs: number): string {
  const ratio = numpyMs / dpfitMs;
  return ratio >= 1 ? `${ratio.toFixed(2)}x faster than numpy` : `${(1 / ratio).toFixed(2)}x slower than numpy`;
}

export async function runTrainBench(): Promise<void> {
  const rng = seededRng(1);
  const x = new Float64Array(N * D);
  fillGaussian(rng, x, 1 / Math.sqrt(D));
  const y = new Float64Array(N).map(() => (rng.nextDouble() < 0.5 ? -1 : 1));
  const theta = new Float64Array(D);
  fillGaussian(rng, theta, 0.1);
  const data = { x, y, n: N, d: D };
  const shared = shareGlmData(data);
  const threads = availableParallelism();
  const pool = await createClippedGradientPool({ threads });
  const out = new Float64Array(D);
  const serialStep = () => sumClippedGradients(logisticLoss, data, theta, { clipNorm: 1, out });
  const poolStep = () => pool.sumClippedGradients(logisticLoss, shared, theta, { clipNorm: 1, out });
  const time = (step: () => unknown, into: number[]) => {
    for (let r = 0; r < ROUNDS; r++) {
      const start = performance.now();
      step();
      into.push(performance.now() - start);
    }
  };
  // Warm-up: the JIT and the workers.
  for (let r = 0; r < 3; r++) {
    serialStep();
    poolStep();
  }
  const python = await startPythonSession(NUMPY, 300_000);
  const serialMs: number[] = [];
  const poolMs: number[] = [];
  const numpyMs: number[] = [];
  try {
    for (let a = 0; a < ALTERNATIONS; a++) {
      time(serialStep, serialMs);
      time(poolStep, poolMs);
      if (python !== undefined) numpyMs.push(...(await python.ask(String(ROUNDS))));
    }
  } finally {
    python?.close();
    await pool.close();
  }
  const rounds = ALTERNATIONS * ROUNDS;
  process.stdout.write(`one DP-GD epoch: clipped per-example logistic gradients, ${N} x ${D} (row norms recomputed every step on both sides)\n`);
  const serial = median(serialMs);
  const parallel = median(poolMs);
  if (python === undefined) {
    process.stdout.write(`  dpfit  1 thread   ${serial.toFixed(1)} ms median of ${rounds}\n`);
    process.stdout.write(`  dpfit  ${threads} threads  ${parallel.toFixed(1)} ms median of ${rounds}\n`);
    process.stdout.write('  numpy  not available (skipped)\n');
    return;
  }
  const [blasThreads, numpyVersion] = python.banner.split(/\s+/);
  const numpy = median(numpyMs);
  process.stdout.write(`  numpy ${numpyVersion}, BLAS threads ${blasThreads} (of ${threads} CPUs)  ${numpy.toFixed(1)} ms median of ${rounds}\n`);
  process.stdout.write(`  dpfit  1 thread   ${serial.toFixed(1)} ms median of ${rounds}  (${ratioText(numpy, serial)}; target: not slower)\n`);
  process.stdout.write(`  dpfit  ${threads} threads  ${parallel.toFixed(1)} ms median of ${rounds}  (${ratioText(numpy, parallel)}; shared-memory worker pool, bit-identical sums)\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runTrainBench();
