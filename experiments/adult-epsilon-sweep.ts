/**
 * Test accuracy of private logistic regression on UCI Adult as epsilon falls (issue 6: "accuracy
 * degrades smoothly as epsilon falls"). One fixed configuration chosen before looking at the data
 * (so no tuning cost is hidden): rows from the SHIPPED public schema `adultSchema()` (binned age
 * and hours, log1p + bands for capital gain/loss, unit rows as `003` Sec. 5, then a bias column;
 * not a possibly older `adult.schema.json` in the data directory), DP-SGD with batch 500, 5
 * epochs, clip 1, learning rate 2, and DP-GD with 100 steps; delta = 1e-5; 5 seeds of noise (the
 * seed drives sampling and noise: an EXPERIMENT, not a release). Tuned learning rates, with and
 * without paying for the tuning, are in `adult-tuning.ts`.
 *
 * Needs the data: `dpfit data fetch adult --from ../shared/datasets/adult --dir data/adult`.
 * Run: `node --import tsx experiments/adult-epsilon-sweep.ts [data/adult]`
 */
import { join } from 'node:path';
import { adultSchema } from '../src/data/adult.js';
import { loadDataset } from '../src/data/node/read.js';
import { trainDpGd } from '../src/learners/dp-gd.js';
import { trainDpSgd } from '../src/learners/dp-sgd.js';
import { toSignedLabels } from '../src/learners/glm/constants.js';
import { logisticLoss } from '../src/learners/glm/logistic.js';
import { glmObjective } from '../src/learners/glm/objective.js';
import { evaluate, linearModel } from '../src/learners/model.js';
import { lbfgs } from '../src/math/lbfgs.js';
import { seededRng } from '../src/random/rng.js';

const dir = process.argv[2] ?? 'data/adult';
const schema = adultSchema();
const train = (await loadDataset(join(dir, 'adult.data'), schema)).dataset;
const test = (await loadDataset(join(dir, 'adult.test'), schema)).dataset;
const SEEDS = [1, 2, 3, 4, 5];
const EPSILONS = [0.1, 0.5, 1, 2, 8];

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const std = (values: number[]) => Math.sqrt(mean(values.map((v) => (v - mean(values)) ** 2)));

const objective = glmObjective(logisticLoss, { ...train, y: toSignedLabels(train.y) }, { regularization: 1e-4 * train.n });
const optimum = lbfgs(objective, new Float64Array(train.d), { gradTolerance: 1e-6, maxIterations: 5000 });
const baseline = linearModel(logisticLoss, optimum.x);
const baselineAccuracy = evaluate(baseline, test).accuracy ?? NaN;

process.stdout.write(`UCI Adult, ${train.n} train / ${test.n} test rows, ${train.d} features (shipped public schema), delta = 1e-5, mean ± std over ${SEEDS.length} seeds\n\n`);
process.stdout.write('| epsilon | DP-SGD test accuracy (%) | DP-GD test accuracy (%) |\n| --- | --- | --- |\n');
for (const epsilon of EPSILONS) {
  const sgd: number[] = [];
  const gd: number[] = [];
  for (const seed of SEEDS) {
    const a = trainDpSgd(train, { epsilon, delta: 1e-5, clipNorm: 1, batchSize: 500, epochs: 5, learningRate: 2, rng: seededRng(seed) });
    sgd.push(100 * (evaluate(a.model, test).accuracy ?? NaN));
    const b = trainDpGd(train, { epsilon, delta: 1e-5, clipNorm: 1, steps: 100, learningRate: 2, rng: seededRng(1000 + seed) });
    gd.push(100 * (evaluate(b.model, test).accuracy ?? NaN));
  }
  process.stdout.write(`| ${epsilon} | ${mean(sgd).toFixed(2)} ± ${std(sgd).toFixed(2)} | ${mean(gd).toFixed(2)} ± ${std(gd).toFixed(2)} |\n`);
}
process.stdout.write(`| non-private (L-BFGS) | ${(100 * baselineAccuracy).toFixed(2)} | |\n`);
