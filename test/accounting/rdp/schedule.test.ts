/**
 * Compositions as multisets (identical sub-events cost and equal selfCompose), and long
 * heterogeneous DP-SGD schedules bounded by chords (`rdp/sampled-gaussian-schedule.ts`): the fast
 * path is a valid upper bound (never below the step-by-step sum, at any order) and within its
 * stated tolerance of it. Timings are in `npm run bench -- schedule`, not here.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import * as E from '../../../src/accounting/events/constructors.js';
import type { DpEvent } from '../../../src/accounting/events/types.js';
import { RdpAccountant, rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { rdpOfEvent } from '../../../src/accounting/rdp/event-rdp.js';
import { DEFAULT_ORDERS } from '../../../src/accounting/rdp/orders.js';
import { poissonGaussianRdpCurve } from '../../../src/accounting/rdp/subsampling/poisson-gaussian.js';
import { InvalidParameterError } from '../../../src/errors.js';

const FINITE_ORDERS = DEFAULT_ORDERS.filter((a) => a < Infinity);

/** DP-SGD steps with a noise schedule z_t = z0 + dz t / steps (and optionally q_t likewise). */
function schedule(steps: number, z0: number, dz: number, q0 = 0.01, dq = 0): DpEvent {
  return E.composeEvent(Array.from({ length: steps }, (_, t) => E.poissonSampledEvent(q0 + (dq * t) / steps, E.gaussianEvent(z0 + (dz * t) / steps))));
}

test('compose([e] * k) == selfCompose(e, k) bit for bit (curves and accountants), for every kind and large k', () => {
  const events: DpEvent[] = [
    E.poissonSampledEvent(0.01, E.gaussianEvent(1.1)),
    E.gaussianEvent(2),
    E.laplaceEvent(3),
    E.randomizedResponseEvent(0.4, 3),
    E.poissonSampledEvent(0.02, E.laplaceEvent(1)),
    E.sampledWithoutReplacementEvent(1000, 20, E.gaussianEvent(1)),
    E.repeatAndSelectEvent(E.selfComposeEvent(E.poissonSampledEvent(0.01, E.gaussianEvent(1)), 10), 5, 1),
    E.poissonSampledEvent(0.01, E.gaussianEvent(1.2, { discrete: true, gridNoiseStd: 4096 })),
    E.NON_PRIVATE_EVENT,
    E.NO_OP_EVENT,
  ];
  for (const event of events) {
    for (const k of [1, 3, 1000, 100_000]) {
      const self = rdpOfEvent(E.selfComposeEvent(event, k), DEFAULT_ORDERS);
      const list = rdpOfEvent(E.composeEvent(Array.from({ length: k }, () => event)), DEFAULT_ORDERS);
      assert.deepEqual(list, self, `${event.kind} x ${k}`);
    }
    // Nested and mixed groupings give the same multiset.
    const nested = E.composeEvent([E.selfComposeEvent(event, 600), E.composeEvent(Array.from({ length: 400 }, () => event))]);
    assert.deepEqual(rdpOfEvent(nested, DEFAULT_ORDERS), rdpOfEvent(E.selfComposeEvent(event, 1000), DEFAULT_ORDERS), event.kind);
    // Accountants: composing one at a time, with a count, or as a list.
    const one = new RdpAccountant();
    for (let i = 0; i < 500; i++) one.compose(event);
    const counted = new RdpAccountant().compose(event, 500);
    const listed = new RdpAccountant().compose(E.composeEvent(Array.from({ length: 500 }, () => event)));
    assert.deepEqual(one.rdpCurve(), counted.rdpCurve(), event.kind);
    assert.deepEqual(listed.rdpCurve(), counted.rdpCurve(), event.kind);
    assert.deepEqual(listed.getEpsilon(1e-5), counted.getEpsilon(1e-5), event.kind);
  }
});

test('a compose of 200,000 copies of a DP-SGD step is accounted as one step times 200,000', () => {
  const step = E.poissonSampledEvent(0.01, E.gaussianEvent(1.1));
  const many = E.composeEvent(Array.from({ length: 200_000 }, () => step));
  const curve = rdpOfEvent(many, FINITE_ORDERS);
  const single = poissonGaussianRdpCurve(0.01, 1.1, FINITE_ORDERS);
  for (let i = 0; i < FINITE_ORDERS.length; i++) assert.equal(curve[i], 200_000 * single[i]);
  assert.equal(rdpEpsilon(many, 1e-5).epsilon, rdpEpsilon(E.selfComposeEvent(step, 200_000), 1e-5).epsilon);
});

/** fast >= exact at every order, and fast <= exact (1 + tolerance). */
function assertValidAndClose(fast: Float64Array, exact: Float64Array, orders: readonly number[], tolerance: (order: number) => number): void {
  for (let i = 0; i < orders.length; i++) {
    assert.ok(fast[i] >= exact[i], `order ${orders[i]}: chord bound ${fast[i]} below the step-by-step sum ${exact[i]}`);
    assert.ok(fast[i] <= exact[i] * (1 + tolerance(orders[i])), `order ${orders[i]}: ${fast[i]} vs ${exact[i]} (relative ${fast[i] / exact[i] - 1})`);
  }
}

