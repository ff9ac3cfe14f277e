/**
 * `000` Figs. 1-2 (Sec. 6, App. C, App. D) in two modes, side by side.
 *
 * Two data-holding nodes train ridge regression (`000` eq. 9, labels +-1, mu_reg = 0.03) by
 * `000` eq. (79), theta_{t+1} = theta_t - tau (g_1 + g_2) / 2, each node privatising its own
 * gradient: RGM against clipped GD at thresholds c/10, c, 10c (c_i = max_j ||grad f_ij(theta_i*)||
 * at node i's OWN local optimum, App. C.1, computed on the private data in both modes), and
 * non-private GD. Metric: F(theta_t) - F*, F = (f_1 + f_2) / 2, F* from the exact ridge solution.
 * Splits (`000` Sec. 6): 'random'; 'label' (50 random rows per node, then all positives to node 1);
 * 'bias' (node 2's targets y + x.B: its local optimum moves by B; ||B|| = 2 ||theta*||, a seeded
 * random direction). 3 runs (seeds) per configuration (1 with --quick); bands are min/max.
 *
 * --mode paper — `000`'s own settings, NOT PRIVATE (App. C says so itself: "this specific procedure
 * of choosing the hyperparameters does not strictly guarantee differential privacy"). Simulated
 * in this script (the protocol refuses such settings), every choice from App. C:
 *   - step size tau = 0.5 / max_i lambda_max(A^(i)), A^(i) = X_i^T X_i / n_i + mu I (App. C, below eq. 79);
 *   - clipping: per-example gradients grad f_ij = x_j (x_j.theta - y_j) + mu theta (eq. 80) clipped
 *     to c_i (eq. 81), Gaussian noise of variance sigma_i^2 = alpha c_i^2 / (epsilon N^2) (eq. 82)
 *     per coordinate. Eq. 82 has no T: epsilon is the Renyi-DP of ONE released gradient, not of
 *     the run (T = 100 released gradients compose to 100 epsilon);
 *   - RGM (eq. 83): R_c just high enough that no row is clipped, C = A~ (= A^(i), nothing clipped)
 *     and rho = 1/2 (Sec. 6); eta from eq. (11) without constant factors (App. C.2: "we omit constant
 *     factors when estimating eta"): eta = max_j ||x_j|| ||A~^-1 x_j|| / (rho n) — eq. (11)'s
 *     ||A_0 A~^-1|| = ||x_0|| ||A~^-1 x_0|| evaluated on the data, with A~^-1 <= rho^-1 C^-1 and
 *     without eq. (10)'s sqrt(6) (Prop. 1 would give sqrt(6) R_c^2 / (rho n));
 *     R_rel = eta ||b_i|| + 2 max_j ||x_j y_j|| / n (App. C.2, with the separate bound ||b_i||);
 *     gamma from Thm. 1 eq. (5) at alpha = 2 and the per-gradient epsilon (as eq. 82), and
 *     sigma^2 = gamma eta^-2 [1 - eta (alpha - 1)] R_rel^2 (Thm. 1); noise N(0, (gamma |g|^2 + sigma^2) I).
 *     PTR is not run (with C = A~ it passes; Sec. 6 quotes delta = exp(-epsilon Delta) ~ 1e-34).
 *
 * --mode proven — dpfit's guarantees, every run through the protocol's messages (`inProcessClient`,
 * the same code as `dpfit node serve` + `dpfit federate`); epsilon is the Renyi DP at order 2 of
 * the WHOLE run per node (PTR + T steps), delta = 1e-6 (PTR's delta and the reported delta):
 *   - RGM clips rows with C = I and R_c = the public row-norm bound (no row clipped), B = R_c x the
 *     public label bound; each node proposes rho_i = 0.8 lambda_min(A~_i) of its OWN A~_i with C = I
 *     (computed on its data, as App. C sets its parameters: not a public rho); eta =
 *     sqrt(6 kappa_C) R_c^2 / (rho n) (src/learners/rgm/rgm-gd.ts, no constant omitted); PTR's
 *     Laplace test gets half of epsilon (ptrEpsilonFraction 0.5); gamma is calibrated by dpfit's
 *     RDP accountant on the composed event (PTR + T gridded RGM steps);
 *   - clipping: dpfit's DP-GD node (add-the-regulariser-after-clipping), noise calibrated by the RDP
 *     accountant for the whole run;
 *   - one public step size for every method: tau = 1 / max_i L_i with L_i = R_i^2 + mu.
 *
 * Gap decomposition (--mode both or proven): proven RGM re-simulated in this script with dpfit's
 * own calibration (`planRgmGd`: eta, R_rel, gamma from the accountant) and Gaussian noise
 * N(0, (gamma |g|^2 + sigma^2) I), then one factor switched to the paper's at a time (step size;
 * C = A~; rho = 1/2; eta's constants sqrt(6) and kappa_C; PTR's share of epsilon; per-gradient
 * epsilon), and all together; plus clip c through the protocol with the paper's step size / the
 * per-gradient epsilon. Tabulated as final F - F* per change.
 *
 * Data:
 *   - "HIGGS-like" (d = 28, 1e6 rows as the paper's truncated HIGGS; 2e5 with --quick): 21 low-level
 *     kinematic-like features (14 Gaussian, 7 log-normal momenta) and 7 high-level "masses" (norms
 *     of feature pairs), correlated (Toeplitz 0.3^|i-j|), ~53 % positives, a weak linear signal
 *     (~64-65 % linear accuracy, as on HIGGS), features clipped to public ranges, rows normalised.
 *   - "ijcnn1-like" (N = 141,691, d = 22 as ijcnn1 in `000` Sec. 6): like LIBSVM's ijcnn1, features
 *     1-10 one-hot (a 10-level categorical with skewed frequencies 0.75^k) and 11-22 continuous in
 *     [-1, 1] (tanh of an AR(1) Gaussian sequence with correlation 0.5 and seeded offsets); labels
 *     from a non-linear score (linear part + category effects + two products of features + logistic
 *     noise) thresholded at its 90.3 % quantile, so exactly ~9.7 % positives (ijcnn1's balance). Rows
 *     are not normalised (as ijcnn1): public row-norm bound sqrt(13).
 *   - UCI Adult (numeric columns with the public bounds of dpfit's shipped Adult schema, rows
 *     normalised, an intercept, labels +-1), read from --adult DIR (default data/adult, else
 *     /work/shared/datasets/adult); skipped when absent. Tests never use it.
 * T = 100 steps for the synthetic sets and 25 for Adult (RGM's RDP grows with eta^2 d per step;
 * Adult has only ~16 000 rows per node), the same T in both modes.
 * Figures: Fig. 1 = the three splits at epsilon 0.1 per dataset; Fig. 2 (App. D) = HIGGS-like at
 * epsilon 1e-2 and ijcnn1-like at 1e-3, random split.
 *
 * Time (2-CPU machine): the full HIGGS-like run (1e6 rows, 3 seeds, T = 100, --mode both) in
 * 5.5 min, ijcnn1-like 41 s. What makes 1e6 rows fit, without changing what is computed: the
 * paper-mode clipped sum starts from each node's raw Gram (G theta - X^T y + n mu theta) and
 * corrects only the clipped rows, with the margins and updates by dpfit's SIMD kernels (rows
 * copied into a feature memory), and skips the pass when no row can be clipped; App. C's eta and
 * the C = A~ clip radius come from one Cholesky factor per node and one scan of the rows, shared
 * by the paper runs and every decomposition variant; the quadratics are formed without
 * `clipAndAggregate`'s per-row solve by C = I (bit for bit the same sums); the node's DP-GD caches
 * its per-row clip thresholds. Paper-mode finals agree with the per-example loop to ~1e-13.
 *
 * Run: node --import tsx experiments/federated-rgm.ts [--quick] [--mode paper|proven|both]
 *        [--data higgs,ijcnn1,adult] [--adult DIR] [--out DIR]
 * (default DIR experiments/out/federated-rgm, gitignored): prints the tables, writes
 * federated-fig1-<data>.svg/.png, federated-fig2.svg/.png, results.md and results.json.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADULT_SCHEMA_JSON, normalizeAdultCopy } from '../src/data/adult.js';
import { writeFileAtomic } from '../src/data/node/atomic-write.js';
import { loadDataset } from '../src/data/node/read.js';
import { parseSchema } from '../src/data/schema/parse.js';
import { twoPartySplit, type TwoPartySplitKind } from '../src/data/synthetic.js';
import type { Dataset } from '../src/data/dataset.js';
import { InMemoryLedger } from '../src/accounting/budget/rule.js';
import { federate, type FederateOptions } from '../src/federated/coordinator.js';
import { inProcessClient } from '../src/federated/in-process.js';
import { FederatedNode, type NodeData } from '../src/federated/node.js';
import { pencilMinEigenvalue } from '../src/learners/rgm/propose-test-release.js';
import { allocateFeatures, claimSlot, featureMemoryOf, kernelsFor, releaseSlot, WASM_BLOCK } from '../src/learners/glm/kernels/feature-memory.js';
import { planRgmGd, requireClipMatrix } from '../src/learners/rgm/rgm-gd.js';
import { choleskyFactor, choleskySolve, solveSpd } from '../src/math/linear-algebra.js';
import { symmetricEigen } from '../src/math/symmetric-eigen.js';
import { fillGaussian } from '../src/random/continuous.js';
import { seededRng, type Rng } from '../src/random/rng.js';
import { lineBandChart, renderVegaLite, type BandRow } from '../src/report/vega-chart.js';

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const QUICK = args.includes('--quick');
const MODE = option('--mode') ?? 'both';
if (!['paper', 'proven', 'both'].includes(MODE)) throw new Error(`--mode must be paper, proven or both, got ${MODE}`);
const MODES = (MODE === 'both' ? ['paper', 'proven'] : [MODE]) as ('paper' | 'proven')[];
const DATA = (option('--data') ?? 'higgs,ijcnn1,adult').split(',');
const OUT = option('--out') ?? join('experiments', 'out', 'federated-rgm');
const MU = 0.03;
const ORDER = 2;
const DELTA = 1e-6;
const SEEDS = QUICK ? [1] : [1, 2, 3];
const started = performance.now();
const log = (line: string) => process.stdout.write(`${line}\n`);
const PAPER = "paper's settings (NOT PRIVATE)";
const PROVEN = 'proven (private)';

// ---------------------------------------------------------------------------------------------
// Data

/** UCI Adult, numeric columns only (public bounds of the shipped schema), rows normalised, intercept; labels +-1. */
async function adult(): Promise<Dataset | undefined> {
  const dir = option('--adult') ?? (existsSync(join('data', 'adult', 'adult.data')) ? join('data', 'adult') : '/work/shared/datasets/adult');
  if (!existsSync(join(dir, 'adult.data'))) return undefined;
  const full = ADULT_SCHEMA_JSON as unknown as { provenance: unknown; csv: unknown; columns: { name: string; type: string; encode?: string }[] };
  const columns = full.columns.map((c) => {
    if (c.type === 'categorical') return { name: c.name, type: 'ignore' };
    if (c.type === 'numeric') {
      const { encode: _encode, ...rest } = c as Record<string, unknown>;
      return rest;
    }
    return c;
  });
  const schema = parseSchema({ version: 1, provenance: full.provenance, csv: full.csv, columns, rowTransform: 'normalize', intercept: true });
  // A copy with an added header line (as /work/shared/datasets/adult) is normalised as `dpfit data fetch` does, into a temporary file.
  const normalised = normalizeAdultCopy('adult.data', readFileSync(join(dir, 'adult.data')));
  let path = join(dir, 'adult.data');
  if (normalised.changes.length > 0) {
    path = join(mkdtempSync(join(tmpdir(), 'dpfit-adult-')), 'adult.data');
    writeFileSync(path, normalised.bytes);
  }
  const prepared = await loadDataset(path, schema);
  const d = prepared.dataset;
  return { ...d, y: d.y.map((v) => (v > 0 ? 1 : -1)), featureNames: d.featureNames ?? [] };
}
/** The HIGGS-like synthetic (file comment). Rows normalised to norm <= 1 after public clipping. */
function higgsLike(n: number, rng: Rng): Dataset {
  const d = 28;
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  const z = new Float64Array(21);
  const w = new Float64Array(d);
  fillGaussian(seededRng(424242), w, 1); // the true direction (fixed, public to no one)
  const raw = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    fillGaussian(rng, z, 1);
    // Toeplitz 0.3^|i-j| correlation by an AR(1) recursion.
    for (let k = 1; k < 21; k++) z[k] = 0.3 * z[k - 1] + Math.sqrt(1 - 0.09) * z[k];
    for (let k = 0; k < 14; k++) raw[k] = z[k];
    for (let k = 14; k < 21; k++) raw[k] = Math.exp(0.5 * z[k]) - Math.exp(0.125); // centred log-normal momenta
    for (let m = 0; m < 7; m++) raw[21 + m] = Math.hypot(raw[2 * m], raw[2 * m + 1]) - 1.2533; // centred "masses"
    let margin = 0;
    let norm = 0;
    for (let k = 0; k < d; k++) {
      // Public clipping ranges of the generator: Gaussian-like features to [-4, 4].
      const v = Math.max(-4, Math.min(4, raw[k])) / 4;
      raw[k] = v;
      margin += w[k] * v;
      norm += v * v;
    }
    const scale = Math.max(1, Math.sqrt(norm));
    for (let k = 0; k < d; k++) x[i * d + k] = raw[k] / scale;
    const p = 1 / (1 + Math.exp(-(0.9 * margin + 0.12)));
    y[i] = rng.nextDouble() < p ? 1 : -1;
  }
  return { x, y, n, d, featureNames: Array.from({ length: d }, (_, k) => `f${k + 1}`) };
}

