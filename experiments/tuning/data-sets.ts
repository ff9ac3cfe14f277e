/**
 * The data sets of `003` Sec. 5's experiments as dpfit runs them: a private training set, a PUBLIC
 * validation set (tuning scores on it: post-processing of each released model, no privacy cost) and
 * a test set nobody tunes on, rows scaled to unit L2 norm then a bias column 1 (`003` Sec. 5), so
 * every row has norm <= sqrt(2).
 *
 * - `adult`: UCI Adult with dpfit's shipped public schema (`adultSchema()`); private training set
 *   adult.data (32,561 rows); adult.test split by row position, decided before any run: odd-numbered
 *   rows (1st, 3rd, ...) validation, even-numbered rows test.
 * - `synthetic-l`, `synthetic-h`: stand-ins for `003`'s Synthetic-L and Synthetic-H. 003 takes them
 *   "as provided by Iyengar et al. (2019)" and does not describe them. Iyengar et al.'s benchmark
 *   repository (sunblaze-ucb/dpml-benchmark) preprocesses only real data sets, but its
 *   `common/datasets.py` also generates two synthetic ones with scikit-learn's make_classification,
 *   selected in `gridsearch.py` under the names `random` (10,000 rows, 40 features, 30 informative,
 *   class_sep 2, random_state 1000) and `random_highdim` (2,000 rows, 2,000 features, 10
 *   informative, no redundant, class_sep 2, random_state 1), and trains on the first 80 % of rows.
 *   Neither the repository nor 003 says that these are Synthetic-L and -H (the low- and
 *   high-dimensional shapes suggest it). The stand-ins follow those recipes
 *   (`classification-recipe.ts`, dpfit's generator: the same family, not the same rows) with the
 *   repository's training sizes (8,000 and 1,600 rows) and 2,000 validation + 2,000 test rows drawn
 *   from the same population. `synthetic-h` also stands in for Gisette (6,000 x 5,000, not here).
 */
import { join } from 'node:path';
import { adultSchema } from '../../src/data/adult.js';
import { checkRowNormBound, selectRows, type Dataset } from '../../src/data/dataset.js';
import { loadDataset } from '../../src/data/node/read.js';
import { addIntercept, normalizeRows } from '../../src/data/transforms.js';
import { seededRng } from '../../src/random/rng.js';
import { classificationRows, classificationStructure, type ClassificationRecipe } from './classification-recipe.js';

export const DATA_SETS = ['adult', 'synthetic-l', 'synthetic-h'] as const;
export type DataSetName = (typeof DATA_SETS)[number];

export interface ExperimentData {
  readonly name: DataSetName;
  readonly train: Dataset;
  readonly validation: Dataset;
  readonly test: Dataset;
  /** Public bound on every row's L2 norm (sqrt(2) rounded up). */
  readonly rowNormBound: number;
  /** One sentence on where the rows come from. */
  readonly description: string;
}

interface SyntheticSpec {
  readonly recipe: ClassificationRecipe;
  readonly seed: number;
  readonly train: number;
  readonly what: string;
}

const SYNTHETIC: Record<Exclude<DataSetName, 'adult'>, SyntheticSpec> = {
  'synthetic-l': {
    recipe: { features: 40, informative: 30, redundant: 2, classSep: 2, clustersPerClass: 2, flipY: 0.01 },
    seed: 1000,
    train: 8000,
    what: "stand-in for Synthetic-L: the recipe of dpml-benchmark's `random` (make_classification, 40 features, 30 informative, 2 redundant, class_sep 2, 2 clusters per class, 1 % labels redrawn), dpfit's generator",
  },
  'synthetic-h': {
    recipe: { features: 2000, informative: 10, redundant: 0, classSep: 2, clustersPerClass: 2, flipY: 0.01 },
    seed: 1,
    train: 1600,
    what: "stand-in for Synthetic-H (and Gisette): the recipe of dpml-benchmark's `random_highdim` (make_classification, 2,000 features, 10 informative, class_sep 2, 2 clusters per class, 1 % labels redrawn), dpfit's generator",
  },
};

/** Unit rows, then a bias column 1 (`003` Sec. 5), with the public bound and its check. */
function unitRowsWithBias(data: Dataset): { dataset: Dataset; rowNormBound: number } {
  const { dataset, rowNormBound } = addIntercept(normalizeRows(data), { rowNormBound: 1 });
  checkRowNormBound(dataset, rowNormBound as number);
  return { dataset, rowNormBound: rowNormBound as number };
}

const VALIDATION_ROWS = 2000;
const TEST_ROWS = 2000;

function syntheticData(name: Exclude<DataSetName, 'adult'>): ExperimentData {
  const spec = SYNTHETIC[name];
  const rng = seededRng(spec.seed);
  const structure = classificationStructure(spec.recipe, rng);
  const d = spec.recipe.features;
  const featureNames = Array.from({ length: d }, (_, j) => `x${j}`);
  const part = (n: number) => unitRowsWithBias({ ...classificationRows(structure, n, rng), n, d, featureNames });
  const train = part(spec.train);
  const validation = part(VALIDATION_ROWS);
  const test = part(TEST_ROWS);
  return {
    name,
    train: train.dataset,
    validation: validation.dataset,
    test: test.dataset,
    rowNormBound: Math.max(train.rowNormBound, validation.rowNormBound, test.rowNormBound),
    description: `${spec.what}; ${spec.train} private training rows, ${VALIDATION_ROWS} PUBLIC validation rows and ${TEST_ROWS} test rows from the same population (seed ${spec.seed}); ${d} features + bias, unit rows.`,
  };
}

async function adultData(dir: string): Promise<ExperimentData> {
  const schema = adultSchema();
  const trainPrepared = await loadDataset(join(dir, 'adult.data'), schema);
  const testPrepared = await loadDataset(join(dir, 'adult.test'), schema);
  const rows = (parity: number) => Array.from({ length: testPrepared.dataset.n }, (_, i) => i).filter((i) => i % 2 === parity);
  const train = trainPrepared.dataset;
  const validation = selectRows(testPrepared.dataset, rows(0)); // 1st, 3rd, ... rows of adult.test
  const test = selectRows(testPrepared.dataset, rows(1)); // 2nd, 4th, ... rows
  return {
    name: 'adult',
    train,
    validation,
    test,
    rowNormBound: Math.max(trainPrepared.rowNormBound, testPrepared.rowNormBound),
    description: `UCI Adult: ${train.n} private training rows (adult.data); adult.test split by row position into ${validation.n} PUBLIC validation rows (odd rows) and ${test.n} test rows (even rows); ${train.d} features (shipped public schema, unit rows + bias, C = sqrt(2)).`,
  };
}

/** The named data set (`dir`: Adult's directory, e.g. data/adult; unused for the synthetic ones). */
export async function loadExperimentData(name: DataSetName, dir: string): Promise<ExperimentData> {
  if (name === 'adult') return adultData(dir);
  if (name === 'synthetic-l' || name === 'synthetic-h') return syntheticData(name);
  throw new Error(`--data must be one of ${DATA_SETS.join(', ')}, got ${String(name)}`);
}