test('noise schedule, default grid: the chord bound is >= the step-by-step sum at every order, within 1e-5 at orders <= 10 and 1e-3 anywhere', () => {
  // 1500 distinct steps: enough for the chords (719 grid corners <= 1500 / 2) on the default grid.
  const event = schedule(1500, 0.8, 0.5);
  const fast = rdpOfEvent(event, FINITE_ORDERS);
  const exact = rdpOfEvent(event, FINITE_ORDERS, { scheduleGrid: Infinity });
  // Measured: 3e-7 at order 2, 1.4e-6 at 5, 4.5e-5 at 10, 7e-4 at the largest orders.
  assertValidAndClose(fast, exact, FINITE_ORDERS, (order) => (order <= 5 ? 1e-5 : order <= 10 ? 1e-4 : 1e-3));
  const a = rdpEpsilon(event, 1e-5);
  const b = rdpEpsilon(event, 1e-5, { scheduleGrid: Infinity });
  assert.ok(a.epsilon >= b.epsilon && a.epsilon <= b.epsilon * (1 + 1e-5), `${a.epsilon} vs ${b.epsilon}`);
  assert.ok(a.warnings.some((w) => /1500 distinct Poisson-subsampled Gaussian steps were bounded together by chords/.test(w)), a.warnings.join('; '));
  assert.equal(b.warnings.length, 0);
});

test('noise and sampling schedules on coarse grids (property): chords never fall below the step-by-step sum', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 300, max: 500 }),
      fc.double({ min: 0.5, max: 3, noNaN: true }),
      fc.double({ min: 0.05, max: 2, noNaN: true }),
      fc.double({ min: 0.001, max: 0.2, noNaN: true }),
      fc.boolean(),
      fc.constantFrom(16, 32, 64),
      (steps, z0, dz, q0, sampling, grid) => {
        const event = schedule(steps, z0, dz, q0, sampling ? q0 : 0);
        const orders = [1.05, 1.5, 2, 2.75, 4, 7.5, 12, 32, 128];
        const fast = rdpOfEvent(event, orders, { scheduleGrid: grid });
        const exact = rdpOfEvent(event, orders, { scheduleGrid: Infinity });
        // Validity is the point. Coarse grids are loose where the curve is steep in z (the top term
        // e^{alpha (alpha - 1) tau / 2} taking over: 2x at order 7.5 for z ~ 0.7, q = 0.001 on 16 points
        // per doubling, where the RDP changes 400x over 7 % of z), so only validity at each order.
        assertValidAndClose(fast, exact, orders, () => Infinity);
        const a = rdpEpsilon(event, 1e-6, { scheduleGrid: grid }).epsilon;
        const b = rdpEpsilon(event, 1e-6, { scheduleGrid: Infinity }).epsilon;
        assert.ok(a >= b && a <= b * 1.05, `${a} vs ${b}`);
      },
    ),
    { seed: 12, numRuns: 12 },
  );
});

test('schedules stay exact when the chords would not pay (few distinct steps, or steps not dense on the grid)', () => {
  for (const event of [schedule(200, 0.8, 0.5), schedule(600, 0.5, 50)]) {
    assert.deepEqual(rdpOfEvent(event, FINITE_ORDERS), rdpOfEvent(event, FINITE_ORDERS, { scheduleGrid: Infinity }));
    assert.equal(rdpEpsilon(event, 1e-5).warnings.length, 0);
  }
  // A step exactly on a grid node is its exact value: a schedule of nodes is exact.
  const nodes = E.composeEvent(Array.from({ length: 2048 }, (_, k) => E.poissonSampledEvent(0.01, E.gaussianEvent(2 ** (k / 1024)))));
  const onGrid = rdpOfEvent(nodes, FINITE_ORDERS);
  assert.deepEqual(onGrid, rdpOfEvent(nodes, FINITE_ORDERS, { scheduleGrid: Infinity }));
});

test('scheduleGrid is validated, and onProgress reports long queries', () => {
  for (const bad of [8, 16.5, 0, -1, Number.NaN]) {
    assert.throws(() => new RdpAccountant({ scheduleGrid: bad }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'scheduleGrid');
    assert.throws(() => rdpOfEvent(E.gaussianEvent(1), [2], { scheduleGrid: bad }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'scheduleGrid');
  }
  const calls: [number, number][] = [];
  const accountant = new RdpAccountant({ onProgress: (done, total) => calls.push([done, total]) }).compose(schedule(1500, 0.8, 0.5));
  accountant.getEpsilon(1e-5);
  assert.ok(calls.length > 10);
  for (let i = 1; i < calls.length; i++) assert.ok(calls[i][0] / calls[i][1] >= calls[i - 1][0] / calls[i - 1][1], 'never goes backwards');
  assert.deepEqual(calls.at(-1), [1000, 1000]);
  assert.equal(calls.filter(([d, t]) => d === t).length, 1, 'done === total once, at the end');
  // Short queries report nothing.
  const quiet: number[] = [];
  new RdpAccountant({ onProgress: (d) => quiet.push(d) }).compose(E.selfComposeEvent(E.poissonSampledEvent(0.01, E.gaussianEvent(1)), 1000)).getEpsilon(1e-5);
  assert.deepEqual(quiet, []);
});
