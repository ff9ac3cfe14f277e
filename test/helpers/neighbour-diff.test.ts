/**
 * The neighbour-diff harness itself (test/helpers/neighbour-diff.ts): it must report every
 * difference outside the released and volatile paths, and none inside them but a change of shape
 * or finiteness. A harness that cannot fail would make every neighbour test vacuous.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { observableDifferences, observedText } from './neighbour-diff.js';

describe('neighbour-diff harness', () => {
  const base = { status: 200, body: { model: { theta: [0.5, -1], loss: 'logistic' }, privacy: { epsilon: 1, event: { kind: 'gaussian', noiseMultiplier: 2 } }, session: 'ab12' } };
  const options = { released: ['body.model.theta'], volatile: ['body.session'] };

  it('ignores released values and volatile ids, nothing else', () => {
    const other = structuredClone(base);
    other.body.model.theta = [7, 3e300];
    other.body.session = 'ffff';
    assert.deepEqual(observableDifferences(base, other, options), []);
  });

  it('reports a status, an event parameter, an error text, a key or a length that differ', () => {
    const cases: Array<[string, (o: typeof base) => void]> = [
      ['status', (o) => void (o.status = 400)],
      ['body.privacy.event.noiseMultiplier', (o) => void (o.body.privacy.event.noiseMultiplier = 2.0000000000000004)],
      ['body.model.loss', (o) => void (o.body.model.loss = 'squared')],
      ['body.model.theta: keys or length', (o) => void o.body.model.theta.push(1)],
      ['body.model.theta.1: finite', (o) => void (o.body.model.theta[1] = Infinity)],
      ['body.privacy: keys', (o) => void ((o.body.privacy as Record<string, unknown>).n = 1800)],
      ['body.session: string vs number', (o) => void ((o.body as Record<string, unknown>).session = 3)],
    ];
    for (const [where, edit] of cases) {
      const other = structuredClone(base);
      edit(other);
      const diff = observableDifferences(base, other, options);
      assert.equal(diff.length, 1, `${where}: ${diff.join('; ')}`);
      assert.ok(diff[0].startsWith(where), `${where}: got ${diff[0]}`);
    }
  });

  it('tells 0 from -0 and compares typed arrays and printed lines', () => {
    assert.equal(observableDifferences({ v: 0 }, { v: -0 }).length, 1);
    assert.equal(observableDifferences(new Float64Array([1, 2]), new Float64Array([1, 2])).length, 0);
    assert.equal(observableDifferences(new Float64Array([1, 2]), new Float64Array([1, 3])).length, 1);
    assert.deepEqual(observedText('{"a": 1}\n'), { a: 1 });
    assert.deepEqual(observableDifferences(observedText('1800 training rows\nok\n'), observedText('1801 training rows\nok\n')), ['0: "1800 training rows" vs "1801 training rows"']);
  });
});
