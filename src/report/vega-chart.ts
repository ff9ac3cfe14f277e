/**
 * Charts rendered headless: a vega-lite spec compiled to vega, drawn as SVG by vega's 'none'
 * renderer (`view.toSVG()`), and the SVG rasterised to PNG by resvg (no browser, no node-canvas;
 * `STACK.md`). The three packages are loaded on first use, so nothing else pays for them; resvg
 * only when the PNG is read (its native binary is an optional dependency: `npm install dpfit
 * --omit=optional` leaves it out, and SVG output still works).
 *
 * Text in the PNG uses the system's fonts (resvg `loadSystemFonts`; DejaVu on these machines);
 * the SVG is the reference output (it keeps the text as text).
 */
import { createRequire } from 'node:module';
import { DataFormatError } from '../errors.js';
import { optionNames, rejectUnknownOptions, requireInteger } from '../validate.js';
import { logAxisLabels } from './axis-format.js';
import { methodColorScale } from './method-colors.js';

export interface RenderedChart {
  readonly svg: string;
  readonly png: Uint8Array;
}

/** The SVG rasterised by resvg; a one-line error when its native binary is not installed. */
function rasterise(svg: string, scale: number): Uint8Array {
  let resvg: typeof import('@resvg/resvg-js');
  try {
    resvg = createRequire(import.meta.url)('@resvg/resvg-js') as typeof import('@resvg/resvg-js');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (!/Cannot find module/.test(message)) throw error;
    throw new DataFormatError('PNG output', "needs resvg's native binary, an optional dependency that is not installed (reinstall dpfit without --omit=optional), or write .svg");
  }
  const png = new resvg.Resvg(svg, { fitTo: { mode: 'zoom', value: scale }, background: 'white', font: { loadSystemFonts: true } }).render().asPng();
  return new Uint8Array(png);
}

/** Renders a vega-lite spec to SVG and PNG (PNG at `scale` x the SVG's size, white background, rendered when first read). */
export async function renderVegaLite(spec: object, scale = 2): Promise<RenderedChart> {
  const [vega, vl] = await Promise.all([import('vega'), import('vega-lite')]);
  const compiled = vl.compile(spec as Parameters<typeof vl.compile>[0]).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  let svg: string;
  try {
    svg = await view.toSVG();
  } finally {
    view.finalize();
  }
  let png: Uint8Array | undefined;
  return {
    svg,
    get png() {
      return (png ??= rasterise(svg, scale));
    },
  };
}

