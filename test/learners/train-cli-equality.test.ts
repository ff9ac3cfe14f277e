/**
 * One product: `train(prepared, { method, epsilon, delta })` and `dpfit train --method M
 * --epsilon E --delta D` go through the same learner registry, so for the same seed they release
 * the same thing. For every method of the registry, on a small fixture whose schema drops a row
 * for a missing value (so the zero rows of `data/dropped-rows.ts` are exercised on both sides):
 * the model file written by `--out` equals `train()`'s model in every field (the file's embedded
 * schema is the one extra field a file carries, checked against the schema file), and the privacy
 * report on stdout equals `train()`'s. No hyperparameter is given on either side but what a
 * method cannot run without (objpert's research opt-in, rgm's linear loss): the defaults are the
 * same public rules. Also dpsgd with a declared `datasetSize`, and the registry's own consistency
 * (every flag a learner reads is a flag of `dpfit train` and sets an option it takes).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Command } from 'commander';
import { loadDataset } from '../../src/data/node/read.js';
import { parseSchema, schemaToJson } from '../../src/data/schema/parse.js';
import { registerTrain } from '../../src/cli/commands/train.js';
import { toDpfitJson } from '../../src/json-numbers.js';
import { cliName } from '../../src/learners/learner.js';
import { LEARNERS, TRAIN_METHODS } from '../../src/learners/registry.js';
import { train, type TrainOptions } from '../../src/learners/train.js';
import { sampleGaussian } from '../../src/random/continuous.js';
import { seededRng } from '../../src/random/rng.js';
import { runCli } from '../helpers/people.js';
import { learnerFlags, METHODS } from '../../src/cli/train-flags.js';

const SEED = 17;
const EPSILON = 2;
const DELTA = 1e-5;

/** 300 seeded rows of a binary task (age, hours) with one age missing (dropped: a zero row), and 3000 of a regression. */
function fixture(): { dir: string; classification: string; regression: string; classificationSchema: string; regressionSchema: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-one-product-'));
  const rng = seededRng(5);
  const people = ['age,hours,label'];
  for (let i = 0; i < 300; i++) {
    const age = 20 + Math.floor(50 * rng.nextDouble());
    const hours = 10 + Math.floor(60 * rng.nextDouble());
    const z = (age - 40) / 12 + (hours - 40) / 10 + (rng.nextDouble() - 0.5);
    people.push(`${i === 7 ? '' : age},${hours},${z > 0 ? 'yes' : 'no'}`);
  }
  // Gaussian features (clipped at the schema's bounds): what RGM's default rho (000 Prop. 3) assumes.
  const scores = ['a,b,score'];
  for (let i = 0; i < 3000; i++) {
    const a = Math.max(-4, Math.min(4, sampleGaussian(rng)));
    const b = Math.max(-4, Math.min(4, sampleGaussian(rng)));
    scores.push(`${a.toFixed(4)},${b.toFixed(4)},${(a - 0.5 * b + 0.3 * sampleGaussian(rng)).toFixed(4)}`);
  }
  const write = (name: string, body: string) => {
    writeFileSync(join(dir, name), body);
    return join(dir, name);
  };
  return {
    dir,
    classification: write('people.csv', `${people.join('\n')}\n`),
    regression: write('scores.csv', `${scores.join('\n')}\n`),
    classificationSchema: write('people.schema.json', JSON.stringify({
      version: 1,
      columns: [
        { name: 'age', type: 'numeric', lower: 0, upper: 80, missing: 'dropRow' },
        { name: 'hours', type: 'numeric', lower: 0, upper: 80 },
        { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
      ],
    })),
    regressionSchema: write('scores.schema.json', JSON.stringify({
      version: 1,
      columns: [
        { name: 'a', type: 'numeric', lower: -4, upper: 4, scale: 'none' },
        { name: 'b', type: 'numeric', lower: -4, upper: 4, scale: 'none' },
        { name: 'score', type: 'label', lower: -10, upper: 10 },
      ],
    })),
  };
}

/** A value as its JSON reads back (the model file's numbers, Infinity as dpfit writes it). */
function asJson(value: unknown): unknown {
  return JSON.parse(toDpfitJson(value, 2));
}

/** What a method cannot run without, on each side: objpert's research opt-in, rgm's linear loss (ridge). */
const REQUIRED: Readonly<Record<string, { readonly flags: readonly string[]; readonly options: Record<string, unknown> }>> = {
  objpert: { flags: ['--accept-no-guarantee'], options: { acceptNoGuarantee: true } },
  rgm: { flags: ['--loss', 'squared'], options: { loss: 'squared' } },
};

describe('one product: dpfit train and train() release the same model and report', () => {
  const f = fixture();

  const cases: { method: string; flags: readonly string[]; options: Record<string, unknown> }[] = [
    ...TRAIN_METHODS.map((method) => ({ method, flags: REQUIRED[method]?.flags ?? [], options: REQUIRED[method]?.options ?? {} })),
    { method: 'dpsgd', flags: ['--dataset-size', '300'], options: { datasetSize: 300 } },
  ];

  for (const { method, flags, options } of cases) {
    it(`${method}${flags.length > 0 ? ` ${flags.join(' ')}` : ''}: the --out file is train()'s model, field for field, and the reports are equal`, async () => {
      const regression = method === 'rgm';
      const data = regression ? f.regression : f.classification;
      const schemaPath = regression ? f.regressionSchema : f.classificationSchema;
      const out = join(f.dir, `${method}-${flags.length}.json`);
      const cli = await runCli('train', '--data', data, '--schema', schemaPath, '--method', cliName(method), '--epsilon', String(EPSILON), '--delta', String(DELTA), '--seed', String(SEED), '--out', out, '--json', ...flags);
      assert.equal(cli.code, 0, cli.stderr);
      const printed = JSON.parse(cli.stdout) as { model: Record<string, unknown> | null; privacy: unknown };

      const schema = parseSchema(JSON.parse(readFileSync(schemaPath, 'utf8')), schemaPath);
      const prepared = await loadDataset(data, schema);
      const library = train(prepared, { method, epsilon: EPSILON, delta: DELTA, rng: seededRng(SEED), ...options } as TrainOptions);

      assert.ok(library.model !== undefined && printed.model !== null, `${method}: both released a model`);
      const { schema: embedded, ...file } = JSON.parse(readFileSync(out, 'utf8')) as Record<string, unknown>;
      assert.deepEqual(embedded, asJson(schemaToJson(schema)), `${method}: the file embeds the schema`);
      assert.deepEqual(file, asJson(library.model), `${method}: every field of the model file`);
      assert.deepEqual(printed.privacy, asJson(library.privacy), `${method}: the privacy report`);
      assert.deepEqual(Object.keys(file).sort(), Object.keys(library.model).sort(), `${method}: no field on one side only`);
    });
  }

  it('the registry and dpfit train agree: --method names, and every flag a learner reads is a flag of train that sets an option the learner takes', () => {
    assert.deepEqual(METHODS, TRAIN_METHODS.map(cliName));
    assert.deepEqual(cliName('outputSgd'), 'output-sgd');
    const program = new Command();
    registerTrain(program, { stdout: () => {}, stderr: () => {} });
    const command = program.commands.find((c) => c.name() === 'train') as Command;
    const attributes = new Set(command.options.map((o) => o.attributeName()));
    for (const learner of LEARNERS) {
      for (const flag of learnerFlags(learner as never)) assert.ok(attributes.has(flag), `${learner.method}: --${cliName(flag)} is a flag of dpfit train`);
      for (const flag of learner.cli.flags) {
        const option = (learner.cli.flagOptions as Record<string, string> | undefined)?.[flag] ?? flag;
        assert.ok((learner.options as readonly string[]).includes(option), `${learner.method}: --${cliName(flag)} sets ${option}, an option it takes`);
      }
    }
  });
});
