/**
 * A privacy curve plot, delta(epsilon) on a logarithmic delta axis, as a self-contained SVG
 * (no browser, no plotting dependency: a few lines and axes are all it needs). Several curves
 * (e.g. the RDP bound and the PLD curve of one event) share the axes.
 */

export interface CurveSeries {
  readonly label: string;
  readonly color: string;
  /** Points (epsilon, delta); points with delta <= 0 are left out of the log axis. */
  readonly points: readonly { readonly epsilon: number; readonly delta: number }[];
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c] as string);
}

export function privacyCurveSvg(series: readonly CurveSeries[], title: string): string {
  const width = 640;
  const height = 420;
  const left = 70;
  const right = 20;
  const top = 40;
  const bottom = 50;
  const all = series.flatMap((s) => s.points.filter((p) => p.delta > 0 && Number.isFinite(p.epsilon)));
  const maxEpsilon = Math.max(...all.map((p) => p.epsilon), 1e-9);
  const minLog = Math.floor(Math.log10(Math.min(...all.map((p) => p.delta))));
  const maxLog = Math.min(0, Math.ceil(Math.log10(Math.max(...all.map((p) => p.delta)))));
  const span = Math.max(1, maxLog - minLog);
  const x = (epsilon: number) => left + ((width - left - right) * epsilon) / maxEpsilon;
  const y = (delta: number) => top + ((height - top - bottom) * (maxLog - Math.log10(delta))) / span;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${width}" height="${height}" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="14">${escapeXml(title)}</text>`,
    `<line x1="${left}" y1="${height - bottom}" x2="${width - right}" y2="${height - bottom}" stroke="black"/>`,
    `<line x1="${left}" y1="${top}" x2="${left}" y2="${height - bottom}" stroke="black"/>`,
    `<text x="${(left + width - right) / 2}" y="${height - 12}" text-anchor="middle">epsilon</text>`,
    `<text x="16" y="${(top + height - bottom) / 2}" text-anchor="middle" transform="rotate(-90 16 ${(top + height - bottom) / 2})">delta (log scale)</text>`,
  ];
  const yStep = Math.max(1, Math.ceil(span / 8));
  for (let k = minLog; k <= maxLog; k += yStep) {
    parts.push(`<line x1="${left - 4}" y1="${y(10 ** k)}" x2="${left}" y2="${y(10 ** k)}" stroke="black"/>`);
    parts.push(`<text x="${left - 6}" y="${y(10 ** k) + 4}" text-anchor="end">1e${k}</text>`);
  }
  for (let i = 0; i <= 5; i++) {
    const epsilon = (maxEpsilon * i) / 5;
    parts.push(`<line x1="${x(epsilon)}" y1="${height - bottom}" x2="${x(epsilon)}" y2="${height - bottom + 4}" stroke="black"/>`);
    parts.push(`<text x="${x(epsilon)}" y="${height - bottom + 18}" text-anchor="middle">${Number(epsilon.toPrecision(3))}</text>`);
  }
  series.forEach((s, index) => {
    const path = s.points
      .filter((p) => p.delta > 0 && Number.isFinite(p.epsilon))
      .map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.epsilon).toFixed(2)},${y(p.delta).toFixed(2)}`)
      .join(' ');
    parts.push(`<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2"/>`);
    parts.push(`<line x1="${width - right - 170}" y1="${top + 12 + 18 * index}" x2="${width - right - 150}" y2="${top + 12 + 18 * index}" stroke="${s.color}" stroke-width="2"/>`);
    parts.push(`<text x="${width - right - 145}" y="${top + 16 + 18 * index}">${escapeXml(s.label)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