/** One point of a line with its band: the median over runs and the [min, max] range. */
export interface BandRow {
  readonly panel: string;
  readonly method: string;
  readonly step: number;
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export interface LineBandOptions {
  readonly title: string;
  readonly xTitle: string;
  readonly yTitle: string;
  readonly logY?: boolean;
  /** Size of one panel. */
  readonly width?: number;
  readonly height?: number;
  /** Panel order (default: order of first appearance). */
  readonly panels?: readonly string[];
  /** Method order and legend (default: order of first appearance). */
  readonly methods?: readonly string[];
  /** Panels per row; more panels wrap onto further rows (default: all on one row). */
  readonly columns?: number;
  /** Whether a linear y axis starts at 0 (default true; false zooms on the data, for curves that differ by little). */
  readonly yZero?: boolean;
  /** A subtitle under the title (e.g. what the band is). */
  readonly subtitle?: string;
}

const LINE_BAND_OPTIONS = optionNames<LineBandOptions>({ title: true, xTitle: true, yTitle: true, logY: true, width: true, height: true, panels: true, methods: true, columns: true, yZero: true, subtitle: true });

/**
 * Text sizes every chart shares, chosen to be read in the README at the SVG's own size: axis
 * labels 12 px, axis titles 13 px, the title 15 px (vega's defaults, 10/11/13 px, were too small
 * in a five-panel figure shrunk to the page's width).
 */
export const READABLE_TEXT = {
  font: 'DejaVu Sans',
  axis: { labelFontSize: 12, titleFontSize: 13 },
  header: { labelFontSize: 13, titleFontSize: 13 },
  legend: { labelFontSize: 12, titleFontSize: 12 },
  title: { fontSize: 15, subtitleFontSize: 12 },
} as const;

/**
 * The vega-lite spec of a paper-style figure: one panel per `panel`, one line per `method` (the
 * median over runs) over a shaded min/max band, a shared legend. On a log axis (`logY`), a point
 * whose median is not positive is left out and a band's lower edge at or below 0 is drawn from the
 * median (a log scale has no 0: one such value would leave the whole figure empty).
 */
export function lineBandChart(rows: readonly BandRow[], options: LineBandOptions): object {
  rejectUnknownOptions(options, LINE_BAND_OPTIONS, 'lineBandChart');
  const panels = options.panels ?? [...new Set(rows.map((r) => r.panel))];
  const methods = options.methods ?? [...new Set(rows.map((r) => r.method))];
  if (options.columns !== undefined) requireInteger('columns', options.columns, 1, 100);
  const yLabels = options.logY ? logAxisLabels(rows.flatMap((r) => [r.median, r.min, r.max])) : {};
  const yScale = options.logY ? { scale: { type: 'log' } } : options.yZero === false ? { scale: { zero: false } } : {};
  const y = (field: string) => ({ field, type: 'quantitative', title: options.yTitle, axis: yLabels, ...yScale });
  const color = { field: 'method', type: 'nominal', title: 'method', sort: methods, scale: methodColorScale(methods), legend: { orient: 'bottom', columns: 3, labelLimit: 400, symbolOpacity: 1, symbolStrokeWidth: 3 } };
  const panel = { field: 'panel', type: 'nominal', title: null, sort: panels };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: options.subtitle === undefined ? options.title : { text: options.title, subtitle: options.subtitle },
    data: { values: (options.logY ? rows.filter((r) => r.median > 0).map((r) => ({ ...r, min: r.min > 0 ? r.min : r.median })) : rows).map((r) => ({ ...r })) },
    ...(options.columns === undefined ? { facet: { column: panel } } : { facet: panel, columns: options.columns }),
    resolve: { scale: { x: 'independent', y: 'independent' } },
    spec: {
      width: options.width ?? 260,
      height: options.height ?? 200,
      layer: [
        // The band under the line, opaque enough to be seen where it is thin, with its edges drawn.
        { mark: { type: 'area', opacity: 0.3, strokeOpacity: 0.6, strokeWidth: 0.75 }, encoding: { x: { field: 'step', type: 'quantitative', title: options.xTitle }, y: y('min'), y2: { field: 'max' }, color, stroke: color } },
        { mark: { type: 'line', strokeWidth: 2 }, encoding: { x: { field: 'step', type: 'quantitative', title: options.xTitle }, y: y('median'), color } },
      ],
    },
    config: { ...READABLE_TEXT, view: { stroke: '#ccc' } },
  };
}

/** One curve of a privacy plot: (epsilon, delta) points of one accountant. */
export interface PrivacyCurve {
  readonly label: string;
  readonly points: readonly { readonly epsilon: number; readonly delta: number }[];
}

/** The frame of a single 520 x 320 chart: schema, title (and subtitle), size and data. */
function singleChart(options: { title: string; subtitle?: string }, values: object[]): object {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: options.title, ...(options.subtitle === undefined ? {} : { subtitle: options.subtitle }) },
    width: 520,
    height: 320,
    data: { values },
  };
}

const PRIVACY_CURVE_CHART_OPTIONS = optionNames<NonNullable<Parameters<typeof privacyCurveChart>[1]>>({ title: true, subtitle: true });

