/**
 * Objective perturbation without output noise identifies the neighbour.
 *
 * The attack (grid inversion). The release is theta, the event (lambda, and the noise grid
 * g_b = noiseStd / gridNoiseStd) and the public add/remove pair {D, D'} (D' = D without its first
 * row). theta minimises SUM_{z in D} l(theta; z) + lambda/2 ||theta||^2 + b.theta, so
 * b = -(SUM grad l(theta; z) + lambda theta) for the TRUE dataset, and b is an integer multiple of
 * g_b; the optimiser's residual is far below g_b. The attacker recomputes b_D and b_D' from theta
 * and guesses the candidate whose b is closer to the grid. Against an (epsilon, delta)-DP release
 * no test tells a balanced pair apart with probability above e^eps / (1 + e^eps) + delta.
 *
 *   - On the research opt-in (`acceptNoGuarantee`: the old default path, which ignored nothing)
 *     the attacker is right far above that cap: why its guarantee is `none`.
 *   - AMP (`003` Alg. 1), the same attack: its output noise hides b, the rate stays below the cap.
 *   - The default path refuses: the library (train, trainObjectivePerturbation, the estimator) and
 *     the CLI (exit 2, one line naming --method amp and --accept-no-guarantee, no model file).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { InvalidParameterError } from '../../../src/errors.js';
import { PrivateLogisticRegression } from '../../../src/learners/estimators.js';
import { trainObjectivePerturbation } from '../../../src/learners/perturbation/objective-perturbation.js';
import { train, type TrainOptions } from '../../../src/learners/train.js';
import { seededRng } from '../../../src/random/rng.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';
import { peopleFixture, runCli } from '../../helpers/people.js';

type Data = { x: Float64Array; y: Float64Array; n: number; d: number };

const D_ROWS = 50;
const DIM = 3;
const D = makeLogisticData(D_ROWS, DIM, 7);
/** The add/remove neighbour: D without its first row. */
const D_PRIME: Data = { x: D.x.slice(DIM), y: D.y.slice(1), n: D_ROWS - 1, d: DIM };
/** Releases attacked: objective perturbation (the margin), AMP (its rate). */
const RUNS = 80;
const AMP_RUNS = 40;
const DELTA = 1e-5;

/**
 * The attacker's b for candidate data: -(SUM_i f'(x_i.theta; y_i) x_i + lambda theta), logistic
 * loss f(z; y) = log(1 + e^{-y z}) with labels 0/1 read as -1/+1 (the attacker's own code).
 */
function impliedNoise(data: Data, theta: readonly number[], lambda: number): number[] {
  const b = theta.map((t) => -lambda * t);
  for (let i = 0; i < data.n; i++) {
    let z = 0;
    for (let j = 0; j < data.d; j++) z += data.x[i * data.d + j] * theta[j];
    const y = data.y[i] === 1 ? 1 : -1;
    const slope = -y / (1 + Math.exp(y * z));
    for (let j = 0; j < data.d; j++) b[j] -= slope * data.x[i * data.d + j];
  }
  return b;
}

/** The largest distance of a coordinate of b to the grid g, in grid steps (0: on the grid, 0.5: as far as can be). */
function offGrid(b: readonly number[], g: number): number {
  return Math.max(...b.map((v) => Math.abs(v / g - Math.round(v / g))));
}

/** P[Binomial(n, p) >= k]. */
function binomialTail(n: number, p: number, k: number): number {
  let term = (1 - p) ** n; // P[X = 0]
  let tail = k <= 0 ? term : 0;
  for (let i = 1; i <= n; i++) {
    term *= ((n - i + 1) / i) * (p / (1 - p));
    if (i >= k) tail += term;
  }
  return Math.min(1, tail);
}

/** The fields of an event's JSON the attacker reads. */
interface EventJson {
  readonly kind: string;
  readonly noiseStd?: number;
  readonly gridNoiseStd?: number;
  readonly regularization?: number;
  readonly events?: readonly EventJson[];
}

interface AttackOutcome {
  readonly correct: number;
  readonly epsilon: number;
  readonly guarantees: ReadonlySet<string>;
  readonly warnings: readonly string[];
}

/** `runs` seeded releases, the truth alternating between D and D', each attacked once. */
function attack(runs: number, options: (seed: number) => TrainOptions): AttackOutcome {
  let correct = 0;
  let epsilon = 0;
  const guarantees = new Set<string>();
  let warnings: readonly string[] = [];
  for (let r = 0; r < runs; r++) {
    const truth = r % 2 === 0 ? D : D_PRIME;
    const { model, privacy } = train(truth, options(100 + r));
    epsilon = Math.max(epsilon, privacy.epsilon);
    guarantees.add(privacy.guarantee);
    warnings = privacy.warnings;
    // What the attacker reads: theta and the event (lambda, the objective noise's grid).
    const event = privacy.event as EventJson;
    const objective = event.kind === 'compose' ? event.events?.find((e) => e.kind === 'objectivePerturbation') : event;
    const { noiseStd, gridNoiseStd, regularization } = objective ?? {};
    assert.ok(noiseStd !== undefined && gridNoiseStd !== undefined && regularization !== undefined, 'the event states lambda and the objective noise grid');
    const g = noiseStd / gridNoiseStd;
    const theta = Array.from(model?.theta ?? []);
    const onD = offGrid(impliedNoise(D, theta, regularization), g);
    const onDPrime = offGrid(impliedNoise(D_PRIME, theta, regularization), g);
    const guess = onD < onDPrime ? D : onDPrime < onD ? D_PRIME : r % 4 < 2 ? D : D_PRIME;
    if (guess === truth) correct++;
  }
  return { correct, epsilon, guarantees, warnings };
}

