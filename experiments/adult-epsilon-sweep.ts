/**
 * Test accuracy of private logistic regression on UCI Adult as epsilon falls (the claim checked:
 * accuracy degrades smoothly as epsilon falls). One fixed configuration chosen before looking at
 * the data (so no tuning cost is hidden): rows from the SHIPPED public schema `adultSchema()`
 * (binned age and hours, log1p + bands for capital gain/loss, unit rows as `003` Sec. 5, then a
 * bias column; not a possibly older `adult.schema.json` in the data directory), DP-SGD with batch
 * 500, 5 epochs, clip 1, learning rate 2, DP-GD with 100 steps, clip 1, learning rate 2, and AMP
 * (`003` Alg. 1) with `train()`'s defaults for the schema (its lambda rule of `003` Sec. 5);
 * delta = 1e-5; 5 seeds of noise (the seed drives sampling and noise: an EXPERIMENT, not a release).
 * Tuned learning rates, with and without paying for the tuning, are in `adult-tuning.ts`.
 *
 * Needs the data: `dpfit data fetch adult --dir data/adult` (or `--from` a local copy).
 * Run: `node --import tsx experiments/adult-epsilon-sweep.ts [data/adult] [--json FILE]`
 *
 * `--json FILE` also writes every run, for `dpfit plot FILE`: `{format: "dpfit-runs/1", experiment,
 * delta, runs: [{method, epsilon, seed, accuracy, trainingLoss: [{step, loss}]}], baseline}`, where
 * trainingLoss is the average logistic loss on the training rows at <= 50 evenly spaced steps
 * (computed from the private data: an experiment's diagnostic, not a release).
 */
import { join } from 'node:path';
import { adultSchema } from '../src/data/adult.js';
import { checkOutputPaths } from '../src/cli/output-files.js';
import { writeOutputFiles } from '../src/data/node/atomic-write.js';
import { loadDataset } from '../src/data/node/read.js';
import { trainDpGd } from '../src/learners/gradient/dp-gd.js';
import { trainDpSgd } from '../src/learners/gradient/dp-sgd.js';
import { train as trainModel } from '../src/learners/train.js';
import { toSignedLabels } from '../src/learners/glm/constants.js';
import { logisticLoss } from '../src/learners/glm/losses/logistic.js';
import { glmObjective } from '../src/learners/glm/objective.js';
import { evaluate, linearModel, predictMargins } from '../src/learners/models/model.js';
import { lbfgs } from '../src/math/lbfgs.js';
import { seededRng } from '../src/random/rng.js';

const args = process.argv.slice(2);
const jsonAt = args.indexOf('--json');
const jsonPath = jsonAt < 0 ? undefined : args[jsonAt + 1];
if (jsonAt >= 0 && jsonPath === undefined) throw new Error('--json needs a FILE');
const dir = args.filter((_, i) => jsonAt < 0 || (i !== jsonAt && i !== jsonAt + 1))[0] ?? 'data/adult';
// Checked before any work (its directory exists and is writable; not a directory or an input).
const [jsonOutput] = checkOutputPaths([jsonPath === undefined ? undefined : { flag: '--json', path: jsonPath }]);
const schema = adultSchema();
const prepared = await loadDataset(join(dir, 'adult.data'), schema);
const train = prepared.dataset;
const test = (await loadDataset(join(dir, 'adult.test'), schema)).dataset;
const SEEDS = [1, 2, 3, 4, 5];
const EPSILONS = [0.1, 0.5, 1, 2, 8];

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const std = (values: number[]) => Math.sqrt(mean(values.map((v) => (v - mean(values)) ** 2)));

const objective = glmObjective(logisticLoss, { ...train, y: toSignedLabels(train.y) }, { regularization: 1e-4 * train.n });
const optimum = lbfgs(objective, new Float64Array(train.d), { gradTolerance: 1e-6, maxIterations: 5000 });
const baseline = linearModel(logisticLoss, optimum.x);
const baselineAccuracy = evaluate(baseline, test).accuracy ?? NaN;

