/**
 * One colour per method across figures: the labels the experiments and `dpfit plot` use map to the
 * colour of their method, the three clipping thresholds to three shades, and the chart specs carry
 * the scale (so vega cannot reassign colours by order of appearance).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { methodColor, methodColorScale } from '../../src/report/method-colors.js';
import { errorBarChart, lineBandChart } from '../../src/report/vega-chart.js';

test('the same method has the same colour whatever the figure calls it; different methods differ', () => {
  assert.equal(methodColor('RGM (PTR, no tuning)'), methodColor('RGM, proven'));
  assert.equal(methodColor('DP-GD'), methodColor('dpgd: DP-GD at eps 1'));
  const thresholds = ['clip c/10', 'clip c', 'clip 10c'].map(methodColor);
  assert.equal(new Set(thresholds).size, 3, 'c/10, c and 10c are three shades');
  const methods = ['RGM', 'clip c', 'non-private GD', 'AMP', 'objective perturbation', 'output perturbation', 'shuffled SGD', 'DP-SGD', 'DP-GD'].map(methodColor);
  assert.equal(new Set(methods).size, methods.length, `distinct: ${methods.join(' ')}`);
  assert.equal(methodColor('something else'), '#bbbbbb');
});

test('the chart specs carry the method scale, in the legend order', () => {
  const band = lineBandChart([{ panel: 'p', method: 'clip c', step: 0, median: 1, min: 1, max: 1 }, { panel: 'p', method: 'RGM', step: 0, median: 1, min: 1, max: 1 }], { title: 't', xTitle: 'x', yTitle: 'y' }) as { spec: { layer: { encoding: { color: { scale: unknown } } }[] } };
  assert.deepEqual(band.spec.layer[0].encoding.color.scale, methodColorScale(['clip c', 'RGM']));
  const bars = errorBarChart([{ series: 'DP-SGD', x: 1, mean: 0.8, std: 0.01 }], { title: 't', xTitle: 'x', yTitle: 'y', reference: { label: 'non-private', value: 0.85 } }) as { layer: { encoding: { color: { scale: { range: string[] } } } }[] };
  assert.deepEqual(bars.layer[0].encoding.color.scale.range, [methodColor('DP-SGD'), methodColor('non-private')]);
});

test('a log-scale band chart leaves out points it cannot draw, instead of rendering empty', () => {
  const rows = [
    { panel: 'p', method: 'RGM', step: 1, median: 0, min: 0, max: 0 },
    { panel: 'p', method: 'RGM', step: 2, median: 0.5, min: 0, max: 1 },
    { panel: 'p', method: 'RGM', step: 3, median: 0.25, min: 0.2, max: 0.3 },
  ];
  const spec = lineBandChart(rows, { title: 't', xTitle: 'x', yTitle: 'y', logY: true }) as { data: { values: { step: number; min: number }[] } };
  assert.deepEqual(spec.data.values.map((v) => [v.step, v.min]), [[2, 0.5], [3, 0.2]]);
  const linear = lineBandChart(rows, { title: 't', xTitle: 'x', yTitle: 'y' }) as { data: { values: unknown[] } };
  assert.equal(linear.data.values.length, 3);
});
