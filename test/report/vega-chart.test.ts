/**
 * Headless charts (`src/report/vega-chart.ts`): a three-panel line-and-band figure renders to an
 * SVG holding its titles, legend and bands, and to a PNG of the expected size, deterministically;
 * log axes label every tick in one format (`axis-format.ts`); panels wrap onto rows.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { logAxisLabels } from '../../src/report/axis-format.js';
import { errorBarChart, lineBandChart, privacyCurveChart, renderVegaLite, type BandRow } from '../../src/report/vega-chart.js';

/** Width and height from a PNG's IHDR chunk. */
function pngSize(png: Uint8Array): { width: number; height: number } {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

test('a 3-panel chart with 2 methods and min/max bands: SVG text and areas, PNG signature and size, deterministic', { timeout: 60_000 }, async () => {
  const rows: BandRow[] = [];
  for (const panel of ['random', 'label', 'bias']) {
    for (const method of ['RGM', 'clip c']) {
      for (let step = 0; step <= 20; step++) {
        const median = (method === 'RGM' ? 1 : 2) * Math.exp(-step / 5) + 0.01;
        rows.push({ panel, method, step, median, min: median * 0.8, max: median * 1.25 });
      }
    }
  }
  const spec = lineBandChart(rows, { title: 'Suboptimality', xTitle: 'step', yTitle: 'F - F*', logY: true, width: 200, height: 150 });
  const first = await renderVegaLite(spec, 2);
  assert.ok(first.svg.startsWith('<svg'), first.svg.slice(0, 50));
  for (const text of ['Suboptimality', 'random', 'label', 'bias', 'RGM', 'clip c', 'F - F*']) assert.ok(first.svg.includes(`>${text}<`), `SVG text ${text}`);
  const areas = first.svg.match(/class="mark-area role-mark/g) ?? [];
  assert.ok(areas.length >= 3, `${areas.length} area marks`);
  assert.deepEqual([...first.png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const svgSize = /width="(\d+)" height="(\d+)"/.exec(first.svg);
  assert.ok(svgSize !== null);
  assert.deepEqual(pngSize(first.png), { width: 2 * Number(svgSize[1]), height: 2 * Number(svgSize[2]) });
  const again = await renderVegaLite(spec, 2);
  assert.equal(again.svg, first.svg);
});

/** The tick labels of a rendered chart's first axis whose aria-label starts with `axis` ('X' or 'Y'). */
function axisLabels(svg: string, axis: 'X' | 'Y'): string[] {
  const start = svg.indexOf(`aria-label="${axis}-axis`);
  assert.ok(start >= 0, `no ${axis} axis`);
  const group = svg.indexOf('role-axis-label', start);
  const end = svg.indexOf('</g>', group);
  return [...svg.slice(group, end).matchAll(/>([^<]+)<\/text>/g)].map((m) => m[1]);
}

test('log axes: one format per axis, scientific over many decades ("1e-7", never "0.000001"), decimal within [1e-3, 1e4]', { timeout: 60_000 }, async () => {
  assert.deepEqual(logAxisLabels([0.1, 0.5, 8]), { format: '~g' });
  assert.deepEqual(logAxisLabels([1e-11, 0.5, 0, -1]), { labelExpr: "replace(format(datum.value, '.0e'), '+', '')" });
  // A delta(epsilon) curve from 1 down to 1e-11: vega's default labels mixed "0.000001" and "1e-7".
  const points = Array.from({ length: 12 }, (_, i) => ({ epsilon: 0.13 * i, delta: 10 ** -i }));
  const curve = await renderVegaLite(privacyCurveChart([{ label: 'RDP (upper bound)', points }], { title: 'curve' }));
  const y = axisLabels(curve.svg, 'Y');
  assert.ok(y.length >= 6, y.join(' '));
  for (const label of y) assert.match(label, /^[1-9]e(0|-[1-9]\d*)$/, `y labels ${y.join(' ')}`);
  assert.ok(y.includes('1e-7') && y.includes('1e-6') && y.includes('1e0'), y.join(' '));
  // Epsilons from 0.1 to 8 on a log axis: decimals only.
  const bars = await renderVegaLite(errorBarChart([0.1, 0.5, 1, 2, 8].map((x) => ({ series: 'DP-SGD', x, mean: 80, std: 1 })), { title: 'a', xTitle: 'epsilon', yTitle: 'accuracy', logX: true }));
  const x = axisLabels(bars.svg, 'X');
  assert.ok(x.includes('0.1') && x.includes('1'), x.join(' '));
  for (const label of x) assert.match(label, /^\d+(\.\d+)?$/, `x labels ${x.join(' ')}`);
});

test('a band chart with columns wraps its panels onto rows, and refuses a bad column count', { timeout: 60_000 }, async () => {
  const rows: BandRow[] = [];
  for (const panel of ['a', 'b', 'c', 'd', 'e']) for (let step = 0; step <= 5; step++) rows.push({ panel, method: 'DP-SGD', step, median: 0.5 - step / 100, min: 0.45, max: 0.55 });
  const wide = await renderVegaLite(lineBandChart(rows, { title: 't', xTitle: 'step', yTitle: 'loss', width: 200, height: 150 }));
  const grid = await renderVegaLite(lineBandChart(rows, { title: 't', xTitle: 'step', yTitle: 'loss', width: 200, height: 150, columns: 3 }));
  const size = (svg: string) => (/width="(\d+)" height="(\d+)"/.exec(svg) ?? []).slice(1).map(Number);
  const [wideWidth, wideHeight] = size(wide.svg);
  const [gridWidth, gridHeight] = size(grid.svg);
  assert.ok(gridWidth < 0.7 * wideWidth, `${gridWidth} vs ${wideWidth}`);
  assert.ok(gridHeight > 1.6 * wideHeight - 100, `two rows: ${gridHeight} vs ${wideHeight}`);
  assert.throws(() => lineBandChart(rows, { title: 't', xTitle: 'x', yTitle: 'y', columns: 0 }), /columns must be an integer in \[1, 100\], got 0/);
});
