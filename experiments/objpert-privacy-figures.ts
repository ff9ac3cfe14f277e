/**
 * `003`'s privacy figures for objective perturbation, drawn from dpfit's accounting layer:
 *
 * - Fig. 1: delta(epsilon) of one release by Thm. 2.8 (Kifer et al. 2012,
 *   `kiferObjectivePerturbationDelta`), the RDP bound of Thm. 3.2 converted to (epsilon, delta)
 *   (`rdpDelta`), the exact profile of Thm. 3.1 (`objectivePerturbationDelta`, closed form) and the
 *   Gaussian mechanism's exact profile, a lower bound by Lemma 3.4 (`gaussianDelta`), at
 *   sigma = 5, beta = 1, lambda = 20 and sigma = 10, beta = 1, lambda = 5 (L = 1).
 * - Fig. 3: RDP epsilon(alpha) of the Gaussian ("normal"), the half-normal mechanism (Thm. 3.2
 *   without its leading term) and objective perturbation (Thm. 3.2), in four (sigma, lambda)
 *   regimes. 003 does not print the panels' parameters; these are chosen to show the two
 *   takeaways its text states (App. C.2).
 * - Fig. 4: k-fold composition at sigma = 8, beta = 1, lambda = 10: the RDP-implied delta(epsilon)
 *   against the numerical PLRV bound (D.11) (dpfit's PLD accountant on the dominating pair of
 *   Lemma D.6). 003 does not print its k; here k = 1, 4, 16, 64.
 * - Fig. 5: RDP curves of objective perturbation (Thm. 3.2) and DP-SGD (Poisson-sampled
 *   Gaussian), each calibrated by RDP to (epsilon, delta) = (1, 1e-5) in 003 Sec. 5's setting for
 *   Synthetic-L (n = 10,000, expected batch 256, 60 epochs; objective perturbation's lambda by the
 *   sigma <= 1.3 sigma_G rule, beta = 1/4 for the logistic loss, L = 1).
 *
 * Each figure's key numbers are printed as markdown. Series labels follow src/report/method-colors.ts.
 *
 * Run: node --import tsx experiments/objpert-privacy-figures.ts [--out DIR] (default docs/figures)
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { kiferObjectivePerturbationDelta, kiferObjectivePerturbationEpsilon } from '../src/accounting/calibration/kifer-objective-perturbation.js';
import { calibrateDpsgd } from '../src/accounting/calibration/calibrate.js';
import { selectObjectivePerturbationParameters } from '../src/accounting/calibration/approximate-minima-perturbation-parameters.js';
import { objectivePerturbationEvent, selfComposeEvent } from '../src/accounting/events/constructors.js';
import { gaussianDelta } from '../src/accounting/gaussian/gaussian-profile.js';
import { objectivePerturbationDelta } from '../src/accounting/pld/models/objective-perturbation.js';
import { pldDelta, pldEpsilon } from '../src/accounting/pld/accountant.js';
import { rdpDelta, rdpEpsilon } from '../src/accounting/rdp/accountant.js';
import { gaussianRdp, objectivePerturbationRdp } from '../src/accounting/rdp/base-mechanisms.js';
import { poissonGaussianRdp } from '../src/accounting/rdp/subsampling/poisson-gaussian.js';
import { lineBandChart, renderVegaLite, type BandRow } from '../src/report/vega-chart.js';
import { writeFileAtomic } from '../src/data/node/atomic-write.js';
import { InvalidParameterError } from '../src/errors.js';

const args = process.argv.slice(2);
const OUT = args.includes('--out') ? args[args.indexOf('--out') + 1] : join('docs', 'figures');
const DELTA = 1e-5;
/** Smallest delta drawn: below it the curves only run off the plot (a log axis cannot show 0). */
const DELTA_FLOOR = 1e-12;

const KIFER = 'Thm. 2.8 (Kifer et al.)';
const RDP = 'RDP (Thm. 3.2)';
const PLD = 'PLD (Thm. 3.1)';
const LOWER = 'Gaussian, exact (lower bound, Lemma 3.4)';

const point = (rows: BandRow[], panel: string, method: string, step: number, value: number) => {
  if (Number.isFinite(value) && value > 0) rows.push({ panel, method, step, median: value, min: value, max: value });
};
const fmt = (x: number) => (Number.isFinite(x) ? x.toPrecision(4) : String(x));

async function save(name: string, spec: object): Promise<void> {
  const chart = await renderVegaLite(spec);
  mkdirSync(OUT, { recursive: true });
  writeFileAtomic(join(OUT, `${name}.svg`), chart.svg, `${name}.svg`);
  console.log(`wrote ${join(OUT, `${name}.svg`)}`);
}