// ---------------------------------------------------------------------------------------------
// The objective

/**
 * A = X^T X / n + mu I and b = X^T y / n of one node: the exact quadratic of f_i, bit for bit as
 * the node's non-private path forms it (`clipAndAggregate` with C = I and nothing clipped: the
 * same sums in the same order, without its per-row solve by C's identity factor). Also the raw
 * sums G = X^T X and X^T y, which the paper-mode clipping loop starts from.
 */
function quadratic(data: Dataset): { a: Float64Array; b: Float64Array; gram: Float64Array; xty: Float64Array } {
  const { n, d } = data;
  const x = data.x as Float64Array;
  const y = data.y as Float64Array;
  const gram = new Float64Array(d * d);
  const xty = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    const o = i * d;
    const yi = y[i];
    for (let r = 0; r < d; r++) {
      const xr = x[o + r];
      xty[r] += xr * yi;
      const rd = r * d;
      for (let c = 0; c <= r; c++) gram[rd + c] += xr * x[o + c];
    }
  }
  const a = new Float64Array(d * d);
  const b = new Float64Array(d);
  for (let r = 0; r < d; r++) {
    b[r] = xty[r] / n;
    for (let c = 0; c <= r; c++) {
      const v = gram[r * d + c] / n + (r === c ? MU : 0);
      a[r * d + c] = v;
      a[c * d + r] = v;
      gram[c * d + r] = gram[r * d + c];
    }
  }
  return { a, b, gram, xty };
}

