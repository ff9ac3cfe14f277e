/**
 * Extreme but valid events found by the event fuzz (test/accounting/events/fuzz.test.ts), each with
 * the property that makes its answer right rather than merely clean:
 *   - noise multipliers whose square overflows (1e160, 1e308) are accounted as 1e100
 *     (`accounting/extreme-noise.ts`): a finite epsilon, never below the true one (more noise is
 *     a post-processing), equal to the z = 1e100 value, and monotone in z;
 *   - noise so small that the privacy loss is beyond floating point: RDP says Infinity (a valid
 *     upper bound), PLD refuses with a NumericalError naming the event;
 *   - nested Poisson sampling equals sampling at the product of the rates (rounded up), for both
 *     accountants, and is at least the value at the exact product (monotone in q);
 *   - the shuffled-SGD conjecture outside its assumption sigma >= 2L is an unsupported event.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gaussianEvent, objectivePerturbationEvent, poissonSampledEvent } from '../../src/accounting/events/constructors.js';
import { parseEvent } from '../../src/accounting/events/json.js';
import { pldEpsilon } from '../../src/accounting/pld/accountant.js';
import { rdpDelta, rdpEpsilon } from '../../src/accounting/rdp/accountant.js';
import { NumericalError, UnsupportedEventError } from '../../src/errors.js';

const DELTA = 1e-5;

test('noise multipliers whose square overflows: finite, equal to z = 1e100, monotone in z (RDP and PLD)', () => {
  const at = (z: number) => rdpEpsilon(gaussianEvent(z), DELTA).epsilon;
  const cap = at(1e100);
  assert.ok(Number.isFinite(cap) && cap > 0);
  for (const z of [1e160, 1e200, 1e308]) {
    assert.equal(at(z), cap, `RDP at z = ${z}`);
    assert.ok(Number.isFinite(rdpDelta(gaussianEvent(z), 1).delta));
    assert.equal(pldEpsilon(gaussianEvent(z), DELTA).epsilon, pldEpsilon(gaussianEvent(1e100), DELTA).epsilon, `PLD at z = ${z}`);
  }
  // Monotone: more noise never costs more.
  let previous = Infinity;
  for (const z of [1, 10, 1e5, 1e50, 1e100, 1e200]) {
    const e = at(z);
    assert.ok(e <= previous, `epsilon(${z}) = ${e} > ${previous}`);
    previous = e;
  }
  // Through Poisson sampling and composition too (the general subsampling path used to get NaN at order Infinity).
  const nested = parseEvent('{"kind":"poissonSampled","samplingProbability":0.01,"event":{"kind":"selfCompose","count":10,"event":{"kind":"gaussian","noiseMultiplier":1e308}}}');
  assert.ok(Number.isFinite(rdpEpsilon(nested, DELTA).epsilon));
});

test('noise so small that the loss leaves floating point: RDP Infinity, PLD a NumericalError naming the event', () => {
  const tiny = gaussianEvent(1e-300);
  assert.equal(rdpEpsilon(tiny, DELTA).epsilon, Infinity);
  assert.throws(() => pldEpsilon(tiny, DELTA), (e: unknown) => e instanceof NumericalError && /Gaussian\(noiseMultiplier = 1e-300\)/.test(e.message));
  const objpert = objectivePerturbationEvent({ noiseStd: 0.01, lipschitz: 1e308, smoothness: 0.9, regularization: 3 });
  assert.throws(() => pldEpsilon(objpert, DELTA), (e: unknown) => e instanceof NumericalError && /lipschitz \/ noiseStd = Infinity/.test(e.message));
  assert.equal(rdpEpsilon(objpert, DELTA).epsilon, Infinity);
});

test('nested Poisson sampling is sampling at the product of the rates, rounded up (RDP and PLD)', () => {
  const z = 1.1;
  const nested = poissonSampledEvent(0.1, poissonSampledEvent(0.01, gaussianEvent(z)));
  const product = 0.1 * 0.01;
  const flat = poissonSampledEvent(product * (1 + Number.EPSILON), gaussianEvent(z));
  const exactish = poissonSampledEvent(product, gaussianEvent(z));
  const rdp = rdpEpsilon(nested, DELTA).epsilon;
  assert.equal(rdp, rdpEpsilon(flat, DELTA).epsilon);
  assert.ok(rdp >= rdpEpsilon(exactish, DELTA).epsilon);
  const pld = pldEpsilon(nested, DELTA).epsilon;
  assert.ok(Math.abs(pld - pldEpsilon(flat, DELTA).epsilon) <= 1e-9 * pld);
  assert.ok(pld >= pldEpsilon(exactish, DELTA).epsilonLower!);
});

test('the shuffled-SGD conjecture below sigma = 2L is an unsupported event (the conjecture assumes it)', () => {
  const event = parseEvent({ kind: 'shuffledSgdConjecture', datasetSize: 100, noiseMultiplier: 1, epochs: 1, fraction: 0.5, constant: 16 });
  assert.throws(() => rdpEpsilon(event, DELTA, { allowConjecture: true }), (e: unknown) => e instanceof UnsupportedEventError && /noiseMultiplier must be >= 2, got 1/.test(e.message));
});
