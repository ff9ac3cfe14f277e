/**
 * Sampler throughput: dpfit's secure samplers against a `Math.random` Box–Muller Gaussian measured
 * in the same run (docs/design.md, "Benchmarks": absolute times on these machines mean little, ratios
 * do). `npm run bench -- samplers`, or standalone: `node --import tsx bench/samplers.ts`.
 *
 * The last column is the cost of exact discrete noise: time per sample relative to the secure
 * continuous Gaussian (`fillGaussian`) measured in the same run. The learners draw their noise with
 * `fillDiscreteGaussian` at an integer sigma (grid steps), typically 1e3 to 1e8.
 *
 * Each case runs for a warm-up, then 5 rounds of ~0.3 s; the median round's throughput is printed.
 */
import { pathToFileURL } from 'node:url';
import { fillDiscreteGaussian, fillGaussian, sampleDiscreteGaussianVariance, secureRng } from '../src/random/index.js';

interface Case {
  name: string;
  /** Draws one batch and returns [samples drawn, a checksum that keeps the work alive]. */
  batch: () => [number, number];
}

const WARMUP_MS = 200;
const ROUND_MS = 300;
const ROUNDS = 5;

/** Median throughput in samples per second over ROUNDS rounds. */
function measure(batch: () => [number, number]): { perSecond: number; checksum: number } {
  let checksum = 0;
  const warmupEnd = performance.now() + WARMUP_MS;
  while (performance.now() < warmupEnd) checksum += batch()[1];
  const rates: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let samples = 0;
    const start = performance.now();
    let now = start;
    while (now - start < ROUND_MS) {
      const [count, sum] = batch();
      samples += count;
      checksum += sum;
      now = performance.now();
    }
    rates.push(samples / ((now - start) / 1000));
  }
  rates.sort((a, b) => a - b);
  return { perSecond: rates[Math.floor(ROUNDS / 2)], checksum };
}

/** Box–Muller with Math.random, both outputs used: the baseline a JS programmer would write. */
function boxMullerFill(out: Float64Array): void {
  for (let i = 0; i < out.length; i += 2) {
    const u = 1 - Math.random(); // (0, 1]: log(u) is finite
    const v = Math.random();
    const r = Math.sqrt(-2 * Math.log(u));
    out[i] = r * Math.cos(2 * Math.PI * v);
    if (i + 1 < out.length) out[i + 1] = r * Math.sin(2 * Math.PI * v);
  }
}

export async function runSamplersBench(): Promise<void> {
  const rng = secureRng();
  const buffer = new Float64Array(65536);
  const discrete = new Float64Array(10_000);
  const discreteGaussianCase = (sigma: number, label: string, note: string): Case => ({
    name: `secure discrete Gaussian, sigma = ${label} (${note})`,
    batch: () => {
      fillDiscreteGaussian(rng, discrete, sigma);
      return [discrete.length, discrete[0]];
    },
  });
  const baseline: Case = {
    name: 'Math.random Box–Muller Gaussian (baseline)',
    batch: () => {
      boxMullerFill(buffer);
      return [buffer.length, buffer[0]];
    },
  };
  const cases: Case[] = [
    baseline,
    {
      name: 'secure uniform doubles (nextDouble)',
      batch: () => {
        let sum = 0;
        for (let i = 0; i < 1_000_000; i++) sum += rng.nextDouble();
        return [1_000_000, sum];
      },
    },
    {
      name: 'secure Gaussian (fillGaussian, Ziggurat)',
      batch: () => {
        fillGaussian(rng, buffer);
        return [buffer.length, buffer[0]];
      },
    },
    discreteGaussianCase(1, '1', 'plain numbers'),
    discreteGaussianCase(1e3, '1e3', 'plain numbers'),
    discreteGaussianCase(1e5, '1e5', 'doubles + error bound'),
    discreteGaussianCase(1e7, '1e7', 'doubles + error bound'),
    discreteGaussianCase(2 ** 40, '2^40', 'doubles + error bound'),
    discreteGaussianCase(3.7e5 + 0.3, '3.7e5 + 0.3', 'doubles + error bound'),
    discreteGaussianCase(3.7, '3.7', 'doubles + error bound'),
    {
      name: 'secure discrete Gaussian, sigma^2 = (10^11 + 1)/3 (Variance)',
      batch: () => {
        let sum = 0;
        for (let i = 0; i < 10_000; i++) sum += sampleDiscreteGaussianVariance(rng, 100_000_000_001n, 3n);
        return [10_000, sum];
      },
    },
    {
      name: 'secure discrete Gaussian, sigma^2 = (10^11 + i)/3, a new rational per draw',
      batch: () => {
        let sum = 0;
        for (let i = 0; i < 1000; i++) sum += sampleDiscreteGaussianVariance(rng, 100_000_000_000n + BigInt(i), 3n);
        return [1000, sum];
      },
    },
  ];

  const results = cases.map((c) => ({ name: c.name, ...measure(c.batch) }));
  const base = results[0].perSecond;
  const continuous = results.find((r) => r.name.startsWith('secure Gaussian (fillGaussian'))?.perSecond ?? NaN;
  const width = Math.max(...results.map((r) => r.name.length));
  process.stdout.write(`${'sampler'.padEnd(width)}  M samples/s  vs baseline  cost vs fillGaussian\n`);
  for (const r of results) {
    const rate = (r.perSecond / 1e6).toFixed(r.perSecond < 1e7 ? 2 : 1).padStart(11);
    const ratio = `${(r.perSecond / base).toFixed(r.perSecond < base / 10 ? 3 : 2)}x`.padStart(11);
    const cost = `${(continuous / r.perSecond).toFixed(1)}x`.padStart(20);
    process.stdout.write(`${r.name.padEnd(width)}  ${rate}  ${ratio}  ${cost}\n`);
  }
  // Printing the checksums would clutter the table; using them keeps every batch's work alive.
  if (results.some((r) => Number.isNaN(r.checksum))) process.stdout.write('warning: NaN checksum\n');
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await runSamplersBench();
}
