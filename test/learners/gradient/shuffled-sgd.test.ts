/**
 * Shuffled SGD (`004` Alg. 1) with one record per partial epoch: the step samples 1 of n uniformly,
 * so the proven event is amplified by sampling without replacement (Wang, Balle & Kasiviswanathan 2019).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { trainShuffledSgd } from '../../../src/learners/gradient/shuffled-sgd.js';
import { seededRng } from '../../../src/random/rng.js';

test('one record per partial epoch (tau = 1/n): each step samples 1 of n, the proven event is amplified and the noise far smaller', () => {
  const n = 200;
  const data = { x: Float64Array.from({ length: n * 2 }, (_, k) => ((k * 37) % 11) / 11 - 0.5), y: Float64Array.from({ length: n }, (_, i) => i % 2), n, d: 2 };
  const common = { loss: 'logistic', clipNorm: 1, epochs: 2, learningRate: 0.05, epsilon: 1, delta: 1e-5, rng: seededRng(3) };
  const sampled = trainShuffledSgd(data, { ...common, fraction: 1 / n });
  const two = trainShuffledSgd(data, { ...common, fraction: 2 / n });
  const event = sampled.privacy.event as { kind: string; event: { kind: string; sourceDatasetSize: number; sampleSize: number } };
  assert.equal(event.kind, 'selfCompose');
  assert.equal(event.event.kind, 'sampledWithoutReplacement');
  assert.equal(event.event.sourceDatasetSize, n);
  assert.equal(event.event.sampleSize, 1);
  assert.ok(sampled.privacy.epsilon <= 1 && sampled.privacy.guarantee === 'none' /* seeded */);
  assert.equal((two.privacy.event as { event: { kind: string } }).event.kind, 'gaussian');
  // Two records per partial epoch get no amplification: the noise for the same target is far larger.
  assert.ok(sampled.diagnostics.noiseMultiplier < two.diagnostics.noiseMultiplier / 3, `${sampled.diagnostics.noiseMultiplier} vs ${two.diagnostics.noiseMultiplier}`);
});
