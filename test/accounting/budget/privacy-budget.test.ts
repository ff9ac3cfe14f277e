/**
 * `PrivacyBudget` (`src/accounting/budget/privacy-budget.ts`) and `train(data, {budget})`:
 *   - it grants exactly the k releases that fit, k computed independently of the rule (the
 *     smallest of RDP and the exact Gaussian composition of k Gaussians, as `000`'s nodes account);
 *     the next one throws BudgetExceededError with the spent, needed and budget numbers rounded up,
 *     and records nothing; `remaining()` never exceeds the budget minus what was spent;
 *   - `train()` spends its run's event before training: a run that does not fit never starts
 *     (its onStep is never called), a run that fits spends exactly the event its report carries;
 *   - a budget holds the releases of one neighbouring relation: an add/remove-one release after a
 *     replace-one one (by its tag, or its event's own relation) is refused, and the converse;
 *   - every method plans its release (output perturbation here; all of them in
 *     test/learners/planned-release.test.ts); a run known before training to have no guarantee (a
 *     seeded generator, continuous noise) is charged as non-private: only an infinite budget holds it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gaussianEvent, poissonSampledEvent, selfComposeEvent } from '../../../src/accounting/events/constructors.js';
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
  // The secure generator (the event does not depend on the randomness; a seeded one is charged as non-private, below).
  const options = { method: 'dpgd', epsilon: 0.9, delta: 1e-5, clipNorm: 1, steps: 5 } as const;
  const first = train(data(200), { ...options, budget });
  assert.deepEqual(budget.entries().map((e) => e.event), [parseEvent(JSON.stringify(first.privacy.event))]);
  assert.equal(budget.spent().epsilon, spentBudget([{ event: parseEvent(JSON.stringify(first.privacy.event)), extraDelta: 0 }], budget.budget).epsilon);
  let steps = 0;
  assert.throws(() => train(data(200), { ...options, budget, onStep: () => steps++ }), BudgetExceededError);
  assert.equal(steps, 0, 'a refused run trained');
  assert.equal(budget.spent().entries, 1);
  assert.throws(() => train(data(200), { ...options, budget: { epsilon: 1, delta: 1e-5 } as never }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'budget');
});

test('train() with a budget: every method spends what it reports (output here); a run known to have no guarantee is charged as non-private', () => {
  const budget = new PrivacyBudget({ epsilon: 1, delta: 1e-5 });
  const output = train(data(200), { method: 'output', epsilon: 0.1, delta: 1e-6, clipNorm: 1, regularization: 0.1, budget } as never);
  assert.deepEqual(budget.entries().map((e) => e.event), [parseEvent(JSON.stringify(output.privacy.event))]);
  // A seeded generator (guarantee none) or continuous noise: a non-private release, which no finite budget holds.
  for (const extra of [{ rng: seededRng(1) }, { continuousNoise: true }]) {
    let steps = 0;
    assert.throws(
      () => train(data(200), { method: 'dpgd', epsilon: 0.01, delta: 1e-5, clipNorm: 1, steps: 5, budget, onStep: () => steps++, ...extra }),
      (e: unknown) => e instanceof BudgetExceededError && /needs epsilon Infinity on its own/.test(e.message),
    );
    assert.equal(steps, 0);
  }
  const open = new PrivacyBudget({ epsilon: Infinity, delta: 1e-5 });
  const seeded = train(data(200), { method: 'dpgd', epsilon: 0.5, delta: 1e-5, clipNorm: 1, steps: 5, budget: open, rng: seededRng(1) });
  assert.equal(seeded.privacy.guarantee, 'none');
  assert.deepEqual(open.entries().map((e) => e.event), [{ kind: 'nonPrivate' }]);
  assert.equal(budget.spent().entries, 1);
});

test('a budget holds the releases of one neighbouring relation: a release for the other relation is refused, by its tag or by its event', () => {
  const budget = new PrivacyBudget({ epsilon: 100, delta: 1e-5 });
  budget.spend(gaussianEvent(5), { relation: 'replaceOne' }); // DP-GD's kind: a Gaussian whose sensitivity is replace-one
  const conflict = (e: unknown) => e instanceof BudgetExceededError && /^not in this budget \(epsilon 100, delta 0\.00001\): its guarantee holds for addOrRemoveOne neighbours, and this budget already holds releases for replaceOne neighbours/.test(e.message);
  assert.throws(() => budget.spend(selfComposeEvent(poissonSampledEvent(0.1, gaussianEvent(5)), 10)), conflict);
  assert.throws(() => budget.spend(gaussianEvent(5), { relation: 'addOrRemoveOne' }), conflict);
  assert.equal(budget.check(gaussianEvent(5), { relation: 'addOrRemoveOne' }).relationConflict, true);
  // Untagged relation-free releases hold for whichever relation their sensitivity was computed under: the caller's word.
  budget.spend(gaussianEvent(5));
  budget.spend(gaussianEvent(5), { relation: 'replaceOne' });
  assert.equal(budget.spent().entries, 3);
  assert.throws(() => budget.spend(gaussianEvent(5), { relation: 'replace' as never }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'relation');
  // train() tags its learner's relation: DP-SGD (add/remove-one) then DP-GD (replace-one, n public) on one budget.
  const mixed = new PrivacyBudget({ epsilon: 100, delta: 1e-5 });
  train(data(200), { method: 'dpsgd', epsilon: 1, delta: 1e-5, clipNorm: 1, epochs: 1, batchSize: 20, budget: mixed });
  let steps = 0;
  assert.throws(() => train(data(200), { method: 'dpgd', epsilon: 1, delta: 1e-5, clipNorm: 1, steps: 5, budget: mixed, onStep: () => steps++ }), (e: unknown) => e instanceof BudgetExceededError && /holds for replaceOne neighbours, and this budget already holds releases for addOrRemoveOne/.test(e.message));
  assert.equal(steps, 0);
  assert.deepEqual(mixed.entries().map((e) => e.relation), ['addOrRemoveOne']);
});
