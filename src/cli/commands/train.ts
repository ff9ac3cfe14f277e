/**
 * `dpfit train`, `dpfit evaluate`, `dpfit predict`: private linear models from a data file and a
 * public schema. The schema (never the private data) fixes the features, their bounds and the
 * row-norm bound the privacy analysis relies on; the model file embeds the schema and the privacy
 * report, so it says what it cost.
 */
import { Option, type Command } from 'commander';
import { writeOutputFiles, type OutputContent } from '../../data/node/atomic-write.js';
import { checkOutputPaths } from '../output-files.js';
import { loadDataset, readSchemaFile } from '../../data/node/read.js';
import { labelColumn } from '../../data/schema/bounds.js';
import { isSuggestedSchema, parseSchema, schemaToJson } from '../../data/schema/parse.js';
import type { Schema } from '../../data/schema/types.js';
import { SUGGESTION_WARNING } from '../../data/schema/suggest.js';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import { evaluate, logisticProbabilities, predict, predictMargins, type LinearModel } from '../../learners/models/model.js';
import { accuracy, majorityBaseline, meanSquaredError } from '../../eval/metrics.js';
import { evaluateOneVsRest, predictClasses, type OneVsRestModel } from '../../learners/composite/one-vs-rest.js';
import { withConditions, type GuaranteeCondition, type PrivacyReport } from '../../learners/models/privacy-report.js';
import { describeVerification, type ModelVerification } from '../../learners/verification/verify-model.js';
import { cliName } from '../../learners/learner.js';
import { DEFAULT_TRAIN_METHOD, LEARNERS } from '../../learners/registry.js';
import type { Dataset } from '../../data/dataset.js';
import { defaultRng, seededRng } from '../../random/rng.js';
import { formatNumber, parseIntegerFlag, parseNumberFlag, parseNumberListFlag, printResult, toJson, type CliIo } from '../io.js';
import { loadModelFile, type AnyModel } from '../model-file.js';
import { checkFlagLimits, checkWorkLimits, MAX_EPOCHS, MAX_GRADIENT_EVALUATIONS, MAX_STEPS, MAX_SUM_OBJECTIVE_ITERATIONS, MAX_TUNE_MEAN, sci } from '../limits.js';
import { deltaAboveOneOverN, deltaOption } from '../delta-option.js';
import { takeDeprecatedFlag } from '../deprecated-flag.js';
import { progressBar } from '../progress.js';
import { OVERLAP_SHARE, RESOLUTION, overlaps, validationOverlap } from '../validation-overlap.js';
import { growingFeatures } from '../../learners/glm/kernels/feature-memory.js';
import { createClippedGradientPool, poolGradientSummer, shareGlmData } from '../../learners/glm/parallel/parallel-clipped-sum.js';
import { CHUNK_ROWS } from '../../learners/glm/per-example.js';
import { keptRows, withZeroRows } from '../../data/dropped-rows.js';
import { datasetSizeReport, withDatasetSize } from '../../learners/dataset-size.js';
import { checkLossForLabel, type MethodResult, reserveTrainingRun, runTrainingMethod } from './train-methods.js';
import { checkExternalFlags, checkExternalSchema, encodingSqlText, trainExternal, type ExternalFlags, type ExternalOutcome } from './train-external.js';
import { checkMethodFlags, learnerOfFlags, type TrainFlags } from '../train-flags.js';
import { trainHelpAfter, trainHelpConfiguration } from '../help/train-help.js';
import { type LedgerFlags, withLedgerOptions } from '../ledger-flags.js';
import { requirePlannedRelease } from '../../learners/train.js';

/** Printed on stderr by every run with --seed (the report says so too). */
const SEED_WARNING =
  'WARNING: --seed makes the noise reproducible by anyone who knows or guesses the seed: this model is NOT private (guarantee none). Seeds are for experiments; leave --seed out for a release.';

/** The condition a schema suggested from the private data puts on the report. */
const SUGGESTED_SCHEMA_REASON =
  "the schema's provenance is 'suggested-from-private-data': its bounds and categories were read from the private data, so this model is NOT private (declare a public schema: dpfit data schema --help)";

/** The condition validation data that are not disjoint from the training data put on the report (no count: it is private). */
const OVERLAP_REASON =
  `the --validation data are not disjoint from the training data (the same file, the same content, or more than ${100 * OVERLAP_SHARE}% of the rows that score the candidates shared with training rows): the tuning scores read private rows, so this model is NOT private`;

