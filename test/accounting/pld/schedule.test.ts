/**
 * Large events on the PLD side (test/accounting/rdp/schedule.test.ts for RDP): identical sub-events
 * are one mechanism (compose([e] * k) == selfCompose(e, k)), long noise/sampling schedules are
 * composed in buckets whose upper and lower bounds bracket the exact composition, many distinct
 * Gaussians are merged exactly, and long queries report progress.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as E from '../../../src/accounting/events/constructors.js';
import type { DpEvent } from '../../../src/accounting/events/types.js';
import { gaussianCompositionEpsilon } from '../../../src/accounting/gaussian/gaussian-composition.js';
import { PldAccountant, pldDelta, pldEpsilon } from '../../../src/accounting/pld/accountant.js';
import { bucketComponents, gridNode } from '../../../src/accounting/pld/schedule-buckets.js';
import { pldComponents } from '../../../src/accounting/pld/event-components.js';
import { InvalidParameterError } from '../../../src/errors.js';

function schedule(steps: number, q: (t: number) => number, z: (t: number) => number): DpEvent {
  return E.composeEvent(Array.from({ length: steps }, (_, t) => E.poissonSampledEvent(q(t), E.gaussianEvent(z(t)))));
}

test('PLD: compose([e] * k) == selfCompose(e, k) exactly, for every supported kind', () => {
  const events: DpEvent[] = [
    E.poissonSampledEvent(0.01, E.gaussianEvent(1.1)),
    E.gaussianEvent(3),
    E.laplaceEvent(20),
    E.laplaceEvent(20, { discrete: true }),
    E.randomizedResponseEvent(0.9, 2),
    E.poissonSampledEvent(0.05, E.laplaceEvent(2)),
    E.poissonSampledEvent(0.01, E.gaussianEvent(1.2, { discrete: true, gridNoiseStd: 4096 })),
  ];
  for (const event of events) {
    const k = 2000;
    const list = E.composeEvent(Array.from({ length: k }, () => event));
    const self = E.selfComposeEvent(event, k);
    assert.deepEqual(pldComponents(list).components.map((c) => [c.key, c.count]), pldComponents(self).components.map((c) => [c.key, c.count]), event.kind);
    assert.deepEqual(pldEpsilon(list, 1e-6), pldEpsilon(self, 1e-6), event.kind);
  }
});

test('bucketComponents: grid nodes bracket the value, buckets only when they pay, rounded the safe way in each direction', () => {
  for (const x of [0.8, 1, 1.0001, 3.3, 1e-3, 0.37]) {
    const lo = gridNode(x, 256, 'below');
    const hi = gridNode(x, 256, 'above');
    assert.ok(lo <= x && x <= hi && hi / lo <= 2 ** (1 / 256) * (1 + 1e-15), `${x}: [${lo}, ${hi}]`);
  }
  const few = pldComponents(schedule(60, () => 0.01, (t) => 1 + t / 60)).components;
  assert.equal(bucketComponents(few, 256, 'down').info, undefined, 'at most 64 distinct: exact');
  const many = pldComponents(schedule(5000, (t) => 0.01 + 0.01 * (t / 5000), (t) => 0.8 + (0.5 * t) / 5000)).components;
  for (const direction of ['down', 'up'] as const) {
    const { components, info } = bucketComponents(many, 64, direction);
    assert.ok(info !== undefined && info.buckets > 0 && info.buckets <= 5000 / 4, JSON.stringify(info));
    assert.equal(components.reduce((s, c) => s + c.count, 0), 5000);
    const zs = components.map((c) => c.sampledGaussian!.z);
    const qs = components.map((c) => c.sampledGaussian!.q);
    if (direction === 'down') {
      assert.ok(Math.min(...zs) <= 0.8 && Math.max(...zs) <= 1.3 && Math.max(...qs) >= 0.02 - 1e-4);
    } else {
      assert.ok(Math.min(...zs) >= 0.8 && Math.max(...zs) >= 1.3 - 1e-3 && Math.min(...qs) <= 0.01);
    }
  }
});

test('a noise schedule in buckets: [epsilonLower, epsilon] contains the exact composition (every step as it is)', () => {
  // 120 distinct steps, 16 points per doubling: 11 buckets. The exact composition (scheduleGrid: Infinity)
  // composes all 120 mechanisms; its own [epsilonLower, epsilon] is 1e-4 wide.
  const event = schedule(120, () => 0.05, (t) => 0.8 + (0.5 * t) / 120);
  const bucketed = pldEpsilon(event, 1e-5, { scheduleGrid: 16 });
  const exact = pldEpsilon(event, 1e-5, { scheduleGrid: Infinity });
  assert.ok(exact.epsilonLower !== undefined && bucketed.epsilonLower !== undefined);
  assert.ok(bucketed.epsilon >= exact.epsilonLower!, `${bucketed.epsilon} >= ${exact.epsilonLower}`);
  assert.ok(bucketed.epsilonLower! <= exact.epsilon, `${bucketed.epsilonLower} <= ${exact.epsilon}`);
  // Rounding z down can only cost: the bucketed upper bound is above the exact one (up to the accuracy).
  assert.ok(bucketed.epsilon >= exact.epsilon * (1 - 2e-4));
  assert.ok(bucketed.warnings.some((w) => /120 distinct Poisson-subsampled Gaussian steps were composed in \d+ buckets/.test(w)), bucketed.warnings.join('; '));
  assert.equal(exact.warnings.length, 0);
  // delta at epsilon likewise.
  const dBucketed = pldDelta(event, 5, { scheduleGrid: 16 });
  const dExact = pldDelta(event, 5, { scheduleGrid: Infinity });
  assert.ok(dBucketed.delta >= dExact.deltaLower! && dBucketed.deltaLower! <= dExact.delta, `${JSON.stringify([dBucketed.deltaLower, dBucketed.delta, dExact.deltaLower, dExact.delta])}`);
});

test('a sampling-probability schedule in buckets brackets the exact composition too', () => {
  const event = schedule(120, (t) => 0.02 + (0.03 * t) / 120, () => 1);
  const bucketed = pldEpsilon(event, 1e-5, { scheduleGrid: 16 });
  const exact = pldEpsilon(event, 1e-5, { scheduleGrid: Infinity });
  assert.ok(bucketed.epsilon >= exact.epsilon * (1 - 2e-4) && bucketed.epsilonLower! <= exact.epsilon, JSON.stringify([bucketed.epsilonLower, bucketed.epsilon, exact.epsilonLower, exact.epsilon]));
});

test('many distinct Gaussians are merged into one, exactly: the exact Gaussian composition lies in [epsilonLower, epsilon]', () => {
  const event = E.composeEvent(Array.from({ length: 40 }, (_, i) => E.gaussianEvent(5 + i / 7)));
  const pld = pldEpsilon(event, 1e-6);
  const exact = gaussianCompositionEpsilon(event, 1e-6)!.epsilon;
  assert.ok(pld.epsilonLower! <= exact && exact <= pld.epsilon, `${pld.epsilonLower} <= ${exact} <= ${pld.epsilon}`);
  assert.ok(pld.epsilon <= exact * (1 + 2e-4));
  assert.ok(pld.warnings.some((w) => /40 distinct Gaussian releases were composed as one Gaussian/.test(w)));
});

test('scheduleGrid is validated; onProgress: monotone, (1000, 1000) once at the end, silent for short compositions', () => {
  for (const bad of [8, 2.5, 0, Number.NaN]) {
    assert.throws(() => new PldAccountant({ scheduleGrid: bad }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'scheduleGrid');
  }
  const calls: [number, number][] = [];
  const accountant = new PldAccountant({ scheduleGrid: 16, onProgress: (done, total) => calls.push([done, total]) });
  accountant.compose(schedule(120, () => 0.05, (t) => 0.8 + (0.5 * t) / 120)).getEpsilon(1e-5);
  assert.ok(calls.length > 20, `${calls.length} calls`);
  for (let i = 1; i < calls.length; i++) assert.ok(calls[i][0] >= calls[i - 1][0] && calls[i][1] === 1000, 'monotone, out of 1000');
  assert.deepEqual(calls.at(-1), [1000, 1000]);
  assert.equal(calls.filter(([d]) => d === 1000).length, 1);
  const quiet: number[] = [];
  new PldAccountant({ onProgress: (d) => quiet.push(d) }).compose(E.selfComposeEvent(E.poissonSampledEvent(0.01, E.gaussianEvent(1)), 1000)).getEpsilon(1e-5);
  assert.deepEqual(quiet, []);
});
