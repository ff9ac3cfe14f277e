/**
 * Events nested too deep are refused cleanly (InvalidParameterError naming the path and
 * the limit, CLI exit 2 on one line), before any recursion can overflow the stack, by `parseEvent`
 * (also for JSON that is merely deeply nested arrays) and by every public entry point that takes
 * an event built in code. Events up to the limit are accounted as before.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { composeEvent, gaussianEvent, poissonSampledEvent, selfComposeEvent } from '../../../src/accounting/events/constructors.js';
import { MAX_EVENT_DEPTH, MAX_JSON_DEPTH, requireEventDepth } from '../../../src/accounting/events/depth.js';
import { eventToJson, parseEvent } from '../../../src/accounting/events/json.js';
import { someEvent } from '../../../src/accounting/events/tree.js';
import type { DpEvent } from '../../../src/accounting/events/types.js';
import { continuousLowerSurrogate, continuousSurrogate, containsGriddedDiscreteNoise } from '../../../src/accounting/discrete-coupling.js';
import { addCompositionAtoms } from '../../../src/accounting/events/multiset.js';
import { gaussianCompositionEpsilon, gaussianPrecision } from '../../../src/accounting/gaussian/gaussian-composition.js';
import { containsConjecture, neighboringRelationOf } from '../../../src/accounting/neighboring.js';
import { checkPldSupport, pldComponents } from '../../../src/accounting/pld/event-components.js';
import { PldAccountant, pldEpsilon } from '../../../src/accounting/pld/accountant.js';
import { pureEpsilon } from '../../../src/accounting/pure-dp.js';
import { RdpAccountant, rdpDelta, rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { checkRdpSupport, rdpCurveOf, rdpOfEvent } from '../../../src/accounting/rdp/event-rdp.js';
import { totalVariation } from '../../../src/accounting/total-variation.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { runCli } from '../../helpers/people.js';

const LIMIT = MAX_EVENT_DEPTH;
/** One DP-SGD step: depth 2 (an event alone has depth 1). */
const leaf = poissonSampledEvent(0.01, gaussianEvent(1.1));

/** compose([compose([... leaf ...])]) of the given depth. */
function nested(depth: number): DpEvent {
  let event: DpEvent = leaf;
  for (let d = 2; d < depth; d++) event = composeEvent([event]);
  return event;
}

function nestedJson(depth: number): string {
  return `${'{"kind":"compose","events":['.repeat(depth - 2)}${JSON.stringify(leaf)}${']}'.repeat(depth - 2)}`;
}

/** The error for the first event beyond the limit in `nested(depth > LIMIT)`. */
function isDepthError(param: string, depth = LIMIT + 1, limit = LIMIT) {
  return (error: unknown) => {
    assert.ok(error instanceof InvalidParameterError, `expected InvalidParameterError, got ${String(error)}`);
    assert.equal(error.param, param);
    assert.equal(error.value, depth);
    assert.match(error.message, new RegExp(`nested at most ${limit} `));
    assert.ok(error.message.length < 400, `one short line: ${error.message.length} characters`);
    assert.ok(!error.message.includes('\n'));
    return true;
  };
}

/** The path of the event at depth LIMIT + 1 in `nested(LIMIT + 1)`: the Gaussian inside the step. */
const PATH_101 = `event${'.events[0]'.repeat(LIMIT - 1)}.event`;
/** ... and in deeper ones: a compose. */
const PATH_DEEPER = `event${'.events[0]'.repeat(LIMIT)}`;

