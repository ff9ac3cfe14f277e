import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { DpEvent } from '../../../src/accounting/events/types.js';
import {
  composeEvent,
  gaussianEvent,
  laplaceEvent,
  NO_OP_EVENT,
  NON_PRIVATE_EVENT,
  nonUniformSampledEvent,
  objectivePerturbationEvent,
  poissonSampledEvent,
  randomizedResponseEvent,
  relativeGaussianEvent,
  repeatAndSelectEvent,
  sampledWithoutReplacementEvent,
  selfComposeEvent,
  shuffledSgdConjectureEvent,
} from '../../../src/accounting/events/constructors.js';
import { eventToJson, parseEvent } from '../../../src/accounting/events/json.js';
import { InvalidParameterError } from '../../../src/errors.js';

const positive = fc.double({ min: 1e-6, max: 1e6, noNaN: true });

const leafEvent: fc.Arbitrary<DpEvent> = fc.oneof(
  positive.map((z) => gaussianEvent(z)),
  positive.map((z) => gaussianEvent(z, { discrete: true })),
  positive.map((b) => laplaceEvent(b)),
  fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 2, max: 100 })).map(([p, k]) => randomizedResponseEvent(p, k)),
  fc.tuple(positive, positive, fc.integer({ min: 1, max: 1000 })).map(([eta, gamma, dimension]) => relativeGaussianEvent({ eta, gamma, dimension })),
  fc.tuple(positive, positive, fc.double({ min: 0, max: 10, noNaN: true })).map(([noiseStd, lipschitz, smoothness]) =>
    objectivePerturbationEvent({ noiseStd, lipschitz, smoothness, regularization: smoothness + 1 }),
  ),
  fc.tuple(fc.integer({ min: 2, max: 1e6 }), positive, fc.double({ min: 0.01, max: 0.99, noNaN: true })).map(([n, z, tau]) =>
    shuffledSgdConjectureEvent({ datasetSize: n, noiseMultiplier: z, epochs: 3, fraction: tau }),
  ),
  fc.constant(NON_PRIVATE_EVENT),
  fc.constant(NO_OP_EVENT),
);

const anyEvent: fc.Arbitrary<DpEvent> = fc.letrec<{ event: DpEvent }>((tie) => ({
  event: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leafEvent,
    fc.tuple(fc.double({ min: 1e-6, max: 1, noNaN: true }), tie('event')).map(([q, e]) => poissonSampledEvent(q, e)),
    fc.tuple(fc.integer({ min: 1, max: 1000 }), tie('event')).map(([m, e]) => sampledWithoutReplacementEvent(1000, m, e)),
    fc.tuple(fc.double({ min: 1e-9, max: 0.999, noNaN: true }), tie('event')).map(([c, e]) => nonUniformSampledEvent(c, e)),
    fc.array(tie('event'), { maxLength: 3 }).map((events) => composeEvent(events)),
    fc.tuple(fc.integer({ min: 0, max: 1e5 }), tie('event')).map(([k, e]) => selfComposeEvent(e, k)),
    fc.tuple(fc.double({ min: 1.5, max: 100, noNaN: true }), fc.constantFrom(0, 1, 0.5, Infinity), tie('event')).map(([mean, shape, e]) =>
      repeatAndSelectEvent(e, mean, shape),
    ),
  ),
})).event;

test('events round-trip through their JSON form unchanged (property)', () => {
  fc.assert(
    fc.property(anyEvent, (event) => {
      const text = JSON.stringify(eventToJson(event));
      assert.deepEqual(parseEvent(text), event);
      assert.deepEqual(parseEvent(JSON.parse(text)), event);
    }),
    { seed: 7, numRuns: 300 },
  );
});

test('events are frozen', () => {
  const event = poissonSampledEvent(0.01, gaussianEvent(1.1));
  assert.ok(Object.isFrozen(event));
  assert.throws(() => {
    (event as { samplingProbability: number }).samplingProbability = 1;
  }, TypeError);
});

test('the JSON shape is the public one of docs/design.md', () => {
  const event = selfComposeEvent(poissonSampledEvent(0.01, gaussianEvent(1.1)), 1000);
  assert.deepEqual(eventToJson(event), {
    kind: 'selfCompose',
    count: 1000,
    event: { kind: 'poissonSampled', samplingProbability: 0.01, event: { kind: 'gaussian', noiseMultiplier: 1.1 } },
  });
  assert.deepEqual(eventToJson(repeatAndSelectEvent(NO_OP_EVENT, 10, Infinity)), { kind: 'repeatAndSelect', event: { kind: 'noOp' }, mean: 10, shape: 'Infinity' });
});

