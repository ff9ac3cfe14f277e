/**
 * The privacy calculator page (`dpfit calculator`): DP-SGD's epsilon by RDP and PLD with its
 * privacy curve, the noise for a target, the Gaussian and Laplace mechanisms and randomized
 * response, objective perturbation and AMP (`003`), and RGM (`000` Thm. 1). Every number comes
 * from dpfit's own core, bundled for the browser, through the functions the CLI calls with the
 * options it passes, so the page and the CLI agree to the last digit. Quick RDP work runs here;
 * PLD compositions and calibrations run on a worker (`pld-worker.ts`). Every result is computed
 * on load and again whenever an input it reads changes (`live-form.ts`: no button, and no result
 * next to inputs it was not computed from). Curves take the accountants' colours of the CLI's
 * charts (`src/report/accountant-colors.ts`).
 */
import { ampEvent } from '../src/accounting/events/approximate-minima-perturbation.js';
import { calibrateGaussian, type GaussianCalibrationMethod } from '../src/accounting/gaussian/calibrate-gaussian.js';
import { dpsgdEvent } from '../src/accounting/calibration/calibrate.js';
import { dpsgdScheduleFromEpochs } from '../src/accounting/dpsgd-schedule.js';
import type { DpEvent } from '../src/accounting/events/types.js';
import {
  gaussianEvent,
  laplaceEvent,
  objectivePerturbationEvent,
  randomizedResponseEvent,
  relativeGaussianEvent,
} from '../src/accounting/events/constructors.js';
import { eventToJson } from '../src/accounting/events/json.js';
import type { PrivacyGuarantee } from '../src/accounting/guarantee.js';
import { pureEpsilon } from '../src/accounting/pure-dp.js';
import { RdpAccountant } from '../src/accounting/rdp/accountant.js';
import { calibrateRelativeGaussian, relativeGaussianCorollary1, relativeGaussianEpsilon } from '../src/accounting/rdp/relative-gaussian.js';
import { toDpfitJson } from '../src/json-numbers.js';
import { randomizedResponseNoiseParameter } from '../src/mechanisms/randomized-response.js';
import { requirePositive } from '../src/validate.js';
import { ACCOUNTANT_COLORS } from '../src/report/accountant-colors.js';
import { drawPrivacyCurve, type CurveSeries } from './curve-svg.js';
import { input, markBusy, markFresh, numberField, showNumber, showText } from './form-fields.js';
import { startLive, type LiveRun } from './live-form.js';
import type { CalibrationResult, PldResult } from './protocol.js';
import { runInWorker } from './worker-client.js';

/** Points per privacy curve, from epsilon 0 to RDP's epsilon at delta = 1e-8 (`dpfit curve`'s range). */
const CURVE_POINTS = 16;

function eventJson(event: DpEvent): string {
  return toDpfitJson(eventToJson(event));
}

/** A shell-quoted argument (single quotes). */
function quote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** What `dpfit ... --json` prints for a guarantee: the guarantee and its event. */
function cliJson(guarantee: PrivacyGuarantee, event: DpEvent): string {
  return toDpfitJson({ ...guarantee, event: eventToJson(event) }, 2);
}

function howRdp(g: PrivacyGuarantee): string {
  const parts = [`Rényi order ${g.order === undefined ? '?' : Number(g.order.toPrecision(8))}`, g.conversion === undefined ? '' : `${g.conversion} conversion`];
  return [parts.filter((p) => p !== '').join(', '), ...g.warnings.map((w) => `warning: ${w}`)].join('; ');
}

function howPld(g: PrivacyGuarantee & { epsilonLower?: number }): string {
  const lower = g.epsilonLower === undefined ? '' : `exact epsilon >= ${Number(g.epsilonLower.toPrecision(6))}`;
  return [g.accountant === 'pld' ? lower : `${g.accountant} accountant`, ...g.warnings.map((w) => `warning: ${w}`)].filter((p) => p !== '').join('; ');
}

// ---- DP-SGD ----------------------------------------------------------------------------------

interface DpsgdInputs {
  datasetSize: number;
  batchSize: number;
  epochs: number;
  delta: number;
  samplingProbability: number;
  steps: number;
}

/** N, B, E and delta of the DP-SGD form, with q and T (the library checks every value). */
function dpsgdInputs(): DpsgdInputs {
  const datasetSize = numberField('dpsgd', 'datasetSize') as number;
  const batchSize = numberField('dpsgd', 'batchSize') as number;
  const epochs = numberField('dpsgd', 'epochs') as number;
  const delta = numberField('dpsgd', 'delta') as number;
  const { samplingProbability, steps } = dpsgdScheduleFromEpochs(datasetSize, batchSize, epochs);
  return { datasetSize, batchSize, epochs, delta, samplingProbability, steps };
}

