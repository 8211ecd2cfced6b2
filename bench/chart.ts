/** bench/latency.svg: p50 latency against model size, both axes logarithmic, hand-written SVG. */

export interface Series {
  label: string;
  color: string;
  dashed?: boolean;
  /** [model size, latency ms] */
  points: Array<[number, number]>;
}

const WIDTH = 760;
const HEIGHT = 460;
const PLOT = { left: 70, right: 250, top: 48, bottom: 60 };

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const fmt = (value: number) => (value >= 1 ? String(Number(value.toPrecision(3))) : String(Number(value.toPrecision(2))));

export function latencyChart(title: string, subtitle: string, series: Series[]): string {
  const points = series.flatMap((s) => s.points).filter(([x, y]) => x > 0 && y > 0 && Number.isFinite(y));
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  const xMin = Math.log10(Math.min(...xs)) - 0.15;
  const xMax = Math.log10(Math.max(...xs)) + 0.15;
  const yMin = Math.floor(Math.log10(Math.min(...ys)));
  const yMax = Math.ceil(Math.log10(Math.max(...ys)));
  const plotW = WIDTH - PLOT.left - PLOT.right;
  const plotH = HEIGHT - PLOT.top - PLOT.bottom;
  const px = (x: number) => PLOT.left + ((Math.log10(x) - xMin) / (xMax - xMin || 1)) * plotW;
  const py = (y: number) => PLOT.top + plotH - ((Math.log10(y) - yMin) / (yMax - yMin || 1)) * plotH;
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`);
  out.push(`<text x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`);
  out.push(`<text x="${WIDTH / 2}" y="35" text-anchor="middle" font-size="11" fill="#555">${escapeXml(subtitle)}</text>`);
  // Grid and y ticks: every decade, with 2 and 5 as light lines.
  for (let e = yMin; e <= yMax; e++) {
    for (const m of [1, 2, 5]) {
      const v = m * 10 ** e;
      if (Math.log10(v) > yMax + 1e-9) continue;
      const y = py(v).toFixed(1);
      out.push(`<line x1="${PLOT.left}" x2="${PLOT.left + plotW}" y1="${y}" y2="${y}" stroke="${m === 1 ? '#bbb' : '#eee'}"/>`);
      if (m === 1 || yMax - yMin <= 2) out.push(`<text x="${PLOT.left - 8}" y="${y}" dy="4" text-anchor="end">${fmt(v)}</text>`);
    }
  }
  const sizes = [...new Set(xs)].sort((a, b) => a - b);
  for (const size of sizes) {
    const x = px(size).toFixed(1);
    out.push(`<line x1="${x}" x2="${x}" y1="${PLOT.top}" y2="${PLOT.top + plotH}" stroke="#ddd"/>`);
    out.push(`<text x="${x}" y="${PLOT.top + plotH + 18}" text-anchor="middle">${size.toLocaleString('en-US')}</text>`);
  }
  out.push(`<rect x="${PLOT.left}" y="${PLOT.top}" width="${plotW}" height="${plotH}" fill="none" stroke="#333"/>`);
  out.push(`<text x="${PLOT.left + plotW / 2}" y="${HEIGHT - 18}" text-anchor="middle">components in the organization (log scale)</text>`);
  out.push(`<text transform="translate(18 ${PLOT.top + plotH / 2}) rotate(-90)" text-anchor="middle">p50 latency, ms (log scale)</text>`);
  series.forEach((s, i) => {
    const valid = s.points.filter(([x, y]) => x > 0 && y > 0 && Number.isFinite(y));
    const dash = s.dashed ? ' stroke-dasharray="6 4"' : '';
    if (valid.length > 1) {
      const d = valid.map(([x, y], k) => `${k ? 'L' : 'M'}${px(x).toFixed(1)} ${py(y).toFixed(1)}`).join(' ');
      out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`);
    }
    for (const [x, y] of valid) {
      out.push(
        `<circle cx="${px(x).toFixed(1)}" cy="${py(y).toFixed(1)}" r="3.5" fill="${s.color}"><title>${escapeXml(s.label)}: ${fmt(y)} ms at ${x}</title></circle>`,
      );
    }
    const ly = PLOT.top + 10 + i * 20;
    const lx = WIDTH - PLOT.right + 16;
    out.push(`<line x1="${lx}" x2="${lx + 24}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${dash}/>`);
    out.push(`<circle cx="${lx + 12}" cy="${ly}" r="3.5" fill="${s.color}"/>`);
    out.push(`<text x="${lx + 30}" y="${ly}" dy="4">${escapeXml(s.label)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
