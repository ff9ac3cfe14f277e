/**
 * Utility metrics for linear models. Classification: accuracy, log-loss (probabilities clipped to
 * [1e-15, 1 - 1e-15] so one confident mistake is a large finite loss, not Infinity), ROC AUC by the
 * rank statistic (Mann-Whitney U, ties counted one half). Regression: MSE and R^2.
 * Labels for classification are 0/1.
 */
import { InvalidParameterError } from '../errors.js';

function requireSameLength(a: ArrayLike<number>, b: ArrayLike<number>): void {
  if (a.length !== b.length) throw new InvalidParameterError('predictions', a.length, `of the same length as the labels (${b.length})`);
  if (a.length === 0) throw new InvalidParameterError('labels', 0, 'a non-empty array');
}

/** Fraction of examples whose predicted probability is on the side of 1/2 of their 0/1 label. */
export function accuracy(probabilities: ArrayLike<number>, labels: ArrayLike<number>): number {
  requireSameLength(probabilities, labels);
  let correct = 0;
  for (let i = 0; i < labels.length; i++) if ((probabilities[i] >= 0.5 ? 1 : 0) === labels[i]) correct++;
  return correct / labels.length;
}

/**
 * The accuracy of always predicting the most frequent label (0/1 labels, or class indices): what a
 * classifier's accuracy must beat to have learnt anything. 0 for no labels.
 */
export function majorityBaseline(labels: ArrayLike<number>): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < labels.length; i++) counts.set(labels[i], (counts.get(labels[i]) ?? 0) + 1);
  return labels.length === 0 ? 0 : Math.max(...counts.values()) / labels.length;
}

/** Mean negative log-likelihood of 0/1 labels. */
export function logLoss(probabilities: ArrayLike<number>, labels: ArrayLike<number>): number {
  requireSameLength(probabilities, labels);
  let total = 0;
  for (let i = 0; i < labels.length; i++) {
    const p = Math.min(1 - 1e-15, Math.max(1e-15, probabilities[i]));
    total -= labels[i] === 1 ? Math.log(p) : Math.log1p(-p);
  }
  return total / labels.length;
}

/** Area under the ROC curve; NaN-free: a single-class label set is an error. */
export function rocAuc(scores: ArrayLike<number>, labels: ArrayLike<number>): number {
  requireSameLength(scores, labels);
  const order = Array.from({ length: labels.length }, (_, i) => i).sort((a, b) => scores[a] - scores[b]);
  let positives = 0;
  let rankSum = 0;
  for (let i = 0; i < order.length; ) {
    let j = i;
    while (j + 1 < order.length && scores[order[j + 1]] === scores[order[i]]) j++;
    const averageRank = (i + j) / 2 + 1; // 1-based average rank of the tie group
    for (let k = i; k <= j; k++) {
      if (labels[order[k]] === 1) {
        positives++;
        rankSum += averageRank;
      }
    }
    i = j + 1;
  }
  const negatives = labels.length - positives;
  if (positives === 0 || negatives === 0) throw new InvalidParameterError('labels', `${positives} positives, ${negatives} negatives`, 'both classes present for AUC');
  return (rankSum - (positives * (positives + 1)) / 2) / (positives * negatives);
}

export function meanSquaredError(predictions: ArrayLike<number>, targets: ArrayLike<number>): number {
  requireSameLength(predictions, targets);
  let total = 0;
  for (let i = 0; i < targets.length; i++) total += (predictions[i] - targets[i]) ** 2;
  return total / targets.length;
}

/** Coefficient of determination 1 - SSE/SST (0 for a constant target predicted exactly is reported as 1). */
export function rSquared(predictions: ArrayLike<number>, targets: ArrayLike<number>): number {
  requireSameLength(predictions, targets);
  let mean = 0;
  for (let i = 0; i < targets.length; i++) mean += targets[i];
  mean /= targets.length;
  let sse = 0;
  let sst = 0;
  for (let i = 0; i < targets.length; i++) {
    sse += (predictions[i] - targets[i]) ** 2;
    sst += (targets[i] - mean) ** 2;
  }
  if (sst === 0) return sse === 0 ? 1 : -Infinity;
  return 1 - sse / sst;
}