/**
 * Settles once DP-SGD's first PLD epsilon is shown (or after 5 s). On load, the other worker work
 * (the calibration, objective perturbation's PLD) waits for it rather than compete with the
 * page's headline number for the CPU; later runs do not wait.
 */
const firstPldEpsilon = (() => {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
    setTimeout(r, 5000);
  });
  return { promise, resolve: () => resolve() };
})();

async function computeDpsgd(live: LiveRun): Promise<void> {
  const inputs = dpsgdInputs();
  const noiseMultiplier = numberField('dpsgd', 'noiseMultiplier') as number;
  const event = dpsgdEvent(inputs.samplingProbability, noiseMultiplier, inputs.steps);
  showNumber('dpsgd-q', inputs.samplingProbability, 8);
  showNumber('dpsgd-steps', inputs.steps, 16);
  // RDP, as `dpfit epsilon dpsgd` (default accountant): new RdpAccountant({}) composed with the event.
  const rdp = new RdpAccountant().compose(event);
  const rdpGuarantee = rdp.getEpsilon(inputs.delta);
  showNumber('dpsgd-epsilon-rdp', rdpGuarantee.epsilon);
  showText('dpsgd-how-rdp', howRdp(rdpGuarantee));
  showText('dpsgd-event', eventJson(event));
  showText('dpsgd-json', cliJson(rdpGuarantee, event));
  showText(
    'dpsgd-cli',
    `dpfit epsilon dpsgd --dataset-size ${inputs.datasetSize} --batch-size ${inputs.batchSize} --epochs ${inputs.epochs} --noise-multiplier ${noiseMultiplier} --delta ${inputs.delta} [--accountant pld] --json`,
  );
  // The curve's range is `dpfit curve`'s: up to RDP's epsilon at delta = 1e-8.
  const maxEpsilon = Math.max(rdp.getEpsilon(1e-8).epsilon, rdpGuarantee.epsilon);
  const epsilons = Number.isFinite(maxEpsilon) && maxEpsilon > 0 ? Array.from({ length: CURVE_POINTS }, (_, i) => (maxEpsilon * i) / (CURVE_POINTS - 1)) : [];
  const rdpSeries: CurveSeries = { label: 'RDP (upper bound)', color: ACCOUNTANT_COLORS.rdp, points: epsilons.map((epsilon) => ({ epsilon, delta: rdp.getDelta(epsilon).delta })) };
  const svg = document.getElementById('dpsgd-curve') as unknown as SVGSVGElement;
  drawPrivacyCurve(svg, [rdpSeries], { epsilon: rdpGuarantee.epsilon, delta: inputs.delta });
  markFresh(svg);
  markBusy('dpsgd-epsilon-pld');
  showText('dpsgd-how-pld', '');
  // The PLD epsilon arrives first (partial result), its curve seconds later.
  const showPld = (result: PldResult) => {
    firstPldEpsilon.resolve();
    if (!live.isCurrent()) return;
    showNumber('dpsgd-epsilon-pld', result.guarantee.epsilon);
    showText('dpsgd-how-pld', [howPld(result.guarantee), result.curve === undefined && epsilons.length > 0 ? 'curve: computing…' : ''].filter((p) => p !== '').join('; '));
  };
  const pld = await live.wait(runInWorker<PldResult, PldResult>('dpsgd', { task: 'pld', event, delta: inputs.delta, curveEpsilons: epsilons }, showPld));
  showPld(pld);
  const series = pld.curve === undefined ? [rdpSeries] : [rdpSeries, { label: 'PLD (upper bound)', color: ACCOUNTANT_COLORS.pld, points: pld.curve }];
  drawPrivacyCurve(svg, series, { epsilon: pld.guarantee.accountant === 'pld' ? pld.guarantee.epsilon : rdpGuarantee.epsilon, delta: inputs.delta });
}

