/**
 * The vega-lite spec of a trade-off figure (`dpfit audit --plot`): false negative rate against
 * false positive rate of tests "the canary is in", both axes linear on [0, 1], in the style of
 * `dpfit curve`'s chart (`vega-chart.ts`: a single chart, the shared text sizes), the legend under
 * the plot (the labels carry the numbers). Curves are lines coloured by role: the accountant's (an upper bound on what any
 * test achieves: its curve is below the truth) in the accountants' colours, a lower bound in the
 * lower bound's colour (`accountant-colors.ts`); each test is a point at its observed rates with
 * a shaded rectangle up to its confidence bounds, and a cross at the bounds.
 *
 * It takes plain numbers (the audit computes them: `audit/trade-off-curves.ts`), so this floor
 * imports nothing of the audit's.
 */
import { ACCOUNTANT_COLORS } from './accountant-colors.js';
import { READABLE_TEXT } from './vega-chart.js';

export interface TradeOffChartData {
  readonly title: string;
  readonly subtitle?: string;
  readonly curves: readonly { readonly label: string; readonly role: 'accountant' | 'lowerBound'; readonly points: readonly { readonly alpha: number; readonly beta: number }[] }[];
  readonly tests: readonly { readonly label: string; readonly alpha: number; readonly beta: number; readonly alphaUpper: number; readonly betaUpper: number }[];
}

/** Side of the square plot, in pixels. */
export const TRADE_OFF_CHART_SIZE = 400;

/** The colours of the accountants' curves in order, then the lower bound's, then the tests'. */
const ACCOUNTANT_SERIES = [ACCOUNTANT_COLORS.pld, ACCOUNTANT_COLORS.exactGaussian, ACCOUNTANT_COLORS.rdp];
const TEST_COLOR = '#d62728';

/** The spec (file comment); every colour and label fixed by the data, none by the renderer. Fields of `data` beyond these are not read. */
export function tradeOffChart(data: TradeOffChartData): object {
  let accountants = 0;
  const colorOf = (role: 'accountant' | 'lowerBound') => (role === 'lowerBound' ? ACCOUNTANT_COLORS.lowerBound : ACCOUNTANT_SERIES[accountants++ % ACCOUNTANT_SERIES.length]);
  const series = data.curves.map((c) => ({ label: c.label, color: colorOf(c.role), dash: c.role === 'lowerBound' ? [6, 3] : [] }));
  const labels = [...series.map((s) => s.label), ...data.tests.map((t) => t.label)];
  const colors = [...series.map((s) => s.color), ...data.tests.map(() => TEST_COLOR)];
  const color = { field: 'series', type: 'nominal', title: null, sort: labels, scale: { domain: labels, range: colors }, legend: { orient: 'bottom', direction: 'vertical', labelLimit: 600, symbolOpacity: 1, symbolStrokeWidth: 2 } };
  const axis = (field: string, title: string) => ({ field, type: 'quantitative', title, scale: { domain: [0, 1], nice: false } });
  const x = axis('alpha', 'false positive rate (alpha)');
  const y = axis('beta', 'false negative rate (beta)');
  const lines = data.curves.map((c, i) => ({
    data: { values: c.points.map((p) => ({ series: c.label, alpha: p.alpha, beta: p.beta })) },
    mark: { type: 'line', strokeWidth: 2, ...(series[i].dash.length > 0 ? { strokeDash: series[i].dash } : {}) },
    encoding: { x, y, color, order: { field: 'alpha', type: 'quantitative' } },
  }));
  const tests = data.tests.map((t) => ({ series: t.label, alpha: t.alpha, beta: t.beta, alphaUpper: t.alphaUpper, betaUpper: t.betaUpper }));
  const testLayers =
    tests.length === 0
      ? []
      : [
          { data: { values: tests }, mark: { type: 'rect', opacity: 0.2 }, encoding: { x, x2: { field: 'alphaUpper' }, y, y2: { field: 'betaUpper' }, color } },
          { data: { values: tests }, mark: { type: 'point', filled: true, size: 60 }, encoding: { x, y, color } },
          { data: { values: tests }, mark: { type: 'point', shape: 'cross', filled: true, size: 80 }, encoding: { x: { ...x, field: 'alphaUpper' }, y: { ...y, field: 'betaUpper' }, color } },
        ];
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: data.title, ...(data.subtitle === undefined ? {} : { subtitle: data.subtitle }) },
    width: TRADE_OFF_CHART_SIZE,
    height: TRADE_OFF_CHART_SIZE,
    layer: [...lines, ...testLayers],
    config: READABLE_TEXT,
  };
}
