/**
 * `dpfit audit`: an empirical lower bound on epsilon for dpfit's own gradient learners, next to
 * the accountant's upper bound, in two threat models (`--threat-model`): the last model only, run
 * through the real training code (`audit/canary-audit.ts`), or every step with a gradient canary,
 * simulated with the learners' own noise and sampler (`audit/accountant-audit.ts`). Exit 4 when
 * the lower bound exceeds the claim: the claim is refuted (at the stated confidence).
 */
import { Option, type Command } from 'commander';
import { availableParallelism } from 'node:os';
import { auditLearnerParallel, type AuditMethod, type AuditResult } from '../../audit/canary-audit.js';
import { BudgetExceededError, InvalidParameterError } from '../../errors.js';
import { takeDeprecatedFlag } from '../deprecated-flag.js';
import { formatNumber, parseIntegerFlag, parseNumberFlag, printResult, type CliIo } from '../io.js';
import { progressBar } from '../progress.js';
import { deltaOption } from '../delta-option.js';
import { checkGradientLimit, checkStepLimit, MAX_EPOCHS, MAX_GRADIENT_EVALUATIONS, MAX_STEPS, sci } from '../limits.js';
import { MAX_RELEASED_VALUES } from '../../audit/audit-options.js';
import type { OneRunOptions } from '../../audit/one-run.js';
import type { PlannedRelease } from '../../learners/learner.js';
import { ledgerPath, openRunLedger, reserveRun, withLedgerOptions } from '../ledger-flags.js';
import { writeOutputFiles, type CheckedOutput } from '../../data/node/atomic-write.js';
import { auditTradeOffFigure } from '../audit-figure.js';
import { checkOutputPaths } from '../output-files.js';

interface AuditFlags {
  method: string;
  epsilon: number;
  delta: number;
  runs: number;
  claimedEpsilon?: number;
  confidence: number;
  refuteConfidence?: number;
  steps: number;
  epochs?: number;
  clipNorm: number;
  /** The deprecated name of --clip-norm. */
  clip?: number;
  learningRate: number;
  batchSize?: number;
  rows: number;
  threatModel: string;
  threads?: number;
  json?: boolean;
  oneRun?: boolean;
  data?: string;
  schema?: string;
  canaries?: number;
  guesses?: number;
  loss?: string;
  plot?: string;
  ledger?: string;
  budgetEpsilon?: number;
  budgetDelta?: number;
  datasetSize?: number;
}

/** The flags of the many-run audit that a one-run audit does not take, and the reverse. */
const MANY_RUN_ONLY = ['runs', 'rows', 'threads', 'plot'] as const;
const ONE_RUN_ONLY = ['data', 'schema', 'canaries', 'guesses', 'loss'] as const;
/** One-run flags whose names are not their keys (the budget of --ledger, the declared n). */
const ONE_RUN_ONLY_NAMED = [['ledger', '--ledger'], ['budgetEpsilon', '--budget-epsilon'], ['budgetDelta', '--budget-delta'], ['datasetSize', '--dataset-size']] as const;
/** Training flags passed to a one-run audit when given (the rest: the public rules of dpfit train). */
const ONE_RUN_TRAINING = [['steps', 'steps'], ['epochs', 'epochs'], ['batchSize', 'batchSize'], ['clipNorm', 'clipNorm'], ['learningRate', 'learningRate'], ['loss', 'loss'], ['datasetSize', 'datasetSize']] as const;

/**
 * `--ledger` (or $DPFIT_LEDGER) with --one-run: the training spends --epsilon on the user's data,
 * so its release is reserved as `dpfit train --ledger` reserves a run (cli/ledger-flags.ts): computed
 * from public values (the flags, the schema, the declared --dataset-size, the canaries) by
 * `planOneRunAudit`, the same resolution `oneRunAudit` runs, and reserved BEFORE the data are read;
 * refused with exit 4 when it does not fit. A schema suggested from the data is charged as a
 * non-private release, as train charges it. Undefined without a ledger.
 */
