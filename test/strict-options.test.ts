/**
 * Strict options everywhere (a misspelt option must never be silently ignored): every public
 * function that takes an options object refuses a key it does not know, naming the key and the
 * closest valid one, before any work. One row per function: a misspelt key, the function named in
 * the error, the suggestion. The last tests check that this table covers every export of
 * src/index.ts with an options-like parameter (or says why not), that forwarded options still reach
 * their callee, and that nothing happens before the check.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ampEvent } from '../src/accounting/events/approximate-minima-perturbation.js';
import { calibrateDpsgd, calibrateNoiseMultiplier, maxSteps } from '../src/accounting/calibration/calibrate.js';
import { calibrateGaussian } from '../src/accounting/gaussian/calibrate-gaussian.js';
import { calibrateObjectivePerturbation } from '../src/accounting/calibration/calibrate-objective-perturbation.js';
import { kiferObjectivePerturbationDelta, kiferObjectivePerturbationEpsilon } from '../src/accounting/calibration/kifer-objective-perturbation.js';
import {
  gaussianEvent,
  laplaceEvent,
  objectivePerturbationEvent,
  relativeGaussianEvent,
  shuffledSgdConjectureEvent,
} from '../src/accounting/events/constructors.js';
import { PldAccountant, pldDelta, pldEpsilon } from '../src/accounting/pld/accountant.js';
import { RdpAccountant, rdpDelta, rdpEpsilon } from '../src/accounting/rdp/accountant.js';
import { calibrateRelativeGaussian, relativeGaussianCorollary1, relativeGaussianEpsilon, relativeGaussianRdp, relativeGaussianTcdp } from '../src/accounting/rdp/relative-gaussian.js';
import { selectAmpParameters, selectObjectivePerturbationParameters } from '../src/accounting/calibration/approximate-minima-perturbation-parameters.js';
import { auditLearner, auditLearnerParallel, canaryScores } from '../src/audit/canary-audit.js';
import { parseCsv, CsvParser } from '../src/data/csv.js';
import { adultSchema } from '../src/data/adult.js';
import { createDataset, trainTestSplit } from '../src/data/dataset.js';
import { parseLibsvm } from '../src/data/libsvm.js';
import { applySchema } from '../src/data/schema/apply.js';
import { schemaCsvOptions } from '../src/data/schema/read-options.js';
import { suggestSchema } from '../src/data/schema/suggest.js';
import { gaussianFeatures, syntheticDataset, twoPartySplit } from '../src/data/synthetic.js';
import { numericTableToDataset } from '../src/data/table.js';
import { addIntercept, clipRowsMahalanobis } from '../src/data/transforms.js';
import { convertCsvToParquet, readCsvWithDuckDb, readParquetFile } from '../src/data/node/duckdb.js';
import { downloadVerified, fetchAdult, installFiles } from '../src/data/node/fetch.js';
import { loadDataset, readCsvFile, readLibsvmFile, readTable } from '../src/data/node/read.js';
import { openStreamedDataset } from '../src/data/node/stream-rows.js';
import { InvalidParameterError, UnknownOptionError } from '../src/errors.js';
import { decideBudget, InMemoryLedger, spentBudget } from '../src/accounting/budget/rule.js';
import { PrivacyBudget, remainingBudget } from '../src/accounting/budget/privacy-budget.js';
import { federate } from '../src/federated/coordinator.js';
import { httpNodeClient } from '../src/federated/http-client.js';
import { startNodeServer } from '../src/federated/http-server.js';
import { PrivacyLedger } from '../src/federated/ledger.js';
import { FederatedNode } from '../src/federated/node.js';
import * as accountingEntry from '../src/entries/accounting.js';
import * as dataEntry from '../src/entries/data.js';
import * as learnersEntry from '../src/entries/learners.js';
import * as mathEntry from '../src/entries/math.js';
import * as mechanismsEntry from '../src/entries/mechanisms.js';
import * as nodeEntry from '../src/entries/node.js';
import * as auditEntry from '../src/entries/audit.js';
import * as root from '../src/index.js';
import { trainAmp } from '../src/learners/perturbation/approximate-minima-perturbation.js';
import { trainDpGd } from '../src/learners/gradient/dp-gd.js';
import { trainDpSgd } from '../src/learners/gradient/dp-sgd.js';
import { trainDpGdInSql } from '../src/learners/sql/sql-gradient.js';
import { trainDpGdStreamed, trainDpSgdStreamed } from '../src/learners/gradient/streamed.js';
import { certifiedMinimum } from '../src/learners/glm/certified-minimum.js';
import { logisticLoss } from '../src/learners/glm/index.js';
import { minimizePerturbedObjective, trainObjectivePerturbation } from '../src/learners/perturbation/objective-perturbation.js';
import { trainOneVsRest } from '../src/learners/composite/one-vs-rest.js';
import { trainOutputPerturbation } from '../src/learners/perturbation/output-perturbation.js';
import { trainOutputPerturbationSgd } from '../src/learners/perturbation/output-perturbation-sgd.js';
import { proposeTestRelease, ptrStatistic } from '../src/learners/rgm/propose-test-release.js';
import { rgmRidgeSensitivity, trainRgmGd } from '../src/learners/rgm/rgm-gd.js';
import { trainShuffledSgd } from '../src/learners/gradient/shuffled-sgd.js';
import { tuneGradientMethodHonestly } from '../src/learners/composite/tune-gradient-method.js';
import { gridSearchNotPrivate, tuneHonestly } from '../src/learners/composite/tuning.js';
import { verifyModel } from '../src/learners/verification/verify-model.js';
import { lbfgs } from '../src/math/lbfgs.js';
import { brentMinimize } from '../src/math/minimize.js';
import { newton } from '../src/math/newton.js';
import { integrate } from '../src/math/quadrature.js';
import { brentRoot, expandBracket } from '../src/math/root-finding.js';
import { gaussianMechanism } from '../src/mechanisms/gaussian.js';
import { planGaussianGrid, planLaplaceGrid } from '../src/mechanisms/grid-noise.js';
import { laplaceMechanism } from '../src/mechanisms/laplace.js';
import { randomizedResponse } from '../src/mechanisms/randomized-response.js';
import { relativeGaussianMechanism } from '../src/mechanisms/relative-gaussian.js';
import { planRelativeGaussianGrid } from '../src/mechanisms/relative-gaussian-grid.js';
import { seededRng, type Rng } from '../src/random/rng.js';
import { errorBarChart, lineBandChart, privacyCurveChart } from '../src/report/vega-chart.js';

/** Nothing in these rows should be touched before the options are checked: any use of it throws. */
const untouchable = new Proxy({}, {
  get(_target, key) {
    throw new Error(`the function used its ${String(key)} argument before checking its options`);
  },
}) as never;
/** A generator that fails if a function draws before checking its options. */
const noDraws: Rng = {
  nextUint32: () => assert.fail('drew randomness before checking its options'),
  nextDouble: () => assert.fail('drew randomness before checking its options'),
  secure: false,
  description: 'fails when drawn from',
};
const noCall = (): never => assert.fail('called a function argument before checking its options');

