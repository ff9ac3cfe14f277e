/** describeEvent: the short titles of `dpfit curve` (the JSON form stays the exact one). */
import assert from 'node:assert/strict';
import test from 'node:test';
import { describeEvent } from '../../../src/accounting/events/description.js';
import { parseEvent } from '../../../src/accounting/events/json.js';

test('describeEvent names each level of an event with 4 significant digits, and truncates long ones', () => {
  const dpsgd = parseEvent({ kind: 'selfCompose', count: 1273, event: { kind: 'poissonSampled', samplingProbability: 0.0078622, event: { kind: 'gaussian', noiseMultiplier: 0.95 } } });
  assert.equal(describeEvent(dpsgd), '1273 x Poisson-sampled (q = 0.007862) Gaussian (z = 0.95)');
  const mixed = parseEvent({ kind: 'compose', events: [{ kind: 'laplace', noiseMultiplier: 2 }, { kind: 'selfCompose', count: 3, event: { kind: 'compose', events: [{ kind: 'gaussian', noiseMultiplier: 1.23456 }, { kind: 'noOp' }] } }] });
  assert.equal(describeEvent(mixed), 'Laplace (b = 2) + 3 x (Gaussian (z = 1.235) + nothing released)');
  const long = parseEvent({ kind: 'compose', events: Array.from({ length: 40 }, () => ({ kind: 'gaussian', noiseMultiplier: 1 })) });
  assert.equal(describeEvent(long, 50).length, 50);
  assert.ok(describeEvent(long, 50).endsWith('...'));
});