/** The most a balanced guess can be right against an (epsilon, delta)-DP release. */
const cap = (epsilon: number): number => Math.exp(epsilon) / (1 + Math.exp(epsilon)) + DELTA;

describe('objective perturbation: the grid inversion attack', () => {
  // The research opt-in: on the old code (which had no opt-in) this is the default path.
  let researchOutcome: AttackOutcome | undefined;
  const research = (): AttackOutcome => (researchOutcome ??= attack(RUNS, (seed) => ({ method: 'objpert', epsilon: 1, delta: DELTA, rng: seededRng(seed), acceptNoGuarantee: true })));

  it('identifies the add/remove neighbour far above the cap of its reported epsilon (research opt-in, the old default path)', (t) => {
    const { correct, epsilon } = research();
    const p = binomialTail(RUNS, cap(epsilon), correct);
    t.diagnostic(`objpert: identified ${correct}/${RUNS} at epsilon ${epsilon} (cap ${cap(epsilon)}; an epsilon-DP release allows this with probability ${p})`);
    assert.ok(p < 1e-4, `identified ${correct}/${RUNS} at epsilon ${epsilon} (cap ${cap(epsilon)}): p = ${p}`);
  });

  it('so its guarantee is none, and the report says why (with the secure generator too: it used to say conjecture)', () => {
    const { guarantees, warnings } = research();
    assert.deepEqual([...guarantees], ['none']);
    const secure = train(D, { method: 'objpert', epsilon: 1, delta: DELTA, acceptNoGuarantee: true });
    assert.equal(secure.privacy.guarantee, 'none');
    assert.equal(secure.privacy.randomness, 'secure (crypto.getRandomValues)');
    assert.ok(warnings.some((w) => /objective perturbation without output noise is NOT private: its released minimiser identifies the dataset/.test(w)), warnings.join(' | '));
  });

  it('AMP (003 Alg. 1): the same attack stays below the cap (its output noise hides b)', (t) => {
    const { correct, epsilon, guarantees } = attack(AMP_RUNS, (seed) => ({ method: 'amp', epsilon: 1, delta: DELTA, clipNorm: 1, rng: seededRng(seed) }));
    t.diagnostic(`amp: identified ${correct}/${AMP_RUNS} at epsilon ${epsilon} (cap ${cap(epsilon)})`);
    assert.ok(correct <= cap(epsilon) * AMP_RUNS, `AMP: identified ${correct}/${AMP_RUNS} at epsilon ${epsilon} (cap ${cap(epsilon)})`);
    assert.deepEqual([...guarantees], ['none'], 'seeded (the test); with the secure generator AMP is proven');
  });

  it('the default path refuses in the library: train, trainObjectivePerturbation, the estimator (naming acceptNoGuarantee and amp)', () => {
    const refused = (e: unknown) => e instanceof InvalidParameterError && e.param === 'acceptNoGuarantee' && /'amp'/.test(e.message) && /identifies the dataset/.test(e.message);
    assert.throws(() => train(D, { method: 'objpert', epsilon: 1, delta: DELTA }), refused);
    assert.throws(() => train(D, { method: 'objpert', epsilon: 1, delta: DELTA, acceptNoGuarantee: false }), refused);
    assert.throws(() => trainObjectivePerturbation(D, { epsilon: 1, delta: DELTA }), refused);
    assert.throws(() => new PrivateLogisticRegression({ epsilon: 1, method: 'objpert' }).fit(D), refused);
  });

  it('the default path refuses in the CLI: exit 2, one line naming --method amp and --accept-no-guarantee, nothing written', async () => {
    const f = peopleFixture('dpfit-objpert-', 200, 5);
    const out = join(f.dir, 'model.json');
    const refused = await runCli('train', '--data', f.data, '--schema', f.schema, '--method', 'objpert', '--epsilon', '1', '--out', out, '--json');
    assert.equal(refused.code, 2, refused.stderr);
    assert.equal(refused.stdout, '');
    assert.equal(refused.stderr.split('\n').length, 2, refused.stderr); // one line and its newline
    assert.match(refused.stderr, /^dpfit: --method must be amp .* or objpert with --accept-no-guarantee .*got "objpert" \(objective perturbation alone is not private: its released minimiser identifies the dataset/);
    assert.equal(existsSync(out), false);
    // The opt-in is objpert's alone.
    const misplaced = await runCli('train', '--data', f.data, '--schema', f.schema, '--method', 'amp', '--epsilon', '1', '--accept-no-guarantee');
    assert.equal(misplaced.code, 2);
    assert.match(misplaced.stderr, /^dpfit: --accept-no-guarantee must be given only with --method objpert/);
  });
});
