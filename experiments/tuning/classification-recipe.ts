/**
 * Synthetic binary classification by the recipe of scikit-learn's `make_classification`, the
 * generator that Iyengar et al.'s benchmark (sunblaze-ucb/dpml-benchmark, `common/datasets.py`,
 * selected in `gridsearch.py` as the data sets `random` and `random_highdim`) calls. scikit-learn
 * is not installed here and its random draws could not be reproduced anyway: this is the same
 * recipe with dpfit's seeded generator, i.e. a data set from the same family, not the same rows.
 *
 * The recipe (scikit-learn's documentation of `make_classification`): 2 x `clustersPerClass`
 * Gaussian clusters, cluster k of class k mod 2, centred on distinct random vertices of the
 * hypercube [-classSep, classSep]^informative; a row of cluster k is z A_k + c_k with z ~ N(0, I)
 * and A_k uniform on [-1, 1]^(informative x informative) (one per cluster); `redundant` features
 * are the informative ones times a uniform [-1, 1] matrix B; the remaining features are N(0, 1)
 * noise; a share `flipY` of the labels is replaced by a uniformly random class. scikit-learn's
 * defaults: 2 clusters per class, flipY 0.01, 2 redundant features. (Its final shuffles of rows
 * and columns change nothing for a linear model on unit rows; clusters here take rows in turn.)
 *
 * The structure (centroids, A_k, B) is drawn once; any number of rows can then be drawn from it,
 * so that the public validation and test sets come from the same population as the training set.
 */
import { fillGaussian } from '../../src/random/continuous.js';
import type { Rng } from '../../src/random/rng.js';

export interface ClassificationRecipe {
  readonly features: number;
  readonly informative: number;
  readonly redundant: number;
  readonly classSep: number;
  readonly clustersPerClass: number;
  readonly flipY: number;
}

export interface ClassificationStructure {
  readonly recipe: ClassificationRecipe;
  /** One centroid (length informative) per cluster. */
  readonly centroids: readonly Float64Array[];
  /** One informative x informative matrix per cluster, row-major. */
  readonly transforms: readonly Float64Array[];
  /** informative x redundant, row-major. */
  readonly redundantMap: Float64Array;
}

const uniformMatrix = (rng: Rng, rows: number, columns: number) => Float64Array.from({ length: rows * columns }, () => 2 * rng.nextDouble() - 1);

/** Draws the clusters' centroids and transforms and the redundant features' map. */
export function classificationStructure(recipe: ClassificationRecipe, rng: Rng): ClassificationStructure {
  const clusters = 2 * recipe.clustersPerClass;
  if (recipe.informative < 2 || 2 ** recipe.informative < clusters) throw new Error('too few informative features for distinct vertices');
  if (recipe.informative + recipe.redundant > recipe.features) throw new Error('informative + redundant > features');
  const seen = new Set<string>();
  const centroids: Float64Array[] = [];
  while (centroids.length < clusters) {
    const bits = Array.from({ length: recipe.informative }, () => (rng.nextDouble() < 0.5 ? 0 : 1));
    const key = bits.join('');
    if (seen.has(key)) continue;
    seen.add(key);
    centroids.push(Float64Array.from(bits, (b) => (2 * b - 1) * recipe.classSep));
  }
  const transforms = centroids.map(() => uniformMatrix(rng, recipe.informative, recipe.informative));
  return { recipe, centroids, transforms, redundantMap: uniformMatrix(rng, recipe.informative, recipe.redundant) };
}

/** n rows (row-major x, labels 0/1) from the structure; row i belongs to cluster i mod (2 x clustersPerClass). */
export function classificationRows(structure: ClassificationStructure, n: number, rng: Rng): { x: Float64Array; y: Float64Array } {
  const { recipe, centroids, transforms, redundantMap } = structure;
  const { features: d, informative: m, redundant: r } = recipe;
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  const z = new Float64Array(m);
  const noise = new Float64Array(d - m - r);
  for (let i = 0; i < n; i++) {
    const k = i % centroids.length;
    const row = x.subarray(i * d, (i + 1) * d);
    fillGaussian(rng, z);
    const a = transforms[k];
    for (let j = 0; j < m; j++) {
      let s = centroids[k][j];
      for (let l = 0; l < m; l++) s += z[l] * a[l * m + j];
      row[j] = s;
    }
    for (let j = 0; j < r; j++) {
      let s = 0;
      for (let l = 0; l < m; l++) s += row[l] * redundantMap[l * r + j];
      row[m + j] = s;
    }
    if (noise.length > 0) row.set(fillGaussian(rng, noise), m + r);
    y[i] = k % 2;
    if (rng.nextDouble() < recipe.flipY) y[i] = rng.nextDouble() < 0.5 ? 0 : 1;
  }
  return { x, y };
}