async function reserveOneRun(flags: AuditFlags, schemaPath: string, options: OneRunOptions): Promise<PlannedRelease | undefined> {
  const path = ledgerPath(flags); // refuses budget flags without a ledger
  if (path === undefined) return undefined;
  if (flags.datasetSize === undefined) {
    throw new InvalidParameterError('--dataset-size', undefined, `given with --ledger: the number of records, declared, so that the run's release is known before the data are read (--method ${flags.method} uses n)`);
  }
  const [{ readSchemaFile }, { planOneRunAudit }, { isSuggestedSchema }, bounds, { chargedRelease }] = await Promise.all([
    import('../../data/node/read.js'),
    import('../../audit/one-run.js'),
    import('../../data/schema/parse.js'),
    import('../../data/schema/bounds.js'),
    import('../../learners/train.js'),
  ]);
  const schema = await readSchemaFile(schemaPath);
  const featureNames = bounds.schemaFeatureNames(schema);
  const shape = { d: featureNames.length, featureNames, bounds: { rowNormBound: bounds.schemaRowNormBound(schema), labelBound: bounds.schemaLabelBound(schema) } };
  const noGuarantee = isSuggestedSchema(schema) ? 'the schema was suggested from the private data' : undefined;
  const charged = chargedRelease(planOneRunAudit(shape, options), noGuarantee);
  const ledger = await openRunLedger(flags);
  if (ledger === undefined) return undefined;
  const what = `audit --one-run --method ${flags.method} --canaries ${flags.canaries}`;
  try {
    await reserveRun(ledger, 'audit', noGuarantee === undefined ? what : `${what} (charged as non-private: ${noGuarantee})`, charged, noGuarantee);
  } finally {
    await ledger.close();
  }
  return charged;
}

/** `dpfit audit --one-run`: loads the data as dpfit train does, trains once with canaries, prints the audit's numbers only. */
async function oneRun(flags: AuditFlags, command: Command, io: CliIo, threatModel: 'lastModel' | 'accountant'): Promise<void> {
  const given = (name: string) => command.getOptionValueSource(name) === 'cli';
  for (const name of MANY_RUN_ONLY) if (given(name)) throw new InvalidParameterError(`--${name}`, flags[name], 'absent with --one-run (one training on your data: give --canaries)');
  if (flags.data === undefined) throw new InvalidParameterError('--data', undefined, 'given with --one-run (the training data, read as dpfit train reads it)');
  if (flags.schema === undefined) throw new InvalidParameterError('--schema', undefined, 'given with --one-run (the public schema of --data)');
  if (flags.canaries === undefined) throw new InvalidParameterError('--canaries', undefined, 'given with --one-run (e.g. 1000)');
  const training: Record<string, unknown> = {};
  for (const [flag, option] of ONE_RUN_TRAINING) if (given(flag) || (flag === 'clipNorm' && given('clip'))) training[option] = flags[flag];
  if (training.steps !== undefined && training.epochs !== undefined) throw new InvalidParameterError('--epochs', flags.epochs, 'absent when --steps is given (one form of the schedule at a time)');
  if (training.steps !== undefined) checkStepLimit('--steps', flags.steps, flags.steps);
  const options: OneRunOptions = {
    method: flags.method as AuditMethod,
    epsilon: flags.epsilon,
    delta: flags.delta,
    canaries: flags.canaries,
    confidence: flags.confidence,
    threatModel,
    training,
    ...(flags.guesses === undefined ? {} : { guesses: flags.guesses }),
    ...(flags.claimedEpsilon === undefined ? {} : { claimedEpsilon: flags.claimedEpsilon }),
  };
  // A budget across runs: the training's release, from public values, reserved before any data are read.
  const reserved = await reserveOneRun(flags, flags.schema, options);
  const { loadDataset, readSchemaFile } = await import('../../data/node/read.js');
  const { oneRunAudit } = await import('../../audit/one-run.js');
  const prepared = await loadDataset(flags.data, await readSchemaFile(flags.schema), { droppedRows: 'zeroRows' });
  const bar = progressBar(`one-run audit of ${flags.method} with ${flags.canaries} canaries`, { enabled: !flags.json });
  let result;
  try {
    result = oneRunAudit(prepared, {
      ...options,
      ...(reserved === undefined ? {} : { reserved }),
      ...(bar === undefined ? {} : { onStep: bar.onStep }),
    });
    bar?.end(true);
  } catch (error) {
    bar?.end(false);
    throw error;
  }
  const r = result;
  printResult(io, Boolean(flags.json), { oneRun: true, ...r }, () =>
    [
      `${r.method}, one training with ${r.canaries} canaries: epsilon >= ${formatNumber(r.epsilonLower, 4)} with probability >= ${r.confidence} (delta = ${formatNumber(r.delta)}, threat model ${r.threatModel === 'accountant' ? 'accountant' : 'last-model'})`,
      `  claimed    ${formatNumber(r.epsilonClaimed, 6)}${r.violated ? '  REFUTED' : '  not refuted'}`,
      `  accounted  ${formatNumber(r.epsilonAccounted, 6)} (dpfit's upper bound for this run: your data plus the canaries in it)`,
      `  guesses    ${r.correct} right of ${r.guesses} (${r.guesses / 2} guessed in, ${r.guesses / 2} out, ${r.canaries - r.guesses} abstained; 1/2 is chance)`,
    ].join('\n'),
  );
  if (r.violated) throw new BudgetExceededError(`the audit refutes the claim: epsilon >= ${formatNumber(r.epsilonLower, 4)} > claimed ${formatNumber(r.epsilonClaimed, 6)} (confidence ${r.confidence})`);
}

