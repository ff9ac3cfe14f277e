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
import { evaluate, parseModel, predict, type LinearModel } from '../../learners/model.js';
import { evaluateOneVsRest, parseOneVsRestModel, predictClasses, type OneVsRestModel } from '../../learners/one-vs-rest.js';
import type { Dataset } from '../../data/dataset.js';
import { defaultRng, seededRng } from '../../random/rng.js';
import { formatNumber, parseIntegerFlag, parseNumberFlag, parseNumberListFlag, printResult, toJson, type CliIo } from '../io.js';
import { progressReporter } from '../progress.js';
import { createClippedGradientPool, shareGlmData } from '../../learners/glm/parallel-clipped-sum.js';
import { CHUNK_ROWS } from '../../learners/glm/per-example.js';
import { runTrainingMethod, type TrainFlags } from './train-methods.js';


type AnyModel = LinearModel | OneVsRestModel;

/** Metrics of either kind of model: one-vs-rest models report their (multi-class) accuracy. */
function evaluateAny(model: AnyModel, data: Dataset): Record<string, number> {
  return model.format === 'dpfit-one-vs-rest-model/1' ? evaluateOneVsRest(model, data) : { ...evaluate(model, data) };
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
    .option(
      '--method <M>',
      'dpsgd (Poisson batches, add/remove-one) | dpgd (full batch, replace-one) | shuffled (004 Alg. 1, replace-one) | ' +
        'output (noise on the regularised ERM minimiser, Chaudhuri et al. 2011) | output-sgd (noise on the SGD output, 004 Sec. 3.2.2) | ' +
        'objpert (objective perturbation, 003 Thm. 3.1/3.2, add/remove-one) | amp (Approximate Minima Perturbation, 003 Alg. 1) | ' +
        'rgm (ridge by Relative Gaussian Mechanism gradient descent after a Propose-Test-Release check, 000 Sec. 5; may release nothing)',
      'dpsgd',
    )
    .option('--epsilon <E>', 'target epsilon (the noise is calibrated for it)', parseNumberFlag('--epsilon'))
    .option('--delta <D>', 'target delta', parseNumberFlag('--delta'), 1e-5)
    .option('--noise-multiplier <Z>', 'explicit noise multiplier instead of --epsilon', parseNumberFlag('--noise-multiplier'))
    .option('--clip-norm <C>', 'per-example gradient clipping norm (default: the loss Lipschitz bound from the schema)', parseNumberFlag('--clip-norm'))
    .option('--steps <T>', 'number of steps (dpgd; or dpsgd instead of --epochs)', parseIntegerFlag('--steps'))
    .option('--epochs <E>', 'dpsgd: expected passes over the data (default 10)', parseNumberFlag('--epochs'))
    .option('--batch-size <B>', 'dpsgd: expected (Poisson) batch size (default 256)', parseNumberFlag('--batch-size'))
    .option('--learning-rate <R>', 'step size (default 1; output-sgd: 1 / (beta + lambda))', parseNumberFlag('--learning-rate'))
    .option(
      '--regularization <L>',
      'L2 regularisation lambda: of the AVERAGE loss for dpgd/dpsgd/shuffled (default 0) and output/output-sgd (required > 0); ' +
        'of the SUM objective for objpert/amp (003; default: the smallest lambda with sigma <= 1.3 sigma_Gaussian, 003 Sec. 5)',
      parseNumberFlag('--regularization'),
    )
    .option('--grad-tolerance <TAU>', 'output: tolerance of the minimiser (paid in the sensitivity); amp: tau of 003 Alg. 1 (default 0.01)', parseNumberFlag('--grad-tolerance'))
    .option('--max-iterations <N>', 'output/objpert/amp: optimiser step cap (hitting it releases nothing)', parseIntegerFlag('--max-iterations'))
    .option('--noise-std <S>', 'objpert/amp: explicit std of the objective noise b instead of --epsilon (needs --regularization)', parseNumberFlag('--noise-std'))
    .option('--output-noise-std <S>', 'amp: std of the output noise (default 0.15, 003 Sec. 5)', parseNumberFlag('--output-noise-std'))
    .option('--accountant <A>', "objpert/amp: calibrate with 'rdp' (default, 003 Sec. 5) or 'pld' (tighter)")
    .option('--parameter-norm-bound <P>', 'objpert with --model linear: the norm up to which the objective is exactly ridge (003 needs a Lipschitz loss)', parseNumberFlag('--parameter-norm-bound'))
    .option('--feature-clip <RC>', 'rgm: rows clipped to norm RC (default: the schema row-norm bound)', parseNumberFlag('--feature-clip'))
    .option('--b-clip <B>', 'rgm: x_i y_i clipped to norm B (default RC times the label bound)', parseNumberFlag('--b-clip'))
    .option('--rho <RHO>', "rgm: proposed lower bound on the Gram matrix's smallest eigenvalue (default 000 Prop. 3, Gaussian features)", parseNumberFlag('--rho'))
    .option('--b-norm-bound <NB>', 'rgm: proposed bound on the norm of the averaged x_i y_i, tested by the same PTR (tightens the noise)', parseNumberFlag('--b-norm-bound'))
    .option('--ptr-fraction <F>', 'rgm: fraction of epsilon spent on the Propose-Test-Release check (default 0.1)', parseNumberFlag('--ptr-fraction'))
    .option('--tune <MEAN>', 'honest learning-rate tuning (Papernot & Steinke 2022): K ~ Poisson(MEAN) private runs, the best released; epsilon covers all of it', parseNumberFlag('--tune'))
    .option('--tune-learning-rates <LIST>', 'comma-separated PUBLIC candidate learning rates for --tune (default 10 log-spaced in [1e-3, 10])', parseNumberListFlag('--tune-learning-rates'))
    .option('--validation <FILE>', 'PUBLIC labelled data (not part of --data) that scores the --tune candidates')
    .option('--metric <M>', 'score of --tune candidates: accuracy | auc | logLoss | mse | r2 (default accuracy, or r2 for regression)')
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

  $ dpfit train --data adult.data --schema adult.schema.json --epsilon 1 --tune 15.4 \\
      --validation public.csv --optimizer adam --out model.json      # tuning paid for

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
      const validation = flags.validation === undefined ? undefined : (await loadDataset(flags.validation, schema)).dataset;
      const rng = flags.seed === undefined ? defaultRng() : seededRng(flags.seed);
      const onStep = progressReporter(`training (${flags.method})`, !flags.json);
      // DP-GD's full passes over large data run on all CPUs (bit-identical sums; glm/parallel-clipped-sum.ts).
      const pool = flags.method === 'dpgd' && prepared.dataset.n >= 2 * CHUNK_ROWS ? await createClippedGradientPool() : undefined;
      let result;
      try {
        const gradientSummer = pool === undefined ? undefined : { prepare: shareGlmData, sum: pool.sumClippedGradients.bind(pool) };
        // Features copied into shared memory once, not by every run (tuning and one-vs-rest train several).
        const data = pool === undefined ? prepared : { ...prepared, dataset: shareGlmData(prepared.dataset) };
        result = runTrainingMethod(flags, data, { schema, rng, onStep, validation, ...(gradientSummer === undefined ? {} : { gradientSummer }) });
      } finally {
        await pool?.close();
      }
      const model: AnyModel | undefined = result.model === undefined ? undefined : { ...result.model, schema };
      const metrics = model === undefined ? undefined : evaluateAny(model, prepared.dataset);
      if (flags.out !== undefined && model !== undefined) writeFileAtomic(flags.out, `${toJson(model)}\n`);
      const output = {
        model: model ?? null,
        privacy: result.privacy,
        metrics: metrics === undefined ? {} : { training: metrics },
        diagnostics: result.diagnostics,
        note: 'metrics.training and diagnostics are computed from the private data for its owner: they are not covered by the privacy guarantee (publish the model, not this output)',
      };
      printResult(io, Boolean(flags.json), output, () =>
        [
          model === undefined
            ? `no model released: ${String((result.diagnostics as { message?: unknown }).message ?? 'the mechanism released nothing')}`
            : `trained ${model.format === 'dpfit-one-vs-rest-model/1' ? `one-vs-rest ${model.classes.length}-class ${model.models[0].loss.name}` : model.loss.name} by ${flags.method}${flags.tune !== undefined ? ' (honestly tuned)' : ''} on ${prepared.dataset.n} rows x ${prepared.dataset.d} features`,
          metrics === undefined ? '' : `  training ${metrics.accuracy !== undefined ? `accuracy ${formatNumber(metrics.accuracy, 4)}` : `MSE ${formatNumber(metrics.mse ?? NaN, 5)}`}`,
          flags.tune !== undefined && model !== undefined
            ? `  tuned    learning rate ${String(result.diagnostics.learningRate)} (validation score ${formatNumber(Number(result.diagnostics.validationScore), 4)}; the number of runs and the other runs stay private)`
            : '',
          `  privacy  (epsilon = ${formatNumber(result.privacy.epsilon, 6)}, delta = ${formatNumber(result.privacy.delta)}), ${result.privacy.guarantee}, ${result.privacy.accountant} accountant, ${result.privacy.neighboringRelation}`,
          ...result.privacy.warnings.map((w) => `  warning  ${w}`),
          flags.out !== undefined && model !== undefined ? `  model written to ${flags.out}` : '',
          flags.out !== undefined && model === undefined ? `  nothing written to ${flags.out}` : '',
        ]
          .filter((line) => line !== '')
          .join('\n'),
      );
    });

  const readModel = (path: string): AnyModel => {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      throw new InvalidParameterError('--model', path, 'a readable model file', (error as NodeJS.ErrnoException).code);
    }
    try {
      const json = JSON.parse(text) as { format?: unknown };
      return json?.format === 'dpfit-one-vs-rest-model/1' ? parseOneVsRestModel(json) : parseModel(json);
    } catch (error) {
      if (error instanceof SyntaxError) throw new InvalidParameterError('--model', path, 'a dpfit model JSON file', error.message);
      throw error;
    }
  };
  const schemaFor = async (model: AnyModel, schemaPath: string | undefined): Promise<Schema> => {
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
      const metrics = evaluateAny(model, prepared.dataset);
      printResult(io, Boolean(flags.json), metrics, () =>
        Object.entries(metrics)
          .map(([k, v]) => `${k.padEnd(9)} ${formatNumber(v as number, 6)}`)
          .join('\n'),
      );
    });

  program
    .command('predict')
    .description('predictions of a saved model (probabilities for binary classification, class names for one-vs-rest models)')
    .requiredOption('--model <FILE>', 'a model written by dpfit train --out')
    .requiredOption('--data <FILE>', 'data with the schema columns (the label column may hold any declared value)')
    .option('--schema <FILE>', "schema (default: the model's embedded schema)")
    .option('--json', 'print one JSON object')
    .action(async (flags: { model: string; data: string; schema?: string; json?: boolean }) => {
      const model = readModel(flags.model);
      const prepared = await loadDataset(flags.data, await schemaFor(model, flags.schema));
      if (model.format === 'dpfit-one-vs-rest-model/1') {
        const classes = Array.from(predictClasses(model, prepared.dataset), (k) => model.classes[k]);
        printResult(io, Boolean(flags.json), { predictions: classes }, () => classes.join('\n'));
        return;
      }
      const predictions = Array.from(predict(model, prepared.dataset));
      printResult(io, Boolean(flags.json), { predictions }, () => predictions.map((p) => formatNumber(p, 8)).join('\n'));
    });
}