function assertInvalid(fn: () => unknown, param: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof InvalidParameterError, `expected InvalidParameterError, got ${String(error)}`);
    assert.equal(error.param, param);
    return true;
  });
}

test('constructors refuse out-of-range parameters, naming them', () => {
  assertInvalid(() => gaussianEvent(0), 'noiseMultiplier');
  assertInvalid(() => gaussianEvent(-1), 'noiseMultiplier');
  assertInvalid(() => gaussianEvent(NaN), 'noiseMultiplier');
  assertInvalid(() => laplaceEvent(Infinity), 'noiseMultiplier');
  assertInvalid(() => poissonSampledEvent(0, NO_OP_EVENT), 'samplingProbability');
  assertInvalid(() => poissonSampledEvent(1.5, NO_OP_EVENT), 'samplingProbability');
  assertInvalid(() => selfComposeEvent(NO_OP_EVENT, -1), 'count');
  assertInvalid(() => selfComposeEvent(NO_OP_EVENT, 1.5), 'count');
  assertInvalid(() => sampledWithoutReplacementEvent(10, 11, NO_OP_EVENT), 'sampleSize');
  // 004 Thm. 4.2 needs 0 < c < 1.
  for (const c of [0, 1, -0.5, 1.5, NaN, Infinity]) assertInvalid(() => nonUniformSampledEvent(c, NO_OP_EVENT), 'maxWeight');
  assertInvalid(() => randomizedResponseEvent(0.5, 1), 'numBuckets');
  assertInvalid(() => objectivePerturbationEvent({ noiseStd: 1, lipschitz: 1, smoothness: 0.25, regularization: 0.25 }), 'regularization');
  assertInvalid(() => repeatAndSelectEvent(NO_OP_EVENT, 1, 1), 'mean');
  assertInvalid(() => shuffledSgdConjectureEvent({ datasetSize: 100, noiseMultiplier: 2, epochs: 1, fraction: 1 }), 'fraction');
  assertInvalid(() => shuffledSgdConjectureEvent({ datasetSize: 100, noiseMultiplier: 2, epochs: 1, fraction: 0.5, constant: 8 }), 'constant');
  assertInvalid(() => relativeGaussianEvent({ eta: 0.1, gamma: 1, dimension: 0 }), 'dimension');
  assertInvalid(() => relativeGaussianEvent({ eta: 0.1, gamma: 1, dimension: 2, baselineStd: 1 }), 'baselineStd');
});

test('parseEvent names the JSON path of the bad field', () => {
  assertInvalid(() => parseEvent('{"kind":"gaussian"'), 'event');
  assertInvalid(() => parseEvent('[1]'), 'event');
  assertInvalid(() => parseEvent({ kind: 'laplacian', noiseMultiplier: 1 }), 'event.kind');
  assertInvalid(() => parseEvent({ kind: 'gaussian' }), 'event.noiseMultiplier');
  assertInvalid(() => parseEvent({ kind: 'gaussian', noiseMultiplier: '1' }), 'event.noiseMultiplier');
  assertInvalid(() => parseEvent({ kind: 'gaussian', noiseMultiplier: 1, sigma: 2 }), 'event.sigma');
  assertInvalid(
    () => parseEvent({ kind: 'compose', events: [{ kind: 'noOp' }, { kind: 'poissonSampled', samplingProbability: 2, event: { kind: 'noOp' } }] }),
    'event.events[1].samplingProbability',
  );
  assertInvalid(() => parseEvent({ kind: 'selfCompose', count: 3, event: { kind: 'gaussian', noiseMultiplier: -1 } }), 'event.event.noiseMultiplier');
  assertInvalid(() => parseEvent({ kind: 'nonUniformSampled', maxWeight: 1, event: { kind: 'noOp' } }), 'event.maxWeight');
  assertInvalid(() => parseEvent({ kind: 'nonUniformSampled', maxWeight: 0.1 }), 'event.event');
  assertInvalid(() => parseEvent({ kind: 'nonUniformSampled', maxWeight: 0.1, weights: [0.1], event: { kind: 'noOp' } }), 'event.weights');
});
