/**
 * One colour per accountant: the labels the CLI, the experiments and the calculator use map to
 * their accountant's colour, and every accountant's colour is told apart from every other
 * accountant's and every method's (CIE76 Delta E >= 15 in CIELAB, sRGB with the D65 white).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ACCOUNTANT_COLORS, accountantOfLabel } from '../../src/report/accountant-colors.js';
import { METHOD_COLOR_RULES, methodColor, methodColorScale } from '../../src/report/method-colors.js';
import { privacyCurveChart } from '../../src/report/vega-chart.js';

/** CIELAB of an sRGB hex colour (IEC 61966-2-1 transfer curve, sRGB-to-XYZ matrix, D65 white, CIE 1976 L*a*b*). */
function lab(hex: string): [number, number, number] {
  const [r, g, b] = [1, 3, 5].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  const f = (t: number) => (t > 216 / 24389 ? Math.cbrt(t) : (24389 / 27 * t + 16) / 116);
  const x = f((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047);
  const y = f(0.2126 * r + 0.7152 * g + 0.0722 * b);
  const z = f((0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883);
  return [116 * y - 16, 500 * (x - y), 200 * (y - z)];
}

const deltaE = (a: string, b: string) => Math.hypot(...lab(a).map((v, i) => v - lab(b)[i]));

test('the CIELAB conversion gives the published value of sRGB red (L 53.24, a 80.09, b 67.20)', () => {
  const [l, a, b] = lab('#ff0000');
  assert.ok(Math.abs(l - 53.24) < 0.05 && Math.abs(a - 80.09) < 0.1 && Math.abs(b - 67.2) < 0.1, `${l} ${a} ${b}`);
});

test('every accountant colour is at least Delta E 15 from every other accountant colour and every method colour', () => {
  const others = [...METHOD_COLOR_RULES.map((r) => [r.what, r.color] as const), ['no rule (neutral)', methodColor('something else')] as const];
  const accountants = Object.entries(ACCOUNTANT_COLORS);
  for (const [name, color] of accountants) {
    for (const [what, other] of [...others, ...accountants.filter(([n]) => n !== name)]) {
      assert.ok(deltaE(color, other) >= 15, `${name} ${color} vs ${what} ${other}: Delta E ${deltaE(color, other).toFixed(1)}`);
    }
  }
});

test("the labels of dpfit curve, the calculator and the experiments take their accountant's colour", () => {
  const cases: [string, keyof typeof ACCOUNTANT_COLORS][] = [
    ['RDP (upper bound)', 'rdp'],
    ['PLD (upper bound)', 'pld'],
    ['RDP (Thm. 3.2)', 'rdp'],
    ['PLD (PLRV bound D.11)', 'pld'],
    ['Gaussian, exact (lower bound, Lemma 3.4)', 'lowerBound'],
    ['Thm. 2.8 (Kifer et al.)', 'kifer'],
    ['Conj. 1 (a conjecture)', 'conjecture'],
    ['exact Gaussian', 'exactGaussian'],
  ];
  for (const [label, accountant] of cases) {
    assert.equal(accountantOfLabel(label), accountant, label);
    assert.equal(methodColor(label), ACCOUNTANT_COLORS[accountant], label);
  }
  // Methods stay methods.
  for (const label of ['DP-SGD (Poisson q = 0.0256, 2400 steps)', 'objective perturbation (Thm. 3.2)', 'proven: composition', 'RGM']) assert.equal(accountantOfLabel(label), undefined, label);
  const spec = privacyCurveChart(
    [
      { label: 'RDP (upper bound)', points: [{ epsilon: 1, delta: 1e-5 }] },
      { label: 'PLD (upper bound)', points: [{ epsilon: 1, delta: 1e-6 }] },
    ],
    { title: 't' },
  ) as { encoding: { color: { scale: unknown } } };
  assert.deepEqual(spec.encoding.color.scale, methodColorScale(['RDP (upper bound)', 'PLD (upper bound)']));
  assert.deepEqual((spec.encoding.color.scale as { range: string[] }).range, [ACCOUNTANT_COLORS.rdp, ACCOUNTANT_COLORS.pld]);
});