async function calibrateDpsgdForm(live: LiveRun): Promise<void> {
  const inputs = dpsgdInputs();
  const targetEpsilon = numberField('dpsgd-calibrate', 'targetEpsilon') as number;
  requirePositive('targetEpsilon', targetEpsilon);
  const accountant = input('dpsgd-calibrate', 'accountant').value === 'pld' ? 'pld' : 'rdp';
  showText(
    'dpsgd-calibrate-cli',
    `dpfit calibrate dpsgd --dataset-size ${inputs.datasetSize} --batch-size ${inputs.batchSize} --epochs ${inputs.epochs} --epsilon ${targetEpsilon} --delta ${inputs.delta} --accountant ${accountant} --json`,
  );
  markBusy('dpsgd-calibrate-noiseMultiplier');
  showText('dpsgd-calibrate-how', '');
  if (live.id === 1) await live.wait(firstPldEpsilon.promise);
  const result = await live.wait(
    runInWorker<CalibrationResult>('dpsgd-calibrate', {
      task: 'calibrateDpsgd',
      samplingProbability: inputs.samplingProbability,
      steps: inputs.steps,
      targetEpsilon,
      delta: inputs.delta,
      accountant,
    }),
  );
  showNumber('dpsgd-calibrate-noiseMultiplier', result.noiseMultiplier, 10);
  showText('dpsgd-calibrate-how', `(epsilon ${Number(result.guarantee.epsilon.toPrecision(6))} by ${result.guarantee.accountant.toUpperCase()}, ${inputs.steps} steps at q = ${inputs.samplingProbability})`);
}

// ---- One release -------------------------------------------------------------------------------

function computeGaussian(): void {
  const result = calibrateGaussian({
    targetEpsilon: numberField('gaussian', 'targetEpsilon') as number,
    delta: numberField('gaussian', 'delta') as number,
    sensitivity: numberField('gaussian', 'sensitivity') as number,
    method: input('gaussian', 'method').value as GaussianCalibrationMethod,
  });
  showNumber('gaussian-noiseStd', result.noiseStd, 10);
  showText(
    'gaussian-event',
    `${eventJson(gaussianEvent(result.noiseMultiplier))}\n\ndpfit calibrate gaussian --epsilon ${result.epsilon} --delta ${result.delta} --sensitivity ${result.sensitivity} --method ${result.method} --json`,
  );
}

function computeLaplace(): void {
  const targetEpsilon = requirePositive('targetEpsilon', numberField('laplace', 'targetEpsilon'));
  const sensitivity = requirePositive('sensitivity', numberField('laplace', 'sensitivity'));
  // b / Delta_1 = 1 / epsilon, rounded up as `laplaceMechanism` does (more noise is the safe side).
  const event = laplaceEvent((1 / targetEpsilon) * (1 + 4 * Number.EPSILON));
  showNumber('laplace-scale', event.noiseMultiplier * sensitivity, 10);
  const epsilon = pureEpsilon(event);
  showNumber('laplace-epsilon', epsilon);
  showText('laplace-event', `${eventJson(event)}\n\ndpfit epsilon --delta 1e-10 --event ${quote(eventJson(event))}`);
}

function computeRandomizedResponse(): void {
  const targetEpsilon = numberField('rr', 'targetEpsilon') as number;
  const numBuckets = numberField('rr', 'numBuckets') as number;
  const noiseParameter = randomizedResponseNoiseParameter(targetEpsilon, numBuckets);
  const event = randomizedResponseEvent(noiseParameter, numBuckets);
  showNumber('rr-noiseParameter', noiseParameter, 10);
  showNumber('rr-epsilon', pureEpsilon(event));
  showText('rr-event', `${eventJson(event)}\n\ndpfit epsilon --delta 1e-10 --event ${quote(eventJson(event))}`);
}

// ---- Objective perturbation and AMP ------------------------------------------------------------

async function computeObjectivePerturbation(live: LiveRun): Promise<void> {
  const params = {
    noiseStd: numberField('objpert', 'noiseStd') as number,
    lipschitz: numberField('objpert', 'lipschitz') as number,
    smoothness: numberField('objpert', 'smoothness') as number,
    regularization: numberField('objpert', 'regularization') as number,
  };
  const delta = numberField('objpert', 'delta') as number;
  const amp = (document.getElementById('objpert-amp') as HTMLInputElement).checked;
  const event: DpEvent = amp
    ? ampEvent({ ...params, gradTolerance: numberField('objpert', 'gradTolerance') as number, outputNoiseStd: numberField('objpert', 'outputNoiseStd') as number })
    : objectivePerturbationEvent(params);
  const rdp = new RdpAccountant().compose(event).getEpsilon(delta);
  showNumber('objpert-epsilon-rdp', rdp.epsilon);
  showText('objpert-cli', `dpfit epsilon --delta ${delta} --accountant pld --event ${quote(eventJson(event))}`);
  showText(
    'objpert-note',
    amp
      ? '003 Thm. 4.1: the guarantee covers an approximate minimiser with gradient norm <= tau (add/remove-one).'
      : 'Objective perturbation alone: this is the epsilon of the idealised mechanism (003 Thm. 3.1/3.2: the exact minimiser, continuous noise), for research. What dpfit can release is NOT private (its minimiser identifies the dataset: b is recomputed from theta and lies on the noise grid only for the true data), so dpfit train refuses it without --accept-no-guarantee. Use AMP.',
  );
  markBusy('objpert-epsilon-pld');
  if (live.id === 1) await live.wait(firstPldEpsilon.promise);
  const pld = await live.wait(runInWorker<PldResult>('objpert', { task: 'pld', event, delta, curveEpsilons: [] }));
  showNumber('objpert-epsilon-pld', pld.guarantee.epsilon);
}