/** --plot's path: .svg or .png, checked as every output is before any work. */
function checkPlotPath(path: string): CheckedOutput {
  if (!/\.(svg|png)$/i.test(path)) throw new InvalidParameterError('--plot', path, 'a file name ending in .svg or .png');
  return checkOutputPaths([{ flag: '--plot', path }])[0];
}

/** The --threat-model values and the library's names for them. */
const THREAT_MODELS: Readonly<Record<string, 'lastModel' | 'accountant'>> = { 'last-model': 'lastModel', accountant: 'accountant' };

/** What each statistic is, for the text output. */
const STATISTIC_NAMES: Readonly<Record<string, string>> = {
  fixedThresholds: 'threshold test on the canary weight (41 thresholds fixed in advance, Clopper-Pearson, union bound)',
  splitThreshold: 'threshold test on the likelihood ratio (threshold chosen on half the runs, Clopper-Pearson on the other half)',
  gaussianShift: 'Gaussian shift (confidence bound on mu of the exactly Gaussian releases, converted at delta)',
  perStepComposed: "per-step trade-off curve (threshold tests on every step's release, composed over the steps)",
  subsampledGaussian: 'subsampled Gaussian (confidence region of its noise, mean and second-moment shifts from the releases; the most private pair in it composed over the steps)',
};

/** The text report of an audit. */
function describe(result: AuditResult): string {
  const lines = [
    `${result.method}: epsilon >= ${formatNumber(result.epsilonLower, 4)} with probability >= ${result.confidence} (delta = ${formatNumber(result.delta)}, ${result.runs} runs per neighbour, threat model ${result.threatModel === 'accountant' ? 'accountant' : 'last-model'})`,
    `  claimed    ${formatNumber(result.epsilonClaimed, 6)}${result.violated ? '  REFUTED' : '  not refuted'} (the verdict's bound at confidence ${formatNumber(result.refuteConfidence, 6)}: ${formatNumber(result.refuteLower, 4)})`,
    `  accounted  ${formatNumber(result.epsilonAccounted, 6)} (dpfit's upper bound for these runs; lower / upper = ${formatNumber(result.epsilonLower / result.epsilonAccounted, 3)})`,
    `  statistic  ${STATISTIC_NAMES[result.statistic]}`,
  ];
  const others = Object.entries(result.bounds).filter(([name]) => name !== result.statistic);
  if (others.length > 0) lines.push(`  also       ${others.map(([name, value]) => `${name} ${formatNumber(value as number, 4)}`).join(', ')} (each valid alone; only the statistic above decides)`);
  if (result.gaussian !== undefined) lines.push(`  mu         ${formatNumber(result.gaussian.muLower, 4)} <= mu (estimate ${formatNumber(result.gaussian.muEstimate, 4)}; the noise's nominal mu ${formatNumber(result.gaussian.muNominal, 4)})`);
  const sg = result.subsampled;
  if (sg !== undefined) {
    lines.push(`  region     s <= ${formatNumber(sg.stdUpper, 4)}, c q in [${formatNumber(sg.meanLower, 4)}, ${formatNumber(sg.meanUpper, 4)}], c^2 q >= ${formatNumber(sg.excessLower, 4)} (estimates ${formatNumber(sg.std, 4)}, ${formatNumber(sg.mean, 4)}, ${formatNumber(sg.excess, 4)})`);
    lines.push(`  pair       ${sg.corner === undefined ? 'none (the region allows no canary effect)' : `c = ${formatNumber(sg.corner.shift, 4)}, q = ${formatNumber(sg.corner.rate, 4)}, s = ${formatNumber(sg.corner.std, 4)}`} (nominal c = ${formatNumber(sg.nominal.shift, 4)}, q = ${formatNumber(sg.nominal.rate, 4)}, s = ${formatNumber(sg.nominal.std, 4)})`);
  }
  lines.push(`  test       ${result.test.falsePositives} false positives, ${result.test.falseNegatives} false negatives of ${result.test.evaluated} evaluation runs each (threshold ${formatNumber(result.test.threshold, 4)})`);
  return lines.join('\n');
}

