/**
 * Every learner of the registry says before training what it will release (`Learner.plan`,
 * `plannedTrainingRelease` in `src/learners/train.ts`): from the public shape alone (d, the
 * schema's bounds, the declared n; no row), the planned event is the event the trained model's
 * report carries, as the same JSON, and the planned delta outside RDP is the report's
 * `deltaComponents.ptr` (RGM's Propose-Test-Release) or 0. Objective perturbation, which has no
 * guarantee, plans a non-private release (which dominates any event). Checked for every method of
 * `LEARNERS` (the test fails when a method is added without a case), with the default options and
 * with the options that change the event's shape (explicit noise, no noise, shuffled SGD's plain,
 * sampled and last-iterate iterations, a clipping norm, AMP's explicit noise, RGM's ridge and GLM
 * paths), and through `train(data, {budget})`, whose budget entry is the plan. The composite
 * releases (`setUpTuning`, `setUpOneVsRest`) equal what `tuneGradientMethodHonestly` and
 * `trainOneVsRest` report. The data and the seeds are fixed; the events do not depend on them.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { eventToJson } from '../../src/accounting/events/json.js';
import { PrivacyBudget } from '../../src/accounting/budget/privacy-budget.js';
import { loadDataset } from '../../src/data/node/read.js';
import { parseSchema } from '../../src/data/schema/parse.js';
import { schemaFeatureNames, schemaLabelBound, schemaRowNormBound } from '../../src/data/schema/bounds.js';
import type { Schema } from '../../src/data/schema/types.js';
import { setUpOneVsRest, trainOneVsRest } from '../../src/learners/composite/one-vs-rest.js';
import { setUpTuning, tuneGradientMethodHonestly } from '../../src/learners/composite/tune-gradient-method.js';
import { TRAIN_METHODS } from '../../src/learners/registry.js';
import { plannedTrainingRelease, train, type PlannedRelease, type TrainOptions } from '../../src/learners/train.js';
import { sampleGaussian } from '../../src/random/continuous.js';
import { seededRng } from '../../src/random/rng.js';

const DELTA = 1e-5;

/** 300 seeded rows of a binary task (one age missing: a zero row), and 3000 of a regression with Gaussian features (RGM's default rho assumes them). */
function fixture(): { classification: string; regression: string; classificationSchema: Schema; regressionSchema: Schema } {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-planned-release-'));
  const rng = seededRng(11);
  const people = ['age,hours,label'];
  for (let i = 0; i < 300; i++) {
    const age = 20 + Math.floor(50 * rng.nextDouble());
    const hours = 10 + Math.floor(60 * rng.nextDouble());
    people.push(`${i === 3 ? '' : age},${hours},${(age - 40) / 12 + (hours - 40) / 10 + rng.nextDouble() - 0.5 > 0 ? 'yes' : 'no'}`);
  }
  const scores = ['a,b,score'];
  for (let i = 0; i < 3000; i++) {
    const a = Math.max(-4, Math.min(4, sampleGaussian(rng)));
    const b = Math.max(-4, Math.min(4, sampleGaussian(rng)));
    scores.push(`${a.toFixed(4)},${b.toFixed(4)},${(a - 0.5 * b + 0.3 * sampleGaussian(rng)).toFixed(4)}`);
  }
  writeFileSync(join(dir, 'people.csv'), `${people.join('\n')}\n`);
  writeFileSync(join(dir, 'scores.csv'), `${scores.join('\n')}\n`);
  return {
    classification: join(dir, 'people.csv'),
    regression: join(dir, 'scores.csv'),
    classificationSchema: parseSchema({
      version: 1,
      columns: [
        { name: 'age', type: 'numeric', lower: 0, upper: 80, missing: 'dropRow' },
        { name: 'hours', type: 'numeric', lower: 0, upper: 80 },
        { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
      ],
    }),
    regressionSchema: parseSchema({
      version: 1,
      columns: [
        { name: 'a', type: 'numeric', lower: -4, upper: 4, scale: 'none' },
        { name: 'b', type: 'numeric', lower: -4, upper: 4, scale: 'none' },
        { name: 'score', type: 'label', lower: -10, upper: 10 },
      ],
    }),
  };
}

/** What `dpfit train --ledger` knows before reading: the schema's d, feature names and bounds. */
function publicShape(schema: Schema) {
  const featureNames = schemaFeatureNames(schema);
  return { d: featureNames.length, featureNames, bounds: { rowNormBound: schemaRowNormBound(schema), labelBound: schemaLabelBound(schema) } };
}

interface Case {
  readonly name: string;
  readonly task: 'classification' | 'regression';
  readonly options: Record<string, unknown>;
}

/** Every method, with its defaults and the options that change the shape of its event. */
const CASES: readonly Case[] = [
  { name: 'dpsgd', task: 'classification', options: { method: 'dpsgd', epsilon: 2 } },
  { name: 'dpsgd, explicit noise', task: 'classification', options: { method: 'dpsgd', noiseMultiplier: 1.5, batchSize: 30, steps: 20 } },
  { name: 'dpgd', task: 'classification', options: { method: 'dpgd', epsilon: 2 } },
  { name: 'dpgd, no noise', task: 'classification', options: { method: 'dpgd', noiseMultiplier: 0 } },
  { name: 'shuffled (the last-iterate lattice when its conditions hold)', task: 'classification', options: { method: 'shuffled', epsilon: 2, epochs: 2 } },
  { name: 'shuffled, plain iteration', task: 'classification', options: { method: 'shuffled', epsilon: 2, epochs: 2, lastIterate: false } },
  { name: 'shuffled, one record per partial epoch (sampled)', task: 'classification', options: { method: 'shuffled', epsilon: 2, epochs: 1, fraction: 0.004, lastIterate: false } },
  { name: 'output', task: 'classification', options: { method: 'output', epsilon: 2 } },
  { name: 'output, clipping norm', task: 'classification', options: { method: 'output', noiseMultiplier: 2, clipNorm: 0.5, regularization: 0.1 } },
  { name: 'outputSgd', task: 'classification', options: { method: 'outputSgd', epsilon: 2, epochs: 2 } },
  { name: 'objpert (no guarantee: planned non-private)', task: 'classification', options: { method: 'objpert', epsilon: 2, acceptNoGuarantee: true } },
  { name: 'amp', task: 'classification', options: { method: 'amp', epsilon: 2 } },
  { name: 'amp, explicit noise', task: 'classification', options: { method: 'amp', noiseStd: 3, regularization: 5 } },
  { name: 'rgm, ridge (PTR)', task: 'regression', options: { method: 'rgm', epsilon: 2, loss: 'squared', steps: 20 } },
  { name: 'rgm, logistic', task: 'classification', options: { method: 'rgm', epsilon: 2, loss: 'logistic', steps: 20 } },
];

/** The delta a report paid outside RDP. */
function reportedExtraDelta(privacy: unknown): number {
  return (privacy as { deltaComponents?: { ptr?: number } }).deltaComponents?.ptr ?? 0;
}

/** The planned release covers the report: the same event JSON and the same delta outside RDP; objpert: non-private. */
function assertCovers(planned: PlannedRelease, privacy: { event: unknown; guarantee: string }, method: string): void {
  if (method === 'objpert') {
    assert.deepEqual(eventToJson(planned.event), { kind: 'nonPrivate' });
    assert.equal(privacy.guarantee, 'none');
    assert.equal((privacy.event as { kind: string }).kind, 'objectivePerturbation');
    return;
  }
  assert.deepEqual(JSON.parse(JSON.stringify(privacy.event)), eventToJson(planned.event));
  assert.equal(planned.extraDelta, reportedExtraDelta(privacy));
}

describe('each learner plans, from public values alone, the release its trained model reports', async () => {
  const f = fixture();
  const data = {
    classification: await loadDataset(f.classification, f.classificationSchema),
    regression: await loadDataset(f.regression, f.regressionSchema),
  };
  const schemas = { classification: f.classificationSchema, regression: f.regressionSchema };
  const records = { classification: 300, regression: 3000 };

  it('every method of the registry has a case', () => {
    assert.deepEqual([...new Set(CASES.map((c) => c.options.method))].sort(), [...TRAIN_METHODS].sort());
  });

  for (const c of CASES) {
    it(c.name, () => {
      const method = c.options.method as string;
      const usesN = method !== 'amp' && method !== 'objpert';
      const options = { ...c.options, delta: DELTA, ...(usesN ? { datasetSize: records[c.task] } : {}) } as unknown as TrainOptions;
      const { planned } = plannedTrainingRelease(publicShape(schemas[c.task]), options);
      const trained = train(data[c.task], { ...options, rng: seededRng(3) } as TrainOptions);
      assertCovers(planned, trained.privacy, method);
      if (method === 'rgm' && c.options.loss === 'squared') assert.ok(planned.extraDelta > 0, 'ridge RGM pays delta_ptr outside RDP');
      // train() with a budget spends the plan (an infinite budget holds objpert's non-private charge too).
      const budget = new PrivacyBudget({ epsilon: Infinity, delta: 0.5 });
      const spent = train(data[c.task], { ...options, budget } as TrainOptions & { budget: PrivacyBudget });
      assert.deepEqual(budget.entries().map((e) => ({ event: eventToJson(e.event), extraDelta: e.extraDelta })), [{ event: eventToJson(planned.event), extraDelta: planned.extraDelta }]);
      assertCovers(planned, spent.privacy, method);
    });
  }

  it('rows above R by rounding only change nothing the plan states (the constants are R\'s, not the largest row\'s)', () => {
    const { dataset } = data.classification;
    const rowNormBound = schemaRowNormBound(f.classificationSchema);
    // Every row scaled 1e-13 up: rows normalised to R now exceed it, by far less than 1e-12.
    const x = dataset.x.map((v) => v * (1 + 1e-13));
    let largest = 0;
    for (let i = 0; i < dataset.n; i++) largest = Math.max(largest, Math.hypot(...x.subarray(i * dataset.d, (i + 1) * dataset.d)));
    assert.ok(largest > rowNormBound, 'the fixture has a row above R');
    const above = { ...data.classification, dataset: { ...dataset, x } };
    for (const c of CASES.filter((k) => ['amp', 'output', 'outputSgd', 'shuffled'].includes(k.options.method as string) && k.options.clipNorm === undefined)) {
      const method = c.options.method as string;
      const options = { ...c.options, delta: DELTA, ...(method === 'amp' ? {} : { datasetSize: records.classification }) } as unknown as TrainOptions;
      const { planned } = plannedTrainingRelease(publicShape(f.classificationSchema), options);
      assertCovers(planned, train(above, { ...options, rng: seededRng(3) } as TrainOptions).privacy, method);
    }
  });

  it('honest tuning and one-vs-rest: the composite plan is the reported event', () => {
    const { dataset } = data.classification;
    const base = { method: 'dpgd' as const, clipNorm: 1, steps: 10, learningRate: 0.5 };
    const tuning = { base, learningRates: [0.1, 1], distribution: { kind: 'poisson' as const, mean: 2 }, epsilon: 2, delta: DELTA };
    const tuned = tuneGradientMethodHonestly(dataset, { ...tuning, publicValidation: dataset, rng: seededRng(4) });
    assert.deepEqual(tuned.privacy.event, eventToJson(setUpTuning({ n: dataset.n, d: dataset.d }, tuning).event));
    const classes = new Float64Array(dataset.n).map((_, i) => i % 3);
    const oneVsRest = { classes: ['a', 'b', 'c'], base, epsilon: 2, delta: DELTA };
    const ovr = trainOneVsRest({ ...dataset, y: classes }, { ...oneVsRest, rng: seededRng(5) });
    assert.deepEqual(ovr.privacy.event, eventToJson(setUpOneVsRest({ n: dataset.n, d: dataset.d }, oneVsRest).event));
  });
});