const missing = join(tmpdir(), 'dpfit-strict-options-no-such-file.csv');
const EVENT = gaussianEvent(2);
const rgm = { eta: 1e-3, gamma: 1e-4, dimension: 10 };
const objpert = { noiseStd: 4, lipschitz: 1, smoothness: 0.25, regularization: 12 };
const learner = { epsilon: 1, delta: 1e-5, clipNorm: 1, learningRate: 0.5, rng: noDraws };
const auditOptions = { method: 'dpgd' as const, epsilon: 1, delta: 1e-5, runs: 20, rng: noDraws };

interface Row {
  /** The export (`Class` for a constructor, `Class.method` for a static method). */
  readonly name: string;
  /** The misspelt key and the valid option the error must suggest. */
  readonly typo: string;
  readonly suggestion: string;
  /** Where the error says the option was given, when it is not `name` (a nested object). */
  readonly where?: string;
  /** Calls the function with valid options plus `extra`, which holds the typo. */
  call(extra: object): unknown;
}

const row = (name: string, typo: string, suggestion: string, call: (extra: object) => unknown, where?: string): Row => ({ name, typo, suggestion, call, ...(where === undefined ? {} : { where }) });

const ROWS: readonly Row[] = [
  // Math
  row('brentMinimize', 'xtol', 'xTol', (o) => brentMinimize(noCall, 0, 1, { ...o })),
  row('brentRoot', 'maxIteration', 'maxIterations', (o) => brentRoot(noCall, 0, 1, { ...o })),
  row('expandBracket', 'factr', 'factor', (o) => expandBracket(noCall, 1, { direction: 'up', ...o })),
  row('integrate', 'reltol', 'relTol', (o) => integrate(noCall, 0, 1, { ...o })),
  row('lbfgs', 'maxIteration', 'maxIterations', (o) => lbfgs(noCall, untouchable, { ...o })),
  row('newton', 'gradTol', 'gradTolerance', (o) => newton(noCall, noCall, untouchable, { ...o })),
  // Accounting: events, accountants, calibrations
  row('gaussianEvent', 'gridNoiseSTD', 'gridNoiseStd', (o) => gaussianEvent(1, { discrete: true, ...o })),
  row('laplaceEvent', 'discret', 'discrete', (o) => laplaceEvent(1, { ...o })),
  row('relativeGaussianEvent', 'rrel', 'rRel', (o) => relativeGaussianEvent({ ...rgm, ...o })),
  row('objectivePerturbationEvent', 'lipshitz', 'lipschitz', (o) => objectivePerturbationEvent({ ...objpert, ...o })),
  row('shuffledSgdConjectureEvent', 'epoch', 'epochs', (o) => shuffledSgdConjectureEvent({ datasetSize: 100, noiseMultiplier: 1, epochs: 1, fraction: 0.5, ...o })),
  row('calibrateGaussian', 'sensitivty', 'sensitivity', (o) => calibrateGaussian({ targetEpsilon: 1, delta: 1e-5, ...o })),
  row('PldAccountant', 'relativeAcuracy', 'relativeAccuracy', (o) => new PldAccountant({ ...o })),
  row('pldEpsilon', 'valueDiscretisation', 'valueDiscretization', (o) => pldEpsilon(untouchable, 1e-5, { ...o })),
  row('pldDelta', 'maxGridsize', 'maxGridSize', (o) => pldDelta(untouchable, 1, { ...o })),
  row('RdpAccountant', 'order', 'orders', (o) => new RdpAccountant({ ...o })),
  row('rdpEpsilon', 'extraOrder', 'extraOrders', (o) => rdpEpsilon(untouchable, 1e-5, { ...o })),
  row('rdpDelta', 'optimiseOrder', 'optimizeOrder', (o) => rdpDelta(untouchable, 1, { ...o })),
  row('calibrateNoiseMultiplier', 'accountent', 'accountant', (o) => calibrateNoiseMultiplier(noCall, { targetEpsilon: 1, delta: 1e-5, ...o })),
  row('calibrateNoiseMultiplier', 'order', 'orders', (o) => calibrateNoiseMultiplier(noCall, { targetEpsilon: 1, delta: 1e-5, rdpOptions: { ...o } }), "calibrateNoiseMultiplier's rdpOptions"),
  row('calibrateDpsgd', 'step', 'steps', (o) => calibrateDpsgd({ targetEpsilon: 1, delta: 1e-5, samplingProbability: 0.01, steps: 100, ...o })),
  row('maxSteps', 'maxstep', 'maxSteps', (o) => maxSteps(noCall, { targetEpsilon: 1, delta: 1e-5, ...o })),
  row('calibrateRelativeGaussian', 'rRell', 'rRel', (o) => calibrateRelativeGaussian({ eta: 1e-3, dimension: 10, targetEpsilon: 1, delta: 1e-8, ...o })),
  row('relativeGaussianCorollary1', 'gama', 'gamma', (o) => relativeGaussianCorollary1({ ...rgm, ...o }, 1e-8)),
  row('relativeGaussianTcdp', 'dimensoin', 'dimension', (o) => relativeGaussianTcdp({ ...rgm, ...o })),
  row('relativeGaussianEpsilon', 'baselinestd', 'baselineStd', (o) => relativeGaussianEpsilon({ ...rgm, ...o }, 1e-8)),
  row('relativeGaussianRdp', 'dimensions', 'dimension', (o) => relativeGaussianRdp({ ...rgm, ...o }, 2)),
  row('ampEvent', 'outputNoise', 'outputNoiseStd', (o) => ampEvent({ ...objpert, gradTolerance: 0.01, outputNoiseStd: 0.15, ...o })),
  row('kiferObjectivePerturbationEpsilon', 'noiseSd', 'noiseStd', (o) => kiferObjectivePerturbationEpsilon(1e-5, { ...objpert, ...o })),
  row('kiferObjectivePerturbationDelta', 'regularisation', 'regularization', (o) => kiferObjectivePerturbationDelta(2, { ...objpert, ...o })),
  row('calibrateObjectivePerturbation', 'regularisation', 'regularization', (o) => calibrateObjectivePerturbation({ targetEpsilon: 1, delta: 1e-5, lipschitz: 1, smoothness: 0.25, regularization: 10, ...o })),
  row(
    'calibrateObjectivePerturbation', 'gradTol', 'gradTolerance',
    (o) => calibrateObjectivePerturbation({ targetEpsilon: 1, delta: 1e-5, lipschitz: 1, smoothness: 0.25, regularization: 10, output: { gradTolerance: 0.01, outputNoiseStd: 0.15, ...o } }),
    "calibrateObjectivePerturbation's output",
  ),
  row('selectAmpParameters', 'noisefactor', 'noiseFactor', (o) => selectAmpParameters({ targetEpsilon: 1, delta: 1e-5, lipschitz: 1, smoothness: 0.25, ...o })),
  row('selectObjectivePerturbationParameters', 'tolerence', 'tolerance', (o) => selectObjectivePerturbationParameters({ targetEpsilon: 1, delta: 1e-5, lipschitz: 1, smoothness: 0.25, ...o })),
  // Mechanisms
  row('gaussianMechanism', 'targetEpsilion', 'targetEpsilon', (o) => gaussianMechanism(untouchable, { sensitivity: 1, delta: 1e-5, rng: noDraws, ...o })),
  row('laplaceMechanism', 'scal', 'scale', (o) => laplaceMechanism(untouchable, { sensitivity: 1, rng: noDraws, ...o })),
  row('randomizedResponse', 'numbuckets', 'numBuckets', (o) => randomizedResponse(0, { epsilon: 1, numBuckets: 2, rng: noDraws, ...o })),
  row('relativeGaussianMechanism', 'baselineSTD', 'baselineStd', (o) => relativeGaussianMechanism(untouchable, { eta: 1e-3, rRel: 0, gamma: 1e-4, rng: noDraws, ...o })),
  row('planGaussianGrid', 'roundingslack', 'roundingSlack', (o) => planGaussianGrid({ sensitivity: 1, noiseMultiplier: 1, dimension: 2, ...o })),
  row('planLaplaceGrid', 'granulariy', 'granularity', (o) => planLaplaceGrid({ sensitivity: 1, noiseMultiplier: 1, dimension: 2, ...o })),
  row('planRelativeGaussianGrid', 'extraErr', 'extraError', (o) => planRelativeGaussianGrid({ eta: 1e-3, rRel: 0.1, dimension: 2, ...o })),
  // Data
  row('CsvParser', 'delimeter', 'delimiter', (o) => new CsvParser({ ...o })),
  row('parseCsv', 'headers', 'header', (o) => parseCsv(untouchable, { ...o })),
  row('parseLibsvm', 'numfeatures', 'numFeatures', (o) => parseLibsvm(untouchable, { ...o })),
  row('addIntercept', 'rowNormbound', 'rowNormBound', (o) => addIntercept(untouchable, { ...o })),
  row('clipRowsMahalanobis', 'raduis', 'radius', (o) => clipRowsMahalanobis(untouchable, { matrix: Float64Array.of(1), radius: 1, ...o })),
  row('applySchema', 'lable', 'label', (o) => applySchema(untouchable, untouchable, { ...o })),
  row('schemaCsvOptions', 'labels', 'label', (o) => schemaCsvOptions(untouchable, 'data.csv', { ...o })),
  row('createDataset', 'featurenames', 'featureNames', (o) => createDataset({ x: new Float64Array(2), y: new Float64Array(1), d: 2, ...o })),
  row('trainTestSplit', 'testfraction', 'testFraction', (o) => trainTestSplit(untouchable, { testFraction: 0.2, rng: noDraws, ...o })),
  row('gaussianFeatures', 'covarience', 'covariance', (o) => gaussianFeatures({ n: 10, d: 2, rng: noDraws, ...o })),
  row('syntheticDataset', 'noiseSTD', 'noiseStd', (o) => syntheticDataset({ n: 10, d: 2, labels: 'linear', rng: noDraws, ...o })),
  row('twoPartySplit', 'seedpoints', 'seedPoints', (o) => twoPartySplit(untouchable, { kind: 'label', rng: noDraws, ...o })),
  row('numericTableToDataset', 'feature', 'features', (o) => numericTableToDataset(untouchable, { label: 'y', ...o })),
  row('suggestSchema', 'maxCategory', 'maxCategories', (o) => suggestSchema(untouchable, { ...o })),
  // Data, Node-only (the file does not exist: the options are refused before it is looked for)
  row('readCsvFile', 'chunkbytes', 'chunkBytes', (o) => readCsvFile(missing, { ...o })),
  row('readLibsvmFile', 'positivelabel', 'positiveLabel', (o) => readLibsvmFile(missing, { ...o })),
  row('readTable', 'engin', 'engine', (o) => readTable(missing, { ...o })),
  row('loadDataset', 'droppedrows', 'droppedRows', (o) => loadDataset(missing, adultSchema(), { ...o })),
  row('readParquetFile', 'thread', 'threads', (o) => readParquetFile(missing, { ...o })),
  row('readCsvWithDuckDb', 'threds', 'threads', (o) => readCsvWithDuckDb(missing, { ...o })),
  row('convertCsvToParquet', 'delimter', 'delimiter', (o) => convertCsvToParquet(missing, `${missing}.parquet`, { ...o })),
  row('downloadVerified', 'timeout', 'timeoutMs', (o) => downloadVerified(untouchable, { fetchImpl: noCall, ...o })),
  row('installFiles', 'dri', 'dir', (o) => installFiles(untouchable, { dir: untouchable, fetchImpl: noCall, ...o })),
  row('fetchAdult', 'form', 'from', (o) => fetchAdult({ dir: untouchable, fetchImpl: noCall, ...o })),
  // Learners
  row('verifyModel', 'sourc', 'source', (o) => verifyModel(untouchable, { ...o })),
  row('certifiedMinimum', 'tolerence', 'tolerance', (o) => certifiedMinimum(noCall, { strongConvexity: 1, smoothness: 2, tolerance: 1e-6, roundingBound: noCall, start: untouchable, ...o })),
  row('trainDpGd', 'clipnorm', 'clipNorm', (o) => trainDpGd(untouchable, { ...learner, steps: 10, ...o })),
  row('plannedTrainingRelease', 'clipnorm', 'clipNorm', (o) => learnersEntry.plannedTrainingRelease({ d: 2, bounds: { rowNormBound: 1, labelBound: 1 } }, { method: 'dpgd', epsilon: 1, delta: 1e-5, datasetSize: 100, ...o } as never), "train() with method 'dpgd'"),
  row('trainDpGd', 'delt', 'delta', (o) => trainDpGd(untouchable, { ...learner, steps: 10, loss: 'huber', lossParameters: { delta: 2, ...o } }), "the huber loss's lossParameters"),
  row('trainDpSgd', 'batchsize', 'batchSize', (o) => trainDpSgd(untouchable, { ...learner, epochs: 1, ...o })),
  row('trainShuffledSgd', 'lastIterat', 'lastIterate', (o) => trainShuffledSgd(untouchable, { ...learner, epochs: 1, ...o })),
  row('trainOutputPerturbation', 'gradTol', 'gradTolerance', (o) => trainOutputPerturbation(untouchable, { epsilon: 1, delta: 1e-5, regularization: 0.1, rng: noDraws, ...o })),
  row('trainOutputPerturbationSgd', 'epoch', 'epochs', (o) => trainOutputPerturbationSgd(untouchable, { epsilon: 1, delta: 1e-5, regularization: 0.1, epochs: 1, batchSize: 10, learningRate: 0.1, rng: noDraws, ...o })),
  row('trainObjectivePerturbation', 'acceptNoGuarantees', 'acceptNoGuarantee', (o) => trainObjectivePerturbation(untouchable, { epsilon: 1, delta: 1e-5, rng: noDraws, ...o })),
  row('trainAmp', 'outputNoiseSTD', 'outputNoiseStd', (o) => trainAmp(untouchable, { epsilon: 1, delta: 1e-5, rng: noDraws, ...o })),
  row('trainRgmGd', 'ptrEpsilonFrac', 'ptrEpsilonFraction', (o) => trainRgmGd(untouchable, { epsilon: 1, delta: 1e-6, steps: 10, regularization: 0.1, featureClip: 1, bClip: 1, rng: noDraws, ...o })),
  row('rgmRidgeSensitivity', 'conditionNumbr', 'conditionNumber', (o) => rgmRidgeSensitivity({ n: 100, featureClip: 1, rho: 0.1, bClip: 1, ...o })),
  row('minimizePerturbedObjective', 'gradtolerance', 'gradTolerance', (o) => minimizePerturbedObjective(untouchable, untouchable, untouchable, { regularization: 1, gradTolerance: 1e-6, lipschitz: 1, ...o })),
  row('proposeTestRelease', 'sensitivty', 'sensitivity', (o) => proposeTestRelease(1, { epsilon: 1, delta: 1e-6, rng: noDraws, ...o })),
  row('ptrStatistic', 'featureclip', 'featureClip', (o) => ptrStatistic({ gram: untouchable, clipMatrix: untouchable, d: 1, n: 10, rho: 0.1, regularization: 0, featureClip: 1, ...o })),
  row('tuneHonestly', 'candidate', 'candidates', (o) => tuneHonestly(untouchable, { candidates: [1], train: noCall, perRunEvent: EVENT, distribution: { kind: 'poisson', mean: 10 }, delta: 1e-5, relation: 'replaceOne', rng: noDraws, ...o })),
  row('gridSearchNotPrivate', 'metrics', 'metric', (o) => gridSearchNotPrivate(untouchable, [1], { train: noCall, ...o })),
  row('tuneGradientMethodHonestly', 'learningRate', 'learningRates', (o) => tuneGradientMethodHonestly(untouchable, { base: { method: 'dpgd', clipNorm: 1, steps: 10, learningRate: 1 }, learningRates: [0.1], epsilon: 1, delta: 1e-5, rng: noDraws, ...o })),
  row(
    'tuneGradientMethodHonestly', 'stepz', 'steps',
    (o) => tuneGradientMethodHonestly(untouchable, { base: { method: 'dpgd', clipNorm: 1, steps: 10, learningRate: 1, ...o }, learningRates: [0.1], epsilon: 1, delta: 1e-5, rng: noDraws }),
    "tuneGradientMethodHonestly's base (method 'dpgd')",
  ),
  row('trainOneVsRest', 'clases', 'classes', (o) => trainOneVsRest(untouchable, { classes: ['a', 'b'], base: { method: 'dpsgd', clipNorm: 1, epochs: 1, learningRate: 1 }, epsilon: 1, delta: 1e-5, rng: noDraws, ...o })),
  row(
    'trainOneVsRest', 'batchsize', 'batchSize',
    (o) => trainOneVsRest(untouchable, { classes: ['a', 'b'], base: { method: 'dpsgd', clipNorm: 1, epochs: 1, learningRate: 1, ...o }, epsilon: 1, delta: 1e-5, rng: noDraws }),
    "trainOneVsRest's base (method 'dpsgd')",
  ),
  // Audit, charts, ledger, federated training (not in src/index.ts: the CLI's modules, public through subpath exports)
  row('auditLearner', 'run', 'runs', (o) => auditLearner({ ...auditOptions, ...o })),
  row('auditLearnerParallel', 'claimedEpsilion', 'claimedEpsilon', (o) => auditLearnerParallel({ ...auditOptions, rng: undefined, ...o }, 2)),
  row('canaryScores', 'confidance', 'confidence', (o) => canaryScores({ ...auditOptions, ...o }, 20, noDraws)),
  row('oneRunAudit', 'canaris', 'canaries', (o) => auditEntry.oneRunAudit(untouchable as never, { method: 'dpsgd', epsilon: 1, delta: 1e-5, canaries: 10, rng: noDraws, ...o })),
  row('planOneRunAudit', 'gueses', 'guesses', (o) => auditEntry.planOneRunAudit(untouchable as never, { method: 'dpsgd', epsilon: 1, delta: 1e-5, canaries: 10, ...o })),
  row('auditTradeOffCurves', 'point', 'points', (o) => auditEntry.auditTradeOffCurves(untouchable as never, { ...o })),
  row('auditTradeOffFigure', 'points_', 'points', (o) => auditEntry.auditTradeOffFigure(untouchable as never, { ...o }), 'auditTradeOffCurves'),
  row('lineBandChart', 'logy', 'logY', (o) => lineBandChart([], { title: 't', xTitle: 'x', yTitle: 'y', ...o })),
  row('privacyCurveChart', 'subTitle', 'subtitle', (o) => privacyCurveChart([], { title: 't', ...o })),
  row('errorBarChart', 'refrence', 'reference', (o) => errorBarChart([], { title: 't', xTitle: 'x', yTitle: 'y', ...o })),
  row('PrivacyLedger.open', 'epsilion', 'epsilon', (o) => PrivacyLedger.open(join(tmpdir(), 'dpfit-strict-options-ledger.duckdb'), { epsilon: 1, delta: 1e-6, ...o }), "PrivacyLedger.open's budget"),
  row('InMemoryLedger', 'delt', 'delta', (o) => new InMemoryLedger({ epsilon: 1, delta: 1e-6, ...o })),
  row('PrivacyBudget', 'epsilom', 'epsilon', (o) => new PrivacyBudget({ epsilon: 1, delta: 1e-6, ...o })),
  row('remainingBudget', 'epsilom', 'epsilon', (o) => remainingBudget({ epsilon: 1, delta: 1e-6, ...o }, { epsilon: 0, delta: 0, entries: 0 }, 0), "remainingBudget's budget"),
  row('PrivacyBudget.spend', 'extradelta', 'extraDelta', (o) => new PrivacyBudget({ epsilon: 1, delta: 1e-6 }).spend(untouchable, { ...o })),
  row('PrivacyBudget.check', 'descripton', 'description', (o) => new PrivacyBudget({ epsilon: 1, delta: 1e-6 }).check(untouchable, { ...o })),
  row('PrivacyLedger.open', 'lockTimeout', 'lockTimeoutMs', (o) => PrivacyLedger.open(join(tmpdir(), 'dpfit-strict-options-ledger.duckdb'), { epsilon: 1, delta: 1e-6 }, { ...o })),
  row('spentBudget', 'epsilom', 'epsilon', (o) => spentBudget([], { epsilon: 1, delta: 1e-6, ...o }), "spentBudget's budget"),
  row('decideBudget', 'delt', 'delta', (o) => decideBudget([], untouchable, { epsilon: 1, delta: 1e-6, ...o }), "decideBudget's budget"),
  // Out of core and in a database (dpfit/node): refused before the file, the source or the database is touched
  row('openStreamedDataset', 'maxmemory', 'maxMemory', (o) => openStreamedDataset('/nonexistent/dpfit-strict.csv', untouchable, { ...o })),
  row('trainDpGdStreamed', 'clipnorm', 'clipNorm', (o) => trainDpGdStreamed(untouchable, { epsilon: 1, delta: 1e-5, clipNorm: 1, learningRate: 0.1, steps: 1, ...o })),
  row('trainDpSgdStreamed', 'batchsize', 'batchSize', (o) => trainDpSgdStreamed(untouchable, { epsilon: 1, delta: 1e-5, clipNorm: 1, learningRate: 0.1, batchSize: 1, steps: 1, ...o })),
  row('trainDpGdInSql', 'partitionkey', 'partitionKey', (o) => trainDpGdInSql(untouchable, untouchable, 'select 1', { epsilon: 1, delta: 1e-5, clipNorm: 1, learningRate: 0.1, steps: 1, ...o })),
  row('FederatedNode', 'maxSession', 'maxSessions', (o) => new FederatedNode(untouchable, untouchable, { name: 'a', ...o })),
  row('startNodeServer', 'maxBodyBytez', 'maxBodyBytes', (o) => startNodeServer(untouchable, { host: '127.0.0.1', port: 0, token: 't', ...o })),
  row('startNodeServer', 'crt', 'cert', (o) => startNodeServer(untouchable, { host: '127.0.0.1', port: 0, token: 't', tls: { key: 'k', cert: 'c', ...o } }), "startNodeServer's tls"),
  row('httpNodeClient', 'timeout', 'timeoutMs', (o) => httpNodeClient('http://127.0.0.1:1', 't', { ...o })),
  row('federate', 'learningrate', 'learningRate', (o) => federate(untouchable, { method: 'dpgd', steps: 10, regularization: 0.1, ...o })),
];