// ---- Fig. 1 ----
{
  const rows: BandRow[] = [];
  const table = ['| setting | Thm. 2.8 | RDP (Thm. 3.2) | PLD (Thm. 3.1) | lower bound | delta at epsilon = 1: Thm. 2.8 / RDP / Thm. 3.1 / lower |', '| --- | --- | --- | --- | --- | --- |'];
  for (const [sigma, beta, lambda] of [[5, 1, 20], [10, 1, 5]] as const) {
    const params = { noiseStd: sigma, lipschitz: 1, smoothness: beta, regularization: lambda };
    const event = objectivePerturbationEvent(params);
    const panel = `sigma = ${sigma}, beta = ${beta}, lambda = ${lambda}`;
    const curves: Record<string, (e: number) => number> = {
      [KIFER]: (e) => {
        try {
          return kiferObjectivePerturbationDelta(e, params);
        } catch (error) {
          if (error instanceof InvalidParameterError) return NaN; // outside the theorem's conditions: no point
          throw error;
        }
      },
      [RDP]: (e) => rdpDelta(event, e).delta,
      [PLD]: (e) => objectivePerturbationDelta(e, params),
      [LOWER]: (e) => gaussianDelta(e, sigma),
    };
    const at1: string[] = [];
    for (const [method, delta] of Object.entries(curves)) {
      for (let i = 1; i <= 150; i++) {
        const e = i * 0.02;
        const d = delta(e);
        if (d >= DELTA_FLOOR) point(rows, panel, method, e, d);
      }
      at1.push(fmt(delta(1)));
    }
    const epsKifer = kiferObjectivePerturbationEpsilon(DELTA, params);
    const epsRdp = rdpEpsilon(event, DELTA).epsilon;
    const epsPld = pldEpsilon(event, DELTA).epsilon;
    let lo = 0;
    let hi = 20;
    for (let i = 0; i < 100; i++) (gaussianDelta((lo + hi) / 2, sigma) > DELTA ? (lo = (lo + hi) / 2) : (hi = (lo + hi) / 2));
    table.push(`| ${panel} | ${fmt(epsKifer)} | ${fmt(epsRdp)} | ${fmt(epsPld)} | ${fmt(hi)} | ${at1.join(' / ')} |`);
  }
  console.log('\nFig. 1: epsilon at delta = 1e-5 (L = 1)\n' + table.join('\n'));
  await save('objpert-fig1-delta-epsilon', lineBandChart(rows, { title: '003 Fig. 1: (epsilon, delta) bounds of objective perturbation (L = 1)', xTitle: 'epsilon', yTitle: 'delta(epsilon)', logY: true, width: 340, height: 260, methods: [KIFER, RDP, PLD, LOWER] }));
}

// ---- Fig. 3 ----
{
  const rows: BandRow[] = [];
  const NORMAL = 'normal (Gaussian mechanism, exact)';
  const HALF = 'half-normal mechanism';
  const OBJ = 'objective perturbation (Thm. 3.2)';
  const table = ['| panel | gap objpert - half-normal at alpha = 2 | alpha where half-normal is within 5% of normal |', '| --- | --- | --- |'];
  for (const [tag, sigma, lambda] of [['a', 5, 100], ['b', 5, 2], ['c', 1, 100], ['d', 1, 2]] as const) {
    const panel = `(${tag}) sigma = ${sigma}, lambda = ${lambda}, beta = 1`;
    const params = { noiseStd: sigma, lipschitz: 1, smoothness: 1, regularization: lambda };
    let within: number | undefined;
    for (let i = 0; i <= 120; i++) {
      const alpha = 1.01 * 10 ** (i / 40); // 1.01 .. 1010
      const normal = gaussianRdp(sigma, alpha);
      const half = objectivePerturbationRdp({ ...params, smoothness: 0 }, alpha);
      point(rows, panel, NORMAL, alpha, normal);
      point(rows, panel, HALF, alpha, half);
      point(rows, panel, OBJ, alpha, objectivePerturbationRdp(params, alpha));
      if (within === undefined && half <= 1.05 * normal) within = alpha;
    }
    const gap = objectivePerturbationRdp(params, 2) - objectivePerturbationRdp({ ...params, smoothness: 0 }, 2);
    table.push(`| ${panel} | ${fmt(gap)} (= -log(1 - beta/lambda) = ${fmt(-Math.log1p(-1 / lambda))}) | ${within === undefined ? '> 1010' : fmt(within)} |`);
  }
  console.log('\nFig. 3: RDP by alpha (L = 1)\n' + table.join('\n'));
  // x on a log axis too: write alpha as step and let vega use a log x via a per-row transform is not
  // available in lineBandChart, so alpha is drawn on a linear axis up to 1010 would crush the start;
  // plot log10(alpha) instead.
  const logRows = rows.map((r) => ({ ...r, step: Math.log10(r.step) }));
  await save('objpert-fig3-rdp-by-alpha', lineBandChart(logRows, { title: '003 Fig. 3: RDP of objective perturbation, the half-normal and the Gaussian mechanism', xTitle: 'log10(alpha)', yTitle: 'epsilon(alpha)', logY: true, width: 260, height: 200, methods: [NORMAL, HALF, OBJ] }));
}