/** c_i = max_j ||x_j (x_j . theta - y_j)|| at theta (the per-example gradient of the data term). */
function maxGradientNorm(data: Dataset, theta: Float64Array): number {
  const { n, d, x, y } = data;
  let max = 0;
  for (let i = 0; i < n; i++) {
    let dot = 0;
    let norm = 0;
    for (let k = 0; k < d; k++) {
      dot += x[i * d + k] * theta[k];
      norm += x[i * d + k] ** 2;
    }
    max = Math.max(max, Math.abs(dot - y[i]) * Math.sqrt(norm));
  }
  return max;
}

const rowNorm = (data: Dataset) => {
  let max = 0;
  for (let i = 0; i < data.n; i++) {
    let s = 0;
    for (let k = 0; k < data.d; k++) s += data.x[i * data.d + k] ** 2;
    max = Math.max(max, Math.sqrt(s));
  }
  return max;
};

/** The ijcnn1-like synthetic (file comment): N = 141,691, d = 22, ~9.7 % positives. */
function ijcnn1Like(n: number, rng: Rng): Dataset {
  const d = 22;
  const x = new Float64Array(n * d);
  const score = new Float64Array(n);
  const gen = seededRng(2001); // the generator's fixed (public to no one) parameters
  const offsets = new Float64Array(12);
  fillGaussian(gen, offsets, 0.3);
  const w = new Float64Array(12);
  fillGaussian(gen, w, 1);
  const catEffect = new Float64Array(10);
  fillGaussian(gen, catEffect, 1);
  const catCdf: number[] = [];
  let total = 0;
  for (let k = 0; k < 10; k++) total += 0.75 ** k;
  let acc = 0;
  for (let k = 0; k < 10; k++) catCdf.push((acc += 0.75 ** k / total));
  const z = new Float64Array(12);
  for (let i = 0; i < n; i++) {
    const u = rng.nextDouble();
    const cat = Math.min(9, catCdf.findIndex((p) => u < p) < 0 ? 9 : catCdf.findIndex((p) => u < p));
    x[i * d + cat] = 1;
    fillGaussian(rng, z, 1);
    for (let k = 1; k < 12; k++) z[k] = 0.5 * z[k - 1] + Math.sqrt(0.75) * z[k];
    let s = catEffect[cat];
    for (let k = 0; k < 12; k++) {
      const v = Math.tanh(0.8 * z[k] + offsets[k]);
      x[i * d + 10 + k] = v;
      s += w[k] * v;
    }
    s += 3 * x[i * d + 10] * x[i * d + 11] - 2 * x[i * d + 12] * x[i * d + 13];
    const v = rng.nextDouble();
    score[i] = s + Math.log(v / (1 - v)); // logistic noise
  }
  const threshold = Float64Array.from(score).sort()[Math.floor(0.903 * n)];
  const y = Float64Array.from(score, (s) => (s > threshold ? 1 : -1));
  return { x, y, n, d, featureNames: Array.from({ length: d }, (_, k) => `f${k + 1}`) };
}

const eigenRange = (a: Float64Array, d: number) => {
  const { values } = symmetricEigen(Float64Array.from(a), d);
  return { min: Math.min(...values), max: Math.max(...values) };
};

// ---------------------------------------------------------------------------------------------
// One configuration

type DataName = 'higgs' | 'ijcnn1' | 'adult';
const DATA_LABEL: Record<DataName, string> = { higgs: 'HIGGS-like', ijcnn1: 'ijcnn1-like', adult: 'Adult' };

interface Config {
  readonly figure: 'fig1' | 'fig2';
  readonly dataset: DataName;
  readonly split: TwoPartySplitKind;
  readonly epsilon: number;
  readonly steps: number;
}
const panelOf = (c: Config, mode: string) => `${DATA_LABEL[c.dataset]}, ${c.split}, eps ${c.epsilon} — ${mode === 'paper' ? PAPER : PROVEN}`;

const METHODS = ['non-private GD', 'RGM', 'clip c/10', 'clip c', 'clip 10c'] as const;

interface RunResult {
  readonly mode: 'paper' | 'proven';
  readonly method: string;
  readonly seed: number;
  readonly gaps: number[];
  readonly status: string;
  readonly privacy: { node: string; epsilon: number; delta: number; guarantee: string }[];
}

/** Everything a seed of a configuration shares across modes: the split, F*, the thresholds c_i. */
interface Setup {
  readonly parties: [Dataset, Dataset];
  readonly labelBounds: number[];
  readonly bound: number;
  readonly quadratics: { a: Float64Array; b: Float64Array; gram: Float64Array; xty: Float64Array }[];
  readonly gap: (theta: ArrayLike<number>) => number;
  readonly c: number[];
  readonly localOptima: Float64Array[];
  /** Per node: squared row norms, the largest row norm and |y| (the paper-mode clipping loop's skip test). */
  readonly rows: { norm2: Float64Array; maxNorm: number; maxAbsY: number }[];
  /** Per node, computed once when first needed: max_j ||x_j|| ||A~^-1 x_j||, max_j ||x_j y_j|| and max_j x_j^T A~^-1 x_j. */
  readonly inverseScan: (i: number) => { maxRel: number; maxB: number; maxQ: number };
}

/** Per dataset: the row-norm bound and the unbiased quadratic (the bias split's scale), computed once. */
const baseCache = new WeakMap<Dataset, { bound: number; unbiasedOptimum?: Float64Array }>();