/**
 * The vega-lite spec of delta(epsilon) curves (`dpfit curve`): a log delta axis, one line per
 * accountant with its points marked, the title naming the event. Points with delta <= 0 (off a log
 * axis) are left out.
 */
export function privacyCurveChart(curves: readonly PrivacyCurve[], options: { title: string; subtitle?: string }): object {
  rejectUnknownOptions(options, PRIVACY_CURVE_CHART_OPTIONS, 'privacyCurveChart');
  const values = curves.flatMap((c) => c.points.filter((p) => p.delta > 0 && Number.isFinite(p.epsilon)).map((p) => ({ accountant: c.label, epsilon: p.epsilon, delta: p.delta })));
  return {
    ...singleChart(options, values),
    mark: { type: 'line', point: true, strokeWidth: 1.5 },
    encoding: {
      x: { field: 'epsilon', type: 'quantitative', title: 'epsilon' },
      y: { field: 'delta', type: 'quantitative', title: 'delta(epsilon)', scale: { type: 'log' }, axis: logAxisLabels(values.map((v) => v.delta)) },
      color: { field: 'accountant', type: 'nominal', title: 'accountant', sort: curves.map((c) => c.label), scale: methodColorScale(curves.map((c) => c.label)), legend: { orient: 'top-right', labelLimit: 400 } },
    },
    config: READABLE_TEXT,
  };
}

/** One point with an error bar: the mean of a series at x and its +- std. */
export interface ErrorBarRow {
  readonly series: string;
  readonly x: number;
  readonly mean: number;
  readonly std: number;
}

export interface ErrorBarOptions {
  readonly title: string;
  readonly subtitle?: string;
  readonly xTitle: string;
  readonly yTitle: string;
  readonly logX?: boolean;
  /** A horizontal reference line (e.g. a non-private baseline), labelled in the legend. */
  readonly reference?: { readonly label: string; readonly value: number };
}

const ERROR_BAR_OPTIONS = optionNames<ErrorBarOptions>({ title: true, subtitle: true, xTitle: true, yTitle: true, logX: true, reference: true });

/**
 * The vega-lite spec of means with error bars (`dpfit plot`: accuracy against epsilon): one line
 * per series through its means, a bar from mean - std to mean + std at each point, and an
 * optional dashed reference line.
 */
export function errorBarChart(rows: readonly ErrorBarRow[], options: ErrorBarOptions): object {
  rejectUnknownOptions(options, ERROR_BAR_OPTIONS, 'errorBarChart');
  const series = [...new Set(rows.map((r) => r.series))];
  const domain = options.reference === undefined ? series : [...series, options.reference.label];
  const x = { field: 'x', type: 'quantitative', title: options.xTitle, ...(options.logX ? { scale: { type: 'log' }, axis: logAxisLabels(rows.map((r) => r.x)) } : {}) };
  const color = { field: 'series', type: 'nominal', title: null, scale: methodColorScale(domain), legend: { orient: 'bottom', labelLimit: 400 } };
  const values = rows.map((r) => ({ series: r.series, x: r.x, mean: r.mean, low: r.mean - r.std, high: r.mean + r.std }));
  const layers: object[] = [
    { mark: { type: 'line', point: true, strokeWidth: 1.5 }, encoding: { x, y: { field: 'mean', type: 'quantitative', title: options.yTitle, scale: { zero: false } }, color } },
    { mark: { type: 'errorbar', ticks: true }, encoding: { x, y: { field: 'low', type: 'quantitative', title: options.yTitle }, y2: { field: 'high' }, color } },
  ];
  if (options.reference !== undefined) {
    layers.push({
      data: { values: [{ series: options.reference.label, mean: options.reference.value }] },
      mark: { type: 'rule', strokeDash: [4, 3] },
      encoding: { y: { field: 'mean', type: 'quantitative' }, color },
    });
  }
  return {
    ...singleChart(options, values),
    layer: layers,
    config: READABLE_TEXT,
  };
}

