/**
 * Amplification by iteration for the last iterate of shuffled noisy SGD (`004` Thm. 3.6 and
 * Lemma 3.1; Feldman et al. 2018): the closed form is the optimum of Thm. 3.5's shift allocation,
 * the record processed last costs exactly one Gaussian step, earlier records cost less, and the
 * shuffled last iterate beats plain composition where the theory allows (high noise, many steps).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { iterationFactor, lastIteratePositionRdp, shuffledLastIterateEpsilon, shuffledLastIterateRdp } from '../../src/accounting/rdp/amplification-by-iteration.js';
import { gaussianEvent, selfComposeEvent } from '../../src/accounting/events/constructors.js';
import { gaussianCompositionEpsilon } from '../../src/accounting/gaussian/gaussian-composition.js';
import { gaussianRdp } from '../../src/accounting/rdp/base-mechanisms.js';
import { InvalidParameterError } from '../../src/errors.js';
import { seededRng } from '../../src/random/rng.js';

test('Thm. 3.5 -> 3.6: (1 - C^-2)/(1 - C^-2k) is the least sum of squared shifts absorbing a unit shift k steps from the end', () => {
  const rng = seededRng(5);
  for (const c of [1, 1.001, 1.05, 1.5]) {
    for (const k of [1, 2, 5, 20]) {
      // Unit shift at the first of k steps, multiplied by C at each later step: need sum_i C^(k-1-i) a_i = C^(k-1).
      const weights = Array.from({ length: k }, (_, i) => c ** (k - 1 - i));
      const target = c ** (k - 1);
      const norm2 = weights.reduce((s, w) => s + w * w, 0);
      const optimum = (target * target) / norm2; // Cauchy-Schwarz
      assert.ok(Math.abs(iterationFactor(c, k) - optimum) <= 1e-12 * optimum, `C = ${c}, k = ${k}: ${iterationFactor(c, k)} vs ${optimum}`);
      // Any other feasible allocation costs at least as much.
      for (let trial = 0; trial < 20; trial++) {
        const raw = weights.map(() => rng.nextDouble());
        const scale = target / raw.reduce((s, a, i) => s + weights[i] * a, 0);
        const cost = raw.reduce((s, a) => s + (a * scale) ** 2, 0);
        assert.ok(cost >= optimum * (1 - 1e-12));
      }
    }
  }
  // Continuity at C = 1.
  assert.ok(Math.abs(iterationFactor(1 + 1e-9, 7) - 1 / 7) < 1e-7);
});

test('the record processed last costs exactly one Gaussian step (sensitivity 2L, multiplier z / 2); earlier records cost less', () => {
  for (const z of [0.8, 2, 10]) {
    for (const order of [1.5, 2, 8, 64]) {
      const last = lastIteratePositionRdp(order, z, 1.1, 1);
      assert.ok(Math.abs(last / gaussianRdp(z / 2, order) - 1) < 1e-9, `${last} vs ${gaussianRdp(z / 2, order)}`);
      let previous = last;
      for (const k of [2, 3, 10, 100]) {
        const value = lastIteratePositionRdp(order, z, 1.1, k);
        assert.ok(value < previous, `k = ${k}`);
        previous = value;
      }
    }
  }
});

test('shuffled last iterate: never above plain composition, and far below it with high noise and many steps', () => {
  const options = { n: 1000, epochs: 1, noiseMultiplier: 10, lipschitzFactor: 1 };
  for (const order of [1.5, 2, 4, 16, 64]) {
    const shuffled = shuffledLastIterateRdp(order, options);
    const composition = gaussianRdp(5, order); // one Gaussian step per epoch for the differing record
    assert.ok(shuffled <= composition * (1 + 1e-9), `order ${order}`);
  }
  // At order 2, the average of 2 alpha / (z^2 k) over k is ~ 2 alpha ln(n) / (n z^2): ~ln(n)/n of composition.
  assert.ok(shuffledLastIterateRdp(2, options) < 0.02 * gaussianRdp(5, 2));
  // Large epochs (2e5 records: more than a spread argument list can hold) are accounted too.
  const large = shuffledLastIterateRdp(2, { ...options, n: 200_000 });
  assert.ok(Number.isFinite(large) && large < shuffledLastIterateRdp(2, options));
  // Epochs compose.
  assert.ok(Math.abs(shuffledLastIterateRdp(2, { ...options, epochs: 3 }) / shuffledLastIterateRdp(2, options) - 3) < 1e-9);
  // (epsilon, delta): better than the exact composition of the per-epoch Gaussian steps.
  const last = shuffledLastIterateEpsilon({ ...options, epochs: 5 }, 1e-5).epsilon;
  const plain = gaussianCompositionEpsilon(selfComposeEvent(gaussianEvent(5), 5), 1e-5)?.epsilon as number;
  assert.ok(last < plain, `${last} vs ${plain}`);
  // Little noise or few steps: the softmax is dominated by the last record; no gain is claimed beyond composition.
  const lowNoise = { n: 10, epochs: 1, noiseMultiplier: 0.5, lipschitzFactor: 1 };
  assert.ok(shuffledLastIterateRdp(8, lowNoise) <= gaussianRdp(0.25, 8));
});

test('non-convex smooth steps (C > 1) keep less of the amplification; parameters are checked by name', () => {
  const convex = shuffledLastIterateRdp(2, { n: 500, epochs: 1, noiseMultiplier: 8, lipschitzFactor: 1 });
  const smooth = shuffledLastIterateRdp(2, { n: 500, epochs: 1, noiseMultiplier: 8, lipschitzFactor: 1.01 });
  assert.ok(smooth > convex);
  assert.throws(() => shuffledLastIterateRdp(2, { n: 10, epochs: 1, noiseMultiplier: 1, lipschitzFactor: 0.9 }), (e: unknown) => e instanceof InvalidParameterError && /lipschitzFactor/.test(e.message));
  assert.throws(() => shuffledLastIterateRdp(2, { n: 0, epochs: 1, noiseMultiplier: 1, lipschitzFactor: 1 }), InvalidParameterError);
});
