/**
 * `004` Sec. 3.4.3 as a plot: the exact (epsilon, delta = 1e-5) of the LAST iterate of noisy SGD on
 * linear regression (affine gradients: `accounting/gaussian/affine-sgd.ts`), as a function of when the one
 * record that differs between the neighbours was processed, with and without noise feedback, next
 * to what composition charges (the differing step's Gaussian release, whatever its position).
 *
 * Setting: one pass over n = 200 records x ~ N(0, I_3 / 3), y = x.w + small noise, step size
 * gamma = 0.5, noise std sigma = 0.5 added to each update, theta_0 = 0; neighbours differ in one
 * record's target (y + 1), so the iterates are a Gaussian shift pair and the epsilon is exact.
 *
 * Run: node --import tsx experiments/affine-noise-feedback.ts [--out DIR] (default experiments/out/affine-noise-feedback)
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { affineSgdLastIterate, gaussianShiftEpsilon, gaussianShiftMu, type AffineStep } from '../src/accounting/gaussian/affine-sgd.js';
import { fillGaussian } from '../src/random/continuous.js';
import { seededRng } from '../src/random/rng.js';
import { lineBandChart, renderVegaLite, type BandRow } from '../src/report/vega-chart.js';
import { writeFileAtomic } from '../src/data/node/atomic-write.js';

const args = process.argv.slice(2);
const OUT = args.includes('--out') ? args[args.indexOf('--out') + 1] : join('experiments', 'out', 'affine-noise-feedback');
const N = 200;
const D = 3;
const GAMMA = 0.5;
const SIGMA = 0.5;
const DELTA = 1e-5;
const rng = seededRng(7);
const w = Float64Array.of(1, -0.5, 0.25);
const records = Array.from({ length: N }, () => {
  const x = new Float64Array(D);
  fillGaussian(rng, x, 1 / Math.sqrt(D));
  return { x, y: x[0] * w[0] + x[1] * w[1] + x[2] * w[2] + 0.01 * (rng.nextDouble() - 0.5) };
});
const steps = (rows: typeof records): AffineStep[] =>
  rows.map(({ x, y }) => ({ alpha: Float64Array.from({ length: D * D }, (_, k) => x[Math.floor(k / D)] * x[k % D]), beta: x.map((v) => -y * v) }));

const rows: BandRow[] = [];
const table = ['| position from the end k | epsilon, no feedback | epsilon, noise feedback | composition (any position) |', '| --- | --- | --- | --- |'];
for (let k = 1; k <= N; k++) {
  const t = N - k;
  const other = records.map((r, s) => (s === t ? { ...r, y: r.y + 1 } : r));
  const values: Record<string, number> = {};
  for (const feedback of [false, true]) {
    const a = affineSgdLastIterate(steps(records), { d: D, stepSize: GAMMA, noiseStd: SIGMA, noiseFeedback: feedback });
    const b = affineSgdLastIterate(steps(other), { d: D, stepSize: GAMMA, noiseStd: SIGMA, noiseFeedback: feedback });
    values[feedback ? 'feedback' : 'plain'] = gaussianShiftEpsilon(gaussianShiftMu(a, b), DELTA);
  }
  // Composition: the differing step releases gamma * (gradient difference) + N(0, sigma^2): shift gamma |x_t| * 1.
  const shift = GAMMA * Math.hypot(...records[t].x);
  values.composition = gaussianShiftEpsilon(shift / SIGMA, DELTA);
  for (const [method, value] of Object.entries(values)) {
    rows.push({ panel: 'last iterate, delta = 1e-5', method: method === 'plain' ? 'no feedback (Prop. 3.2)' : method === 'feedback' ? 'noise feedback' : 'composition (the step itself)', step: k, median: value, min: value, max: value });
  }
  if ([1, 2, 5, 20, 100, 200].includes(k)) table.push(`| ${k} | ${values.plain.toFixed(3)} | ${values.feedback.toFixed(3)} | ${values.composition.toFixed(3)} |`);
}
mkdirSync(OUT, { recursive: true });
const chart = await renderVegaLite(lineBandChart(rows, { title: 'Exact last-iterate privacy on affine gradients (004 Sec. 3.4)', xTitle: 'steps from the differing record to the end (k)', yTitle: 'epsilon', logY: true, width: 420, height: 260 }));
writeFileAtomic(join(OUT, 'affine.svg'), chart.svg, 'affine.svg');
writeFileAtomic(join(OUT, 'affine.png'), chart.png, 'affine.png');
process.stdout.write(`${table.join('\n')}\n\nwrote ${OUT}/affine.{svg,png}\n`);
