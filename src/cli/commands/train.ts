/**
 * `dpfit train`, `dpfit evaluate`, `dpfit predict`: private linear models from a data file and a
 * public schema. The schema (never the private data) fixes the features, their bounds and the
 * row-norm bound the privacy analysis relies on; the model file embeds the schema and the privacy
 * report, so it says what it cost.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { loadDataset, readSchemaFile } from '../../data/node/read.js';
import { parseSchema, type Schema } from '../../data/schema.js';
import { InvalidParameterError } from '../../errors.js';
import { trainDpGd, type TrainResult } from '../../learners/dp-gd.js';
import { trainDpSgd, type Optimizer, type Schedule } from '../../learners/dp-sgd.js';
import { trainShuffledSgd } from '../../learners/shuffled-sgd.js';
import { glmConstants } from '../../learners/glm/constants.js';
import { lossByName } from '../../learners/losses.js';
import { evaluate, parseModel, predict, type LinearModel } from '../../learners/model.js';
import { defaultRng, seededRng } from '../../random/rng.js';
import { formatNumber, parseIntegerFlag, parseNumberFlag, printResult, toJson, type CliIo } from '../io.js';
import { progressReporter } from '../progress.js';

interface TrainFlags {
  data: string;
  schema?: string;
  label?: string;
  model: string;
  method: string;
  epsilon?: number;
  delta: number;
  noiseMultiplier?: number;
  clipNorm?: number;
  steps?: number;
  epochs?: number;
  batchSize?: number;
  learningRate: number;
  regularization: number;
  optimizer: string;
  schedule: string;
  fraction?: number;
  conjecture?: boolean;
  seed?: number;
  out?: string;
  json?: boolean;
}

/** Writes a file atomically: a temporary file renamed into place, so no partial output remains. */
export function writeFileAtomic(path: string, text: string): void {
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, text);
  renameSync(temporary, path);
}

function requireSchemaFlag(schema: string | undefined): string {
  if (schema === undefined) {
    throw new InvalidParameterError(
      '--schema',
      undefined,
      'given: a public schema (bounds, categories, label) is what makes preprocessing private; `dpfit data schema FILE` suggests one for exploration',
    );
  }
  return schema;
}