/** What --help says the overlap check of --tune detects and what it does not. */
const OVERLAP_HELP = `--validation must be PUBLIC data: never a part, a copy or a transformation of the private data.
dpfit checks that assertion against the usual mistakes and gives guarantee none when --validation
is the --data file or has the same bytes, or when more than ${100 * OVERLAP_SHARE}% of the rows that score the
candidates are shared with the training data. The rows that score are those the schema keeps: a
row dropped for a missing value ("missing": "dropRow") counts neither way, every other row once
per row, repeats included, as the scores count it. A row is shared when a training row (any row
read, dropped ones too) has the same categorical values (the same slot of the schema, where every
value it does not list is "other"; or the same category up to case, whitespace and the spelling
of a number: RED and " red " are red) and every numeric feature within 1/${1 / RESOLUTION} of the column's
declared range (after clipping and the column's transform), whatever the labels, the column order
or extra columns; or the same values in another column order. Not detected: shared rows up to ${100 * OVERLAP_SHARE}%
of the rows that score, whatever the other rows are (a few private rows among public ones pass:
distinct people share records, e.g. 0.9% of adult.test's rows are shared with adult.data; so does
a copy among ${Math.round((1 - OVERLAP_SHARE) / OVERLAP_SHARE)} times as many other rows, even repeats of one row), values moved by more
than that resolution, categories respelled otherwise (a typo, an abbreviation, a synonym),
another record of the same person, synthetic data made from the private data, a held-out part of
the private data. How many rows are shared is private: --diagnostics has it, the release never does.`;

const DIAGNOSTICS_NOTE =
  'computed from the private data for its owner: metrics.training and diagnostics are NOT covered by the privacy guarantee; publish the model file, never this file';

/** Metrics of either kind of model: one-vs-rest models report their (multi-class) accuracy. */
function evaluateAny(model: AnyModel, data: Dataset): Record<string, number> {
  return model.format === 'dpfit-one-vs-rest-model/1' ? evaluateOneVsRest(model, data) : { ...evaluate(model, data) };
}

/**
 * The one number the text output prints (accuracy, or MSE for regression) in one pass over the
 * rows: the AUC's sort and the log-loss cost ~20 % of a large DP-GD run, so the full metrics are
 * computed only when --diagnostics asks for them.
 */
function printedTrainingMetric(model: AnyModel, data: Dataset): Record<string, number> {
  if (model.format === 'dpfit-one-vs-rest-model/1') return evaluateOneVsRest(model, data);
  const predictions = predict(model, data);
  if (model.task === 'regression') return { mse: meanSquaredError(predictions, data.y) };
  return { accuracy: accuracy(predictions, data.y.map((v) => (v > 0 ? 1 : 0))) };
}

/**
 * The training accuracy beside the majority class's, and plainly when it is not above it: such a
 * model predicts no better than one that always says the most frequent class.
 */
export function accuracyText(value: number, majority: number | undefined): string {
  const text = `accuracy ${formatNumber(value, 4)}`;
  if (majority === undefined) return text;
  const beside = `${text} (majority class ${formatNumber(majority, 4)})`;
  return value > majority ? beside : `${beside}: NOT above the majority class, no better than always predicting it`;
}

/**
 * The model as released: only the released parameters, the public schema and the privacy report
 * (docs/design.md, "What a release may contain"). Fields are copied by name, so nothing else a learner
 * might attach reaches the file.
 */
function releasedModel(model: LinearModel | OneVsRestModel, privacy: PrivacyReport, schema: Schema): AnyModel {
  const linear = (m: LinearModel): LinearModel => ({
    format: m.format,
    loss: { name: m.loss.name, parameters: { ...m.loss.parameters } },
    task: m.task,
    theta: [...m.theta],
    ...(m.featureNames === undefined ? {} : { featureNames: [...m.featureNames] }),
  });
  if (model.format === 'dpfit-one-vs-rest-model/1') {
    return {
      format: model.format,
      classes: [...model.classes],
      models: model.models.map(linear),
      ...(model.featureNames === undefined ? {} : { featureNames: [...model.featureNames] }),
      privacy,
      schema: schemaToJson(schema),
    };
  }
  return { ...linear(model), privacy, schema: schemaToJson(schema) };
}

/** The diagnostics file's JSON: Infinity as "Infinity", NaN (never in a release) as null. */
function diagnosticsJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, v) => {
      if (typeof v === 'number' && !Number.isFinite(v)) return Number.isNaN(v) ? null : v > 0 ? 'Infinity' : '-Infinity';
      if (v instanceof Float64Array || v instanceof Uint32Array || v instanceof Int32Array) return Array.from(v);
      return v;
    },
    2,
  );
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

/** The schema's names of a binary label's classes (the first value of each list), or 1 and 0. */
function binaryLabelValues(schema: Schema): [string | number, string | number] {
  const label = labelColumn(schema);
  return [label?.positive?.[0] ?? 1, label?.negative?.[0] ?? 0];
}

