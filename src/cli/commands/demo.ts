/**
 * `dpfit demo`: the README's first command. Trains a private logistic regression (DP-SGD, noise
 * calibrated by the RDP accountant) on an embedded synthetic data set, prints its test accuracy
 * next to the non-private baseline (L-BFGS on the same regularised objective), and the privacy
 * report, checked as `dpfit verify` checks a model file. The data are generated from a fixed seed
 * (they are fake and public); the privacy noise comes from the secure generator.
 */
import { dpfitCommand } from '../invocation.js';
import type { Command } from 'commander';
import { syntheticDataset } from '../../data/synthetic.js';
import { trainDpSgd } from '../../learners/gradient/dp-sgd.js';
import { toSignedLabels } from '../../learners/glm/constants.js';
import { logisticLoss } from '../../learners/glm/losses/logistic.js';
import { glmObjective } from '../../learners/glm/objective.js';
import { evaluate, linearModel } from '../../learners/models/model.js';
import { majorityBaseline } from '../../eval/metrics.js';
import { lbfgs } from '../../math/lbfgs.js';
import { defaultRng, seededRng } from '../../random/rng.js';
import { verifyModel } from '../../learners/verification/verify-model.js';
import { formatNumber, parseNumberFlag, printResult, toJson, type CliIo } from '../io.js';
import { deltaOption } from '../delta-option.js';

const D = 10;
const TRAIN = 20_000;
const TEST = 5_000;

/** 25,000 rows of Gaussian features with logistic labels, each row clipped to L2 norm 1. */
function embeddedData() {
  const theta = Array.from({ length: D }, (_, k) => (k % 2 === 0 ? 4 : -4) / Math.sqrt(D));
  const all = syntheticDataset({ n: TRAIN + TEST, d: D, labels: 'logistic', covariance: 1 / D, theta, rng: seededRng(20261122) });
  for (let i = 0; i < all.n; i++) {
    let s = 0;
    for (let k = 0; k < D; k++) s += all.x[i * D + k] ** 2;
    const scale = Math.max(1, Math.sqrt(s));
    for (let k = 0; k < D; k++) all.x[i * D + k] /= scale;
  }
  const slice = (from: number, to: number) => ({ x: all.x.slice(from * D, to * D), y: all.y.slice(from, to), n: to - from, d: D });
  return { train: slice(0, TRAIN), test: slice(TRAIN, TRAIN + TEST), featureNames: all.featureNames };
}

export function registerDemo(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description('train a private logistic regression on embedded synthetic data and print its privacy report')
    .option('--epsilon <E>', 'privacy budget epsilon', parseNumberFlag('--epsilon'), 1)
    .addOption(deltaOption('privacy budget delta, in (0, 1)'))
    .option('--json', 'print one JSON object')
    .action((options: { epsilon: number; delta: number; json?: boolean }) => {
      const { train, test, featureNames } = embeddedData();
      const result = trainDpSgd(train, {
        epsilon: options.epsilon,
        delta: options.delta,
        clipNorm: 1,
        batchSize: 500,
        epochs: 10,
        learningRate: 2,
        featureNames,
        rng: defaultRng(),
      });
      const regularization = 1e-4;
      const objective = glmObjective(logisticLoss, { ...train, y: toSignedLabels(train.y) }, { regularization: regularization * train.n });
      const optimum = lbfgs(objective, new Float64Array(D), { gradTolerance: 1e-8 });
      const baseline = linearModel(logisticLoss, optimum.x);
      const privateMetrics = evaluate(result.model, test);
      const baselineMetrics = evaluate(baseline, test);
      // Always answering the test set's most frequent label: the accuracy a model must beat.
      const majority = majorityBaseline(test.y);
      const privacy = result.privacy;
      // What `dpfit verify` would say of the model file: the event re-accounted, the guarantee re-derived.
      const verification = verifyModel(JSON.parse(toJson(result.model)), { source: 'demo model' });
      const output = {
        data: `embedded synthetic data: ${TRAIN} training and ${TEST} test rows, ${D} Gaussian features, logistic labels, rows clipped to norm 1`,
        method: 'dpsgd',
        metrics: privateMetrics,
        baselineMetrics,
        majorityBaseline: majority,
        privacy,
        diagnostics: result.diagnostics,
        model: result.model,
        verification,
      };
      printResult(io, Boolean(options.json), output, () =>
        [
          'dpfit demo: private logistic regression (DP-SGD) on embedded synthetic data',
          `  data             ${TRAIN} train / ${TEST} test rows, ${D} features, rows clipped to norm 1`,
          `  test accuracy    ${formatNumber(privateMetrics.accuracy ?? NaN, 4)} private   vs ${formatNumber(baselineMetrics.accuracy ?? NaN, 4)} non-private (L-BFGS), ${formatNumber(majority, 4)} majority class`,
          `  test AUC         ${formatNumber(privateMetrics.auc ?? NaN, 4)} private   vs ${formatNumber(baselineMetrics.auc ?? NaN, 4)} non-private`,
          `  training         ${result.diagnostics.steps} steps, batch ~${formatNumber(result.diagnostics.expectedBatchSize as number)} (Poisson), clip 1, noise multiplier ${formatNumber(result.diagnostics.noiseMultiplier, 5)}`,
          '',
          'Privacy report',
          `  guarantee        (epsilon = ${formatNumber(privacy.epsilon, 6)}, delta = ${formatNumber(privacy.delta)})-DP, ${privacy.guarantee === 'none' ? 'NONE: NOT private' : privacy.guarantee}  [target epsilon ${options.epsilon}]`,
          `  verified         ${verification.holds ? `holds (re-accounted: epsilon <= ${formatNumber(verification.verified?.epsilon ?? NaN, 6)} by the ${verification.verified?.accountant} accountant, ${verification.verified?.guarantee})` : `DOES NOT HOLD: ${verification.problems[0]}`}`,
          `  accountant       ${privacy.accountant} (Rényi order ${formatNumber(privacy.rdp.order ?? NaN, 6)})`,
          `  neighbours       ${privacy.neighboringRelation === 'addOrRemoveOne' ? 'add or remove one record' : privacy.neighboringRelation}`,
          `  event            ${JSON.stringify(privacy.event)}`,
          `  randomness       ${privacy.randomness}${privacy.granularity === undefined ? '' : `; exact discrete noise on the grid ${privacy.granularity}`}`,
          ...privacy.warnings.map((w) => `  warning          ${w}`),
          '',
          `Next: ${['--help', 'epsilon dpsgd --help', 'calibrate gaussian --help'].map((args) => `${dpfitCommand()} ${args}`).join(', ')}`,
        ].join('\n'),
      );
    });
}
