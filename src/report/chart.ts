/**
 * A standalone SVG line chart of rows/s against elapsed seconds, in the
 * manner of the gnuplot charts of published loader comparisons: one polyline
 * per series in a distinct colour, a legend, axes with rounded tick labels.
 * Pure: no dependencies, no I/O.
 */
export interface Series {
  name: string;
  /** [elapsed seconds, rows per second] */
  points: Array<[number, number]>;
}

export interface ChartOptions {
  title?: string;
  width?: number;
  height?: number;
  xLabel?: string;
  yLabel?: string;
}

/** gnuplot's default line colours, then a few more. */
const COLOURS = ['#9400d3', '#009e73', '#56b4e9', '#e69f00', '#0072b2', '#e51e10', '#000000', '#f0e442', '#8b4513', '#ff69b4'];
/** After the colours run out, the same colours dashed. */
const DASHES = ['', '8 4', '2 3', '8 3 2 3'];

const FONT = 'font-family="Helvetica, Arial, sans-serif"';

/** Escapes text for element content and double-quoted attribute values. */
export function escapeXml(text: string): string {
  // Control characters XML 1.0 forbids are dropped; lone surrogates become U+FFFD.
  // eslint-disable-next-line no-control-regex -- matching those control characters is the point
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '').replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
  return clean.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
}

/** A coordinate rounded to 0.01 px, without trailing zeros. */
function px(n: number): string {
  const r = Math.round(n * 100) / 100;
  return Object.is(r, -0) ? '0' : String(r);
}

const STEPS = [1, 2, 2.5, 5, 10];
/** Seconds read better without quarter steps. */
const TIME_STEPS = [1, 2, 5, 10];

/** A "nice" step (1, 2, 2.5 or 5 × 10^k by default) giving about `target` intervals over `span`. */
export function niceStep(span: number, target = 5, steps: readonly number[] = STEPS): number {
  if (!(span > 0) || !Number.isFinite(span)) return 1;
  const raw = span / target;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  const nice = steps.find((s) => f <= s * (1 + 1e-9)) ?? 10;
  return nice * mag;
}

export interface Axis {
  min: number;
  max: number;
  step: number;
  ticks: number[];
}

/** A rounded axis covering [lo, hi] (always including 0 for rates and times starting at 0). */
export function niceAxis(lo: number, hi: number, target = 5, steps: readonly number[] = STEPS): Axis {
  let min = Math.min(0, lo);
  let max = Math.max(0, hi);
  if (!(max > min)) max = min + 1;
  const step = niceStep(max - min, target, steps);
  min = Math.floor(min / step + 1e-9) * step;
  max = Math.ceil(max / step - 1e-9) * step;
  const ticks: number[] = [];
  const n = Math.round((max - min) / step);
  for (let i = 0; i <= n; i++) ticks.push(roundTo(min + i * step, step));
  return { min, max, step, ticks };
}

function decimalsFor(step: number): number {
  for (let d = 0; d <= 6; d++) if (Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) < 1e-6) return d;
  return 6;
}

function roundTo(v: number, step: number): number {
  const d = decimalsFor(step);
  return Number(v.toFixed(d));
}

