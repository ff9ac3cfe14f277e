/**
 * A federated node's data for tests: n rows of d = 3 logistic features scaled into the ball of
 * radius 0.5 (the node's public row-norm bound) with +-1 labels (label bound 1), seeded.
 */
import type { NodeData } from '../../src/federated/node.js';
import { syntheticDataset } from '../../src/data/synthetic.js';
import { seededRng } from '../../src/random/rng.js';

export function nodeRows(n: number, seed: number): NodeData {
  const d = 3;
  const rows = syntheticDataset({ n, d, labels: 'logistic', encoding: 'plusMinusOne', rng: seededRng(seed) });
  const x = Float64Array.from(rows.x);
  for (let i = 0; i < n; i++) {
    const norm = Math.hypot(...x.subarray(i * d, (i + 1) * d));
    for (let k = 0; k < d; k++) x[i * d + k] /= Math.max(1, norm) / 0.5;
  }
  return { x, y: rows.y, n, d, featureNames: ['x1', 'x2', 'x3'], rowNormBound: 0.5, labelBound: 1 };
}