/** T from --steps, or for dpsgd from --epochs as Opacus counts it (N = rows + the canary, B the expected batch). */
export function auditSteps(flags: Pick<AuditFlags, 'method' | 'steps' | 'epochs' | 'rows' | 'batchSize'>, stepsGiven: boolean): number {
  if (flags.epochs === undefined) return flags.steps;
  if (flags.method !== 'dpsgd') throw new InvalidParameterError('--epochs', flags.epochs, 'given only with --method dpsgd (a dpgd step is one full pass: give --steps)');
  if (stepsGiven) throw new InvalidParameterError('--epochs', flags.epochs, 'absent when --steps is given (one form of the schedule at a time)');
  if (!(flags.epochs > 0 && flags.epochs <= MAX_EPOCHS)) throw new InvalidParameterError('--epochs', flags.epochs, `a number in (0, ${sci(MAX_EPOCHS)}]`);
  const n = flags.rows + 1;
  const batch = flags.batchSize ?? Math.max(1, Math.floor(flags.rows / 10));
  // The 1e-9 absorbs the rounding of E N / B when it is an integer (as epsilon dpsgd --epochs).
  return Math.ceil((flags.epochs * n) / batch - 1e-9);
}

export function registerAudit(program: Command, io: CliIo): void {
  withLedgerOptions(program.command('audit'))
    .description("measure a learner's privacy by attacking it: an empirical lower bound on epsilon against the claimed upper bound")
    .requiredOption('--method <M>', 'dpgd | dpsgd')
    .requiredOption('--epsilon <E>', 'the training target (the learner calibrates its noise for it)', parseNumberFlag('--epsilon'))
    .addOption(deltaOption('delta of the target and of the audit, in (0, 1)'))
    .option('--threat-model <M>', 'last-model (the released model only) | accountant (every step, gradient canary)', 'last-model')
    .option('--runs <N>', 'runs on each of the two neighbouring datasets', parseIntegerFlag('--runs'), 1000)
    .option('--claimed-epsilon <E>', "the claim to audit (default: the epsilon dpfit's accountant reports)", parseNumberFlag('--claimed-epsilon'))
    .option('--confidence <C>', 'the probability with which the lower bound holds', parseNumberFlag('--confidence'), 0.95)
    .option('--refute-confidence <C>', 'the confidence of the verdict (refuted or not; default 1 - 0.05/100: 100 audits of a true claim refute it with probability <= 5 %)', parseNumberFlag('--refute-confidence'))
    .option('--steps <T>', 'training steps per run', parseIntegerFlag('--steps'), 20)
    .option('--epochs <E>', 'dpsgd: instead of --steps, passes over the data (T = ceil(E N / B), N = --rows + 1 with the canary, as Opacus counts)', parseNumberFlag('--epochs'))
    .option('--clip-norm <C>', 'the per-example gradient clipping norm', parseNumberFlag('--clip-norm'), 1)
    .addOption(new Option('--clip <C>', 'deprecated alias of --clip-norm').argParser(parseNumberFlag('--clip')).hideHelp())
    .option('--learning-rate <LR>', 'step size', parseNumberFlag('--learning-rate'), 0.5)
    .option('--batch-size <B>', 'dpsgd: expected batch size (default rows / 10)', parseIntegerFlag('--batch-size'))
    .option('--rows <N>', "rows of the auditor's data besides the canary", parseIntegerFlag('--rows'), 100)
    .option('--threads <N>', 'worker threads (default: the CPUs available; 1 for the accountant model, whose 2,000 runs take about a second)', parseIntegerFlag('--threads'))
    .option('--one-run', 'audit ONE training on your data with --canaries inserted (Steinke, Nasr & Jagielski 2023) instead of many runs on synthetic data')
    .option('--data <FILE>', 'one-run: the training data, read as dpfit train reads it')
    .option('--schema <FILE>', 'one-run: the public schema of --data')
    .option('--canaries <M>', 'one-run: canaries inserted, each in the data with probability 1/2', parseIntegerFlag('--canaries'))
    .option('--guesses <R>', 'one-run: canaries guessed (R/2 in, R/2 out), fixed before the run (default M/5)', parseIntegerFlag('--guesses'))
    .option('--loss <L>', "one-run: the model's loss, logistic | squared (default logistic, as dpfit train)")
    .option('--dataset-size <N>', 'one-run: the number of records of --data, declared (required with --ledger; dpsgd: keeps the count private, as dpfit train)', parseIntegerFlag('--dataset-size'))
    .option('--plot <FILE>', 'write the trade-off figure: the test against the accountant\'s curve and the lower bound\'s (SVG, or PNG for .png)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Two threat models (--threat-model), two adversaries:

  last-model  The adversary sees the released model only (what users publish). Trains --runs
              times on a dataset holding a worst-case canary record (its clipped gradient is the
              largest the clipping allows at every step, on a feature no other row uses) and
              --runs times on its neighbour (DP-GD, replace-one: the canary replaced by its
              opposite; DP-SGD, add/remove-one: the canary removed), through the same code as
              dpfit train. The test: the canary's weight above a threshold (41 thresholds fixed in
              advance, Clopper-Pearson bounds with a union bound over them).
  accountant  The adversary sees every step's noisy gradient sum, and its canary is a gradient
              of norm exactly C inserted at every step (DP-SGD: in each Poisson batch with
              probability q): what the accountant's epsilon assumes, so it should be nearly met.
              Only the canary's coordinate of each release is simulated, with the learner's own
              calibrated noise and sampler: the other coordinates are independent of it and the
              same in both worlds (proof in src/audit/gradient-canary.ts), so 2,000 runs take
              seconds. The bound: DP-GD, a confidence bound on mu of its exactly Gaussian releases
              (Gaussian DP), converted to epsilon at delta; DP-SGD, confidence bounds on the noise,
              the mean shift c q and the second-moment shift c^2 q measured from the released
              values (normal approximation over the runs x steps values), the most private
              subsampled Gaussian they allow composed over the steps by a privacy-loss
              distribution rounded down. Threshold tests on every step's release composed over
              the steps, and on the likelihood ratio (threshold chosen on half the runs, evaluated
              on the other half), are reported beside.

The figure (--plot FILE.svg or .png): false negative rate against false positive rate of tests
"the canary is in". The accountant's curve (the edge of its (epsilon, delta) region; for dpgd also
the Gaussian trade-off whose epsilon at delta is the accountant's), the threshold test's observed
rates (a dot) with their upper confidence bounds (a cross; the shaded box between), and the curve
of the lower bound found (dashed). The true curve lies above the accountant's and, with
probability >= --confidence, below the cross. Written whole after the runs, also when the claim
is refuted (exit 4); its path is checked before any run.

epsilon_lower holds with probability >= --confidence. The verdict computes the same bound at
--refute-confidence (default 0.9995); a claim below that one is refuted: exit 4. A 95 % bound
alone would refute a tight true claim in up to 5 % of audits; at 0.9995, a family of 100 audits
refutes a true claim with probability <= 5 %. These
audits use their own synthetic data (no private data are read), so they spend no privacy budget
and take no --ledger. Measured (README, docs/audit.md):
accountant model, 2000 runs, DP-GD reaches 0.86-0.92 of the accountant's epsilon at epsilon 2-4
(median of 100 audits), DP-SGD 0.61-0.71 of the PLD epsilon of its run (20 steps, batch 10 of
101 rows). An audit holds a run to the tightest epsilon dpfit proves for it: the smaller of the
learner's report and the PLD accountant's epsilon of the same event.

One run (--one-run --data FILE --schema S --canaries M): trains ONCE, with the method's options
completed by dpfit train's public rules (give --epochs, --batch-size, --clip-norm, ... to change
them), on your rows plus M canaries, each a row on a feature of its own that no other row uses,
included independently with probability 1/2 (DP-GD, replace-one: every canary is in, its label
drawn instead). The M/5 canaries whose weights (last-model) or per-step likelihood ratios
(accountant: every iterate read back) are highest are guessed in, as many of the lowest out; the
number of right guesses gives epsilon_lower by Steinke, Nasr & Jagielski's theorem. It prints
the audit's numbers only (post-processing of the trained model, which is discarded); the training
spends the --epsilon it is given on your data. With --ledger FILE (or $DPFIT_LEDGER) and
--dataset-size N that spending is reserved exactly as dpfit train --ledger reserves the same
DP-SGD/DP-GD run (the run's event, your rows plus the canaries, computed from the flags, the
schema and N), before any data are read: a run that does not fit the budget is refused with exit
4 and nothing is read; a ledger holds one neighbouring relation (dpsgd add/remove-one, dpgd
replace-one), so a run of the other is refused. dpfit ledger show FILE prints it. Measured:
Adult (32,561 rows), DP-SGD at epsilon 8, 1,000 canaries: epsilon >= 0.5-0.65 (last-model),
1.1-1.5 (accountant), about 5 s per training.

