import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError, NumericalError } from '../../src/errors.js';
import { normalCdf } from '../../src/math/normal.js';
import { brentRoot, expandBracket, largestWhere } from '../../src/math/root-finding.js';
import { assertClose } from '../helpers/assert-close.js';

// mpmath 1.3, mp.dps=50: 2**(1/3) and findroot(cos(x) - x, 0.7) (the Dottie number)
const CBRT2 = 1.2599210498948732;
const DOTTIE = 0.7390851332151607;

test('brentRoot: x^3 - 2 to the default tolerance, with a bracket around the root', () => {
  const f = (x: number): number => x * x * x - 2;
  const r = brentRoot(f, 0, 2);
  assertClose(r.root, CBRT2, 2e-12);
  assert.ok(r.lo <= CBRT2 && CBRT2 <= r.hi, `[${r.lo}, ${r.hi}] must contain the root`);
  assert.ok(r.hi - r.lo <= 1e-12 * CBRT2 + 4 * Number.EPSILON * CBRT2);
  assert.ok(f(r.lo) <= 0 && f(r.hi) >= 0, 'f(lo) and f(hi) keep the signs of the initial ends');
  assert.ok(r.iterations > 0 && r.iterations < 20, `iterations = ${r.iterations}`);
});

test('brentRoot: cos x - x to machine precision', () => {
  const f = (x: number): number => Math.cos(x) - x;
  const r = brentRoot(f, 0, 1, { xRelTol: 0 });
  assertClose(r.root, DOTTIE, 4 * Number.EPSILON);
  assert.ok(f(r.lo) >= 0 && f(r.hi) <= 0);
});

test('brentRoot: absolute tolerance, exact zeros, infinite values', () => {
  const loose = brentRoot((x) => Math.cos(x) - x, 0, 1, { xAbsTol: 1e-3, xRelTol: 0 });
  assert.ok(Math.abs(loose.root - DOTTIE) <= 1e-3 && loose.hi - loose.lo <= 1e-3 + 1e-15);
  const exact = brentRoot((x) => x - 0.5, 0, 1);
  assert.deepEqual([exact.root, exact.lo, exact.hi], [0.5, 0.5, 0.5]);
  const atEnd = brentRoot((x) => x - 1, 0, 1);
  assert.deepEqual([atEnd.root, atEnd.lo, atEnd.hi, atEnd.iterations], [1, 1, 1, 0]);
  // log x - 1 is -Infinity at 0; root e (mpmath 1.3: e = 2.718281828459045)
  assertClose(brentRoot((x) => Math.log(x) - 1, 0, 10).root, 2.718281828459045, 1e-12);
});

test('brentRoot: errors', () => {
  assert.throws(() => brentRoot((x) => x * x + 1, -1, 1), InvalidParameterError);
  assert.throws(() => brentRoot(() => NaN, -1, 1), InvalidParameterError);
  assert.throws(() => brentRoot((x) => x, 1, -1), InvalidParameterError);
  assert.throws(() => brentRoot((x) => x, -Infinity, 1), InvalidParameterError);
  assert.throws(() => brentRoot((x) => x * x * x - 2, 0, 2, { maxIterations: 3 }), (e: unknown) => e instanceof NumericalError && /maxIterations = 3/.test(e.message));
  assert.throws(() => brentRoot((x) => (x === -1 || x === 2 ? x : NaN), -1, 2), NumericalError);
});

test('expandBracket: up, down and both', () => {
  assert.deepEqual(expandBracket((s) => 1 / s - 0.001, 1, { direction: 'up' }), { lo: 512, hi: 1024 });
  assert.deepEqual(expandBracket((s) => s - 1e-6, 1, { direction: 'down' }), { lo: 2 ** -20, hi: 2 ** -19 });
  assert.deepEqual(expandBracket((s) => s - 1000, 1, { direction: 'both' }), { lo: 512, hi: 1024 });
  assert.deepEqual(expandBracket((s) => s - 0.01, 1, { direction: 'both', factor: 10 }), { lo: 0.01, hi: 0.1 });
  assert.deepEqual(expandBracket((s) => s - 3, 3, { direction: 'up' }), { lo: 3, hi: 3 });
  // A limit is itself probed.
  assert.deepEqual(expandBracket((s) => s - 2.5, 1, { direction: 'up', upperLimit: 2.5 }), { lo: 2, hi: 2.5 });
});

test('expandBracket + brentRoot: smallest sigma with Phi(-1/sigma) <= 1e-10', () => {
  const f = (sigma: number): number => normalCdf(-1 / sigma) - 1e-10;
  const bracket = expandBracket(f, 1, { direction: 'down' });
  const r = brentRoot(f, bracket.lo, bracket.hi, { xRelTol: 1e-14 });
  // mpmath 1.3, mp.dps=50: -1 / (-sqrt(2) * erfinv(1 - 2e-10))
  assertClose(r.root, 0.15719956143555888, 1e-13);
  assert.ok(f(r.lo) <= 0, 'lo is on the private side');
});

test('expandBracket: errors name the limit reached', () => {
  const negative = (): number => -1;
  assert.throws(() => expandBracket(negative, 1, { direction: 'up' }), (e: unknown) => e instanceof NumericalError && /limit = 100 probes/.test(e.message));
  assert.throws(
    () => expandBracket((s) => s - 3, 1, { direction: 'up', upperLimit: 2.5 }),
    (e: unknown) => e instanceof NumericalError && /upperLimit = 2.5/.test(e.message),
  );
  assert.throws(
    () => expandBracket((s) => s + 1, 1, { direction: 'both', lowerLimit: 0.1, limit: 5 }),
    (e: unknown) => e instanceof NumericalError && /limit = 5 probes and lowerLimit = 0.1/.test(e.message),
  );
  assert.throws(
    () => expandBracket(negative, 1, { direction: 'up', factor: 1e100 }),
    (e: unknown) => e instanceof NumericalError && /overflow/.test(e.message),
  );
  assert.throws(() => expandBracket(() => NaN, 1, { direction: 'up' }), NumericalError);
  assert.throws(() => expandBracket(negative, 0, { direction: 'up' }), InvalidParameterError);
  assert.throws(() => expandBracket(negative, 1, { direction: 'up', factor: 1 }), InvalidParameterError);
  assert.throws(() => expandBracket(negative, 1, { direction: 'down', lowerLimit: 2 }), InvalidParameterError);
});

test('largestWhere: the largest x where a predicate holds, rounded down (the value returned holds), 0 when it fails at 0, capped doubling reported', () => {
  for (const root of [1e-9, 0.3, 1, 7.25, 1234.5]) {
    const { value, capped } = largestWhere((x) => x <= root, { relativeTolerance: 1e-12 });
    assert.equal(capped, false);
    assert.ok(value <= root, `${value} <= ${root}`);
    assert.ok(root - value <= 2e-12 * Math.max(root, 1), `${value} within 1e-12 of ${root}`);
  }
  assert.deepEqual(largestWhere((x) => x < 0, { relativeTolerance: 1e-12 }), { value: 0, capped: false });
  // True everywhere: the doubling stops after passing the cap, with the last point that held.
  assert.deepEqual(largestWhere(() => true, { relativeTolerance: 1e-9, cap: 1e4 }), { value: 8192, capped: true });
  // A looser tolerance: fewer probes, still at or below the root.
  let probes = 0;
  const loose = largestWhere((x) => (probes++, x <= 10), { relativeTolerance: 1e-3 });
  assert.ok(loose.value <= 10 && loose.value >= 10 * (1 - 2e-3) && probes < 20);
});
