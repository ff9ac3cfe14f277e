/**
 * `dpfit epsilon`, `dpfit delta`, `dpfit rdp`, `dpfit epsilon dpsgd`, `dpfit calibrate dpsgd` and
 * `dpfit account --help`: privacy accounting of DpEvents from the command line.
 */
import type { Command } from 'commander';
import { calibrateDpsgd, dpsgdEvent, PLD_CALIBRATION } from '../../accounting/calibration/calibrate.js';
import { dpsgdScheduleFromEpochs } from '../../accounting/dpsgd-schedule.js';
import type { DpEvent } from '../../accounting/events/types.js';
import { eventToJson } from '../../accounting/events/json.js';
import { describeEvent } from '../../accounting/events/description.js';
import type { PrivacyGuarantee } from '../../accounting/guarantee.js';
import { InvalidParameterError } from '../../errors.js';
import { pureEpsilon } from '../../accounting/pure-dp.js';
import { PldAccountant, pldFallbackWarning } from '../../accounting/pld/accountant.js';
import { RdpAccountant } from '../../accounting/rdp/accountant.js';
import { neighboringRelationOf } from '../../accounting/neighboring.js';
import { privacyCurveChart, renderVegaLite, type PrivacyCurve } from '../../report/vega-chart.js';
import { readEventFlag, parseOrdersFlag } from '../event-input.js';
import { writeOutputFiles } from '../../data/node/atomic-write.js';
import { checkOutputPaths } from '../output-files.js';
import { formatNumber, parseIntegerFlag, parseNumberFlag, printResult, type CliIo } from '../io.js';
import { progressBar } from '../progress.js';
import { referencesHelp, type Reference } from '../help/references.js';
import { deltaOption } from '../delta-option.js';
import { deprecatedTargetEpsilonOption, takeTargetEpsilon, targetEpsilonOption, type TargetEpsilonFlags } from '../target-epsilon.js';

/** What the events' accounting rests on (the References of every command that prints EVENT_HELP). */
const EVENT_REFERENCES: readonly Reference[] = [
  ['gaussian, discrete', 'Canonne, Kamath & Steinke 2020 (CKS), the discrete Gaussian; its Renyi bound: Thm. 4'],
  ['relativeGaussian', '000 Thm. 1'],
  ['nonUniformSampled', '004 Thm. 4.2'],
  ['shuffledSgdConjecture', '004 Conj. 1-2 (--allow-conjecture)'],
];

/** The References of the DP-SGD schedule commands (`epsilon dpsgd`, `calibrate dpsgd`). */
const DPSGD_REFERENCES: readonly Reference[] = [
  ['DP-SGD', 'Abadi et al. 2016; its Renyi accounting: Mironov, Talwar & Zhang 2019'],
  ['--allow-conjecture', '004 Conj. 1-2'],
];