/** Runs a row with its typo and returns what it threw (awaited when the function is async). */
async function thrown(r: Row, extra: object): Promise<unknown> {
  try {
    await r.call(extra);
  } catch (error) {
    return error;
  }
  return undefined;
}

test('every options-taking function refuses a misspelt option, naming it, the function and the closest valid option', async () => {
  for (const r of ROWS) {
    const where = r.where ?? r.name;
    const error = await thrown(r, { [r.typo]: 1 });
    assert.ok(error instanceof UnknownOptionError, `${where}: ${r.typo} was not refused as an unknown option (${String(error)})`);
    assert.ok(error instanceof InvalidParameterError, where);
    assert.equal(error.param, r.typo, where);
    assert.equal(error.value, 1, where);
    assert.equal(error.where, where);
    assert.equal(error.suggestion, r.suggestion, where);
    assert.ok(error.validOptions.includes(r.suggestion), where);
    assert.ok(error.message.startsWith(`unknown option ${r.typo} of ${where} (did you mean ${r.suggestion}?), given 1; its options are `), error.message);
  }
});

test('a key close to no option is refused without a suggestion, in every options-taking function', async () => {
  for (const r of ROWS) {
    const error = await thrown(r, { zzzzzz: true });
    assert.ok(error instanceof UnknownOptionError, `${r.where ?? r.name}: ${String(error)}`);
    assert.equal(error.suggestion, undefined, r.where ?? r.name);
    assert.doesNotMatch(error.message, /did you mean/);
  }
});