function trimZeros(s: string): string {
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/**
 * Tick labels for one axis in one unit chosen from the largest tick:
 * 0, 50k, 100k, 150k; 0, 0.5M, 1M, 1.5M; 0, 2.5, 5.
 */
export function formatTicks(ticks: number[], step: number): string[] {
  const top = Math.max(...ticks.map((t) => Math.abs(t)), 0);
  const units: Array<[number, string]> = [
    [1e12, 'T'],
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
  ];
  const [div, suffix] = units.find(([u]) => top >= u) ?? [1, ''];
  const d = decimalsFor(step / div);
  return ticks.map((t) => (t === 0 ? '0' : `${trimZeros((t / div).toFixed(d))}${suffix}`));
}

export function renderChart(series: Series[], opts: ChartOptions = {}): string {
  const width = opts.width !== undefined && opts.width >= 200 ? opts.width : 800;
  const height = opts.height !== undefined && opts.height >= 150 ? opts.height : 450;
  const title = opts.title ?? 'Load rate';
  const clean = series.map((s) => ({
    name: s.name,
    points: s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y)).sort((a, b) => a[0] - b[0]),
  }));
  const plot = plotArea(clean, width, height, title);

  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(title)}">`,
  );
  out.push(`<title>${escapeXml(title)}</title>`);
  out.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`);
  if (title) out.push(`<text x="${px(width / 2)}" y="28" text-anchor="middle" font-size="16" ${FONT}>${escapeXml(title)}</text>`);
  drawAxes(out, plot, opts.xLabel ?? 'elapsed time (s)', opts.yLabel ?? 'rows/s');
  drawSeries(out, plot, clean);
  if (clean.length > 0) drawLegend(out, plot, clean);
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** Where the plot sits in the picture, its axes, and the scales from data to picture coordinates. */
interface PlotArea {
  height: number;
  left: number;
  top: number;
  plotW: number;
  plotH: number;
  xAxis: Axis;
  yAxis: Axis;
  sx: (x: number) => number;
  sy: (y: number) => number;
}

function plotArea(clean: Series[], width: number, height: number, title: string): PlotArea {
  const [x0, x1, y0, y1] = dataBounds(clean);
  const xAxis = niceAxis(x0, x1, 8, TIME_STEPS);
  const yAxis = niceAxis(y0, y1, 6);
  const left = 80;
  const right = 24;
  const top = title ? 48 : 20;
  const bottom = 56;
  const plotW = width - left - right;
  const plotH = height - top - bottom;
  const sx = (x: number): number => left + ((x - xAxis.min) / (xAxis.max - xAxis.min)) * plotW;
  const sy = (y: number): number => top + plotH - ((y - yAxis.min) / (yAxis.max - yAxis.min)) * plotH;
  return { height, left, top, plotW, plotH, xAxis, yAxis, sx, sy };
}

/** [x0, x1, y0, y1] over every point; [0, 1, 0, 1] when there is none. */
function dataBounds(clean: Series[]): [number, number, number, number] {
  // Loops rather than Math.min(...xs): a long run can have more points than a call has arguments.
  let bounds: [number, number, number, number] | undefined;
  for (const s of clean) {
    for (const [x, y] of s.points) {
      bounds = bounds ? [Math.min(bounds[0], x), Math.max(bounds[1], x), Math.min(bounds[2], y), Math.max(bounds[3], y)] : [x, x, y, y];
    }
  }
  return bounds ?? [0, 1, 0, 1];
}

/** Grid, tick labels, the frame and the axis labels. */
function drawAxes(out: string[], p: PlotArea, xLabel: string, yLabel: string): void {
  const { left, top, plotW, plotH, xAxis, yAxis, sx, sy } = p;
  out.push('<g class="grid" stroke="#d0d0d0" stroke-width="1" stroke-dasharray="2 3">');
  for (const t of xAxis.ticks) out.push(`<line x1="${px(sx(t))}" y1="${px(top)}" x2="${px(sx(t))}" y2="${px(top + plotH)}"/>`);
  for (const t of yAxis.ticks) out.push(`<line x1="${px(left)}" y1="${px(sy(t))}" x2="${px(left + plotW)}" y2="${px(sy(t))}"/>`);
  out.push('</g>');

  const xLabels = formatTicks(xAxis.ticks, xAxis.step);
  const yLabels = formatTicks(yAxis.ticks, yAxis.step);
  out.push(`<g class="x-ticks" font-size="12" ${FONT} text-anchor="middle">`);
  xAxis.ticks.forEach((t, i) => out.push(`<text x="${px(sx(t))}" y="${px(top + plotH + 18)}">${escapeXml(xLabels[i]!)}</text>`));
  out.push('</g>');
  out.push(`<g class="y-ticks" font-size="12" ${FONT} text-anchor="end">`);
  yAxis.ticks.forEach((t, i) => out.push(`<text x="${px(left - 8)}" y="${px(sy(t) + 4)}">${escapeXml(yLabels[i]!)}</text>`));
  out.push('</g>');

  out.push(`<rect class="frame" x="${px(left)}" y="${px(top)}" width="${px(plotW)}" height="${px(plotH)}" fill="none" stroke="#000000" stroke-width="1"/>`);
  out.push(`<text x="${px(left + plotW / 2)}" y="${px(p.height - 14)}" text-anchor="middle" font-size="13" ${FONT}>${escapeXml(xLabel)}</text>`);
  out.push(
    `<text x="18" y="${px(top + plotH / 2)}" text-anchor="middle" font-size="13" ${FONT} transform="rotate(-90 18 ${px(top + plotH / 2)})">${escapeXml(yLabel)}</text>`,
  );
}

/** Series i's colour, and its dash pattern once the colours run out. */
function seriesStyle(i: number): { colour: string; dashAttr: string } {
  const colour = COLOURS[i % COLOURS.length]!;
  const dash = DASHES[Math.floor(i / COLOURS.length) % DASHES.length]!;
  return { colour, dashAttr: dash ? ` stroke-dasharray="${dash}"` : '' };
}

function drawSeries(out: string[], p: PlotArea, clean: Series[]): void {
  out.push(`<g class="plot" fill="none" stroke-width="2" stroke-linejoin="round" stroke-linecap="round">`);
  clean.forEach((s, i) => {
    const { colour, dashAttr } = seriesStyle(i);
    const pts = s.points.map(([x, y]) => `${px(p.sx(x))},${px(p.sy(y))}`).join(' ');
    out.push(`<polyline class="series" data-name="${escapeXml(s.name)}" stroke="${colour}"${dashAttr} points="${pts}"/>`);
    // A lone point draws nothing as a line: mark it.
    if (s.points.length === 1) {
      const [x, y] = s.points[0]!;
      out.push(`<circle class="marker" cx="${px(p.sx(x))}" cy="${px(p.sy(y))}" r="3" fill="${colour}" stroke="none"/>`);
    }
  });
  out.push('</g>');
}

/** Top right inside the plot, like gnuplot's default key. */
function drawLegend(out: string[], p: PlotArea, clean: Series[]): void {
  const lineH = 18;
  const longest = Math.max(...clean.map((s) => [...s.name].length), 1);
  const boxW = Math.min(p.plotW - 16, 44 + longest * 7.2);
  const boxH = clean.length * lineH + 10;
  const bx = p.left + p.plotW - boxW - 8;
  const by = p.top + 8;
  out.push(`<g class="legend" font-size="12" ${FONT}>`);
  out.push(`<rect x="${px(bx)}" y="${px(by)}" width="${px(boxW)}" height="${px(boxH)}" fill="#ffffff" fill-opacity="0.85" stroke="#808080"/>`);
  clean.forEach((s, i) => {
    const { colour, dashAttr } = seriesStyle(i);
    const y = by + 5 + lineH * i + lineH / 2;
    out.push(`<line x1="${px(bx + 8)}" y1="${px(y)}" x2="${px(bx + 34)}" y2="${px(y)}" stroke="${colour}" stroke-width="2"${dashAttr}/>`);
    out.push(`<text x="${px(bx + 40)}" y="${px(y + 4)}">${escapeXml(s.name)}</text>`);
  });
  out.push('</g>');
}

/** One measure per engine variant, drawn as one panel of horizontal bars on its own scale. */
export interface BarPanel {
  title: string;
  /** One per label; null draws "n/a" (not measured). */
  values: Array<number | null>;
  /** How a value is printed at the end of its bar. */
  format: (v: number) => string;
}

/**
 * What a DBA compares across engines — load speed, size on disk, input/on-disk
 * ratio — as side-by-side panels of horizontal bars, one row per variant, in
 * the manner of published engine comparison tables. Pure: no I/O.
 */
export function renderBarChart(labels: readonly string[], panels: readonly BarPanel[], opts: { title?: string; panelWidth?: number } = {}): string {
  const title = opts.title ?? 'Engines compared';
  const rowH = 26;
  const labelW = Math.min(320, 24 + Math.max(8, ...labels.map((l) => [...l].length)) * 7.2);
  const panelW = opts.panelWidth !== undefined && opts.panelWidth >= 120 ? opts.panelWidth : 240;
  const gap = 24;
  const top = 64;
  const width = Math.ceil(labelW + panels.length * (panelW + gap) + 16);
  const height = top + labels.length * rowH + 20;
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(title)}">`);
  out.push(`<title>${escapeXml(title)}</title>`);
  out.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`);
  out.push(`<text x="${px(width / 2)}" y="24" text-anchor="middle" font-size="16" ${FONT}>${escapeXml(title)}</text>`);
  out.push(`<g class="labels" font-size="12" ${FONT} text-anchor="end">`);
  labels.forEach((l, i) => out.push(`<text x="${px(labelW - 10)}" y="${px(top + i * rowH + rowH / 2 + 4)}">${escapeXml(l)}</text>`));
  out.push('</g>');
  panels.forEach((p, k) => {
    const x0 = labelW + k * (panelW + gap);
    const max = Math.max(0, ...p.values.map((v) => (v !== null && Number.isFinite(v) ? v : 0)));
    // Room at the bar's end for its printed value.
    const barMax = panelW - 70;
    out.push(`<g class="panel" data-name="${escapeXml(p.title)}">`);
    out.push(`<text x="${px(x0)}" y="${px(top - 14)}" font-size="13" font-weight="bold" ${FONT}>${escapeXml(p.title)}</text>`);
    out.push(`<line x1="${px(x0)}" y1="${px(top - 4)}" x2="${px(x0)}" y2="${px(top + labels.length * rowH)}" stroke="#000000" stroke-width="1"/>`);
    p.values.forEach((v, i) => {
      const y = top + i * rowH + 4;
      const colour = COLOURS[k % COLOURS.length]!;
      if (v === null || !Number.isFinite(v)) {
        out.push(`<text class="na" x="${px(x0 + 6)}" y="${px(y + rowH / 2)}" font-size="12" fill="#808080" ${FONT}>n/a</text>`);
        return;
      }
      const w = max > 0 ? (Math.max(0, v) / max) * barMax : 0;
      out.push(`<rect class="bar" x="${px(x0)}" y="${px(y)}" width="${px(w)}" height="${px(rowH - 8)}" fill="${colour}"/>`);
      out.push(`<text class="value" x="${px(x0 + w + 6)}" y="${px(y + rowH / 2)}" font-size="12" ${FONT}>${escapeXml(p.format(v))}</text>`);
    });
    out.push('</g>');
  });
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

/** Rows committed per second → rows committed so far: monotone lines whose slope is the rate, readable where per-second rates are noise. */
export function cumulative(points: ReadonlyArray<[number, number]>): Array<[number, number]> {
  const sorted = [...points].sort((a, b) => a[0] - b[0]);
  let total = 0;
  const out: Array<[number, number]> = [[0, 0]];
  for (const [x, y] of sorted) {
    total += y;
    out.push([x, total]);
  }
  return out;
}
