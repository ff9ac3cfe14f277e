/**
 * `PrivacyBudget` (`src/accounting/budget/privacy-budget.ts`) and `train(data, {budget})`:
 *   - it grants exactly the k releases that fit, k computed independently of the rule (the
 *     smallest of RDP and the exact Gaussian composition of k Gaussians, as `000`'s nodes account);
 *     the next one throws BudgetExceededError with the spent, needed and budget numbers rounded up,
 *     and records nothing; `remaining()` never exceeds the budget minus what was spent;
 *   - `train()` spends its run's event before training: a run that does not fit never starts
 *     (its onStep is never called), a run that fits spends exactly the event its report carries;
 *   - a method whose event is not planned before training is refused by name.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gaussianEvent, selfComposeEvent } from '../../../src/accounting/events/constructors.js';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { gaussianCompositionEpsilon } from '../../../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { PrivacyBudget } from '../../../src/accounting/budget/privacy-budget.js';
import { spentBudget } from '../../../src/accounting/budget/rule.js';
import { formatDown, formatUp } from '../../../src/accounting/budget/describe.js';
import { BudgetExceededError, InvalidParameterError } from '../../../src/errors.js';
import { train } from '../../../src/learners/train.js';
import { seededRng } from '../../../src/random/rng.js';

const epsilonOfGaussians = (z: number, k: number, delta: number) => {
  const event = selfComposeEvent(gaussianEvent(z), k);
  return Math.min(rdpEpsilon(event, delta).epsilon, gaussianCompositionEpsilon(event, delta)?.epsilon ?? Infinity);
};

test('grants exactly the k Gaussian releases that fit; the next throws, rounded up, and records nothing', () => {
  const budget = new PrivacyBudget({ epsilon: 1, delta: 1e-5 });
  const z = 10;
  let k = 0;
  while (epsilonOfGaussians(z, k + 1, 1e-5) <= 1) k++;
  assert.ok(k >= 2);
  for (let i = 0; i < k; i++) {
    assert.equal(budget.check(gaussianEvent(z)).fits, true);
    budget.spend(gaussianEvent(z), { description: `release ${i}` });
  }
  const spent = budget.spent();
  assert.equal(spent.entries, k);
  assert.ok(Math.abs(spent.epsilon - epsilonOfGaussians(z, k, 1e-5)) <= 1e-12);
  const check = budget.check(gaussianEvent(z));
  assert.equal(check.fits, false);
  assert.ok(check.epsilonAfter > 1);
  assert.throws(
    () => budget.spend(gaussianEvent(z)),
    (e: unknown) =>
      e instanceof BudgetExceededError &&
      e.message.includes(`spent epsilon ${formatUp(spent.epsilon)} over ${k} release(s)`) &&
      e.message.includes(`this release needs epsilon ${formatUp(check.epsilonAlone)} on its own`) &&
      e.message.includes('over the privacy budget (epsilon 1, delta 0.00001)'),
  );
  assert.equal(budget.spent().entries, k);
  const remaining = budget.remaining();
  assert.ok(remaining.epsilon <= 1 - spent.epsilon && remaining.epsilon >= 0);
  assert.deepEqual(budget.entries().map((e) => e.description), Array.from({ length: k }, (_, i) => `release ${i}`));
});

test('formatUp never prints less, formatDown never more (property over 2000 seeded values)', () => {
  const rng = seededRng(27);
  for (let i = 0; i < 2000; i++) {
    const x = Math.exp(60 * rng.nextDouble() - 30);
    for (const digits of [1, 4, 8]) {
      assert.ok(Number(formatUp(x, digits)) >= x, `${x} ${digits}`);
      assert.ok(Number(formatDown(x, digits)) <= x, `${x} ${digits}`);
    }
  }
});

function data(n: number) {
  const rng = seededRng(5);
  const x = new Float64Array(n * 2);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[2 * i] = rng.nextDouble() - 0.5;
    x[2 * i + 1] = 1;
    y[i] = x[2 * i] > 0 ? 1 : 0;
  }
  return { x, y, n, d: 2 };
}

test('train() spends its event before training: refused runs never start, granted runs spend the event they report', () => {
  const budget = new PrivacyBudget({ epsilon: 1, delta: 1e-5 });
  const options = { method: 'dpgd', epsilon: 0.9, delta: 1e-5, clipNorm: 1, steps: 5, rng: seededRng(1) } as const;
  const first = train(data(200), { ...options, budget });
  assert.deepEqual(budget.entries().map((e) => e.event), [parseEvent(JSON.stringify(first.privacy.event))]);
  assert.equal(budget.spent().epsilon, spentBudget([{ event: parseEvent(JSON.stringify(first.privacy.event)), extraDelta: 0 }], budget.budget).epsilon);
  let steps = 0;
  assert.throws(() => train(data(200), { ...options, budget, onStep: () => steps++ }), BudgetExceededError);
  assert.equal(steps, 0, 'a refused run trained');
  assert.equal(budget.spent().entries, 1);
  assert.throws(
    () => train(data(200), { method: 'output', epsilon: 0.1, delta: 1e-6, clipNorm: 1, regularization: 0.1, budget } as never),
    (e: unknown) => e instanceof InvalidParameterError && e.param === 'budget' && /dpsgd/.test(e.message),
  );
  assert.throws(() => train(data(200), { ...options, budget: { epsilon: 1, delta: 1e-5 } as never }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'budget');
});