/** The rules `train --help-all` prints in full. */
const TRAIN_RULES = `The privacy report gives epsilon, delta, the accountant, the DpEvent released, the neighbouring
relation, the grid of the noise and whether the guarantee is proven (else conjecture or none,
with the reasons in its warnings). Default randomness is the secure generator; --seed, zero noise,
a schema suggested from the private data, or --validation data that overlap the training data
(see below) give guarantee none.

${OVERLAP_HELP}

What is printed and written is the release: the model (parameters, public schema, privacy
report). Training metrics and learner diagnostics are computed from the private data: they are
printed on stderr (human mode) under "private diagnostics" and written by --diagnostics FILE as
{note, metrics: {training}, diagnostics}; they are not covered by the guarantee.

Flags a method does not use are refused (exit 2), never ignored. --out and --diagnostics are
checked before any data are read or any budget is spent (their directory must exist and be
writable; a directory, a device or an input file is refused) and written all or nothing
(temporary file, fsync, rename).

Limits (exit 2, before any work): at most ${sci(MAX_STEPS)} steps per run (--steps, or
--epochs x rows / batch size); --epochs at most ${sci(MAX_EPOCHS)}; at most ${sci(MAX_GRADIENT_EVALUATIONS)} per-example
gradients in all (one run's, x the classes of one-vs-rest, x the --tune mean); --tune at most
${sci(MAX_TUNE_MEAN)}; --max-iterations at most ${sci(MAX_SUM_OBJECTIVE_ITERATIONS)} for objpert and amp (their limit cannot use
the number of rows, which their release keeps private). Rows count only where they are public
(--dataset-size for dpsgd when given). A progress bar with the time left is drawn on stderr when it is a terminal (not with --json).

A budget across runs (--ledger FILE, or $DPFIT_LEDGER): the run's release is computed from public
values (the flags, the schema and --dataset-size, required with --ledger by every method that uses
n) and reserved in FILE before any data are read; a run that would bring everything in FILE over
its budget is refused with exit 4 and nothing is read. Every method plans its release: in memory,
with --max-memory or --db, one-vs-rest (the schema's classes) and --tune (its candidates and mean);
rgm reserves its whole mechanism and its PTR delta whether or not the test passes. A run known to
have no guarantee (objpert, --seed, a suggested schema, --noise-multiplier 0) is charged as
non-private, which only --budget-epsilon Infinity holds. A ledger holds the releases of one
neighbouring relation (dpsgd, amp and objpert: add/remove-one; every other method and a node's
sessions: replace-one): a run of the other is refused. A run that fails after its reservation
keeps it (a failure the data decide could tell something). dpfit ledger show FILE prints what was
spent.
  $ dpfit train --data adult.data --schema adult.schema.json --method dpgd --epsilon 0.5 \\
      --dataset-size 32561 --ledger owner.ledger --budget-epsilon 3 --budget-delta 1e-5 --out m1.json`;

