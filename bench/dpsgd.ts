/**
 * The cost of floating-point-safe noise on a whole training run: DP-SGD at epsilon 1,
 * delta 1e-5, batch 256, 10 epochs (1,272 steps) on UCI Adult's shape (32,561 rows x 146 features,
 * unit rows plus a bias), end to end in-process — calibration, Poisson batches, clipping, noise,
 * accounting — with dpfit's default exact discrete noise on a grid next to the same run with
 * continuous floating-point noise (`continuousNoise: true`), interleaved, medians. The target:
 * the discrete run within 1.5x of the continuous one.
 *
 * Uses `data/adult/adult.data` (or `DPFIT_ADULT_DIR`) when present, else a synthetic dataset of
 * the same shape (the timing depends on the shape, not on the values).
 *
 * `npm run bench -- dpsgd`, or standalone: `node --import tsx bench/dpsgd.ts`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { median } from './reference.js';
import { adultSchema } from '../src/data/adult.js';
import { loadDataset } from '../src/data/node/read.js';
import { trainDpSgd } from '../src/learners/gradient/dp-sgd.js';
import type { GlmData } from '../src/learners/glm/types.js';
import { sampleGaussian } from '../src/random/continuous.js';
import { secureRng, seededRng } from '../src/random/rng.js';

const ROUNDS = 5;

/** Adult-shaped synthetic data: 145 Gaussian features scaled to unit rows, plus a bias column of 1. */
function syntheticAdult(n = 32_561, d = 146): GlmData {
  const rng = seededRng(1);
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let norm = 0;
    for (let j = 0; j < d - 1; j++) {
      const v = sampleGaussian(rng);
      x[i * d + j] = v;
      norm += v * v;
    }
    for (let j = 0; j < d - 1; j++) x[i * d + j] /= Math.sqrt(norm);
    x[i * d + d - 1] = 1;
    y[i] = x[i * d] > 0 ? 1 : 0;
  }
  return { x, y, n, d };
}

export async function adultData(): Promise<{ data: GlmData; source: string }> {
  const dir = process.env.DPFIT_ADULT_DIR ?? 'data/adult';
  const file = join(dir, 'adult.data');
  if (existsSync(file)) {
    const { dataset } = await loadDataset(file, adultSchema());
    return { data: dataset, source: file };
  }
  return { data: syntheticAdult(), source: 'synthetic, Adult-shaped (no data/adult/adult.data)' };
}

export async function runDpSgdBench(): Promise<void> {
  const { data, source } = await adultData();
  process.stdout.write(`DP-SGD, epsilon 1, delta 1e-5, batch 256, 10 epochs on ${data.n} x ${data.d} (${source}); secure randomness\n`);
  const run = (continuousNoise: boolean) => {
    const start = performance.now();
    const result = trainDpSgd(data, {
      epsilon: 1,
      delta: 1e-5,
      clipNorm: Math.SQRT2,
      batchSize: 256,
      epochs: 10,
      learningRate: 2,
      rng: secureRng(),
      continuousNoise,
    });
    return { ms: performance.now() - start, steps: result.diagnostics.steps, epsilon: result.privacy.epsilon };
  };
  run(false);
  run(true);
  const discrete: number[] = [];
  const continuous: number[] = [];
  let epsilons = { discrete: 0, continuous: 0 };
  let steps = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const a = run(false);
    const b = run(true);
    discrete.push(a.ms);
    continuous.push(b.ms);
    epsilons = { discrete: a.epsilon, continuous: b.epsilon };
    steps = a.steps;
  }
  const md = median(discrete);
  const mc = median(continuous);
  process.stdout.write(`  steps                               ${steps}\n`);
  process.stdout.write(`  continuous floating-point noise     ${mc.toFixed(0)} ms (median of ${ROUNDS}), reported epsilon ${epsilons.continuous} (guarantee none)\n`);
  process.stdout.write(`  exact discrete noise on a grid      ${md.toFixed(0)} ms (median of ${ROUNDS}), reported epsilon ${epsilons.discrete} (proven)\n`);
  process.stdout.write(`  ratio discrete / continuous         ${(md / mc).toFixed(2)}x   (target <= 1.5x)\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runDpSgdBench();
}
