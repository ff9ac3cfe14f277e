/**
 * `004` Sec. 4.5 ("Shuffling can be less private"), enumerated exactly. theta starts at 0; each of
 * the n = 2 training examples is one of two non-convex losses whose gradients are, at the points the
 * two steps reach (Fig. 9, read from the text's requirements):
 *   l1: -1 at 0, +1 at 1, +1 at -1;   l2: +1 at 0, -1 at 1, -1 at -1,
 * so two SGD steps with step size 1 end at 0 for (l1, l1) and (l2, l2) but at 2 for (l1, l2) and -2
 * for (l2, l1). With probability p the final theta is returned, else a uniform draw from
 * {-2, 0, 2}. Replace-one neighbours: {l1, l2} against {l1, l1} or {l2, l2}. The thesis: at p = 1/2,
 * sampling with replacement is log(1.75)-DP, sampling without replacement (shuffling) only log(4)-DP.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deltaOfPair, pureEpsilonOfPair, type FiniteDistribution } from '../../src/accounting/finite-distributions.js';

type Loss = 'l1' | 'l2';
const GRADIENT: Record<Loss, Record<number, number>> = { l1: { 0: -1, 1: 1, [-1]: 1 }, l2: { 0: 1, 1: -1, [-1]: -1 } };

function sgd(order: readonly Loss[]): number {
  let theta = 0;
  for (const loss of order) theta -= GRADIENT[loss][theta];
  return theta;
}

/** The output distribution on `data` (two examples) for one sampling scheme. */
function outputs(data: readonly [Loss, Loss], sampling: 'replacement' | 'shuffling', p: number): FiniteDistribution {
  const orders: [Loss[], number][] =
    sampling === 'shuffling'
      ? [[[data[0], data[1]], 0.5], [[data[1], data[0]], 0.5]]
      : [0, 1].flatMap((i) => [0, 1].map((j) => [[data[i], data[j]], 0.25] as [Loss[], number]));
  const out = new Map<string, number>();
  for (const [order, weight] of orders) {
    const key = String(sgd(order));
    out.set(key, (out.get(key) ?? 0) + weight * p);
  }
  for (const key of ['-2', '0', '2']) out.set(key, (out.get(key) ?? 0) + (1 - p) / 3);
  return out;
}

/** The exact pure DP of the algorithm: the worst neighbouring pair. */
function epsilonOf(sampling: 'replacement' | 'shuffling', p: number): number {
  const mixed = outputs(['l1', 'l2'], sampling, p);
  return Math.max(pureEpsilonOfPair(mixed, outputs(['l1', 'l1'], sampling, p)), pureEpsilonOfPair(mixed, outputs(['l2', 'l2'], sampling, p)));
}

test('004 Sec. 4.5: at p = 1/2, sampling with replacement is log(1.75)-DP and shuffling only log(4)-DP (exact enumeration)', () => {
  assert.equal(sgd(['l1', 'l1']), 0);
  assert.equal(sgd(['l2', 'l2']), 0);
  assert.equal(sgd(['l1', 'l2']), 2);
  assert.equal(sgd(['l2', 'l1']), -2);
  assert.ok(Math.abs(epsilonOf('replacement', 0.5) - Math.log(1.75)) < 1e-12, String(epsilonOf('replacement', 0.5)));
  assert.ok(Math.abs(epsilonOf('shuffling', 0.5) - Math.log(4)) < 1e-12, String(epsilonOf('shuffling', 0.5)));
  // Shuffling is less private for every p in (0, 1), and both tend to 0 as p -> 0 (pure output perturbation).
  for (const p of [0.05, 0.2, 0.5, 0.8, 0.95]) assert.ok(epsilonOf('shuffling', p) > epsilonOf('replacement', p), String(p));
  assert.ok(epsilonOf('shuffling', 1e-6) < 1e-5);
});

test('finite distributions: pure DP and delta(epsilon) are consistent (delta(eps) = 0 exactly from the pure epsilon on), and infinite off the support', () => {
  const p = new Map([['a', 0.5], ['b', 0.5]]);
  const q = new Map([['a', 0.8], ['b', 0.2]]);
  const epsilon = pureEpsilonOfPair(p, q);
  assert.ok(Math.abs(epsilon - Math.log(2.5)) < 1e-15);
  assert.equal(deltaOfPair(p, q, epsilon), 0);
  assert.ok(deltaOfPair(p, q, epsilon * 0.9) > 0);
  assert.ok(Math.abs(deltaOfPair(p, q, 0) - 0.3) < 1e-15); // total variation
  assert.equal(pureEpsilonOfPair(p, new Map([['a', 1]])), Infinity);
  assert.throws(() => pureEpsilonOfPair(new Map([['a', 0.5]]), q), /summing to 1/);
});