/** Average logistic loss log(1 + e^{-y x.theta}) on the training rows (labels 0/1). */
function trainingLoss(theta: Float64Array): number {
  const margins = predictMargins(linearModel(logisticLoss, theta), train);
  let sum = 0;
  for (let i = 0; i < train.n; i++) {
    const z = train.y[i] > 0 ? margins[i] : -margins[i];
    sum += z > 0 ? Math.log1p(Math.exp(-z)) : -z + Math.log1p(Math.exp(z));
  }
  return sum / train.n;
}

/** An onStep that records the training loss at <= 50 evenly spaced steps (and the last), when --json is given. */
function lossRecorder(): { onStep?: (step: number, steps: number, theta: Float64Array) => void; points: { step: number; loss: number }[] } {
  const points: { step: number; loss: number }[] = [];
  if (jsonOutput === undefined) return { points };
  return {
    points,
    onStep: (step, steps, theta) => {
      if (step % Math.ceil(steps / 50) === 0 || step === steps || step === 1) points.push({ step, loss: trainingLoss(theta) });
    },
  };
}
const runs: { method: string; epsilon: number; seed: number; accuracy: number; trainingLoss: { step: number; loss: number }[] }[] = [];

process.stdout.write(`UCI Adult, ${train.n} train / ${test.n} test rows, ${train.d} features (shipped public schema), delta = 1e-5, mean ± std over ${SEEDS.length} seeds\n\n`);
process.stdout.write('| epsilon | DP-SGD test accuracy (%) | DP-GD test accuracy (%) | AMP test accuracy (%) |\n| --- | --- | --- | --- |\n');
for (const epsilon of EPSILONS) {
  const sgd: number[] = [];
  const gd: number[] = [];
  const amp: number[] = [];
  for (const seed of SEEDS) {
    const sgdLoss = lossRecorder();
    const a = trainDpSgd(train, { epsilon, delta: 1e-5, clipNorm: 1, batchSize: 500, epochs: 5, learningRate: 2, rng: seededRng(seed), ...(sgdLoss.onStep === undefined ? {} : { onStep: sgdLoss.onStep }) });
    sgd.push(100 * (evaluate(a.model, test).accuracy ?? NaN));
    runs.push({ method: 'DP-SGD', epsilon, seed, accuracy: evaluate(a.model, test).accuracy ?? NaN, trainingLoss: sgdLoss.points });
    const gdLoss = lossRecorder();
    const b = trainDpGd(train, { epsilon, delta: 1e-5, clipNorm: 1, steps: 100, learningRate: 2, rng: seededRng(1000 + seed), ...(gdLoss.onStep === undefined ? {} : { onStep: gdLoss.onStep }) });
    gd.push(100 * (evaluate(b.model, test).accuracy ?? NaN));
    runs.push({ method: 'DP-GD', epsilon, seed, accuracy: evaluate(b.model, test).accuracy ?? NaN, trainingLoss: gdLoss.points });
    const c = trainModel(prepared, { method: 'amp', epsilon, delta: 1e-5, rng: seededRng(2000 + seed) });
    const ampAccuracy = c.model === undefined ? NaN : evaluate(c.model, test).accuracy ?? NaN;
    amp.push(100 * ampAccuracy);
    runs.push({ method: 'AMP', epsilon, seed, accuracy: ampAccuracy, trainingLoss: [] });
  }
  process.stdout.write(`| ${epsilon} | ${mean(sgd).toFixed(2)} ± ${std(sgd).toFixed(2)} | ${mean(gd).toFixed(2)} ± ${std(gd).toFixed(2)} | ${mean(amp).toFixed(2)} ± ${std(amp).toFixed(2)} |\n`);
}
process.stdout.write(`| non-private (L-BFGS) | ${(100 * baselineAccuracy).toFixed(2)} | | |\n`);
if (jsonOutput !== undefined) {
  const results = { format: 'dpfit-runs/1', experiment: 'adult-epsilon-sweep', delta: 1e-5, runs, baseline: { method: 'non-private (L-BFGS)', accuracy: baselineAccuracy } };
  writeOutputFiles([{ output: jsonOutput, data: `${JSON.stringify(results, null, 1)}\n` }]);
  process.stdout.write(`wrote ${jsonOutput.path} (dpfit plot ${jsonOutput.path} --accuracy-out accuracy.svg --loss-out loss.svg)\n`);
}