/**
 * The party's rows copied into a feature memory (`allocateFeatures`): dpfit's clipped sums then
 * take their SIMD path (the same numbers as the JavaScript kernels, `per-example.ts`).
 */
function inFeatureMemory(p: Dataset): Dataset {
  const x = allocateFeatures(p.n, p.d) as Float64Array;
  x.set(p.x);
  return { ...p, x };
}

function setup(config: Config, base: Dataset, seed: number): Setup {
  const d = base.d;
  let cached = baseCache.get(base);
  if (cached === undefined) baseCache.set(base, (cached = { bound: Math.max(rowNorm(base), 1e-12) }));
  // Public bounds: the row-norm bound of the dataset; labels are +-1, plus |x.B| <= R ||B|| for the biased node.
  const bound = cached.bound;
  const rng = seededRng(1000 * seed + 7);
  let bias: Float64Array | undefined;
  if (config.split === 'bias') {
    // The global optimum of the unbiased problem gives the bias's scale.
    if (cached.unbiasedOptimum === undefined) {
      const unbiased = quadratic(base);
      cached.unbiasedOptimum = solveSpd(unbiased.a, d, unbiased.b);
    }
    const unbiasedOptimum = cached.unbiasedOptimum;
    const direction = new Float64Array(d);
    fillGaussian(rng, direction, 1);
    const scale = (2 * Math.hypot(...unbiasedOptimum)) / Math.hypot(...direction);
    bias = direction.map((v) => v * scale);
  }
  const split = twoPartySplit(base, { kind: config.split, rng, ...(bias === undefined ? {} : { bias }) });
  const parties = split.parties.map(inFeatureMemory) as [Dataset, Dataset];
  const labelBounds = parties.map((_, i) => (bias !== undefined && i === 1 ? 1 + bound * Math.hypot(...bias) : 1));
  const quadratics = parties.map(quadratic);
  const a = quadratics[0].a.map((v, k) => (v + quadratics[1].a[k]) / 2);
  const b = quadratics[0].b.map((v, k) => (v + quadratics[1].b[k]) / 2);
  const optimum = solveSpd(a, d, b);
  const gap = (theta: ArrayLike<number>) => {
    // F(theta) - F* = 1/2 (theta - theta*)^T A (theta - theta*) for the quadratic F.
    const e = Float64Array.from(theta, (v, k) => v - optimum[k]);
    let s = 0;
    for (let r = 0; r < d; r++) for (let c = 0; c < d; c++) s += e[r] * a[r * d + c] * e[c];
    return Math.max(s / 2, 1e-16);
  };
  const localOptima = quadratics.map((q) => solveSpd(q.a, d, q.b));
  const c = parties.map((p, i) => maxGradientNorm(p, localOptima[i]));
  const rows = parties.map((p) => {
    const norm2 = new Float64Array(p.n);
    let maxNorm = 0;
    let maxAbsY = 0;
    for (let j = 0; j < p.n; j++) {
      let s2 = 0;
      for (let k = 0; k < d; k++) s2 += p.x[j * d + k] * p.x[j * d + k];
      norm2[j] = s2;
      maxNorm = Math.max(maxNorm, Math.sqrt(s2));
      maxAbsY = Math.max(maxAbsY, Math.abs(p.y[j]));
    }
    return { norm2, maxNorm, maxAbsY };
  });
  const scans: ({ maxRel: number; maxB: number; maxQ: number } | undefined)[] = [undefined, undefined];
  const inverseScan = (i: number) => {
    const done = scans[i];
    if (done !== undefined) return done;
    // One Cholesky factor of A~ = A^(i) and a triangular solve per row: the numbers solveSpd gives row by row.
    const p = parties[i];
    const factor = choleskyFactor(quadratics[i].a, d);
    if (factor === null) throw new Error('A~ is not numerically positive definite');
    let maxRel = 0;
    let maxB = 0;
    let maxQ = 0;
    const row = new Float64Array(d);
    const solved = new Float64Array(d);
    for (let j = 0; j < p.n; j++) {
      for (let k = 0; k < d; k++) row[k] = p.x[j * d + k];
      choleskySolve(factor, d, row, solved);
      const xn = Math.hypot(...row);
      maxRel = Math.max(maxRel, xn * Math.hypot(...solved)); // ||x_j|| ||A~^-1 x_j|| = ||A_j A~^-1|| (eq. 11)
      maxB = Math.max(maxB, xn * Math.abs(p.y[j]));
      let q = 0;
      for (let k = 0; k < d; k++) q += row[k] * solved[k];
      maxQ = Math.max(maxQ, q);
    }
    return (scans[i] = { maxRel, maxB, maxQ });
  };
  return { parties, labelBounds, bound, quadratics, gap, c, localOptima, rows, inverseScan };
}

const IDENTITY = (d: number) => new Float64Array(d * d).map((_, k) => (k % (d + 1) === 0 ? 1 : 0));
/** dpfit's proposal: 0.8 lambda_min of each node's own A~ (C = I), computed on its data. */
const provenRho = (s: Setup, d: number) => s.quadratics.map((q) => 0.8 * pencilMinEigenvalue(q.a, IDENTITY(d), d));
const provenTau = (s: Setup) => 1 / (s.bound * s.bound + MU);
/** App. C (below eq. 79): tau = 0.5 / max_i lambda_max(A^(i)). */
const paperTau = (s: Setup, d: number) => 0.5 / Math.max(...s.quadratics.map((q) => eigenRange(q.a, d).max));

/** Proven mode: dpfit's protocol, its settings (file comment). */
async function provenRuns(config: Config, base: Dataset, s: Setup, seed: number, overrides: { epsilon?: number; learningRate?: number; methods?: readonly string[] } = {}): Promise<RunResult[]> {
  const results: RunResult[] = [];
  const d = base.d;
  const rho = provenRho(s, d);
  for (const method of overrides.methods ?? METHODS) {
    const nodes = s.parties.map(
      (p, i) =>
        new FederatedNode(
          { x: p.x, y: p.y, n: p.n, d, featureNames: base.featureNames ?? [], rowNormBound: s.bound, labelBound: s.labelBounds[i] } satisfies NodeData,
          new InMemoryLedger({ epsilon: Infinity, delta: 1e-3 }),
          { name: `node${i + 1}`, rng: seededRng(100 * seed + i) },
        ),
    );
    const gaps = [s.gap(new Float64Array(d))];
    const common = { steps: config.steps, regularization: MU, learningRate: overrides.learningRate ?? provenTau(s), onStep: (_t: number, _T: number, theta: Float64Array) => gaps.push(s.gap(theta)) };
    const target = { epsilon: overrides.epsilon ?? config.epsilon, delta: DELTA, rdpOrder: ORDER };
    const factor = method === 'clip c/10' ? 0.1 : method === 'clip 10c' ? 10 : 1;
    const options: FederateOptions =
      method === 'non-private GD'
        ? { method: 'nonprivate', ...common }
        : method === 'RGM'
          ? { method: 'rgm', ...common, ...target, featureClip: s.bound, rho, ptrEpsilonFraction: 0.5 }
          : { method: 'dpgd', ...common, ...target, clipNorm: s.c.map((v) => v * factor) };
    let result;
    try {
      result = await federate(nodes.map((n) => inProcessClient(n)), options);
    } catch (error) {
      results.push({ mode: 'proven', method, seed, gaps: [], status: `refused: ${(error as Error).message}`, privacy: [] });
      continue;
    }
    results.push({
      mode: 'proven',
      method,
      seed,
      gaps: result.status === 'trained' ? gaps : [],
      status: result.status === 'trained' ? 'trained' : `stopped: ${result.message}`,
      privacy: result.privacy.nodes.map((n) => ({ node: n.node, epsilon: n.privacy.epsilon, delta: n.privacy.delta, guarantee: n.privacy.guarantee })),
    });
  }
  return results;
}