// ---- Fig. 4 ----
{
  const rows: BandRow[] = [];
  const params = { noiseStd: 8, lipschitz: 1, smoothness: 1, regularization: 10 };
  const a = -Math.log1p(-0.1);
  const table = ['| k | epsilon at delta = 1e-5, RDP (Thm. 3.2) | PLD (D.11) | k x (-log(1 - beta/lambda)) |', '| --- | --- | --- | --- |'];
  for (const k of [1, 4, 16, 64]) {
    const event = k === 1 ? objectivePerturbationEvent(params) : selfComposeEvent(objectivePerturbationEvent(params), k);
    const panel = `k = ${k}`;
    const top = k * (a + 1 / 128 + 0.8 / 8) + (7 * Math.sqrt(k)) / 8; // mean of k copies of omega + 7 sd
    for (let i = 1; i <= 40; i++) {
      const e = (top * i) / 40;
      const r = rdpDelta(event, e).delta;
      const p = pldDelta(event, e).delta;
      if (r >= DELTA_FLOOR) point(rows, panel, RDP, e, r);
      if (p >= DELTA_FLOOR) point(rows, panel, 'PLD (PLRV bound D.11)', e, p);
    }
    table.push(`| ${k} | ${fmt(rdpEpsilon(event, DELTA).epsilon)} | ${fmt(pldEpsilon(event, DELTA).epsilon)} | ${fmt(k * a)} |`);
  }
  console.log('\nFig. 4: sigma = 8, beta = 1, lambda = 10, L = 1\n' + table.join('\n'));
  await save('objpert-fig4-compositions', lineBandChart(rows, { title: '003 Fig. 4: k compositions, RDP-implied vs numerical PLRV bound (sigma = 8, beta = 1, lambda = 10)', xTitle: 'epsilon', yTitle: 'delta(epsilon)', logY: true, width: 200, height: 200 }));
}

// ---- Fig. 5 ----
{
  const rows: BandRow[] = [];
  const n = 10_000;
  const q = 256 / n;
  const steps = 60 * Math.ceil(n / 256);
  const dpsgd = calibrateDpsgd({ targetEpsilon: 1, delta: DELTA, samplingProbability: q, steps });
  const objpert = selectObjectivePerturbationParameters({ targetEpsilon: 1, delta: DELTA, lipschitz: 1, smoothness: 0.25 });
  const params = { noiseStd: objpert.noiseStd, lipschitz: 1, smoothness: 0.25, regularization: objpert.regularization };
  const OBJ = 'objective perturbation (Thm. 3.2)';
  const SGD = `DP-SGD (Poisson q = ${q}, ${steps} steps)`;
  const panel = 'both calibrated by RDP to (1, 1e-5)';
  let crossing: number | undefined;
  const table = ['| alpha | objective perturbation | DP-SGD |', '| --- | --- | --- |'];
  for (let i = 0; i <= 160; i++) {
    const alpha = 1.01 * 10 ** (i / 40); // 1.01 .. 1e4
    const o = objectivePerturbationRdp(params, alpha);
    const s = steps * poissonGaussianRdp(q, dpsgd.noiseMultiplier, alpha);
    point(rows, panel, OBJ, Math.log10(alpha), o);
    point(rows, panel, SGD, Math.log10(alpha), s);
    if (crossing === undefined && i > 0 && s > o) crossing = alpha;
    if (i % 40 === 0) table.push(`| ${fmt(alpha)} | ${fmt(o)} | ${fmt(s)} |`);
  }
  console.log(`\nFig. 5: objective perturbation sigma = ${fmt(params.noiseStd)}, lambda = ${fmt(params.regularization)}; DP-SGD noise multiplier ${fmt(dpsgd.noiseMultiplier)}; DP-SGD's RDP exceeds objective perturbation's from alpha = ${crossing === undefined ? 'never' : fmt(crossing)}\n` + table.join('\n'));
  await save('objpert-fig5-rdp-vs-dpsgd', lineBandChart(rows, { title: '003 Fig. 5: RDP curves of objective perturbation and DP-SGD', xTitle: 'log10(alpha)', yTitle: 'epsilon(alpha)', logY: true, width: 420, height: 260 }));
}