export function registerTrain(program: Command, io: CliIo): void {
  program
    .command('train')
    .description('train a private linear model and report what it cost')
    .requiredOption('--data <FILE>', 'training data (CSV, Parquet or LIBSVM)')
    .option('--schema <FILE>', 'public schema JSON (required: see dpfit data schema --help)')
    .option('--label <COL>', "the label column (must be the schema's label)")
    .option('--model <M>', 'logistic | linear | huber | smoothedHinge', 'logistic')
    .option('--method <M>', 'dpsgd (Poisson batches, add/remove-one) | dpgd (full batch, replace-one) | shuffled (004 Alg. 1, replace-one)', 'dpsgd')
    .option('--epsilon <E>', 'target epsilon (the noise is calibrated for it)', parseNumberFlag('--epsilon'))
    .option('--delta <D>', 'target delta', parseNumberFlag('--delta'), 1e-5)
    .option('--noise-multiplier <Z>', 'explicit noise multiplier instead of --epsilon', parseNumberFlag('--noise-multiplier'))
    .option('--clip-norm <C>', 'per-example gradient clipping norm (default: the loss Lipschitz bound from the schema)', parseNumberFlag('--clip-norm'))
    .option('--steps <T>', 'number of steps (dpgd; or dpsgd instead of --epochs)', parseIntegerFlag('--steps'))
    .option('--epochs <E>', 'dpsgd: expected passes over the data (default 10)', parseNumberFlag('--epochs'))
    .option('--batch-size <B>', 'dpsgd: expected (Poisson) batch size (default 256)', parseNumberFlag('--batch-size'))
    .option('--learning-rate <R>', 'step size', parseNumberFlag('--learning-rate'), 1)
    .option('--regularization <L>', 'L2 regularisation of the average loss', parseNumberFlag('--regularization'), 0)
    .option('--fraction <TAU>', 'shuffled: fraction of each shuffled epoch processed (004 Alg. 1; default 1)', parseNumberFlag('--fraction'))
    .option('--conjecture', "shuffled: also report 004 Conj. 1-2's epsilon, labelled a conjecture (never the guarantee)")
    .option('--optimizer <O>', 'dpsgd: sgd | momentum | adam (post-processing)', 'sgd')
    .option('--schedule <S>', 'dpsgd: constant | inverseSqrt | cosine', 'constant')
    .option('--seed <N>', 'seeded randomness for reproducible EXPERIMENTS (not for a real release)', parseIntegerFlag('--seed'))
    .option('--out <FILE>', 'write the model (with its privacy report and schema) as JSON')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Example:
  $ dpfit train --data adult.data --schema adult.schema.json --epsilon 1 --delta 1e-5 --out model.json

The privacy report gives epsilon, delta, the accountant, the DpEvent released, the neighbouring
relation and whether the guarantee is proven. Default randomness is the secure generator.`,
    )
    .action(async (flags: TrainFlags) => {
      const schema = await readSchemaFile(requireSchemaFlag(flags.schema));
      const labelColumn = schema.columns.find((c) => c.type === 'label');
      if (flags.label !== undefined && labelColumn?.name !== flags.label) {
        throw new InvalidParameterError('--label', flags.label, `the schema's label column '${labelColumn?.name}'`);
      }
      const prepared = await loadDataset(flags.data, schema);
      const loss = lossByName(flags.model);
      const constants = glmConstants(loss, { rowNormBound: prepared.rowNormBound, labelBound: prepared.labelBound });
      const clipNorm = flags.clipNorm ?? constants.lipschitz;
      if (!Number.isFinite(clipNorm)) {
        throw new InvalidParameterError('--clip-norm', flags.clipNorm, `given: the ${loss.name} loss has no finite Lipschitz bound on this schema's domain`);
      }
      const rng = flags.seed === undefined ? defaultRng() : seededRng(flags.seed);
      const onStep = progressReporter(`training (${flags.method})`, !flags.json);
      const common = {
        loss: flags.model,
        epsilon: flags.epsilon,
        delta: flags.delta,
        noiseMultiplier: flags.noiseMultiplier,
        clipNorm,
        learningRate: flags.learningRate,
        regularization: flags.regularization,
        featureNames: prepared.dataset.featureNames,
        rng,
        onStep,
      };
      let result: TrainResult;
      if (flags.method === 'dpgd') {
        result = trainDpGd(prepared.dataset, { ...common, steps: flags.steps ?? 100 });
      } else if (flags.method === 'dpsgd') {
        const batchSize = flags.batchSize ?? Math.min(256, prepared.dataset.n);
        result = trainDpSgd(prepared.dataset, {
          ...common,
          batchSize,
          ...(flags.steps !== undefined ? { steps: flags.steps } : { epochs: flags.epochs ?? 10 }),
          optimizer: flags.optimizer as Optimizer,
          schedule: flags.schedule as Schedule,
        });
      } else if (flags.method === 'shuffled') {
        result = trainShuffledSgd(prepared.dataset, {
          ...common,
          epochs: flags.epochs ?? 1,
          fraction: flags.fraction ?? 1,
          accountConjecture: Boolean(flags.conjecture),
        });
      } else {
        throw new InvalidParameterError('--method', flags.method, "'dpsgd', 'dpgd' or 'shuffled' (objpert, amp, output and rgm are coming)");
      }
      const model: LinearModel = { ...result.model, schema };
      const metrics = evaluate(model, prepared.dataset);
      if (flags.out !== undefined) writeFileAtomic(flags.out, `${toJson(model)}\n`);
      const output = { model, privacy: result.privacy, metrics: { training: metrics }, diagnostics: result.diagnostics };
      printResult(io, Boolean(flags.json), output, () =>
        [
          `trained ${loss.name} by ${flags.method} on ${prepared.dataset.n} rows x ${prepared.dataset.d} features`,
          `  training ${metrics.accuracy !== undefined ? `accuracy ${formatNumber(metrics.accuracy, 4)}` : `MSE ${formatNumber(metrics.mse ?? NaN, 5)}`}`,
          `  privacy  (epsilon = ${formatNumber(result.privacy.epsilon, 6)}, delta = ${formatNumber(result.privacy.delta)}), ${result.privacy.guarantee}, ${result.privacy.accountant} accountant, ${result.privacy.neighboringRelation}`,
          ...result.privacy.warnings.map((w) => `  warning  ${w}`),
          flags.out !== undefined ? `  model written to ${flags.out}` : '',
        ]
          .filter((line) => line !== '')
          .join('\n'),
      );
    });

  const readModel = (path: string): LinearModel => {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new InvalidParameterError('--model', path, 'a readable model file', (error as NodeJS.ErrnoException).code);
    }
    try {
      return parseModel(JSON.parse(text));
    } catch (error) {
      if (error instanceof SyntaxError) throw new InvalidParameterError('--model', path, 'a dpfit model JSON file', error.message);
      throw error;
    }
  };
  const schemaFor = async (model: LinearModel, schemaPath: string | undefined): Promise<Schema> => {
    if (schemaPath !== undefined) return readSchemaFile(schemaPath);
    if (model.schema === undefined) throw new InvalidParameterError('--schema', undefined, 'given (the model has no embedded schema)');
    return parseSchema(model.schema);
  };

  program
    .command('evaluate')
    .description('utility of a saved model on labelled data (accuracy, log-loss, AUC; MSE, R^2)')
    .requiredOption('--model <FILE>', 'a model written by dpfit train --out')
    .requiredOption('--data <FILE>', 'labelled data')
    .option('--schema <FILE>', "schema (default: the model's embedded schema)")
    .option('--json', 'print one JSON object')
    .action(async (flags: { model: string; data: string; schema?: string; json?: boolean }) => {
      const model = readModel(flags.model);
      const prepared = await loadDataset(flags.data, await schemaFor(model, flags.schema));
      const metrics = evaluate(model, prepared.dataset);
      printResult(io, Boolean(flags.json), metrics, () =>
        Object.entries(metrics)
          .map(([k, v]) => `${k.padEnd(9)} ${formatNumber(v as number, 6)}`)
          .join('\n'),
      );
    });

  program
    .command('predict')
    .description('predictions of a saved model (probabilities for classification)')
    .requiredOption('--model <FILE>', 'a model written by dpfit train --out')
    .requiredOption('--data <FILE>', 'data with the schema columns (the label column may hold any declared value)')
    .option('--schema <FILE>', "schema (default: the model's embedded schema)")
    .option('--json', 'print one JSON object')
    .action(async (flags: { model: string; data: string; schema?: string; json?: boolean }) => {
      const model = readModel(flags.model);
      const prepared = await loadDataset(flags.data, await schemaFor(model, flags.schema));
      const predictions = Array.from(predict(model, prepared.dataset));
      printResult(io, Boolean(flags.json), { predictions }, () => predictions.map((p) => formatNumber(p, 8)).join('\n'));
    });
}