/** RGM's gamma from `000` Thm. 1 eq. (5) at order alpha for a target epsilon; undefined below its floor. */
function theorem1Gamma(eta: number, d: number, alpha: number, epsilon: number): number | undefined {
  const denominator = 1 - eta * (alpha - 1) * (2 + eta);
  const k = d * (2 + eta) ** 2 * (1 + eta) ** 2;
  const room = epsilon * denominator - (alpha * eta * eta * k) / 2;
  return denominator > 0 && room > 0 ? (alpha * eta * eta) / (2 * room) : undefined;
}

/**
 * sum_j clip_{c}(x_j (x_j . theta - y_j) + mu theta) (`000` eqs. 80-81) into out, computed as
 * (G theta - X^T y) + n mu theta + sum over the clipped rows of (s_j - 1)(x_j r_j + mu theta),
 * s_j = c / ||grad f_j||: the same sum, re-associated (equal up to rounding), with one pass of
 * margins over the rows (||grad f_j||^2 = r_j^2 ||x_j||^2 + 2 r_j mu x_j . theta + mu^2 ||theta||^2)
 * and an update only for clipped rows. The pass is skipped when no row can be clipped:
 * ||grad f_j|| <= max ||x|| (max |y| + max ||x|| ||theta||) + mu ||theta|| <= c.
 */
function paperClippedSum(p: Dataset, q: { gram: Float64Array; xty: Float64Array }, rows: { norm2: Float64Array; maxNorm: number; maxAbsY: number }, theta: Float64Array, c: number, out: Float64Array): void {
  const { n, d } = p;
  const x = p.x as Float64Array;
  const y = p.y as Float64Array;
  const { gram, xty } = q;
  const norm2 = rows.norm2;
  let th2 = 0;
  for (let k = 0; k < d; k++) th2 += theta[k] * theta[k];
  const thn = Math.sqrt(th2);
  for (let r = 0; r < d; r++) {
    let v = -xty[r];
    for (let k = 0; k < d; k++) v += gram[r * d + k] * theta[k];
    out[r] = v + n * MU * theta[r];
  }
  if ((rows.maxNorm * (rows.maxAbsY + rows.maxNorm * thn) + MU * thn) * (1 + 1e-9) <= c) return;
  const c2 = c * c;
  const mu2th2 = MU * MU * th2;
  let scaleSum = 0;
  // Margins and the clipped rows' update by dpfit's SIMD kernels when the rows live in a feature memory and a slot is free.
  const info = featureMemoryOf(x, d);
  const kernels = info === undefined ? null : kernelsFor(info.memory);
  const slot = info === undefined || kernels === null ? -1 : claimSlot(info);
  if (info !== undefined && kernels !== null && slot >= 0) {
    try {
      const buffer = info.memory.buffer;
      const thetaPtr = slot * info.slotBytes;
      const zPtr = thetaPtr + 16 * d;
      const cPtr = zPtr + 8 * WASM_BLOCK;
      const partPtr = cPtr + 16 * WASM_BLOCK;
      new Float64Array(buffer, thetaPtr, d).set(theta);
      const z = new Float64Array(buffer, zPtr, WASM_BLOCK);
      const coef = new Float64Array(buffer, cPtr, WASM_BLOCK);
      const part = new Float64Array(buffer, partPtr, d);
      part.fill(0);
      for (let start = 0; start < n; start += WASM_BLOCK) {
        const m = Math.min(WASM_BLOCK, n - start);
        const ptr = info.xOffset + start * d * 8;
        kernels.margins64(ptr, d, thetaPtr, m, zPtr);
        let any = false;
        for (let k = 0; k < m; k++) {
          const dot = z[k];
          const r = dot - y[start + k];
          const g2 = r * r * norm2[start + k] + 2 * r * MU * dot + mu2th2;
          if (g2 <= c2) {
            coef[k] = 0;
            continue;
          }
          const s1 = c / Math.sqrt(g2) - 1;
          coef[k] = s1 * r;
          scaleSum += s1;
          any = true;
        }
        if (any) kernels.accumulate64(ptr, d, m, cPtr, partPtr);
      }
      for (let k = 0; k < d; k++) out[k] += part[k] + MU * theta[k] * scaleSum;
      return;
    } finally {
      releaseSlot(info, slot);
    }
  }
  for (let j = 0, o = 0; j < n; j++, o += d) {
    let e = 0;
    let f = 0;
    let k = 0;
    for (; k + 1 < d; k += 2) {
      e += x[o + k] * theta[k];
      f += x[o + k + 1] * theta[k + 1];
    }
    if (k < d) e += x[o + k] * theta[k];
    const dot = e + f;
    const r = dot - y[j];
    const g2 = r * r * norm2[j] + 2 * r * MU * dot + mu2th2;
    if (g2 <= c2) continue;
    const s1 = c / Math.sqrt(g2) - 1;
    const coef = s1 * r;
    for (let k2 = 0; k2 < d; k2++) out[k2] += coef * x[o + k2];
    scaleSum += s1;
  }
  for (let k = 0; k < d; k++) out[k] += MU * theta[k] * scaleSum;
}

