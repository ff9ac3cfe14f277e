import { sampleGaussian } from '../../src/random/continuous.js';
import { seededRng } from '../../src/random/rng.js';

/** n rows with features clipped to L2 norm 1 and logistic 0/1 labels from a fixed direction (seeded). */
export function makeLogisticData(n: number, d: number, seed: number): { x: Float64Array; y: Float64Array; n: number; d: number } {
  const rng = seededRng(seed);
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  const direction = Array.from({ length: d }, (_, j) => (j % 2 === 0 ? 2 : -1));
  for (let i = 0; i < n; i++) {
    let norm = 0;
    for (let j = 0; j < d; j++) {
      x[i * d + j] = sampleGaussian(rng) / Math.sqrt(d);
      norm += x[i * d + j] ** 2;
    }
    const scale = Math.max(1, Math.sqrt(norm));
    let z = 0;
    for (let j = 0; j < d; j++) {
      x[i * d + j] /= scale;
      z += x[i * d + j] * direction[j];
    }
    y[i] = rng.nextDouble() < 1 / (1 + Math.exp(-3 * z)) ? 1 : 0;
  }
  return { x, y, n, d };
}
