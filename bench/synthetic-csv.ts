/**
 * The benchmarks' synthetic CSV (bench/memory.ts, bench/out-of-core.ts): n rows of D = 20 uniform
 * features in [-1, 1] written with 6 decimals and a yes/no label of a fixed linear rule plus
 * noise, from seed 16, so every benchmark that names the same n reads the same file.
 */
import { createWriteStream } from 'node:fs';
import { seededRng } from '../src/random/rng.js';

export const SYNTHETIC_FEATURES = 20;
const D = SYNTHETIC_FEATURES;

export async function writeSyntheticCsv(path: string, n: number): Promise<void> {
  const rng = seededRng(16);
  const out = createWriteStream(path);
  const header = [...Array.from({ length: D }, (_, j) => `x${j}`), 'y'].join(',');
  let batch: string[] = [header];
  for (let i = 0; i < n; i++) {
    const fields: string[] = [];
    let s = 0;
    for (let j = 0; j < D; j++) {
      const v = rng.nextDouble() * 2 - 1;
      s += v * (j % 3 === 0 ? 1 : -0.5);
      fields.push(v.toFixed(6));
    }
    fields.push(s + 0.3 * (rng.nextDouble() - 0.5) > 0 ? 'yes' : 'no');
    batch.push(fields.join(','));
    if (batch.length >= 10_000) {
      if (!out.write(`${batch.join('\n')}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
      batch = [];
    }
  }
  out.write(batch.length > 0 ? `${batch.join('\n')}\n` : '');
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
}
