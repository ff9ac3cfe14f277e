/**
 * The privacy curve delta(epsilon) drawn as SVG (no plotting library on the page): epsilon on a
 * linear axis with round ticks, delta on a log axis labelled as the CLI's charts label it ("1e-6",
 * `src/report/axis-format.ts`), one polyline per accountant in its colour, and the requested point.
 */
export interface CurveSeries {
  readonly label: string;
  readonly color: string;
  readonly points: readonly { readonly epsilon: number; readonly delta: number }[];
}

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 300;
const MARGIN = { left: 60, right: 150, top: 12, bottom: 40 };

function element(name: string, attributes: Record<string, string | number>, text?: string): SVGElement {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function formatTick(value: number): string {
  return Number(value.toPrecision(3)).toString();
}

/** A round step (1, 2 or 5 times a power of ten) giving about `count` ticks from 0 to `max`. */
function niceStep(max: number, count: number): number {
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= raw) ?? 10 * power;
}

/** Draws `series` into `svg` (its previous content is replaced). Deltas <= 0 are left out (log axis). */
export function drawPrivacyCurve(svg: SVGSVGElement, series: readonly CurveSeries[], marker?: { epsilon: number; delta: number }): void {
  svg.replaceChildren();
  const points = series.flatMap((s) => s.points).filter((p) => p.delta > 0 && Number.isFinite(p.epsilon));
  if (points.length === 0) return;
  const maxEpsilon = Math.max(...points.map((p) => p.epsilon), marker?.epsilon ?? 0);
  const logDeltas = points.map((p) => Math.log10(p.delta)).concat(marker === undefined ? [] : [Math.log10(marker.delta)]);
  const top = Math.min(0, Math.ceil(Math.max(...logDeltas)));
  const bottom = Math.max(-300, Math.floor(Math.min(...logDeltas)));
  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (epsilon: number) => MARGIN.left + (maxEpsilon > 0 ? (epsilon / maxEpsilon) * plotWidth : 0);
  const y = (delta: number) => MARGIN.top + ((top - Math.log10(delta)) / Math.max(1, top - bottom)) * plotHeight;

  svg.append(element('rect', { x: MARGIN.left, y: MARGIN.top, width: plotWidth, height: plotHeight, fill: 'none', stroke: '#d0d7de' }));
  const decadeStep = Math.max(1, Math.ceil((top - bottom) / 8));
  for (let e = top; e >= bottom; e -= decadeStep) {
    const yy = y(10 ** e);
    svg.append(element('line', { x1: MARGIN.left, x2: MARGIN.left + plotWidth, y1: yy, y2: yy, stroke: '#eaeef2' }));
    svg.append(element('text', { x: MARGIN.left - 6, y: yy + 4, 'text-anchor': 'end' }, `1e${e}`));
  }
  // Round epsilons (0, 2, 4, ...), not fifths of the range (0, 1.88, 3.76, ...).
  const step = maxEpsilon > 0 ? niceStep(maxEpsilon, 5) : 1;
  for (let i = 0; i * step <= maxEpsilon * (1 + 1e-9); i++) {
    const epsilon = i * step;
    svg.append(element('line', { x1: x(epsilon), x2: x(epsilon), y1: MARGIN.top + plotHeight, y2: MARGIN.top + plotHeight + 4, stroke: '#57606a' }));
    svg.append(element('text', { x: x(epsilon), y: MARGIN.top + plotHeight + 16, 'text-anchor': 'middle' }, formatTick(epsilon)));
  }
  svg.append(element('text', { x: MARGIN.left + plotWidth / 2, y: HEIGHT - 6, 'text-anchor': 'middle' }, 'epsilon'));
  svg.append(element('text', { x: 14, y: MARGIN.top + plotHeight / 2, 'text-anchor': 'middle', transform: `rotate(-90 14 ${MARGIN.top + plotHeight / 2})` }, 'delta'));

  series.forEach((s, index) => {
    const visible = s.points.filter((p) => p.delta > 0);
    if (visible.length > 0) {
      svg.append(element('polyline', { points: visible.map((p) => `${x(p.epsilon).toFixed(1)},${y(p.delta).toFixed(1)}`).join(' '), fill: 'none', stroke: s.color, 'stroke-width': 2 }));
      for (const p of visible) svg.append(element('circle', { cx: x(p.epsilon), cy: y(p.delta), r: 2.5, fill: s.color }));
    }
    const ly = MARGIN.top + 14 + index * 18;
    svg.append(element('line', { x1: WIDTH - MARGIN.right + 12, x2: WIDTH - MARGIN.right + 32, y1: ly - 4, y2: ly - 4, stroke: s.color, 'stroke-width': 2 }));
    svg.append(element('text', { x: WIDTH - MARGIN.right + 38, y: ly }, s.label));
  });
  if (marker !== undefined && marker.delta > 0) {
    svg.append(element('circle', { cx: x(marker.epsilon), cy: y(marker.delta), r: 5, fill: 'none', stroke: '#1b1f24', 'stroke-width': 2 }));
  }
}