/** Paper mode: `000` App. C simulated (file comment). NOT PRIVATE. */
function paperRuns(config: Config, base: Dataset, s: Setup, seed: number): RunResult[] {
  const d = base.d;
  const tau = paperTau(s, d); // App. C, eq. 79
  const alpha = ORDER;
  const eps = config.epsilon; // per released gradient (eq. 82 has no T)
  const results: RunResult[] = [];
  // RGM's parameters per node (App. C.2): C = A~ = A^(i) (nothing clipped), rho = 1/2, eta from eq. 11 without constants.
  const rgm = s.parties.map((p, i) => {
    const { b } = s.quadratics[i];
    const rho = 0.5;
    const { maxRel, maxB } = s.inverseScan(i);
    const eta = maxRel / (rho * p.n);
    const rRel = eta * Math.hypot(...b) + (2 * maxB) / p.n;
    const gamma = theorem1Gamma(eta, d, alpha, eps);
    const sigma2 = gamma === undefined ? NaN : (gamma / (eta * eta)) * (1 - eta * (alpha - 1)) * rRel * rRel;
    return { eta, rRel, gamma, sigma2 };
  });
  const noiseRng = seededRng(7919 * seed + 1);
  for (const method of METHODS) {
    if (method === 'RGM' && rgm.some((r) => r.gamma === undefined)) {
      results.push({ mode: 'paper', method, seed, gaps: [], status: `refused: Thm. 1 floor above epsilon (eta = ${rgm.map((r) => r.eta.toExponential(2)).join(', ')})`, privacy: [] });
      continue;
    }
    const factor = method === 'clip c/10' ? 0.1 : method === 'clip 10c' ? 10 : 1;
    const theta = new Float64Array(d);
    const gaps = [s.gap(theta)];
    const g = new Float64Array(d);
    const sum = new Float64Array(d);
    const noise = new Float64Array(d);
    for (let t = 0; t < config.steps; t++) {
      sum.fill(0);
      for (let i = 0; i < 2; i++) {
        const p = s.parties[i];
        const { a, b } = s.quadratics[i];
        if (method.startsWith('clip')) {
          // eq. 81: per-example gradients (eq. 80, regulariser included) clipped to c_i, then eq. 82's noise.
          const ci = s.c[i] * factor;
          paperClippedSum(p, s.quadratics[i], s.rows[i], theta, ci, g);
          fillGaussian(noiseRng, noise, Math.sqrt((alpha * ci * ci) / (eps * p.n * p.n)));
          for (let k = 0; k < d; k++) g[k] = g[k] / p.n + noise[k];
        } else {
          for (let r = 0; r < d; r++) {
            let v = -b[r];
            for (let k = 0; k < d; k++) v += a[r * d + k] * theta[k];
            g[r] = v;
          }
          if (method === 'RGM') {
            // eq. 83: N(0, (gamma |g|^2 + sigma^2) I).
            const { gamma, sigma2 } = rgm[i];
            let gn = 0;
            for (let k = 0; k < d; k++) gn += g[k] * g[k];
            fillGaussian(noiseRng, noise, Math.sqrt((gamma as number) * gn + sigma2));
            for (let k = 0; k < d; k++) g[k] += noise[k];
          }
        }
        for (let k = 0; k < d; k++) sum[k] += g[k] / 2;
      }
      for (let k = 0; k < d; k++) theta[k] -= tau * sum[k]; // eq. 79
      gaps.push(s.gap(theta));
    }
    results.push({ mode: 'paper', method, seed, gaps, status: 'trained (not private)', privacy: [] });
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// The gap between the modes, factor by factor

interface Variant {
  readonly name: string;
  readonly tau?: 'paper';
  readonly clipMatrix?: 'A~';
  readonly rho?: number;
  readonly dropSqrt6?: boolean;
  readonly dropKappa?: boolean;
  readonly ptrFree?: boolean;
  readonly perGradientEpsilon?: boolean;
}
const VARIANTS: Variant[] = [
  { name: 'proven (re-simulated with planRgmGd)' },
  { name: "step size: App. C's 0.5 / max lambda_max(A_i)", tau: 'paper' },
  { name: 'C = A~ (R_c: no row clipped; rho = 0.8, the proven rule under this C)', clipMatrix: 'A~' },
  { name: 'C = A~ and rho = 1/2 (rho = 1/2 alone, with C = I, fails PTR)', clipMatrix: 'A~', rho: 0.5 },
  { name: "eta without eq. 10's sqrt(6)", dropSqrt6: true },
  { name: 'C = A~ with its kappa_C factor dropped (rho = 0.8)', clipMatrix: 'A~', dropKappa: true },
  { name: "PTR's cost removed (its epsilon share 0.5 -> 1e-9; test not run)", ptrFree: true },
  { name: 'epsilon per released gradient (eq. 82), not per run', perGradientEpsilon: true },
  { name: 'all of the above (paper settings on dpfit accounting)', tau: 'paper', clipMatrix: 'A~', rho: 0.5, dropSqrt6: true, dropKappa: true, ptrFree: true, perGradientEpsilon: true },
];

/** Final F - F* of proven-mode RGM re-simulated with one factor switched (file comment). */
function variantRun(config: Config, s: Setup, d: number, seed: number, v: Variant): number | string {
  const plans = [];
  for (let i = 0; i < 2; i++) {
    const p = s.parties[i];
    const { a } = s.quadratics[i];
    let clip = requireClipMatrix(undefined, d);
    let featureClip = s.bound;
    let rho = provenRho(s, d)[i];
    if (v.clipMatrix === 'A~') {
      clip = requireClipMatrix(Float64Array.from(a), d);
      // R_c just high enough that no row is clipped under x^T C^-1 x <= R_c^2 (dpfit's clipping rule).
      const max = s.inverseScan(i).maxQ;
      featureClip = Math.sqrt(max) * (1 + 1e-9);
      rho = 0.8; // 0.8 x lambda_min of the pencil (A~, C) = 0.8
      if (v.dropKappa) clip = { ...clip, conditionNumber: 1 };
    }
    if (v.rho !== undefined) rho = v.rho;
    const bClip = s.bound * s.labelBounds[i]; // |x y| <= R x label bound: nothing clipped
    // dropSqrt6: eta and s scale with R_c^2, so R_c^2 / sqrt(6) in the plan removes eq. 10's sqrt(6).
    const planClip = v.dropSqrt6 ? featureClip / 6 ** 0.25 : featureClip;
    try {
      plans.push({
        plan: planRgmGd({
          n: p.n,
          d,
          steps: config.steps,
          regularization: MU,
          featureClip: planClip,
          bClip,
          clip,
          rho,
          epsilon: v.perGradientEpsilon ? config.epsilon * config.steps : config.epsilon,
          delta: DELTA,
          ptrEpsilonFraction: v.ptrFree ? 1e-9 : 0.5,
          ptrDeltaFraction: 0.5,
          rdpOrder: ORDER,
        }),
      });
    } catch (error) {
      return `refused (${(error as Error).message.slice(0, 60)}…)`;
    }
  }
  const tau = v.tau === 'paper' ? paperTau(s, d) : provenTau(s);
  const rng = seededRng(31337 * seed + 5);
  const theta = new Float64Array(d);
  const g = new Float64Array(d);
  const noise = new Float64Array(d);
  const sum = new Float64Array(d);
  for (let t = 0; t < config.steps; t++) {
    sum.fill(0);
    for (let i = 0; i < 2; i++) {
      const { a, b } = s.quadratics[i];
      const { plan } = plans[i];
      for (let r = 0; r < d; r++) {
        let v2 = -b[r];
        for (let k = 0; k < d; k++) v2 += a[r * d + k] * theta[k];
        g[r] = v2;
      }
      let gn = 0;
      for (let k = 0; k < d; k++) gn += g[k] * g[k];
      const { eta, rRel } = plan.sensitivity;
      const sigma2 = (plan.gamma * rRel * rRel) / (eta * eta); // sigma = sqrt(gamma) R_rel / eta (rgm-gd.ts)
      fillGaussian(rng, noise, Math.sqrt(plan.gamma * gn + sigma2));
      for (let k = 0; k < d; k++) sum[k] += (g[k] + noise[k]) / 2;
    }
    for (let k = 0; k < d; k++) theta[k] -= tau * sum[k];
  }
  return s.gap(theta);
}

// ---------------------------------------------------------------------------------------------
// Main

const quantile = (values: number[], q: number) => {
  const s = [...values].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(q * (s.length - 1) + 0.5))];
};
const fmt = (v: number | undefined) => (v === undefined || !Number.isFinite(v) ? '—' : v.toExponential(2));
const fmtOr = (v: number | undefined, otherwise: string) => (v === undefined || !Number.isFinite(v) ? otherwise : v.toExponential(2));