/** Every public function that takes an event, applied to `event`. */
const ENTRY_POINTS: [string, (event: DpEvent) => unknown][] = [
  ['rdpEpsilon', (e) => rdpEpsilon(e, 1e-5).epsilon],
  ['rdpDelta', (e) => rdpDelta(e, 1).delta],
  ['RdpAccountant.compose', (e) => new RdpAccountant().compose(e).rdpCurve()[10]],
  ['rdpOfEvent', (e) => rdpOfEvent(e, [2, 8])[1]],
  ['rdpCurveOf', (e) => rdpCurveOf(e)(8)],
  ['checkRdpSupport', (e) => checkRdpSupport(e)],
  ['pldEpsilon', (e) => pldEpsilon(e, 1e-5).epsilon],
  ['PldAccountant.compose', (e) => new PldAccountant().compose(e).getDelta(1).delta],
  ['checkPldSupport', (e) => checkPldSupport(e)],
  ['pldComponents', (e) => pldComponents(e).components.length],
  ['gaussianCompositionEpsilon', (e) => gaussianCompositionEpsilon(e, 1e-5)?.epsilon],
  ['gaussianPrecision', (e) => gaussianPrecision(e)],
  ['neighboringRelationOf', (e) => neighboringRelationOf(e)],
  ['containsConjecture', (e) => containsConjecture(e)],
  ['containsGriddedDiscreteNoise', (e) => containsGriddedDiscreteNoise(e)],
  ['continuousSurrogate', (e) => eventToJson(continuousSurrogate(e)) !== undefined],
  ['continuousLowerSurrogate', (e) => eventToJson(continuousLowerSurrogate(e)) !== undefined],
  ['pureEpsilon', (e) => pureEpsilon(e)],
  ['totalVariation', (e) => totalVariation(e)],
  ['someEvent', (e) => someEvent(e, (x) => x.kind === 'laplace')],
  ['eventToJson', (e) => typeof eventToJson(e)],
  ['addCompositionAtoms', (e) => addCompositionAtoms(e).size],
];

test(`MAX_EVENT_DEPTH is ${LIMIT}; events up to it are accounted exactly as their content, by every entry point`, () => {
  assert.equal(LIMIT, 100);
  const deep = nested(LIMIT);
  assert.equal(requireEventDepth(deep), LIMIT);
  for (const [name, run] of ENTRY_POINTS) {
    const [a, b] = [run(deep), run(leaf)];
    // totalVariation rounds up by 8 ulps per composition level (pessimistic), the rest is identical.
    if (name === 'totalVariation') assert.ok((a as number) >= (b as number) && (a as number) <= (b as number) * (1 + 1e-12), name);
    else assert.deepEqual(a, b, name);
  }
  // Accountants' counts do not add a level: compose(e, k) of an event at the limit works.
  assert.deepEqual(new RdpAccountant().compose(deep, 5).getEpsilon(1e-5), new RdpAccountant().compose(leaf, 5).getEpsilon(1e-5));
  assert.deepEqual(new PldAccountant().compose(deep, 5).getEpsilon(1e-5), new PldAccountant().compose(leaf, 5).getEpsilon(1e-5));
  // parseEvent accepts the JSON of depth LIMIT and gives the same event.
  assert.deepEqual(parseEvent(nestedJson(LIMIT)), deep);
  assert.deepEqual(parseEvent(eventToJson(deep)), deep);
});

test(`an event nested ${LIMIT + 1} deep is refused with its path and the limit by every entry point (built in code)`, () => {
  const tooDeep = nested(LIMIT + 1);
  for (const [name, run] of ENTRY_POINTS) {
    assert.throws(() => run(tooDeep), isDepthError(PATH_101), name);
  }
  // supports() answers false instead of throwing; the accountant's state is unchanged.
  assert.equal(new RdpAccountant().supports(tooDeep), false);
  assert.equal(new PldAccountant().supports(tooDeep), false);
  const rdp = new RdpAccountant().compose(leaf);
  const before = rdp.getEpsilon(1e-5).epsilon;
  assert.throws(() => rdp.compose(tooDeep));
  assert.equal(rdp.getEpsilon(1e-5).epsilon, before);
  // Other kinds of nesting: the path follows the fields.
  let chain: DpEvent = gaussianEvent(1);
  for (let d = 1; d <= LIMIT; d++) chain = d % 2 === 0 ? selfComposeEvent(chain, 2) : poissonSampledEvent(0.5, chain);
  assert.throws(() => rdpEpsilon(chain, 1e-5), isDepthError(`event${'.event'.repeat(LIMIT)}`));
  assert.throws(() => neighboringRelationOf(chain, chain), isDepthError(`event${'.event'.repeat(LIMIT)}`));
});