// ---- RGM ---------------------------------------------------------------------------------------

function computeRgm(): void {
  const params = { eta: numberField('rgm', 'eta') as number, gamma: numberField('rgm', 'gamma') as number, dimension: numberField('rgm', 'dimension') as number };
  const delta = numberField('rgm', 'delta') as number;
  const event = relativeGaussianEvent(params);
  const best = relativeGaussianEpsilon(params, delta);
  const corollary = relativeGaussianCorollary1(params, delta);
  showNumber('rgm-epsilon', best.epsilon);
  showText('rgm-corollary', corollary === null ? 'not applicable' : String(Number(corollary.epsilon.toPrecision(6))));
  showText('rgm-cli', `dpfit rgm --eta ${params.eta} --gamma ${params.gamma} --dimension ${params.dimension} --delta ${delta} --json   # event ${eventJson(event)}`);
  const targetEpsilon = numberField('rgm', 'targetEpsilon');
  if (targetEpsilon === undefined) {
    showText('rgm-calibrated-gamma', '');
    return;
  }
  const calibrated = calibrateRelativeGaussian({ eta: params.eta, dimension: params.dimension, targetEpsilon, delta });
  showNumber('rgm-calibrated-gamma', calibrated.gamma, 10);
}

startLive([
  {
    form: 'dpsgd',
    inputs: ['dpsgd'],
    outputs: ['dpsgd-q', 'dpsgd-steps', 'dpsgd-epsilon-rdp', 'dpsgd-how-rdp', 'dpsgd-epsilon-pld', 'dpsgd-how-pld', 'dpsgd-curve', 'dpsgd-cli', 'dpsgd-event', 'dpsgd-json'],
    channels: ['dpsgd'],
    run: computeDpsgd,
  },
  {
    // Reads N, B, E and delta of the DP-SGD form too: an error there is shown under this form as well.
    form: 'dpsgd-calibrate',
    inputs: ['dpsgd', 'dpsgd-calibrate'],
    unread: ['dpsgd-noiseMultiplier'],
    outputs: ['dpsgd-calibrate-noiseMultiplier', 'dpsgd-calibrate-how', 'dpsgd-calibrate-cli'],
    channels: ['dpsgd-calibrate'],
    run: calibrateDpsgdForm,
  },
  { form: 'gaussian', inputs: ['gaussian'], outputs: ['gaussian-noiseStd', 'gaussian-event'], run: computeGaussian },
  { form: 'laplace', inputs: ['laplace'], outputs: ['laplace-scale', 'laplace-epsilon', 'laplace-event'], run: computeLaplace },
  { form: 'rr', inputs: ['rr'], outputs: ['rr-noiseParameter', 'rr-epsilon', 'rr-event'], run: computeRandomizedResponse },
  { form: 'objpert', inputs: ['objpert'], outputs: ['objpert-epsilon-rdp', 'objpert-epsilon-pld', 'objpert-note', 'objpert-cli'], channels: ['objpert'], run: computeObjectivePerturbation },
  { form: 'rgm', inputs: ['rgm'], outputs: ['rgm-epsilon', 'rgm-corollary', 'rgm-cli', 'rgm-calibrated-gamma'], run: computeRgm },
]);

const ampBox = document.getElementById('objpert-amp') as HTMLInputElement;
const syncAmp = () => {
  for (const name of ['gradTolerance', 'outputNoiseStd']) (input('objpert', name) as HTMLInputElement).disabled = !ampBox.checked;
};
ampBox.addEventListener('change', syncAmp);
syncAmp();
document.documentElement.dataset.ready = 'true';
