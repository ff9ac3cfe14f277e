/**
 * Training speed (issue 6): one DP-GD epoch — clipped per-example logistic gradients over the full
 * data, summed — over 1e6 x 20 rows, next to a numpy implementation of the same step timed in the
 * same run when python3 with numpy is present (skipped otherwise). Target: not slower than numpy.
 *
 * `npm run bench -- train`, or standalone: `node --import tsx bench/train.ts`.
 */
import { pathToFileURL } from 'node:url';
import { median, runPythonReference } from './reference.js';
import { logisticLoss } from '../src/learners/glm/logistic.js';
import { sumClippedGradients } from '../src/learners/glm/per-example.js';
import { fillGaussian } from '../src/random/continuous.js';
import { seededRng } from '../src/random/rng.js';

const N = 1_000_000;
const D = 20;
const ROUNDS = 7;

const NUMPY = `
import time, statistics, numpy as np
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
times = []
for _ in range(${ROUNDS}):
    s = time.perf_counter(); step(); times.append(time.perf_counter() - s)
print(statistics.median(times) * 1000)
`;

export async function runTrainBench(): Promise<void> {
  const rng = seededRng(1);
  const x = new Float64Array(N * D);
  fillGaussian(rng, x, 1 / Math.sqrt(D));
  const y = new Float64Array(N).map(() => (rng.nextDouble() < 0.5 ? -1 : 1));
  const theta = new Float64Array(D);
  fillGaussian(rng, theta, 0.1);
  const data = { x, y, n: N, d: D };
  const out = new Float64Array(D);
  sumClippedGradients(logisticLoss, data, theta, { clipNorm: 1, out });
  const times: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now();
    sumClippedGradients(logisticLoss, data, theta, { clipNorm: 1, out });
    times.push(performance.now() - start);
  }
  const dpfitMs = median(times);
  process.stdout.write(`one DP-GD epoch: clipped per-example logistic gradients, ${N} x ${D}\n`);
  process.stdout.write(`  dpfit  ${dpfitMs.toFixed(1)} ms median of ${ROUNDS}\n`);
  const numbers = runPythonReference(NUMPY, 300_000);
  if (numbers === undefined) {
    process.stdout.write('  numpy  not available (skipped)\n');
    return;
  }
  const [numpyMs] = numbers;
  const ratio = numpyMs / dpfitMs;
  process.stdout.write(`  numpy  ${numpyMs.toFixed(1)} ms median of ${ROUNDS}  (dpfit ${ratio >= 1 ? `${ratio.toFixed(2)}x faster` : `${(1 / ratio).toFixed(2)}x slower`}; target: not slower)\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runTrainBench();