test('far deeper events (1,500 and 100,000 levels) and cycles are refused the same way, without a RangeError', () => {
  for (const depth of [1500, 100_000]) {
    const tooDeep = nested(depth);
    for (const [name, run] of ENTRY_POINTS) assert.throws(() => run(tooDeep), isDepthError(PATH_DEEPER), name);
  }
  // A cyclic "event" (possible only in code) is too deep, not an endless loop.
  const cycle = { kind: 'compose', events: [] as DpEvent[] };
  cycle.events.push(cycle as DpEvent);
  assert.throws(() => rdpEpsilon(cycle as DpEvent, 1e-5), isDepthError(PATH_DEEPER));
  assert.throws(() => someEvent(cycle as DpEvent, () => false), isDepthError(PATH_DEEPER));
});

test('parseEvent: JSON nested beyond the limit is refused before anything recurses (arrays, objects, events)', () => {
  assert.throws(() => parseEvent(nestedJson(LIMIT + 1)), isDepthError(PATH_101));
  assert.throws(() => parseEvent(nestedJson(1500)), isDepthError(PATH_DEEPER));
  // 100,000 nested arrays: JSON.parse handles them; the walk over them must not recurse.
  const arrays = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const arrayPath = `event${'[0]'.repeat(MAX_JSON_DEPTH)}`;
  assert.throws(() => parseEvent(arrays), isDepthError(arrayPath, MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH));
  assert.throws(() => parseEvent(JSON.parse(arrays)), isDepthError(arrayPath, MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH));
  // Inside a valid-looking event, with a caller's path prefix.
  const inside = `{"kind":"compose","events":[${arrays}]}`;
  // (the object is level 1, its events list level 2: level MAX_JSON_DEPTH + 1 is MAX_JSON_DEPTH - 1 indices further)
  assert.throws(() => parseEvent(inside, 'privacy.event'), isDepthError(`privacy.event.events${'[0]'.repeat(MAX_JSON_DEPTH - 1)}`, MAX_JSON_DEPTH + 1, MAX_JSON_DEPTH));
  // Plain nested objects: every object would be an event.
  const objects = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
  assert.throws(() => parseEvent(objects), isDepthError(`event${'.a'.repeat(LIMIT)}`));
  // Shallow but invalid JSON still gets its usual error.
  assert.throws(() => parseEvent('[[1]]'), (e: unknown) => e instanceof InvalidParameterError && e.param === 'event' && /a JSON object/.test(e.message));
});

test('a wide event (200,000 sub-events) is not too deep, and its depth check is linear', () => {
  const wide = composeEvent(Array.from({ length: 200_000 }, (_, i) => gaussianEvent(1 + (i % 7))));
  assert.equal(requireEventDepth(wide), 2);
  assert.equal(neighboringRelationOf(wide), 'relativeToSensitivity');
  assert.equal(addCompositionAtoms(wide).size, 7);
});

test('CLI: deep events are exit 2 with one line naming the path and the limit (epsilon, delta, rdp, curve)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-depth-'));
  const files = {
    compose: join(dir, 'compose.json'),
    arrays: join(dir, 'arrays.json'),
  };
  writeFileSync(files.compose, nestedJson(1500));
  writeFileSync(files.arrays, `${'['.repeat(100_000)}${']'.repeat(100_000)}`);
  for (const file of Object.values(files)) {
    for (const argv of [
      ['epsilon', '--delta', '1e-5', '--event', `@${file}`],
      ['epsilon', '--delta', '1e-5', '--accountant', 'pld', '--event', `@${file}`],
      ['delta', '--epsilon', '1', '--event', `@${file}`],
      ['rdp', '--event', `@${file}`],
      ['curve', '--out', join(dir, 'out.svg'), '--event', `@${file}`],
    ]) {
      const { code, stdout, stderr } = await runCli(...argv);
      assert.equal(code, 2, `${argv.join(' ')}: ${stderr}`);
      assert.equal(stdout, '');
      assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
      assert.match(stderr, /must be nested at most (100 events|201 JSON levels) deep/);
      assert.doesNotMatch(stderr, /RangeError|internal error|\n\s+at /);
    }
  }
  // At the limit the CLI answers as for the leaf.
  writeFileSync(files.compose, nestedJson(LIMIT));
  const deep = await runCli('epsilon', '--delta', '1e-5', '--json', '--event', `@${files.compose}`);
  const flat = await runCli('epsilon', '--delta', '1e-5', '--json', '--event', JSON.stringify(leaf));
  assert.equal(deep.code, 0, deep.stderr);
  assert.equal(JSON.parse(deep.stdout).epsilon, JSON.parse(flat.stdout).epsilon);
});