export const EVENT_HELP = `
Events (JSON, inline or @file; "Infinity" may be written as a string):
  {"kind":"gaussian","noiseMultiplier":Z}                 std / L2 sensitivity
    optional "discrete":true (exact discrete Gaussian) and "gridNoiseStd":S (its std in
    grid steps, >= 16; Z = S / sensitivity in grid steps): with S every accountant (PLD, exact
    Gaussian, RDP) accounts it tightly as the continuous Z sqrt(1 - 64/S^2) (smoothing coupling);
    without S only the RDP accountant can (the discrete Gaussian's own Renyi bound)
  {"kind":"laplace","noiseMultiplier":B}                  scale / L1 sensitivity
    optional "discrete":true (discrete Laplace: pure epsilon 1/B; PLD: the pure-DP pair)
  {"kind":"randomizedResponse","noiseParameter":P,"numBuckets":K}
  {"kind":"relativeGaussian","eta":H,"gamma":G,"dimension":D}        the Relative Gaussian Mechanism
    optional "baselineStd":SIGMA,"rRel":R; then "discrete":true,"gridBaselineStd":SB (SIGMA in grid steps, >= 16)
  {"kind":"objectivePerturbation","noiseStd":S,"lipschitz":L,"smoothness":B,"regularization":LAMBDA}
    optional "discrete":true,"gridNoiseStd":SG (the std of b in grid steps, >= 16)
  {"kind":"poissonSampled","samplingProbability":Q,"event":E}
  {"kind":"sampledWithoutReplacement","sourceDatasetSize":N,"sampleSize":M,"event":E}
  {"kind":"nonUniformSampled","maxWeight":C,"event":E}     ONE record drawn with public weights
    w_i <= C < 1 (sum 1), then E on it (replace-one; RDP only, PLD falls back)
  {"kind":"compose","events":[E,...]}   {"kind":"selfCompose","count":K,"event":E}
  {"kind":"repeatAndSelect","event":E,"mean":MU,"shape":S}   S = "Infinity" (Poisson), 1 (geometric),
                                                             0 (logarithmic), else truncated neg. binomial
  {"kind":"shuffledSgdConjecture","datasetSize":N,"noiseMultiplier":Z,"epochs":E,"fraction":TAU}
                                                             a CONJECTURE, unproven: needs --allow-conjecture
  {"kind":"nonPrivate"}  {"kind":"noOp"}

Neighbouring relations (every result states one):
  addOrRemoveOne   Poisson subsampling (and so the DP-SGD shorthand), objective perturbation
  replaceOne       sampling without replacement or with non-uniform weights, randomized response,
                   the shuffled-SGD conjecture
  relativeToSensitivity  Gaussian, Laplace, RGM alone: the relation their sensitivity was computed under
  Composing events of different relations is refused; convert one explicitly.

Examples:
  $ dpfit epsilon --delta 1e-5 --event '{"kind":"selfCompose","count":1000,"event":{"kind":"poissonSampled","samplingProbability":0.01,"event":{"kind":"gaussian","noiseMultiplier":1.1}}}'
  $ dpfit epsilon dpsgd --sampling-probability 0.01 --noise-multiplier 1.1 --steps 1000 --delta 1e-5 --json
  $ dpfit calibrate dpsgd --sampling-probability 0.01 --steps 1000 --epsilon 1 --delta 1e-5
  $ dpfit rdp --event '{"kind":"laplace","noiseMultiplier":2}' --orders 2,4.5,32 --json
${referencesHelp(EVENT_REFERENCES)}`;

interface AccountingFlags {
  accountant: string;
  orders?: number[];
  allowConjecture?: boolean;
  json?: boolean;
}

/** What the commands need of an accountant (RDP and PLD share this interface). */
interface Accountant {
  compose(event: DpEvent, count?: number): Accountant;
  getEpsilon(delta: number): PrivacyGuarantee;
  getDelta(epsilon: number): PrivacyGuarantee;
}

/** The DP-SGD schedule flags: --sampling-probability and --steps, or Opacus's --dataset-size, --batch-size and --epochs. */
interface ScheduleFlags {
  samplingProbability?: number;
  steps?: number;
  datasetSize?: number;
  batchSize?: number;
  epochs?: number;
}

function addScheduleOptions(command: Command): Command {
  return command
    .option('--sampling-probability <Q>', 'Poisson sampling probability, in (0, 1] (with --steps)', parseNumberFlag('--sampling-probability'))
    .option('--steps <T>', 'number of steps (with --sampling-probability)', parseIntegerFlag('--steps'))
    .option('--dataset-size <N>', 'instead of q and T: the number of records (q = batch / N)', parseIntegerFlag('--dataset-size'))
    .option('--batch-size <B>', 'instead of q and T: the expected batch size', parseIntegerFlag('--batch-size'))
    .option('--epochs <E>', 'instead of q and T: passes over the data (T = ceil(E N / B), as Opacus counts)', parseNumberFlag('--epochs'));
}