With --json: {method, epsilonLower, epsilonClaimed, epsilonAccounted, delta, runs, confidence,
refuteLower, refuteConfidence, violated, test: {threshold, falsePositives, falseNegatives, evaluated}, threatModel, statistic,
bounds: {<statistic>: epsilon lower bound}, gaussian?: {muEstimate, muLower, muNominal}, subsampled?: {std, stdUpper, mean, meanLower,
meanUpper, excess, excessLower, corner?: {shift, rate, std}, nominal: {shift, rate, std}}, plot?: FILE}; with
--one-run: {oneRun: true, method, threatModel, epsilonLower, epsilonClaimed, epsilonAccounted,
delta, confidence, violated, canaries, guesses, correct}.

Limits (exit 2, before any work), as dpfit train's: at most ${sci(MAX_STEPS)} steps per run (--steps, or
--epochs x (rows + 1) / batch size); last-model: ${sci(MAX_GRADIENT_EVALUATIONS)} per-example gradients in all (2 x runs x
steps x (rows + 1) for dpgd, x batch size for dpsgd); accountant: runs x steps <= ${sci(MAX_RELEASED_VALUES)}.

Examples:
  $ dpfit audit --method dpgd --epsilon 4 --delta 1e-5 --runs 1000 --claimed-epsilon 0.1     # a false claim is refuted
  $ dpfit audit --method dpsgd --epsilon 4 --delta 1e-5 --runs 2000 --threat-model accountant
  $ dpfit audit --method dpgd --epsilon 2 --delta 1e-5 --runs 2000 --threat-model accountant --plot curves.svg
  $ dpfit audit --one-run --method dpsgd --epsilon 8 --delta 1e-5 --data adult.data --schema adult.schema.json --canaries 1000
  $ dpfit audit --one-run --method dpsgd --epsilon 8 --delta 1e-5 --data adult.data --schema adult.schema.json --canaries 1000 \\
      --dataset-size 32561 --ledger owner.ledger --budget-epsilon 10 --budget-delta 1e-4`,
    )
    .action(async (flags: AuditFlags, command: Command) => {
      takeDeprecatedFlag(flags as unknown as Record<string, unknown>, { key: 'clip', flag: '--clip' }, { key: 'clipNorm', flag: '--clip-norm' }, command, io, "train's name for the clipping norm");
      if (flags.method !== 'dpgd' && flags.method !== 'dpsgd') throw new InvalidParameterError('--method', flags.method, 'dpgd or dpsgd');
      const threatModel = THREAT_MODELS[flags.threatModel];
      if (threatModel === undefined || !Object.hasOwn(THREAT_MODELS, flags.threatModel)) throw new InvalidParameterError('--threat-model', flags.threatModel, 'last-model or accountant');
      if (flags.oneRun) return oneRun(flags, command, io, threatModel);
      for (const name of ONE_RUN_ONLY) if (flags[name] !== undefined) throw new InvalidParameterError(`--${name}`, flags[name], 'given only with --one-run');
      for (const [key, flag] of ONE_RUN_ONLY_NAMED) if (flags[key] !== undefined) throw new InvalidParameterError(flag, flags[key], 'given only with --one-run (these runs use the audit\'s own synthetic data and spend no budget)');
      const steps = auditSteps(flags, command.getOptionValueSource('steps') === 'cli');
      // The limits of dpfit train (limits.ts), before any work: the steps of one run, and the gradients of all 2 x --runs trainings.
      const batch = flags.batchSize ?? Math.max(1, Math.floor(flags.rows / 10));
      const schedule = flags.epochs === undefined ? { flag: '--steps', value: flags.steps } : { flag: '--epochs', value: flags.epochs };
      checkStepLimit(schedule.flag, schedule.value, steps, flags.epochs === undefined ? undefined : `epochs x (rows + 1) / batch size = ${flags.epochs} x ${flags.rows + 1} / ${batch}`);
      if (!(flags.runs >= 20 && flags.runs <= 1_000_000)) throw new InvalidParameterError('--runs', flags.runs, 'an integer in [20, 1e6]');
      if (flags.batchSize !== undefined && flags.method !== 'dpsgd') throw new InvalidParameterError('--batch-size', flags.batchSize, 'given only with --method dpsgd');
      const perStep = flags.method === 'dpgd' ? { count: flags.rows + 1, rule: '(rows + 1)' } : { count: batch, rule: 'batch size' };
      if (threatModel === 'lastModel') checkGradientLimit(schedule.flag, schedule.value, 2 * flags.runs * steps * perStep.count, `2 neighbours x runs x steps x ${perStep.rule} = 2 x ${flags.runs} x ${steps} x ${perStep.count}`);
      // The accountant model's runs take about a second on one thread: starting workers would cost more (measured 1 s against 3-5 s on 2 threads).
      const threads = flags.threads ?? (threatModel === 'accountant' ? 1 : availableParallelism());
      if (!(threads >= 1 && threads <= 256)) throw new InvalidParameterError('--threads', threads, 'an integer in [1, 256]');
      // The figure's path, checked before any run (cli/output-files.ts); written whole after the verdict.
      const plot = flags.plot === undefined ? undefined : checkPlotPath(flags.plot);
      const bar = progressBar(`auditing ${flags.method}, ${flags.threatModel} (${flags.runs} runs on each neighbour)`, { enabled: !flags.json });
      let result;
      try {
        result = await auditLearnerParallel({
          method: flags.method as AuditMethod,
          threatModel,
          epsilon: flags.epsilon,
          delta: flags.delta,
          runs: flags.runs,
          confidence: flags.confidence,
          ...(flags.refuteConfidence === undefined ? {} : { refuteConfidence: flags.refuteConfidence }),
          steps,
          clipNorm: flags.clipNorm,
          learningRate: flags.learningRate,
          rows: flags.rows,
          ...(flags.claimedEpsilon === undefined ? {} : { claimedEpsilon: flags.claimedEpsilon }),
          ...(flags.batchSize === undefined ? {} : { batchSize: flags.batchSize }),
          ...(bar === undefined ? {} : { onRun: bar.onStep }),
        }, threads);
        bar?.end(true);
      } catch (error) {
        bar?.end(false);
        throw error;
      }
      if (plot !== undefined) {
        const figure = await auditTradeOffFigure(result);
        writeOutputFiles([{ output: plot, data: plot.path.toLowerCase().endsWith('.png') ? figure.png : figure.svg }]);
      }
      printResult(io, Boolean(flags.json), plot === undefined ? result : { ...result, plot: plot.path }, () => `${describe(result)}${plot === undefined ? '' : `\n  figure     ${plot.path}`}`);
      if (result.violated) throw new BudgetExceededError(`the audit refutes the claim: epsilon >= ${formatNumber(result.refuteLower, 4)} > claimed ${formatNumber(result.epsilonClaimed, 6)} (confidence ${result.refuteConfidence})`);
    });
}
