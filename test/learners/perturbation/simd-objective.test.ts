/**
 * AMP, objective perturbation and output perturbation minimise their objectives with the SIMD
 * kernels when the features live in a feature memory (`glm/objective.ts`, `withKernelFeatures`),
 * and with the JavaScript kernels otherwise. The two compute the same objective values and
 * gradients bit for bit (`test/learners/glm/objective.test.ts`), so the optimisers take the same
 * steps: the same seed must release the same model, with the same privacy report, on either path.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { storeFeatures } from '../../../src/learners/glm/kernels/feature-memory.js';
import { trainAmp } from '../../../src/learners/perturbation/approximate-minima-perturbation.js';
import { trainObjectivePerturbation } from '../../../src/learners/perturbation/objective-perturbation.js';
import { trainOutputPerturbation } from '../../../src/learners/perturbation/output-perturbation.js';
import type { TrainResult } from '../../../src/learners/training.js';
import { seededRng } from '../../../src/random/rng.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';

function sameRelease(a: TrainResult, b: TrainResult, what: string): void {
  const ta = a.model?.theta as readonly number[];
  const tb = b.model?.theta as readonly number[];
  assert.equal(ta.length, tb.length, what);
  for (let j = 0; j < ta.length; j++) assert.ok(Object.is(ta[j], tb[j]), `${what}: theta[${j}] ${ta[j]} vs ${tb[j]}`);
  assert.deepEqual(a.privacy, b.privacy, `${what}: privacy`);
  assert.equal(a.diagnostics.iterations ?? a.diagnostics.steps, b.diagnostics.iterations ?? b.diagnostics.steps, `${what}: iterations`);
}

test('the same seed releases the same model with the features in a feature memory (SIMD kernels) or in a plain array (JavaScript kernels)', () => {
  // Below KERNEL_FEATURES_MIN_ELEMENTS the learners keep a plain array as given: the JavaScript path.
  for (const [n, d] of [[700, 9], [1100, 6]]) {
    const plain = makeLogisticData(n, d, n + d);
    const stored = { ...plain, x: storeFeatures(plain.x, n, d, 'float64') as Float64Array };
    for (const seed of [1, 2]) {
      const amp = (data: typeof plain) => trainAmp(data, { epsilon: 1, delta: 1e-5, rowNormBound: 1, rng: seededRng(seed) });
      sameRelease(amp(plain), amp(stored), `AMP n=${n} d=${d} seed ${seed}`);
      const output = (data: typeof plain) => trainOutputPerturbation(data, { regularization: 0.05, rowNormBound: 1, epsilon: 1, delta: 1e-5, rng: seededRng(seed) });
      sameRelease(output(plain), output(stored), `output perturbation n=${n} d=${d} seed ${seed}`);
      for (const optimizer of ['newton', 'lbfgs'] as const) {
        const objpert = (data: typeof plain) => trainObjectivePerturbation(data, { acceptNoGuarantee: true, epsilon: 1, delta: 1e-5, optimizer, rng: seededRng(seed) });
        sameRelease(objpert(plain), objpert(stored), `objective perturbation (${optimizer}) n=${n} d=${d} seed ${seed}`);
      }
    }
  }
});