/** Every value dpfit exports: the root and its subpaths (package.json's exports). */
const api = { ...root, ...accountingEntry, ...mechanismsEntry, ...mathEntry, ...dataEntry, ...learnersEntry, ...nodeEntry, ...auditEntry };

test('the table covers every export of the package (its root and subpaths) with an options-like parameter, or says why not', () => {
  /** Exports deliberately not in the table, and why. */
  const LEFT_OUT: Record<string, string> = {
    train: "train() and the estimators are made strict by the learner registry's rebuild, which checks each learner's own options (test/learners/strict-options.test.ts)",
    PrivateLinearRegression: 'the estimators: with train()',
    PrivateLogisticRegression: 'the estimators: with train()',
    calibrateCompositeNoise: 'gradient-methods.ts is rebuilt with the learner registry; its options are a learner\'s (checked by the learners and by tuning / one-vs-rest for their base)',
    gradientRunEvent: 'gradient-methods.ts, as calibrateCompositeNoise',
    gradientRunNoise: 'gradient-methods.ts, as calibrateCompositeNoise',
    trainGradientMethod: 'gradient-methods.ts, as calibrateCompositeNoise (the learner it dispatches to checks the options)',
    parseEvent: 'its input is an event to parse, checked field by field (an unknown field is refused by the parser)',
    PrivacyLedger: 'its constructor is private: PrivacyLedger.open, in the table, takes the budget',
    UnknownOptionError: "an error class: its validOptions parameter is the list of names it reports, not an options object",
  };
  const covered = new Set(ROWS.map((r) => r.name));
  const optionLike = /^(options|params|parts|input|spec|config|budget)$|Options$|^\{/;
  const missingRows: string[] = [];
  const stale: string[] = [];
  let found = 0;
  for (const [name, value] of Object.entries(api)) {
    if (typeof value !== 'function') continue;
    if (parameterNames(value).some((p) => optionLike.test(p))) {
      found++;
      if (!covered.has(name) && LEFT_OUT[name] === undefined) missingRows.push(name);
    }
  }
  for (const name of [...covered, ...Object.keys(LEFT_OUT)]) {
    if (name in api || name.includes('.')) continue;
    if (!['auditLearner', 'auditLearnerParallel', 'canaryScores', 'lineBandChart', 'privacyCurveChart', 'errorBarChart', 'InMemoryLedger', 'FederatedNode', 'startNodeServer', 'httpNodeClient', 'federate'].includes(name)) stale.push(name);
  }
  assert.deepEqual(missingRows, [], 'exports with an options parameter that the table lacks');
  assert.deepEqual(stale, [], 'rows naming no export');
  assert.ok(found >= 80, `the scan found ${found} options-taking exports (the parameter-name parser broke?)`);
});

/** The parameter names of a function or a class's constructor, from its source text (destructured ones as their pattern). */
function parameterNames(fn: Function): string[] {
  const source = Function.prototype.toString.call(fn);
  const start = source.startsWith('class') ? source.indexOf('(', source.search(/\bconstructor\s*\(/)) : source.indexOf('(');
  if (start < 0 || (source.startsWith('class') && source.search(/\bconstructor\s*\(/) < 0)) return [];
  const names: string[] = [];
  let depth = 0;
  let current = '';
  for (let i = start + 1; i < source.length; i++) {
    const c = source[i];
    if (depth === 0 && (c === ',' || c === ')')) {
      const name = current.trim().split('=')[0].trim();
      if (name !== '') names.push(name.startsWith('{') ? '{' : name.replace(/^\.\.\./, ''));
      current = '';
      if (c === ')') break;
      continue;
    }
    if ('([{'.includes(c)) depth++;
    if (')]}'.includes(c)) depth--;
    current += c;
  }
  return names;
}

test('forwarded options reach their callee: the outer function accepts the union of both', async () => {
  // calibrateDpsgd forwards calibrateNoiseMultiplier's options.
  const dpsgd = calibrateDpsgd({ targetEpsilon: 1, delta: 1e-5, samplingProbability: 0.01, steps: 100, tolerance: 1e-6, rdpOptions: { orders: [2, 4, 8, 16, 32] } });
  assert.ok(dpsgd.epsilon <= 1);
  // selectAmpParameters forwards selectObjectivePerturbationParameters' options (but output).
  const amp = selectAmpParameters({ targetEpsilon: 1, delta: 1e-5, lipschitz: 1, smoothness: 0.25, noiseFactor: 1.3, tolerance: 1e-8, gradTolerance: 0.02 });
  assert.equal(amp.gradTolerance, 0.02);
  assert.throws(() => selectAmpParameters({ targetEpsilon: 1, delta: 1e-5, lipschitz: 1, smoothness: 0.25, output: { gradTolerance: 1, outputNoiseStd: 1 } } as never), (e: unknown) => e instanceof InvalidParameterError && !(e instanceof UnknownOptionError) && e.param === 'output');
  // syntheticDataset forwards gaussianFeatures' options.
  const data = syntheticDataset({ n: 20, d: 2, labels: 'logistic', covariance: 2, mean: [1, 0], rng: seededRng(1) });
  assert.equal(data.n, 20);
  // RGM's params API takes its own event.
  const event = relativeGaussianEvent({ ...rgm, baselineStd: 10, rRel: 0.01 });
  assert.equal(relativeGaussianEpsilon(event, 1e-8).epsilon, relativeGaussianEpsilon({ ...rgm, baselineStd: 10, rRel: 0.01 }, 1e-8).epsilon);
  // readTable and loadDataset forward the readers' options; the built-in reader never sees DuckDB's threads.
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-strict-'));
  const csv = join(dir, 'people.csv');
  writeFileSync(csv, 'age;y\n30;1\n40;0\n');
  const table = await readTable(csv, { delimiter: ';', threads: 1, columnTypes: 'numeric' });
  assert.equal(table.rowCount, 2);
  await assert.rejects(readTable(csv, { delimiter: ';', chunkBytes: 4 } as never), (e: unknown) => e instanceof UnknownOptionError && e.param === 'chunkBytes' && e.where === 'readTable');
  const schema = { version: 1, csv: { delimiter: ';' }, columns: [{ name: 'age', type: 'numeric', lower: 0, upper: 100 }, { name: 'y', type: 'label', positive: ['1'], negative: ['0'] }] };
  const prepared = await loadDataset(csv, api.parseSchema(schema, 'schema'), { threads: 1, format: 'csv', engine: 'builtin', droppedRows: 'zeroRows', label: 'required' });
  assert.equal(prepared.dataset.n, 2);
});

test('a loss takes the parameters it records and no other', () => {
  assert.throws(
    () => trainDpGd(untouchable, { ...learner, steps: 10, lossParameters: { delta: 2 } }),
    (e: unknown) => e instanceof UnknownOptionError && e.param === 'delta' && e.where === "the logistic loss's lossParameters" && /given 2; it takes none$/.test(e.message),
  );
  assert.throws(
    // @ts-expect-error the type rejects the typo too (LossParameters); this is what a JavaScript caller gets
    () => trainDpSgd(untouchable, { ...learner, epochs: 1, loss: 'smoothedHinge', lossParameters: { smothing: 0.5 } }),
    (e: unknown) => e instanceof UnknownOptionError && e.suggestion === 'smoothing',
  );
});

test("a learner takes train()'s method for itself (and no other), and RGM the squared loss only", () => {
  const data = syntheticDataset({ n: 30, d: 2, labels: 'logistic', rng: seededRng(2) });
  const options = { clipNorm: 1, steps: 2, learningRate: 0.5, noiseMultiplier: 1, delta: 1e-5, rng: seededRng(3) };
  assert.equal(trainDpGd(data, { ...options, method: 'dpgd' }).model.theta.length, trainDpGd(data, options).model.theta.length);
  assert.throws(() => trainDpGd(data, { ...options, method: 'dpsgd' } as never), (e: unknown) => e instanceof InvalidParameterError && e.param === 'method' && /'dpgd' or absent/.test(e.message));
  assert.throws(
    () => trainRgmGd(data, { method: 'rgm', loss: 'logistic', epsilon: 1, delta: 1e-6, steps: 10, regularization: 0.1, featureClip: 1, bClip: 1 } as never),
    (e: unknown) => e instanceof InvalidParameterError && e.param === 'loss' && /ridge/.test(e.message),
  );
});

test('the check comes before any work: no file is created, no randomness drawn, no argument read', async () => {
  // (The rows pass arguments that throw when touched and generators that throw when drawn from.)
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-strict-'));
  const ledger = join(dir, 'ledger.duckdb');
  await assert.rejects(PrivacyLedger.open(ledger, { epsilon: 1, delta: 1e-6, epsilion: 2 } as never), UnknownOptionError);
  assert.equal(existsSync(ledger), false, 'the ledger file was created');
  const csv = join(dir, 'a.csv');
  writeFileSync(csv, 'a,b\n1,2\n');
  await assert.rejects(convertCsvToParquet(csv, join(dir, 'a.parquet'), { threads: 1, delimeter: ',' } as never), UnknownOptionError);
  assert.equal(existsSync(join(dir, 'a.parquet')), false, 'the Parquet file was written');
  await assert.rejects(fetchAdult({ dir: join(dir, 'adult'), form: dir } as never), UnknownOptionError);
  assert.equal(existsSync(join(dir, 'adult')), false, 'the data directory was created');
});