/** q and T from either form of the schedule flags (exactly one form). */
function scheduleOf(flags: ScheduleFlags): { samplingProbability: number; steps: number } {
  const direct = flags.samplingProbability !== undefined || flags.steps !== undefined;
  const opacus = flags.datasetSize !== undefined || flags.batchSize !== undefined || flags.epochs !== undefined;
  const both = 'give --sampling-probability and --steps, or --dataset-size, --batch-size and --epochs';
  if (direct && opacus) throw new InvalidParameterError('--sampling-probability', flags.samplingProbability ?? flags.steps, `absent with --dataset-size/--batch-size/--epochs (${both})`);
  if (opacus) {
    const n = flags.datasetSize;
    const b = flags.batchSize;
    const e = flags.epochs;
    if (n === undefined) throw new InvalidParameterError('--dataset-size', undefined, `given with --batch-size and --epochs (${both})`);
    if (b === undefined) throw new InvalidParameterError('--batch-size', undefined, `given with --dataset-size and --epochs (${both})`);
    if (e === undefined) throw new InvalidParameterError('--epochs', undefined, `given with --dataset-size and --batch-size (${both})`);
    if (!(n >= 1)) throw new InvalidParameterError('--dataset-size', n, 'an integer >= 1');
    if (!(b >= 1 && b <= n)) throw new InvalidParameterError('--batch-size', b, `an integer in [1, --dataset-size = ${n}]`);
    if (!(e > 0)) throw new InvalidParameterError('--epochs', e, 'a number > 0');
    return dpsgdScheduleFromEpochs(n, b, e);
  }
  if (flags.samplingProbability === undefined) throw new InvalidParameterError('--sampling-probability', undefined, `given with --steps (${both})`);
  if (flags.steps === undefined) throw new InvalidParameterError('--steps', undefined, `given with --sampling-probability (${both})`);
  return { samplingProbability: flags.samplingProbability, steps: flags.steps };
}

/**
 * The accountant for `flags`. With --accountant pld, an event the PLD accountant cannot handle
 * (RGM and repeat-and-select have RDP bounds only; sampling without replacement of other releases
 * than a Gaussian, Laplace or non-private one has no dominating pair implemented) falls back to RDP, with a warning giving the PLD accountant's own reason.
 */
function accountantFor(flags: AccountingFlags, event?: DpEvent, onProgress?: (done: number, total: number) => void): Accountant {
  const progress = onProgress === undefined ? {} : { onProgress };
  if (flags.accountant === 'rdp') return new RdpAccountant({ orders: flags.orders, allowConjecture: flags.allowConjecture, ...progress });
  if (flags.accountant === 'pld') {
    const pld = new PldAccountant(progress);
    if (event === undefined || pld.supports(event)) return pld;
    const rdp = new RdpAccountant({ orders: flags.orders, allowConjecture: flags.allowConjecture, ...progress });
    const warning = pldFallbackWarning(event);
    const withWarning = (g: PrivacyGuarantee): PrivacyGuarantee => ({ ...g, warnings: [...g.warnings, warning] });
    const fallback: Accountant = {
      compose: (e, count) => (rdp.compose(e, count), fallback),
      getEpsilon: (delta) => withWarning(rdp.getEpsilon(delta)),
      getDelta: (epsilon) => withWarning(rdp.getDelta(epsilon)),
    };
    return fallback;
  }
  throw new InvalidParameterError('--accountant', flags.accountant, "'rdp' or 'pld'");
}

/**
 * Runs one accounting query with a progress bar on stderr when it is a terminal and --json is not
 * given (the accountants report progress only for long compositions).
 */
function withProgress<T>(flags: AccountingFlags, query: (onProgress?: (done: number, total: number) => void) => T): T {
  const bar = progressBar(`accounting (${flags.accountant})`, { enabled: !flags.json });
  try {
    const result = query(bar?.onStep);
    bar?.end(true);
    return result;
  } catch (error) {
    bar?.end(false);
    throw error;
  }
}

function addAccountingOptions(command: Command, accountants: 'rdp' | 'rdp-or-pld' = 'rdp-or-pld'): Command {
  return command
    .option(
      '--accountant <A>',
      accountants === 'rdp' ? "'rdp' only (a Rényi curve is the RDP accountant's)" : "'rdp' (Rényi DP) or 'pld' (privacy loss distributions: tight, reports epsilonLower)",
      'rdp',
    )
    .option('--orders <LIST>', 'Rényi orders to use instead of the default grid, e.g. 2,4.5,32', parseOrdersFlag)
    .option('--allow-conjecture', "account shuffled SGD's amplification by shuffling, a conjecture (unproven); the result is then a conjecture")
    .option('--json', 'print one JSON object');
}

/** What `boundBy` of a PLD result says, in the text output. */
const BOUND_NAMES: Record<string, string> = { rdp: 'the RDP accountant', exactGaussian: 'the exact Gaussian composition' };

