/**
 * Progress of the certified minimisations (objective perturbation, AMP, output perturbation) for
 * the CLI's bar: a log-scale share of the way from the first gradient norm to the target, then the
 * fallback's known count; never done = total (the caller ends the bar); and reporting progress
 * changes nothing that is released.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { trainAmp } from '../../../src/learners/perturbation/approximate-minima-perturbation.js';
import { OPTIMIZER_PROGRESS_UNITS, optimizerProgress } from '../../../src/learners/glm/optimizer-progress.js';
import { trainObjectivePerturbation } from '../../../src/learners/perturbation/objective-perturbation.js';
import { trainOutputPerturbation } from '../../../src/learners/perturbation/output-perturbation.js';
import { seededRng } from '../../../src/random/rng.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';

test('optimizerProgress: log(g0/g) / log(g0/target) of the first 90 %, then the fallback k/K, by hand', () => {
  const seen: [number, number][] = [];
  const p = optimizerProgress(1e-4, (done, total) => seen.push([done, total]));
  p.onIteration({ iteration: 0, value: 0, gradNorm: 1 }); // the start: 0 % of the way
  p.onIteration({ iteration: 1, value: 0, gradNorm: 1e-2 }); // half-way on the log scale: 0.9 * 0.5 = 45 %
  p.onIteration({ iteration: 2, value: 0, gradNorm: 1e-5 }); // past the target: the optimiser's 90 %
  p.onFallback(5, 10); // half the fallback: 90 % + 5 %
  p.onFallback(10, 10); // the end is the caller's: 999 of 1000
  assert.deepEqual(seen, [[0, 1000], [450, 1000], [900, 1000], [950, 1000], [999, 1000]]);
});

test('optimizerProgress: any sequence of reports is nondecreasing and stays below total (property)', () => {
  fc.assert(
    fc.property(
      fc.double({ min: 1e-12, max: 1e3, noNaN: true }),
      fc.array(fc.oneof(fc.record({ g: fc.double({ min: 0, max: 1e6, noNaN: true }) }), fc.record({ k: fc.nat(100), K: fc.nat(100) })), { maxLength: 40 }),
      (target, events) => {
        const seen: number[] = [];
        const p = optimizerProgress(target, (done, total) => {
          assert.equal(total, OPTIMIZER_PROGRESS_UNITS);
          seen.push(done);
        });
        for (const e of events) 'g' in e ? p.onIteration({ iteration: 0, value: 0, gradNorm: e.g }) : p.onFallback(e.k, e.K);
        for (let i = 0; i < seen.length; i++) {
          assert.ok(seen[i] >= 0 && seen[i] < OPTIMIZER_PROGRESS_UNITS, `${seen[i]}`);
          if (i > 0) assert.ok(seen[i] >= seen[i - 1]);
        }
      },
    ),
    { seed: 15, numRuns: 300 },
  );
});

test('objpert, AMP and output perturbation report progress, and the release is bit-identical without it', () => {
  const data = makeLogisticData(2000, 4, 3);
  const runs: [string, (onStep?: (d: number, t: number) => void) => { model: unknown; privacy: unknown }][] = [
    ['objpert', (onStep) => trainObjectivePerturbation(data, { epsilon: 1, delta: 1e-5, rng: seededRng(1), acceptNoGuarantee: true, ...(onStep ? { onStep } : {}) })],
    ['amp', (onStep) => trainAmp(data, { epsilon: 1, delta: 1e-5, rng: seededRng(2), ...(onStep ? { onStep } : {}) })],
    ['output', (onStep) => trainOutputPerturbation(data, { epsilon: 1, delta: 1e-5, regularization: 0.01, rowNormBound: 1, rng: seededRng(3), ...(onStep ? { onStep } : {}) })],
  ];
  for (const [name, run] of runs) {
    const seen: number[] = [];
    const withBar = run((done, total) => {
      assert.equal(total, OPTIMIZER_PROGRESS_UNITS);
      seen.push(done);
    });
    assert.ok(seen.length >= 2, `${name}: ${seen.length} reports`);
    assert.ok(seen.every((d, i) => d < OPTIMIZER_PROGRESS_UNITS && (i === 0 || d >= seen[i - 1])), `${name}: ${seen}`);
    assert.ok(seen[seen.length - 1] >= 0.5 * OPTIMIZER_PROGRESS_UNITS, `${name}: the bar ends past half-way (${seen[seen.length - 1]})`);
    assert.deepEqual(withBar, run(), `${name}: same model and report without the callback`);
  }
});
