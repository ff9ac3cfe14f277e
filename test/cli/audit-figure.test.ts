/**
 * The audit's trade-off figure (`src/cli/audit-figure.ts`, `dpfit audit --plot`): the SVG holds
 * every curve, each vertex read back from vega's path (pixels on a 400 x 400 plot, alpha = x / 400,
 * beta = 1 - y / 400) equal to gaussianTradeOff / the (epsilon, delta) edge's closed form within
 * the path's rounding, and the test's point and upper-bound cross where its rates put them; the CLI
 * writes the figure whole (SVG or PNG), checks its path before any run and writes nothing on a bad
 * one.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { auditLearner } from '../../src/audit/canary-audit.js';
import { gaussianTradeOff } from '../../src/audit/bounds/gaussian-dp-bound.js';
import { epsilonDeltaTradeOff } from '../../src/audit/trade-off-curves.js';
import { auditTradeOffFigure } from '../../src/cli/audit-figure.js';
import { TRADE_OFF_CHART_SIZE } from '../../src/report/trade-off-chart.js';
import { seededRng } from '../../src/random/rng.js';
import { runCli } from '../helpers/people.js';

/** The vertices of layer k's line, in data coordinates. */
function lineOf(svg: string, layer: number): { alpha: number; beta: number }[] {
  const group = new RegExp(`class="mark-line role-mark layer_${layer}_marks"[^>]*><path [^>]*d="([^"]+)"`).exec(svg);
  assert.ok(group, `layer ${layer} is a line in the SVG`);
  return [...group[1].matchAll(/[ML]([-\d.e]+),([-\d.e]+)/g)].map((m) => ({ alpha: Number(m[1]) / TRADE_OFF_CHART_SIZE, beta: 1 - Number(m[2]) / TRADE_OFF_CHART_SIZE }));
}

test('the SVG holds the accountant curves, the lower bound and the test, at the values of the closed forms', { timeout: 60_000 }, async () => {
  const result = auditLearner({ method: 'dpgd', epsilon: 2, delta: 1e-5, runs: 300, threatModel: 'accountant', rng: seededRng(5) });
  const figure = await auditTradeOffFigure(result, { points: 100 });
  const { svg, curves } = figure;
  assert.ok(svg.startsWith('<svg'));
  const exact: ((alpha: number) => number)[] = [
    (alpha) => epsilonDeltaTradeOff(result.epsilonAccounted, result.delta, alpha),
    (alpha) => gaussianTradeOff(curves.muAccounted as number, alpha),
    (alpha) => gaussianTradeOff(result.gaussian?.muLower as number, alpha),
  ];
  // Half a thousandth of a pixel of rounding on each coordinate, and the steepest slope of these curves near alpha = 0 (the edge's e^epsilon).
  const pixel = 0.0005 / TRADE_OFF_CHART_SIZE;
  curves.curves.forEach((curve, k) => {
    const drawn = lineOf(svg, k);
    assert.equal(drawn.length, curve.points.length, curve.label);
    drawn.forEach((p, i) => {
      assert.ok(Math.abs(p.alpha - curve.points[i].alpha) <= pixel, `${curve.label}: alpha ${p.alpha} vs ${curve.points[i].alpha}`);
      assert.ok(Math.abs(p.beta - exact[k](curve.points[i].alpha)) <= pixel, `${curve.label} at ${curve.points[i].alpha}: ${p.beta} vs ${exact[k](curve.points[i].alpha)}`);
    });
    assert.ok(svg.includes(curve.label.replace(/>/g, '&gt;')), `the legend names ${curve.label}`);
  });
  // The test: its point (layer 4) at the observed rates, its cross (layer 5) at the upper bounds.
  const [t] = curves.tests;
  const at = (layer: number) => {
    const m = new RegExp(`layer_${layer}_marks"[^>]*><path [^>]*transform="translate\\(([-\\d.e]+),([-\\d.e]+)\\)"`).exec(svg);
    assert.ok(m, `layer ${layer} holds a point`);
    return { alpha: Number(m[1]) / TRADE_OFF_CHART_SIZE, beta: 1 - Number(m[2]) / TRADE_OFF_CHART_SIZE };
  };
  for (const [layer, alpha, beta] of [[4, t.alpha, t.beta], [5, t.alphaUpper, t.betaUpper]]) {
    const p = at(layer);
    assert.ok(Math.abs(p.alpha - alpha) <= pixel && Math.abs(p.beta - beta) <= pixel, `layer ${layer}: ${JSON.stringify(p)} vs ${alpha}, ${beta}`);
  }
  assert.ok(figure.png.length > 1000 && Buffer.from(figure.png.subarray(1, 4)).toString() === 'PNG');
});

test('dpfit audit --plot: written whole as SVG or PNG; a bad path refused before any run, no file left', { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-audit-plot-'));
  const common = ['audit', '--method', 'dpsgd', '--epsilon', '4', '--delta', '1e-5', '--runs', '100', '--threat-model', 'accountant'];
  const svg = join(dir, 'curves.svg');
  const run = await runCli(...common, '--plot', svg, '--json');
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout).plot, svg);
  const written = readFileSync(svg, 'utf8');
  assert.ok(written.startsWith('<svg') && written.trimEnd().endsWith('</svg>'));
  assert.match(written, /lower bound: epsilon &gt;= /);
  const png = join(dir, 'curves.png');
  const text = await runCli(...common, '--plot', png);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /figure {5}.*curves\.png/);
  assert.equal(readFileSync(png).subarray(1, 4).toString(), 'PNG');
  // A refuted claim: the figure is the evidence, written before exit 4.
  const refutedPlot = join(dir, 'refuted.svg');
  const refuted = await runCli('audit', '--method', 'dpgd', '--epsilon', '4', '--delta', '1e-5', '--runs', '200', '--threat-model', 'accountant', '--claimed-epsilon', '0.1', '--plot', refutedPlot);
  assert.equal(refuted.code, 4, refuted.stderr);
  assert.ok(existsSync(refutedPlot));
  for (const [path, code, message] of [
    [join(dir, 'curves.pdf'), 2, /--plot must be a file name ending in \.svg or \.png/],
    [join(dir, 'absent', 'c.svg'), 3, /does not exist/],
  ] as const) {
    const bad = await runCli(...common, '--runs', '1000000', '--plot', path);
    assert.equal(bad.code, code, bad.stderr);
    assert.match(bad.stderr, message);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
    assert.ok(!existsSync(path));
  }
  const oneRun = await runCli('audit', '--one-run', '--method', 'dpsgd', '--epsilon', '8', '--delta', '1e-5', '--canaries', '10', '--data', 'x.csv', '--schema', 's.json', '--plot', svg);
  assert.equal(oneRun.code, 2);
  assert.match(oneRun.stderr, /--plot must be absent with --one-run/);
});
