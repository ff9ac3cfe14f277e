/**
 * Headless charts (`src/report/vega-chart.ts`): a three-panel line-and-band figure renders to an
 * SVG holding its titles, legend and bands, and to a PNG of the expected size, deterministically.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lineBandChart, renderVegaLite, type BandRow } from '../../src/report/vega-chart.js';

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
