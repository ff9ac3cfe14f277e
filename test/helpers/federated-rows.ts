/**
 * The small federated data sets of the federated tests and the secure-aggregation experiment:
 * n synthetic rows in d = 4, scaled into the ball of radius 0.5 (the public row-norm bound), labels
 * +-1 from a logistic model, and the sign accuracy of a model on them.
 */
import { syntheticDataset } from '../../src/data/synthetic.js';
import type { NodeData } from '../../src/federated/node.js';
import { seededRng } from '../../src/random/rng.js';

export const BALL_ROWS_D = 4;
export const BALL_ROWS_BOUND = 0.5;

/** n rows, features scaled into the ball of radius 0.5, labels +-1 (logistic model); featureNames default to the generator's. */
export function ballRows(n: number, seed: number, featureNames?: readonly string[]): NodeData {
  const D = BALL_ROWS_D;
  const data = syntheticDataset({ n, d: D, labels: 'logistic', encoding: 'plusMinusOne', rng: seededRng(seed) });
  const x = Float64Array.from(data.x);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let k = 0; k < D; k++) s += x[i * D + k] ** 2;
    const f = Math.max(1, Math.sqrt(s)) / BALL_ROWS_BOUND;
    for (let k = 0; k < D; k++) x[i * D + k] /= f;
  }
  return { x, y: data.y, n, d: D, featureNames: featureNames === undefined ? (data.featureNames ?? []) : [...featureNames], rowNormBound: BALL_ROWS_BOUND, labelBound: 1 };
}

/** The share of rows whose label is the sign of the margin, over every node's rows. */
export function signAccuracy(theta: readonly number[], datasets: readonly NodeData[]): number {
  let right = 0;
  let all = 0;
  for (const data of datasets) {
    for (let i = 0; i < data.n; i++) {
      let m = 0;
      for (let k = 0; k < data.d; k++) m += data.x[i * data.d + k] * theta[k];
      right += Math.sign(m) === data.y[i] ? 1 : 0;
      all++;
    }
  }
  return right / all;
}