const datasets: Partial<Record<DataName, Dataset>> = {};
if (DATA.includes('higgs')) datasets.higgs = higgsLike(QUICK ? 200_000 : 1_000_000, seededRng(2024));
if (DATA.includes('ijcnn1')) datasets.ijcnn1 = ijcnn1Like(141_691, seededRng(2001));
if (DATA.includes('adult')) {
  const a = await adult();
  if (a === undefined) log('Adult is missing (give --adult DIR): its panels are skipped');
  else datasets.adult = a;
}
const STEPS: Record<DataName, number> = { higgs: QUICK ? 40 : 100, ijcnn1: QUICK ? 40 : 100, adult: 25 };
const configs: Config[] = [];
for (const name of ['ijcnn1', 'higgs', 'adult'] as const) {
  if (datasets[name] === undefined) continue;
  for (const split of ['random', 'label', 'bias'] as const) configs.push({ figure: 'fig1', dataset: name, split, epsilon: 0.1, steps: STEPS[name] });
}
// App. D / Fig. 2: HIGGS at epsilon 1e-2 (Fig. 1 left's setting), ijcnn1 at 1e-3.
if (datasets.higgs !== undefined) configs.push({ figure: 'fig2', dataset: 'higgs', split: 'random', epsilon: 1e-2, steps: STEPS.higgs });
if (datasets.ijcnn1 !== undefined) configs.push({ figure: 'fig2', dataset: 'ijcnn1', split: 'random', epsilon: 1e-3, steps: STEPS.ijcnn1 });