function guaranteeLines(g: PrivacyGuarantee & { epsilonLower?: number; boundBy?: string }): string {
  // A PLD answer capped by another valid bound on the same event says whose value it is (issue 29).
  const bound = g.boundBy !== undefined && g.boundBy !== g.accountant ? `; the upper end is ${BOUND_NAMES[g.boundBy] ?? g.boundBy}'s (below the PLD's)` : '';
  const how =
    g.order !== undefined
      ? `${g.accountant} accountant, Rényi order ${formatNumber(g.order, 8)}${g.conversion ? `, ${g.conversion} conversion` : ''}`
      : `${g.accountant} accountant${g.epsilonLower !== undefined ? `, exact epsilon >= ${formatNumber(g.epsilonLower)}` : ''}${bound}`;
  return [
    `epsilon ${formatNumber(g.epsilon)}  delta ${formatNumber(g.delta)}  (${how})`,
    `neighbouring relation: ${g.neighboringRelation}; guarantee: ${g.guarantee}`,
    ...g.warnings.map((w) => `warning: ${w}`),
  ].join('\n');
}

function withEvent(g: PrivacyGuarantee, event: DpEvent): object {
  return { ...g, event: eventToJson(event) };
}

export function registerAccounting(program: Command, io: CliIo): void {
  const epsilon = addAccountingOptions(
    program
      .command('epsilon')
      .description('epsilon of a DpEvent at a given delta (RDP or PLD accountant)')
      .option('--event <JSON|@FILE>', 'the event', readEventFlag)
      .addOption(deltaOption()),
  )
    // `epsilon dpsgd --delta D`: the subcommand's options belong to it, not to `epsilon`.
    .enablePositionalOptions()
    .addHelpText('after', EVENT_HELP)
    .action((flags: AccountingFlags & { event?: DpEvent; delta: number }) => {
      if (flags.event === undefined) throw new InvalidParameterError('--event', undefined, 'given (JSON or @FILE); see dpfit account --help');
      const { event, delta } = flags;
      const result = withProgress(flags, (onProgress) => accountantFor(flags, event, onProgress).compose(event).getEpsilon(delta));
      printResult(io, Boolean(flags.json), withEvent(result, flags.event), () => guaranteeLines(result));
    });

  addAccountingOptions(
    addScheduleOptions(epsilon.command('dpsgd'))
      .description('epsilon of DP-SGD: STEPS compositions of the Poisson-subsampled Gaussian (add/remove-one)')
      .requiredOption('--noise-multiplier <Z>', 'noise std / clipping norm (> 0)', parseNumberFlag('--noise-multiplier'))
      .addOption(deltaOption())
      .addHelpText('after', `\nThe schedule: --sampling-probability Q --steps T, or as Opacus counts it --dataset-size N --batch-size B --epochs E\n(q = B / N, T = ceil(E N / B)).\n${referencesHelp(DPSGD_REFERENCES)}`),
  ).action((flags: AccountingFlags & ScheduleFlags & { noiseMultiplier: number; delta: number }) => {
    const { samplingProbability, steps } = scheduleOf(flags);
    const event = dpsgdEvent(samplingProbability, flags.noiseMultiplier, steps);
    const result = withProgress(flags, (onProgress) => accountantFor(flags, event, onProgress).compose(event).getEpsilon(flags.delta));
    printResult(io, Boolean(flags.json), withEvent(result, event), () => `DP-SGD, ${steps} steps at q = ${samplingProbability}, z = ${flags.noiseMultiplier}:\n${guaranteeLines(result)}`);
  });

  addAccountingOptions(
    program
      .command('delta')
      .description('delta of a DpEvent at a given epsilon (RDP or PLD accountant)')
      .requiredOption('--event <JSON|@FILE>', 'the event', readEventFlag)
      .requiredOption('--epsilon <E>', 'epsilon (>= 0)', parseNumberFlag('--epsilon')),
  )
    .addHelpText('after', EVENT_HELP)
    .action((flags: AccountingFlags & { event: DpEvent; epsilon: number }) => {
      const result = withProgress(flags, (onProgress) => accountantFor(flags, flags.event, onProgress).compose(flags.event).getDelta(flags.epsilon));
      printResult(io, Boolean(flags.json), withEvent(result, flags.event), () => guaranteeLines(result));
    });

  addAccountingOptions(
    program
      .command('rdp')
      .description('the Rényi DP curve of a DpEvent')
      .requiredOption('--event <JSON|@FILE>', 'the event', readEventFlag),
    'rdp',
  )
    .addHelpText('after', EVENT_HELP)
    .action((flags: AccountingFlags & { event: DpEvent }) => {
      if (flags.accountant !== 'rdp') throw new InvalidParameterError('--accountant', flags.accountant, "'rdp' (a Rényi curve comes from the RDP accountant)");
      const accountant = new RdpAccountant({ orders: flags.orders, allowConjecture: flags.allowConjecture }).compose(flags.event);
      const rdp = Array.from(accountant.rdpCurve());
      const result = { orders: [...accountant.orders], rdp, neighboringRelation: neighboringRelationOf(flags.event), pureEpsilon: pureEpsilon(flags.event) };
      printResult(io, Boolean(flags.json), result, () =>
        ['order      rdp', ...accountant.orders.map((a, i) => `${String(formatNumber(a)).padEnd(10)} ${formatNumber(rdp[i], 8)}`)].join('\n'),
      );
    });

  const calibrate = program.commands.find((c) => c.name() === 'calibrate');
  if (calibrate === undefined) throw new Error('internal error: register calibrate before accounting');
  addAccountingOptions(
    addScheduleOptions(calibrate.command('dpsgd'))
      .description('the smallest noise multiplier for DP-SGD to meet a target (epsilon, delta)')
      .addOption(targetEpsilonOption())
      .addOption(deprecatedTargetEpsilonOption())
      .addOption(deltaOption()),
  )
    .addHelpText(
      'after',
      '\nThe schedule: --sampling-probability Q --steps T, or as Opacus counts it --dataset-size N --batch-size B --epochs E\n(q = B / N, T = ceil(E N / B)). The returned noise multiplier meets the target exactly (re-accounted); by RDP it is within a relative 1e-9 of the smallest that does.\nWith --accountant pld the search (started from the RDP answer) uses the PLD epsilon without its check by the delta query, to 1e-6,\nand the answer is re-accounted by the checked epsilon (what `dpfit epsilon --accountant pld` prints): within about 1e-5 of the smallest z.\n' + referencesHelp(DPSGD_REFERENCES),
    )
    .action((flags: AccountingFlags & ScheduleFlags & TargetEpsilonFlags & { delta: number }, command: Command) => {
      const targetEpsilon = takeTargetEpsilon(flags, command, io);
      accountantFor(flags); // validates --accountant
      const { samplingProbability, steps } = scheduleOf(flags);
      const result = calibrateDpsgd({
        samplingProbability,
        steps,
        targetEpsilon,
        delta: flags.delta,
        rdpOptions: { orders: flags.orders },
        ...(flags.accountant === 'pld' ? PLD_CALIBRATION : {}),
      });
      const output = { noiseMultiplier: result.noiseMultiplier, ...result.guarantee, targetEpsilon, event: eventToJson(result.event) };
      printResult(io, Boolean(flags.json), output, () => `noise multiplier ${formatNumber(result.noiseMultiplier, 10)}\n${guaranteeLines(result.guarantee)}`);
    });

  let eventFile: string | undefined;
  program
    .command('curve')
    .description('delta(epsilon) of a DpEvent by the RDP and PLD accountants: an SVG plot (--out) or the points (--json, or a table)')
    .requiredOption('--event <JSON|@FILE>', 'the event', (raw: string) => {
      eventFile = raw.startsWith('@') ? raw.slice(1) : undefined;
      return readEventFlag(raw);
    })
    .option('--out <FILE>', 'the plot to write: SVG, or PNG when FILE ends in .png (without it: the points on stdout, as JSON with --json)')
    .option('--accountant <A>', "'rdp', 'pld' or 'both'", 'both')
    .option('--max-epsilon <E>', 'right end of the epsilon axis (default: epsilon at delta = 1e-8 by RDP)', parseNumberFlag('--max-epsilon'))
    .option('--points <N>', 'points per curve, in [2, 1000]', parseIntegerFlag('--points'), 12)
    .option('--json', 'print one JSON object: {out, curves: [{label, points: [{epsilon, delta}]}]} (out null without --out)')
    .addHelpText('after', EVENT_HELP)
    .action(async (flags: { event: DpEvent; out?: string; accountant: string; maxEpsilon?: number; points: number; json?: boolean }) => {
      if (!['rdp', 'pld', 'both'].includes(flags.accountant)) throw new InvalidParameterError('--accountant', flags.accountant, "'rdp', 'pld' or 'both'");
      if (!(flags.points >= 2 && flags.points <= 1000)) throw new InvalidParameterError('--points', flags.points, 'in [2, 1000]');
      if (flags.maxEpsilon !== undefined && !(flags.maxEpsilon > 0)) throw new InvalidParameterError('--max-epsilon', flags.maxEpsilon, 'a finite number > 0');
      // The output path is checked before any accounting (PLD compositions can be long).
      const [out] = checkOutputPaths(
        [flags.out === undefined ? undefined : { flag: '--out', path: flags.out }],
        [eventFile === undefined ? undefined : { flag: '--event', path: eventFile }],
      );
      // One bar for the whole curve. The accountants work lazily, in their queries (a PLD query at a
      // new epsilon may refine its grid): the bar's phases are the RDP queries, then each PLD query,
      // each phase filled by the accountant's own (done, total).
      const withPld = flags.accountant !== 'rdp' && new PldAccountant().supports(flags.event);
      if (flags.accountant === 'pld' && !withPld) throw new InvalidParameterError('--accountant', 'pld', "an accountant that supports this event ('rdp')");
      const bar = progressBar(`privacy curve (${withPld ? (flags.accountant === 'pld' ? 'pld' : 'rdp, pld') : 'rdp'})`, { enabled: !flags.json });
      const phases = 1 + (withPld ? flags.points : 0);
      let phase = 0;
      const onProgress = bar === undefined ? {} : { onProgress: (done: number, total: number) => bar.onStep(Math.min(1000 * phases - 1, 1000 * phase + Math.floor((1000 * done) / total)), 1000 * phases) };
      const series: PrivacyCurve[] = [];
      let grid: number[];
      try {
        const rdp = new RdpAccountant(onProgress).compose(flags.event);
        const maxEpsilon = flags.maxEpsilon ?? rdp.getEpsilon(1e-8).epsilon;
        if (!(maxEpsilon > 0 && Number.isFinite(maxEpsilon))) {
          throw new InvalidParameterError('--max-epsilon', maxEpsilon, 'a finite number > 0', flags.maxEpsilon === undefined ? "the default, the event's epsilon at delta = 1e-8, is not: give --max-epsilon" : undefined);
        }
        grid = Array.from({ length: flags.points }, (_, i) => (maxEpsilon * i) / (flags.points - 1));
        if (flags.accountant !== 'pld') series.push({ label: 'RDP (upper bound)', points: grid.map((epsilon) => ({ epsilon, delta: rdp.getDelta(epsilon).delta })) });
        if (withPld) {
          // Each point is what `dpfit delta --accountant pld --epsilon E` answers: a PLD query depends
          // only on the event and the value queried.
          const pld = new PldAccountant(onProgress).compose(flags.event);
          series.push({ label: 'PLD (upper bound)', points: grid.map((epsilon, i) => ((phase = 1 + i), { epsilon, delta: pld.getDelta(epsilon).delta })) });
        }
        bar?.end(true);
      } catch (error) {
        bar?.end(false);
        throw error;
      }
      if (out !== undefined) {
        const chart = await renderVegaLite(privacyCurveChart(series, { title: `delta(epsilon) of ${describeEvent(flags.event, 100)}` }));
        writeOutputFiles([{ output: out, data: out.path.toLowerCase().endsWith('.png') ? chart.png : chart.svg }]);
      }
      printResult(io, Boolean(flags.json), { out: flags.out ?? null, curves: series }, () => {
        if (flags.out !== undefined) return `wrote ${flags.out} (${series.map((s) => s.label).join(', ')})`;
        const header = ['epsilon'.padEnd(14), ...series.map((s) => `delta ${s.label.split(' ')[0]}`.padEnd(16))].join(' ');
        return [header, ...grid.map((epsilon, i) => [formatNumber(epsilon).padEnd(14), ...series.map((s) => formatNumber(s.points[i].delta).padEnd(16))].join(' '))].join('\n');
      });
    });

  program
    .command('account')
    .description('how dpfit describes releases (DpEvents) and accounts them: see --help')
    .addHelpText('after', EVENT_HELP)
    .action(() => {
      io.stdout(`${program.commands.find((c) => c.name() === 'account')?.helpInformation() ?? ''}${EVENT_HELP}\n`);
    });
}