export function registerTrain(program: Command, io: CliIo): void {
  withLedgerOptions(program.command('train'))
    .description('train a private linear model and report what it cost')
    .option('--data <FILE>', 'training data (CSV, Parquet or LIBSVM; or --db)')
    .option('--db <URL>', 'train from a database: postgres://... (PostgreSQL) or duckdb:FILE (opened read-only, no file access); --query runs as one read-only statement; with --method dpgd the gradient sums run inside it')
    .option('--query <SQL>', 'with --db: the SELECT whose rows are the training data')
    .option(
      '--partition-key <COL>',
      'with --db postgres://... and --method dpgd: --query reads a table partitioned by COL (integer) whose partitions are postgres_fdw foreign tables, ' +
        "one per server, on each server's view of its rows ENCODED by the schema; each step sets every server's theta table and sums on every server " +
        '(only the sums cross). Create the tables and views with the SQL printed by --encoding-sql --partition-key COL (each server, then the coordinator)',
    )
    .option('--theta-table <NAME>', 'with --partition-key: the name of the run\'s theta tables and views (default dpfit_theta); concurrent runs need different names')
    .option('--encoding-sql', "print the SELECT that encodes --query's rows by --schema and exit; with --partition-key, every server's and the coordinator's SQL")
    .option('--max-memory <SIZE>', 'dpgd/dpsgd out of core within about SIZE (e.g. 256MB): --data (CSV or Parquet) encoded once into a temporary file in $TMPDIR (mode 0600, removed with the run), read back by every step; same model as in memory')
    .option('--schema <FILE>', 'public schema JSON (required: see dpfit data schema --help)')
    .option('--label <COL>', "the label column (must be the schema's label)")
    .option('--loss <L>', 'logistic | squared | huber | smoothedHinge (huber: numeric labels only; linear: the old name of squared)', 'logistic')
    // Before --loss, --model named the loss (evaluate/predict's --model is a model FILE): kept as a deprecated alias.
    .addOption(new Option('--model <L>', 'deprecated alias of --loss').hideHelp())
    // The learners of the registry, each with what it releases (the family folders' `*-learner.ts` files).
    .option('--method <M>', `${LEARNERS.map((l) => cliName(l.method)).join(' | ')} (see Methods below)`, cliName(DEFAULT_TRAIN_METHOD))
    .option('--epsilon <E>', 'target epsilon (the noise is calibrated for it)', parseNumberFlag('--epsilon'))
    .addOption(deltaOption('target delta, in (0, 1)'))
    .option('--noise-multiplier <Z>', 'explicit noise multiplier instead of --epsilon', parseNumberFlag('--noise-multiplier'))
    .option('--clip-norm <C>', 'per-example gradient clipping norm (default: the loss Lipschitz bound from the schema)', parseNumberFlag('--clip-norm'))
    .option('--steps <T>', 'number of steps (dpgd; or dpsgd instead of --epochs)', parseIntegerFlag('--steps'))
    .option('--precision <P>', 'dpgd: feature storage, float64 (default) or float32 (half the memory traffic; sums in float64; the same guarantee)', (raw: string) => {
      if (raw !== 'float64' && raw !== 'float32') throw new InvalidParameterError('--precision', raw, '"float64" or "float32"');
      return raw;
    })
    .option('--epochs <E>', 'passes over the data (dpsgd default 10, shuffled 5, output-sgd 10)', parseNumberFlag('--epochs'))
    .option('--batch-size <B>', 'dpsgd: expected (Poisson) batch size (default 256); output-sgd: batch size (default ceil(100 x learning rate x lambda x n))', parseNumberFlag('--batch-size'))
    .option('--learning-rate <R>', 'step size (default 1 / beta, beta = sup f\'\' R^2 + lambda the smoothness of the average loss; shuffled: 100 / (beta epochs n))', parseNumberFlag('--learning-rate'))
    .option(
      '--regularization <L>',
      'L2 regularisation lambda: of the AVERAGE loss for dpgd/dpsgd/shuffled (default 0) and output/output-sgd (> 0, default sqrt(d) / (n epsilon)); ' +
        'of the SUM objective for objpert/amp (default: the smallest lambda with sigma <= 1.3 sigma_Gaussian)',
      parseNumberFlag('--regularization'),
    )
    .option('--grad-tolerance <TAU>', 'output: tolerance of the minimiser (paid in the sensitivity); amp: the gradient-norm threshold tau (default 0.01)', parseNumberFlag('--grad-tolerance'))
    .option('--max-iterations <N>', "output/objpert/amp: the fast optimiser's iteration cap (when hit, a certified fallback finishes the minimisation)", parseIntegerFlag('--max-iterations'))
    .option('--noise-std <S>', 'objpert/amp: explicit std of the objective noise b instead of --epsilon (needs --regularization)', parseNumberFlag('--noise-std'))
    .option('--output-noise-std <S>', 'amp: std of the output noise (default 0.15)', parseNumberFlag('--output-noise-std'))
    .option('--accountant <A>', "objpert/amp only: calibrate with 'rdp' (default) or 'pld' (tighter); other methods report their own accountant")
    .option('--accept-no-guarantee', 'objpert only, and required by it: release objective perturbation without output noise, which has NO guarantee (guarantee none; for research); use --method amp for a private model')
    .option('--parameter-norm-bound <P>', 'objpert with --loss squared: the norm up to which the objective is exactly ridge (the guarantee needs a Lipschitz loss)', parseNumberFlag('--parameter-norm-bound'))
    .option('--feature-clip <RC>', 'rgm: rows clipped to norm RC (default: the schema row-norm bound)', parseNumberFlag('--feature-clip'))
    .option('--b-clip <B>', 'rgm: x_i y_i clipped to norm B (default RC times the label bound)', parseNumberFlag('--b-clip'))
    .option('--rho <RHO>', "rgm: proposed lower bound on the Gram matrix's smallest eigenvalue (default: the value for Gaussian features)", parseNumberFlag('--rho'))
    .option('--b-norm-bound <NB>', 'rgm: proposed bound on the norm of the averaged x_i y_i, tested by the same PTR (tightens the noise)', parseNumberFlag('--b-norm-bound'))
    .option('--ptr-fraction <F>', 'rgm: fraction of epsilon spent on the Propose-Test-Release check (default 0.1)', parseNumberFlag('--ptr-fraction'))
    .option('--tune <MEAN>', 'honest learning-rate tuning: K ~ Poisson(MEAN) private runs, the best released; epsilon covers all of it', parseNumberFlag('--tune'))
    .option('--tune-learning-rates <LIST>', 'comma-separated PUBLIC candidate learning rates for --tune (default 10 log-spaced in [1e-3, 10])', parseNumberListFlag('--tune-learning-rates'))
    .option('--validation <FILE>', 'PUBLIC labelled data (not part of --data) that scores the --tune candidates')
    .option('--metric <M>', 'score of --tune candidates: accuracy | auc | logLoss | mse | r2 (default accuracy, or r2 for regression)')
    .option('--fraction <TAU>', 'shuffled: fraction of each shuffled epoch processed (default 1/n: one record a step, drawn at random; 1: whole epochs, the last iterate accounted)', parseNumberFlag('--fraction'))
    .option('--conjecture', "shuffled: also report the conjectured (tighter, unproven) epsilon, labelled a conjecture (never the guarantee)")
    .option('--projection-radius <R>', 'shuffled: public radius of the ball the iterate is projected on, which lets the last iterate be accounted by amplification by iteration (default 1000)', parseNumberFlag('--projection-radius'))
    .option('--optimizer <O>', 'dpsgd: sgd | momentum | adam (post-processing)', 'sgd')
    .option('--schedule <S>', 'dpsgd: constant | inverseSqrt | cosine', 'constant')
    .option('--dataset-size <N>', 'the number of records, declared without looking at the data: dpsgd computes q = batch size / N from it instead of the data\'s count; replace-one methods refuse data with another count (the report\'s datasetSize says which n is public)', parseIntegerFlag('--dataset-size'))
    .option('--seed <N>', 'seeded randomness for reproducible EXPERIMENTS (not for a real release)', parseIntegerFlag('--seed'))
    .option('--out <FILE>', 'write the model (its parameters, privacy report and schema: the release) as JSON')
    .option('--diagnostics <FILE>', "write the data owner's PRIVATE diagnostics (training metrics, learner diagnostics) as JSON")
    .option('--json', 'print one JSON object: {model, privacy} (and modelFile with --out)')
    .option('--help-all', 'every flag (databases, out-of-core data) and the rules in full')
    .configureHelp(trainHelpConfiguration)
    .addHelpText('after', (context) => trainHelpAfter(context.command, TRAIN_RULES))
    .action(async (flags: TrainFlags & ExternalFlags & LedgerFlags & { model?: string }, command: Command) => {
      if ((flags as { helpAll?: boolean }).helpAll === true) {
        command.outputHelp(); // through the program's configured output (io.stdout), with the text after the options
        return;
      }
      takeDeprecatedFlag(flags as unknown as Record<string, unknown>, { key: 'model', flag: '--model' }, { key: 'loss', flag: '--loss' }, command, io, '--model names a model FILE in evaluate and predict');
      if (flags.loss === 'linear') {
        // One name per loss: the model file has always said 'squared'.
        io.stderr("dpfit: --loss linear is deprecated: use --loss squared (the name the model file records)\n");
        flags.loss = 'squared';
      }
      const schemaPath = requireSchemaFlag(flags.schema);
      if (flags.encodingSql === true) {
        io.stdout(await encodingSqlText(await readSchemaFile(schemaPath), flags));
        return;
      }
      // Everything the flags alone decide, then every output path: before any file is read or any budget spent.
      checkMethodFlags(flags);
      checkExternalFlags(flags);
      checkFlagLimits(flags);
      const checked = checkOutputPaths(
        [flags.out === undefined ? undefined : { flag: '--out', path: flags.out }, flags.diagnostics === undefined ? undefined : { flag: '--diagnostics', path: flags.diagnostics }],
        [
          flags.data === undefined ? undefined : { flag: '--data', path: flags.data },
          { flag: '--schema', path: schemaPath },
          flags.validation === undefined ? undefined : { flag: '--validation', path: flags.validation },
        ],
      );
      const out = checked.find((o) => o.flag === '--out');
      const diagnosticsOutput = checked.find((o) => o.flag === '--diagnostics');
      const outputs = { out: out?.path, diagnostics: diagnosticsOutput?.path };
      const schema = await readSchemaFile(schemaPath);
      const labelSpec = schema.columns.find((c) => c.type === 'label');
      if (flags.label !== undefined && labelSpec?.name !== flags.label) {
        throw new InvalidParameterError('--label', flags.label, `the schema's label column '${labelSpec?.name}'`);
      }
      checkLossForLabel(flags.loss, schema);
      // Said on stderr (never mixed into --json; printed when the command succeeds, and in the progress bar): the reasons this run cannot be private.
      const suggested = isSuggestedSchema(schema);
      if (suggested) io.stderr(`dpfit: ${schemaPath}: ${SUGGESTION_WARNING}\n`);
      if (flags.seed !== undefined) io.stderr(`dpfit: ${SEED_WARNING}\n`);
      const classes = labelColumn(schema).classes?.length ?? 1;
      const rng = flags.seed === undefined ? defaultRng() : seededRng(flags.seed);
      // The method's research opt-in (objpert's --accept-no-guarantee): said loudly.
      const learner = learnerOfFlags(flags);
      const optInFlag = learner.optIn !== undefined && flags[learner.optIn.option as keyof TrainFlags] === true ? `--${cliName(learner.optIn.option)}` : undefined;
      if (optInFlag !== undefined) io.stderr(`dpfit: WARNING: ${optInFlag}: ${learner.optIn?.warning}\n`);
      const notPrivate = suggested
        ? ', NOT private: suggested schema'
        : flags.seed !== undefined
          ? ', NOT private: --seed'
          : optInFlag !== undefined
            ? `, NOT private: ${optInFlag}`
            : '';
      // A budget across runs: the run's event, from public values, reserved before any data are read (cli/ledger-flags.ts).
      checkExternalSchema(flags, schema);
      const noGuarantee = suggested ? 'the schema was suggested from the private data' : flags.seed !== undefined ? '--seed makes the noise reproducible' : undefined;
      const planned = await reserveTrainingRun(flags, schema, rng, noGuarantee);
      // DP-GD's full passes: features in shared memory, sums on all CPUs (glm/parallel-clipped-sum.ts).
      const parallelSums = learner.options.includes('gradientSummer');
      // --db / --max-memory: trained in the database or out of core, or rows read through the engine (train-external.ts).
      let outcome: ExternalOutcome | undefined;
      let overlapFound: Awaited<ReturnType<typeof validationOverlap>> | undefined;
      if (flags.db !== undefined || flags.maxMemory !== undefined) {
        const trainsHere = flags.maxMemory !== undefined || (learner.inDatabase === true && classes === 1);
        const bar = trainsHere ? progressBar(`training (${flags.method}, ${flags.db !== undefined ? 'in the database' : 'out of core'}${notPrivate})`, { enabled: !flags.json }) : undefined;
        try {
          outcome = await trainExternal(flags, schema, { rng, ...(bar === undefined ? {} : { onStep: bar.onStep }), checkLimits: (n) => {
            checkWorkLimits(flags, n, classes);
            datasetSizeReport(learner.method, n, flags.datasetSize); // a declared count the data disagree with: refused before any step
          } });
          bar?.end(true);
        } catch (error) {
          bar?.end(false);
          throw error;
        }
      }
      const trained = outcome?.kind === 'trained' ? outcome : undefined;
      const prepared = trained !== undefined ? undefined : outcome?.kind === 'prepared' ? withZeroRows(outcome.prepared)
        // DP-GD: CSV rows encoded straight into shared memory (no raw table, no copy for the worker pool).
        // Rows dropped for a missing value stay as zero rows: n is the number of records read (data/dropped-rows.ts).
        : await loadDataset(flags.data as string, schema, { droppedRows: 'zeroRows', ...(parallelSums ? { features: growingFeatures } : {}) });
      let result: MethodResult;
      if (prepared === undefined) result = (trained as Extract<ExternalOutcome, { kind: 'trained' }>).result;
      else {
        checkWorkLimits(flags, prepared.dataset.n, classes);
        datasetSizeReport(learner.method, prepared.dataset.n, flags.datasetSize); // a declared count the data disagree with is refused before training
        const validation = flags.validation === undefined ? undefined : (await loadDataset(flags.validation, schema)).dataset;
        // Rows read from --db are compared as read; a file is read again (the overlap is the owner's diagnostic, it only lowers the guarantee).
        const trainingRows = flags.data ?? (outcome?.kind === 'prepared' ? outcome.table : undefined);
        const overlap = flags.validation === undefined || trainingRows === undefined ? undefined : await validationOverlap(trainingRows, flags.validation, schema);
        // One bar for the whole command: one-vs-rest trains one run per class, tuning a random number of runs (mean --tune).
        const bar = progressBar(`training (${flags.method}${flags.tune !== undefined ? ', tuned' : ''}${notPrivate})`, {
          enabled: !flags.json,
          ...(flags.tune !== undefined ? { runs: { count: flags.tune, exact: false } } : classes > 1 ? { runs: { count: classes, exact: true } } : {}),
        });
        // DP-GD's full passes over large data run on all CPUs (bit-identical sums; glm/parallel-clipped-sum.ts).
        const pool = parallelSums && prepared.dataset.n >= 2 * CHUNK_ROWS ? await createClippedGradientPool() : undefined;
        try {
          const gradientSummer = pool === undefined ? undefined : poolGradientSummer(pool);
          // Features copied into shared memory once, not by every run (tuning and one-vs-rest train several).
          const data = pool === undefined ? prepared : { ...prepared, dataset: shareGlmData(prepared.dataset) };
          result = runTrainingMethod(flags, data, { schema, rng, ...(bar === undefined ? {} : { onStep: bar.onStep }), validation, ...(gradientSummer === undefined ? {} : { gradientSummer }) });
          bar?.end(true);
        } catch (error) {
          bar?.end(false);
          throw error;
        } finally {
          await pool?.close();
        }
        overlapFound = overlap;
      }
      const overlap = overlapFound;
      if (planned !== undefined) requirePlannedRelease(result.privacy, planned);
      const rowCount = prepared?.dataset.n ?? (trained?.rows as number);
      const width = prepared?.dataset.d ?? (trained?.d as number);
      // What the CLI knows and the learner does not: conditions that void the guarantee.
      const conditions: GuaranteeCondition[] = [];
      if (suggested) conditions.push({ level: 'none', reason: SUGGESTED_SCHEMA_REASON });
      if (overlap !== undefined && overlaps(overlap)) conditions.push({ level: 'none', reason: OVERLAP_REASON });
      const privacy = withConditions(withDatasetSize(result.privacy, datasetSizeReport(learner.method, rowCount, flags.datasetSize)), conditions);
      // A delta above 1/n (n public: the report's datasetSize) allows publishing a record: said on stderr.
      const deltaWarning = deltaAboveOneOverN(flags.delta, privacy.datasetSize);
      if (deltaWarning !== undefined) io.stderr(`dpfit: ${deltaWarning}\n`);
      const model = result.model === undefined ? undefined : releasedModel(result.model, privacy, schema);

      // The data owner's diagnostics: computed from the private data, not part of the release.
      const wantMetrics = model !== undefined && (outputs.diagnostics !== undefined || !flags.json);
      // Out of core and in the database the rows are not at hand: no training metrics (another pass would be needed).
      // On the kept rows only (none kept: no metrics, never an error the data decide).
      const kept = prepared === undefined ? undefined : keptRows(prepared.dataset, prepared.privateDiagnostics.droppedRows);
      const measure = outputs.diagnostics !== undefined ? evaluateAny : printedTrainingMetric;
      const measured = wantMetrics && kept !== undefined && kept.n > 0 ? measure(model as AnyModel, kept) : undefined;
      // A classifier's accuracy beside the majority class's (as evaluate prints it): what it must beat to have learnt anything.
      const metrics = measured?.accuracy !== undefined && kept !== undefined ? { ...measured, majorityBaseline: majorityBaseline(kept.y) } : measured;
      const diagnostics = {
        ...result.diagnostics,
        rows: rowCount,
        data: prepared?.privateDiagnostics ?? trained?.data,
        ...(trained === undefined ? {} : { mode: trained.mode }),
        ...(overlap === undefined ? {} : { validationOverlap: overlap }),
      };
      const files: OutputContent[] = [];
      if (out !== undefined && model !== undefined) files.push({ output: out, data: `${toJson(model)}\n` });
      if (diagnosticsOutput !== undefined) {
        files.push({
          output: diagnosticsOutput,
          data: `${diagnosticsJson({ note: DIAGNOSTICS_NOTE, metrics: { training: metrics ?? null }, diagnostics })}\n`,
        });
      }
      // Temporary files next to each target, fsynced, renamed all together (nothing partial on any failure).
      writeOutputFiles(files);

      const output = {
        model: model ?? null,
        privacy,
        ...(outputs.out === undefined ? {} : { modelFile: model === undefined ? null : outputs.out }),
      };
      if (!flags.json) {
        const lines = [
          `private diagnostics (computed from the private data for its owner; NOT covered by the privacy guarantee, do not publish):`,
          `  rows     ${rowCount} training rows${trained === undefined ? '' : ` (trained ${trained.mode})`}`,
          ...(metrics === undefined ? [] : [`  training ${metrics.accuracy !== undefined ? accuracyText(metrics.accuracy, metrics.majorityBaseline) : `MSE ${formatNumber(metrics.mse ?? NaN, 5)}`}`]),
          ...(flags.tune !== undefined && model !== undefined
            ? [`  tuned    learning rate ${String(result.diagnostics.learningRate)} (validation score ${formatNumber(Number(result.diagnostics.validationScore), 4)})`]
            : []),
          ...(model === undefined && typeof result.diagnostics.message === 'string' ? [`  message  ${result.diagnostics.message}`] : []),
          ...(outputs.diagnostics !== undefined ? [`  written to ${outputs.diagnostics}`] : []),
        ];
        io.stderr(`${lines.join('\n')}\n`);
      }
      printResult(io, Boolean(flags.json), output, () => {
        const none = privacy.guarantee === 'none';
        return [
          model === undefined
            ? 'no model released: the mechanism released nothing (see the warnings)'
            : `trained ${model.format === 'dpfit-one-vs-rest-model/1' ? `one-vs-rest ${model.classes.length}-class ${model.models[0].loss.name}` : model.loss.name} by ${flags.method}${flags.tune !== undefined ? ' (honestly tuned)' : ''}, ${width} features`,
          `  privacy  (epsilon = ${formatNumber(privacy.epsilon, 6)}, delta = ${formatNumber(privacy.delta)}), ${none ? 'NONE: this model is NOT private' : privacy.guarantee}, ${privacy.accountant} accountant, ${privacy.neighboringRelation}`,
          ...privacy.warnings.map((w) => `  warning  ${w}`),
          outputs.out !== undefined && model !== undefined ? `  model written to ${outputs.out}` : '',
          outputs.out !== undefined && model === undefined ? `  nothing written to ${outputs.out}` : '',
          outputs.out === undefined && model !== undefined ? '  model    not saved: no --out was given (pass --out FILE to keep a model; training again spends epsilon again)' : '',
        ]
          .filter((line) => line !== '')
          .join('\n');
      });
    });

  const schemaFor = async (model: AnyModel, schemaPath: string | undefined): Promise<Schema> => {
    if (schemaPath !== undefined) {
      const schema = await readSchemaFile(schemaPath);
      if (isSuggestedSchema(schema)) io.stderr(`dpfit: ${schemaPath}: ${SUGGESTION_WARNING}\n`);
      return schema;
    }
    if (model.schema === undefined) throw new InvalidParameterError('--schema', undefined, 'given (the model has no embedded schema)');
    return parseSchema(model.schema);
  };
  /** The verified guarantee on stderr: one line, and a loud WARNING when the claim does not hold. */
  const tellPrivacy = (verification: ModelVerification, json: boolean): void => {
    const line = describeVerification(verification);
    if (!json || line.startsWith('WARNING')) io.stderr(`dpfit: ${line}\n`);
  };

  program
    .command('evaluate')
    .description('utility of a saved model on labelled data (accuracy, log-loss, AUC; MSE, R^2), and its verified privacy')
    .requiredOption('--model <FILE>', 'a model written by dpfit train --out')
    .requiredOption('--data <FILE>', 'labelled data')
    .option('--schema <FILE>', "schema (default: the model's embedded schema)")
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
The model's privacy claim is verified as by dpfit verify: one line on stderr (a WARNING when the
claim does not hold or the file has none); with --json the object has a "privacy" field with the
verification. The exit status does not depend on it.