const all: { config: Config; results: RunResult[] }[] = [];
const decomposition: { config: Config; rows: { name: string; finals: (number | string)[] }[] }[] = [];
for (const config of configs) {
  const t0 = performance.now();
  const base = datasets[config.dataset] as Dataset;
  const results: RunResult[] = [];
  const decomp = VARIANTS.map((v) => ({ name: v.name, finals: [] as (number | string)[] }));
  const clipRows = [
    { name: 'clip c, proven (protocol)', finals: [] as (number | string)[] },
    { name: "clip c, App. C's step size", finals: [] as (number | string)[] },
    { name: 'clip c, epsilon per released gradient (x T)', finals: [] as (number | string)[] },
  ];
  const decompose = MODES.includes('proven') && config.figure === 'fig1' && config.split === 'random';
  for (const seed of SEEDS) {
    const s = setup(config, base, seed);
    if (MODES.includes('paper')) results.push(...paperRuns(config, base, s, seed));
    if (MODES.includes('proven')) results.push(...(await provenRuns(config, base, s, seed)));
    if (decompose) {
      VARIANTS.forEach((v, k) => decomp[k].finals.push(variantRun(config, s, base.d, seed, v)));
      const last = (r: RunResult[]) => (r[0].gaps.length > 0 ? r[0].gaps[r[0].gaps.length - 1] : r[0].status.slice(0, 60));
      clipRows[0].finals.push(last(results.filter((r) => r.mode === 'proven' && r.method === 'clip c' && r.seed === seed)));
      clipRows[1].finals.push(last(await provenRuns(config, base, s, seed, { learningRate: paperTau(s, base.d), methods: ['clip c'] })));
      clipRows[2].finals.push(last(await provenRuns(config, base, s, seed, { epsilon: config.epsilon * config.steps, methods: ['clip c'] })));
    }
  }
  all.push({ config, results });
  if (decompose) decomposition.push({ config, rows: [...decomp, ...clipRows] });
  log(`${DATA_LABEL[config.dataset]}, ${config.split}, eps ${config.epsilon}: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

// ---- tables
const finalOf = (r: RunResult) => (r.gaps.length === 0 ? undefined : r.gaps[r.gaps.length - 1]);
const table: string[] = ['| panel | method | final F - F* (median [min, max] over runs) | status |', '| --- | --- | --- | --- |'];
const summary: Record<string, Record<string, number | undefined>> = {};
for (const { config, results } of all) {
  for (const mode of MODES) {
    const panel = panelOf(config, mode);
    summary[panel] = {};
    for (const method of METHODS) {
      const runs = results.filter((r) => r.mode === mode && r.method === method);
      const finals = runs.map(finalOf).filter((v): v is number => v !== undefined);
      const status = runs.map((r) => r.status).find((x) => !x.startsWith('trained')) ?? runs[0]?.status ?? '';
      summary[panel][method] = finals.length === 0 ? undefined : quantile(finals, 0.5);
      table.push(`| ${panel} | ${method} | ${finals.length === 0 ? '—' : `${fmt(quantile(finals, 0.5))} [${fmt(Math.min(...finals))}, ${fmt(Math.max(...finals))}]`} | ${status.slice(0, 140)} |`);
    }
  }
}
log('');
log(table.join('\n'));

const decompTable: string[] = [];
for (const { config, rows } of decomposition) {
  decompTable.push('', `${DATA_LABEL[config.dataset]}, ${config.split}, eps ${config.epsilon}, T = ${config.steps} (median final F - F* over runs; RGM rows re-simulated, clip rows through the protocol; paper-mode RGM ${fmtOr(summary[panelOf(config, 'paper')]?.RGM, 'refused')}, proven-mode RGM ${fmtOr(summary[panelOf(config, 'proven')]?.RGM, 'refused')}):`, '', '| change to proven mode | final F - F* | x proven | x paper mode |', '| --- | --- | --- | --- |');
  const median = (f: (number | string)[]) => {
    const nums = f.filter((v): v is number => typeof v === 'number');
    return nums.length === 0 ? undefined : quantile(nums, 0.5);
  };
  const base = median(rows[0].finals);
  const clipBase = median(rows[VARIANTS.length].finals);
  rows.forEach((r, k) => {
    const m = median(r.finals);
    const ref = k >= VARIANTS.length ? clipBase : base;
    const paperRef = summary[panelOf(config, 'paper')]?.[k >= VARIANTS.length ? 'clip c' : 'RGM'];
    // A ratio needs both numbers: a refused row, or a refused reference (proven RGM below its epsilon floor), says which.
    const times = (r2: number | undefined, what: string) => (m === undefined ? 'n/a (refused)' : r2 === undefined ? `n/a (${what} refused)` : (m / r2).toPrecision(2));
    decompTable.push(`| ${r.name} | ${m === undefined ? String(r.finals[0]) : fmt(m)} | ${times(ref, k >= VARIANTS.length ? 'proven clip c' : 'proven RGM')} | ${times(paperRef, 'paper-mode')} |`);
  });
}
log(decompTable.join('\n'));

// ---- figures: paper and proven panels side by side; colours by method (method-colors.ts)
mkdirSync(OUT, { recursive: true });
const rowsFor = (filter: (c: Config) => boolean): BandRow[] =>
  all
    .filter(({ config }) => filter(config))
    .flatMap(({ config, results }) =>
      MODES.flatMap((mode) =>
        METHODS.flatMap((method) => {
          const runs = results.filter((r) => r.mode === mode && r.method === method && r.gaps.length > 0);
          if (runs.length === 0) return [];
          return runs[0].gaps.map((_, t) => {
            const values = runs.map((r) => r.gaps[t]);
            return { panel: panelOf(config, mode), method, step: t, median: quantile(values, 0.5), min: Math.min(...values), max: Math.max(...values) };
          });
        }),
      ),
    );
const figures: [string, (c: Config) => boolean, string][] = [
  ...(['ijcnn1', 'higgs', 'adult'] as const).map((name) => [`federated-fig1-${DATA_LABEL[name].toLowerCase()}`, (c: Config) => c.figure === 'fig1' && c.dataset === name, `000 Fig. 1 on ${DATA_LABEL[name]}: two nodes, ridge (mu = 0.03), RDP alpha = 2, epsilon = 0.1. Paper mode: per released gradient, NOT PRIVATE; proven: per node for the whole run`] as [string, (c: Config) => boolean, string]),
  ['federated-fig2', (c: Config) => c.figure === 'fig2', '000 Fig. 2 (App. D): random split, HIGGS-like at epsilon 1e-2, ijcnn1-like at 1e-3'],
];
for (const [file, filter, title] of figures) {
  const rows = rowsFor(filter);
  if (rows.length === 0) continue;
  const panels = [...new Set(rows.map((r) => r.panel))];
  const chart = await renderVegaLite(lineBandChart(rows, { title, xTitle: 'step', yTitle: 'F(theta) - F*', logY: true, methods: [...METHODS], panels, width: 220, height: 180 }));
  writeFileAtomic(join(OUT, `${file}.svg`), chart.svg, `${file}.svg`);
  writeFileAtomic(join(OUT, `${file}.png`), chart.png, `${file}.png`);
}

// ---- the paper's three claims, checked per mode (not forced)
const findings: string[] = [];
const CLIPS = ['clip c/10', 'clip c', 'clip 10c'] as const;
for (const mode of MODES) {
  for (const name of ['ijcnn1', 'higgs', 'adult'] as const) {
    const panel = (split: string) => `${DATA_LABEL[name]}, ${split}, eps 0.1 — ${mode === 'paper' ? PAPER : PROVEN}`;
    if (summary[panel('random')] === undefined) continue;
    const get = (split: string, m: string) => summary[panel(split)]?.[m];
    const best = (split: string) => {
      const c = CLIPS.map((m) => [m, get(split, m)] as const).filter((e): e is readonly [(typeof CLIPS)[number], number] => e[1] !== undefined);
      return c.length === 0 ? undefined : c.reduce((x, y) => (y[1] < x[1] ? y : x));
    };
    const who = `${DATA_LABEL[name]}, ${mode}`;
    for (const split of ['random', 'label', 'bias']) {
      const w = best(split);
      const rgm = get(split, 'RGM');
      findings.push(`- ${who}, ${split}: c/10 ${fmt(get(split, 'clip c/10'))}, c ${fmt(get(split, 'clip c'))}, 10c ${fmt(get(split, 'clip 10c'))}, RGM ${fmt(rgm)}, non-private ${fmt(get(split, 'non-private GD'))}; best threshold ${w?.[0] ?? 'none'}${rgm !== undefined && w !== undefined ? `; RGM / best = ${(rgm / w[1]).toPrecision(2)}` : ''}.`);
    }
    const smallWins = ['random', 'label'].every((sp) => {
      const c10 = get(sp, 'clip c/10');
      const big = get(sp, 'clip 10c');
      return c10 !== undefined && big !== undefined && c10 < big;
    });
    const ratio = (sp: string) => (get(sp, 'clip 10c') ?? NaN) / (get(sp, 'clip c/10') ?? NaN);
    const largeOnBias = ratio('bias') < 1 && ratio('bias') < ratio('random');
    findings.push(`- ${who}, claim 1 "small thresholds work well for homogeneous objectives or with label heterogeneity" (c/10 beats 10c on random and label): ${smallWins ? 'holds' : 'does NOT hold'}.`);
    findings.push(`- ${who}, claim 2 "larger clipping thresholds handle bias heterogeneity better" (10c beats c/10 on bias): ${largeOnBias ? 'holds' : 'does NOT hold'} (gap(10c)/gap(c/10): bias ${ratio('bias').toPrecision(2)}, random ${ratio('random').toPrecision(2)}).`);
    const rgmWithin = ['random', 'label', 'bias'].map((sp) => {
      const r = get(sp, 'RGM');
      const w = best(sp);
      return r === undefined || w === undefined ? NaN : r / w[1];
    });
    const ok = rgmWithin.every((v) => v <= 10);
    findings.push(`- ${who}, claim 3 "RGM deals with heterogeneity without such tuning" (RGM within 10x of the best threshold on every split): ${rgmWithin.some(Number.isNaN) ? 'not checked (RGM did not run everywhere)' : ok ? 'holds' : 'does NOT hold'} (RGM / best: ${rgmWithin.map((v) => (Number.isNaN(v) ? '—' : v.toPrecision(2))).join(', ')}).`);
  }
}
log('');
log(findings.join('\n'));

const seconds = (performance.now() - started) / 1000;
const md = [
  "# 000 Figs. 1-2: the paper's settings (NOT PRIVATE) and dpfit's proven settings",
  '',
  `node --import tsx experiments/federated-rgm.ts ${args.join(' ')} — ${seconds.toFixed(0)} s, ${SEEDS.length} run(s) per configuration.`,
  '',
  table.join('\n'),
  '',
  '## Gap between the modes, factor by factor',
  ...decompTable,
  '',
  "## The paper's claims (`000` Sec. 6)",
  '',
  ...findings,
  '',
].join('\n');
writeFileAtomic(join(OUT, 'results.md'), md, 'results.md');
writeFileAtomic(join(OUT, 'results.json'), JSON.stringify({ seconds, seeds: SEEDS, all, decomposition }, null, 1), 'results.json');
log(`\nwrote ${OUT}: figures (.svg, .png), results.md, results.json in ${seconds.toFixed(0)} s`);