Example:
  $ dpfit evaluate --model model.json --data adult.test --json`,
    )
    .action(async (flags: { model: string; data: string; schema?: string; json?: boolean }) => {
      const { model, verification } = loadModelFile(flags.model, '--model');
      const prepared = await loadDataset(flags.data, await schemaFor(model, flags.schema));
      const evaluated = evaluateAny(model, prepared.dataset);
      // A classifier's accuracy means little without the majority class's (Adult: 76.4 % for "<=50K").
      const metrics = 'accuracy' in evaluated && evaluated.accuracy !== undefined ? { ...evaluated, majorityBaseline: majorityBaseline(prepared.dataset.y) } : evaluated;
      tellPrivacy(verification, Boolean(flags.json));
      const width = Math.max(9, ...Object.keys(metrics).map((k) => k.length));
      printResult(io, Boolean(flags.json), { ...metrics, privacy: verification }, () =>
        Object.entries(metrics)
          .map(([k, v]) => `${k.padEnd(width)} ${formatNumber(v as number, 6)}`)
          .join('\n'),
      );
    });

  program
    .command('predict')
    .description("predictions of a saved model: every classifier's label (the schema's class value), a logistic model's probability beside it, a regression's value")
    .requiredOption('--model <FILE>', 'a model written by dpfit train --out')
    .requiredOption('--data <FILE>', "data with the schema's feature columns (the label column may be absent; when present it is not read)")
    .option('--schema <FILE>', "schema (default: the model's embedded schema)")
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
stdout holds only the predictions, one line per input row: the label for a classifier (the
schema's first positive or negative value, or 1/0), then a tab and the probability of the positive
class for a logistic model; the value for a regression. With --json: {predictions, probabilities
(logistic), privacy}. The model's verified privacy claim is one line on stderr (a
WARNING when it does not hold), and the "privacy" field with --json.

Example:
  $ dpfit predict --model model.json --data new-rows.csv > predictions.txt`,
    )
    .action(async (flags: { model: string; data: string; schema?: string; json?: boolean }) => {
      const { model, verification } = loadModelFile(flags.model, '--model');
      // The label column is not needed (and not read when present): rows to predict have none.
      const schema = await schemaFor(model, flags.schema);
      const prepared = await loadDataset(flags.data, schema, { label: 'ignore' });
      // One prediction per input row: a schema that drops rows with missing values would shift every line after them.
      const dropped = prepared.privateDiagnostics.droppedRows;
      if (dropped > 0) {
        throw new DataFormatError(flags.data, `has ${dropped} row(s) with missing values that the schema drops (missing: "dropRow"), and predict prints one line per input row: fill those values, or predict with a schema whose columns use missing "fill" or "other"`);
      }
      tellPrivacy(verification, Boolean(flags.json));
      if (model.format === 'dpfit-one-vs-rest-model/1') {
        const classes = Array.from(predictClasses(model, prepared.dataset), (k) => model.classes[k]);
        printResult(io, Boolean(flags.json), { predictions: classes, privacy: verification }, () => classes.join('\n'));
        return;
      }
      if (model.task === 'regression') {
        const predictions = Array.from(predict(model, prepared.dataset));
        printResult(io, Boolean(flags.json), { predictions, privacy: verification }, () => predictions.map((p) => formatNumber(p, 8)).join('\n'));
        return;
      }
      // Every classifier prints its label; a logistic model also its probability of the positive class.
      const [positive, negative] = binaryLabelValues(schema);
      const margins = predictMargins(model, prepared.dataset);
      const predictions = Array.from(margins, (z) => (z >= 0 ? positive : negative));
      const probabilities = model.loss.name === 'logistic' ? Array.from(logisticProbabilities(margins)) : undefined;
      printResult(io, Boolean(flags.json), { predictions, ...(probabilities === undefined ? {} : { probabilities }), privacy: verification }, () =>
        predictions.map((label, i) => (probabilities === undefined ? String(label) : `${label}\t${formatNumber(probabilities[i] as number, 8)}`)).join('\n'),
      );
    });
}
