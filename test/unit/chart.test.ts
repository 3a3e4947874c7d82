import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cumulative, escapeXml, formatTicks, niceAxis, renderBarChart, renderChart, type Series } from '../../src/report/chart.js';

interface Element {
  name: string;
  attrs: Map<string, string>;
  children: Element[];
  text: string;
}

function decode(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (_, e: string) => {
    const named: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
    if (e[0] !== '#') return named[e.toLowerCase()]!;
    return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
  });
}

/** A strict little XML parser: balanced tags, quoted unique attributes, no raw `<` or stray `&` in text. Throws on anything else. */
function parseXml(doc: string): Element {
  const entity = /&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/iy;
  const checkText = (text: string, where: number): void => {
    for (let i = 0; i < text.length; i++) {
      if (text[i] === '<') throw new Error(`raw < at ${where + i}`);
      if (text[i] === '&') {
        entity.lastIndex = i;
        if (!entity.test(text)) throw new Error(`bad entity at ${where + i}: ${text.slice(i, i + 10)}`);
      }
    }
  };
  const root: Element = { name: '#root', attrs: new Map(), children: [], text: '' };
  const stack: Element[] = [root];
  const tag = /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[A-Za-z_][\w:.-]*\s*=\s*"[^"]*")*)\s*(\/?)>/y;
  let i = 0;
  while (i < doc.length) {
    const lt = doc.indexOf('<', i);
    const text = doc.slice(i, lt === -1 ? doc.length : lt);
    checkText(text, i);
    stack[stack.length - 1]!.text += decode(text);
    if (lt === -1) break;
    tag.lastIndex = lt;
    const m = tag.exec(doc);
    if (!m) throw new Error(`malformed tag at ${lt}: ${doc.slice(lt, lt + 40)}`);
    const [whole, close, name, attrText, selfClose] = m as unknown as [string, string, string, string, string];
    if (close) {
      if (attrText || selfClose) throw new Error(`bad closing tag ${whole}`);
      const open = stack.pop();
      if (!open || open.name !== name) throw new Error(`</${name}> closes <${open?.name}>`);
    } else {
      const attrs = new Map<string, string>();
      for (const a of attrText.matchAll(/([A-Za-z_][\w:.-]*)\s*=\s*"([^"]*)"/g)) {
        if (attrs.has(a[1]!)) throw new Error(`duplicate attribute ${a[1]} in ${whole}`);
        checkText(a[2]!, lt);
        attrs.set(a[1]!, decode(a[2]!));
      }
      const el: Element = { name, attrs, children: [], text: '' };
      stack[stack.length - 1]!.children.push(el);
      if (!selfClose) stack.push(el);
    }
    i = lt + whole.length;
  }
  if (stack.length !== 1) throw new Error(`unclosed <${stack[stack.length - 1]!.name}>`);
  if (root.children.length !== 1) throw new Error(`expected one root element, got ${root.children.length}`);
  if (root.text.trim() !== '') throw new Error('text outside the root element');
  return root.children[0]!;
}

function all(el: Element, pred: (e: Element) => boolean, out: Element[] = []): Element[] {
  if (pred(el)) out.push(el);
  for (const c of el.children) all(c, pred, out);
  return out;
}

const seriesOf = (svg: Element): Element[] => all(svg, (e) => e.attrs.get('class') === 'series');
const texts = (svg: Element): string[] => all(svg, (e) => e.name === 'text').map((e) => e.text);

function ramp(name: string, peak: number, seconds: number): Series {
  const points: Array<[number, number]> = [];
  for (let t = 0; t <= seconds; t++) points.push([t, Math.round(peak * Math.min(1, t / 3) * (0.9 + 0.1 * Math.sin(t)))]);
  return { name, points };
}

test('a complete SVG document with one polyline per series and a legend', () => {
  const input = [ramp('InnoDB', 210_000, 25), ramp('MyRocks bulk', 930_000, 6), ramp('MyISAM', 400_000, 12)];
  const doc = renderChart(input, { title: 'user_summary, 5M rows', width: 900, height: 500 });
  assert.ok(doc.startsWith('<svg'));
  assert.ok(doc.trimEnd().endsWith('</svg>'));
  const svg = parseXml(doc);
  assert.equal(svg.name, 'svg');
  assert.equal(svg.attrs.get('xmlns'), 'http://www.w3.org/2000/svg');
  assert.equal(svg.attrs.get('width'), '900');
  assert.equal(svg.attrs.get('viewBox'), '0 0 900 500');
  const lines = seriesOf(svg);
  assert.equal(lines.length, 3);
  assert.deepEqual(
    lines.map((l) => l.attrs.get('data-name')),
    ['InnoDB', 'MyRocks bulk', 'MyISAM'],
  );
  // Distinct colours, and each polyline has as many points as its series.
  assert.equal(new Set(lines.map((l) => l.attrs.get('stroke'))).size, 3);
  lines.forEach((l, i) => {
    const pts = l.attrs.get('points')!.trim().split(/\s+/);
    assert.equal(pts.length, input[i]!.points.length);
    for (const p of pts) assert.match(p, /^-?\d+(\.\d+)?,-?\d+(\.\d+)?$/);
  });
  const t = texts(svg);
  assert.ok(t.includes('user_summary, 5M rows'), 'title');
  for (const name of ['InnoDB', 'MyRocks bulk', 'MyISAM']) assert.ok(t.includes(name), `legend entry ${name}`);
  assert.ok(t.includes('rows/s') && t.includes('elapsed time (s)'), 'axis labels');
});

test('points stay inside the plot frame', () => {
  const svg = parseXml(renderChart([ramp('a', 123_456, 37)], { width: 640, height: 400 }));
  const frame = all(svg, (e) => e.attrs.get('class') === 'frame')[0]!;
  const [fx, fy, fw, fh] = ['x', 'y', 'width', 'height'].map((k) => Number(frame.attrs.get(k)));
  for (const p of seriesOf(svg)[0]!.attrs.get('points')!.split(' ')) {
    const [x, y] = p.split(',').map(Number);
    assert.ok(x! >= fx! - 0.01 && x! <= fx! + fw! + 0.01, `x ${x}`);
    assert.ok(y! >= fy! - 0.01 && y! <= fy! + fh! + 0.01, `y ${y}`);
  }
});

test('rounded tick labels: 0, 50k, 100k … and whole seconds', () => {
  const svg = parseXml(renderChart([{ name: 'x', points: [[0, 0], [10, 180_000], [20, 240_000]] }]));
  const yTicks = all(svg, (e) => e.attrs.get('class') === 'y-ticks')[0]!.children.map((c) => c.text);
  assert.deepEqual(yTicks, ['0', '50k', '100k', '150k', '200k', '250k']);
  const xTicks = all(svg, (e) => e.attrs.get('class') === 'x-ticks')[0]!.children.map((c) => c.text);
  assert.deepEqual(xTicks, ['0', '5', '10', '15', '20']);
});

test('niceAxis and formatTicks', () => {
  assert.deepEqual(niceAxis(0, 1_430_000).ticks, [0, 500_000, 1_000_000, 1_500_000]);
  assert.deepEqual(formatTicks([0, 500_000, 1_000_000, 1_500_000], 500_000), ['0', '0.5M', '1M', '1.5M']);
  assert.deepEqual(formatTicks([0, 250_000, 500_000, 750_000, 1_000_000], 250_000), ['0', '0.25M', '0.5M', '0.75M', '1M']);
  assert.deepEqual(niceAxis(0, 7.3, 8).ticks, [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.deepEqual(formatTicks(niceAxis(0, 0.9).ticks, niceAxis(0, 0.9).step), ['0', '0.2', '0.4', '0.6', '0.8', '1']);
  assert.deepEqual(niceAxis(0, 0).ticks, [0, 0.2, 0.4, 0.6, 0.8, 1]);
  const a = niceAxis(0, 42.7, 8);
  for (const t of a.ticks) assert.equal(t, Number(t.toFixed(6)), 'no floating-point noise');
  assert.ok(a.max >= 42.7);
});

test('hostile series names and title are escaped', () => {
  const names = ['<script>alert(1)</script>', 'a & b', 'say "hi"', "it's", ']]><!--', '\u0001ctl'];
  const doc = renderChart(
    names.map((name, i) => ({ name, points: [[0, i], [1, i * 2]] })),
    { title: '<b>&"title"</b>', xLabel: 'x<', yLabel: 'y&' },
  );
  assert.ok(!doc.includes('<script'));
  assert.ok(!doc.includes('<b>'));
  const svg = parseXml(doc);
  const lines = seriesOf(svg);
  assert.equal(lines.length, names.length);
  assert.deepEqual(
    lines.map((l) => l.attrs.get('data-name')),
    // eslint-disable-next-line no-control-regex -- the control characters are what the chart must strip
    names.map((n) => n.replace(/[\u0000-\u001f]/g, '')),
  );
  assert.ok(texts(svg).includes('<b>&"title"</b>'));
  assert.ok(texts(svg).includes('x<') && texts(svg).includes('y&'));
  assert.equal(escapeXml(`<&>"'`), '&lt;&amp;&gt;&quot;&#39;');
});

test('degenerate inputs still give a valid SVG', () => {
  const cases: Array<[string, Series[]]> = [
    ['no series', []],
    ['an empty series', [{ name: 'empty', points: [] }]],
    ['a single point', [{ name: 'one', points: [[3, 12_345]] }]],
    ['all zero', [{ name: 'zero', points: [[0, 0], [1, 0], [2, 0]] }]],
    ['all at t=0', [{ name: 'same x', points: [[0, 5], [0, 7]] }]],
    ['non-finite values', [{ name: 'nan', points: [[Number.NaN, 1], [1, Number.POSITIVE_INFINITY], [2, 3]] }]],
    ['mixed', [{ name: 'empty', points: [] }, { name: 'one', points: [[1, 1]] }, ramp('ramp', 1000, 5)]],
  ];
  for (const [what, series] of cases) {
    const doc = renderChart(series);
    assert.ok(doc.startsWith('<svg'), what);
    assert.doesNotMatch(doc, /NaN|Infinity|undefined/, what);
    const svg = parseXml(doc);
    assert.equal(seriesOf(svg).length, series.length, what);
  }
  const one = parseXml(renderChart([{ name: 'one', points: [[3, 12_345]] }]));
  assert.equal(all(one, (e) => e.attrs.get('class') === 'marker').length, 1, 'a lone point is marked');
  const zero = parseXml(renderChart([{ name: 'zero', points: [[0, 0], [1, 0]] }]));
  assert.ok(all(zero, (e) => e.attrs.get('class') === 'y-ticks')[0]!.children.length >= 2, 'an all-zero chart still has a y scale');
});

test('many series get distinct styles', () => {
  const svg = parseXml(renderChart(Array.from({ length: 14 }, (_, i) => ramp(`s${i}`, 1000 * (i + 1), 4))));
  const lines = seriesOf(svg);
  assert.equal(lines.length, 14);
  const styles = new Set(lines.map((l) => `${l.attrs.get('stroke')}|${l.attrs.get('stroke-dasharray') ?? ''}`));
  assert.equal(styles.size, 14);
});

describe('renderBarChart', () => {
  test('one panel per measure, one bar per variant, widths proportional to the values, n/a for unmeasured', () => {
    const svg = renderBarChart(['InnoDB', 'MyRocks <zstd>'], [
      { title: 'rows/s', values: [100, 50], format: (v) => String(v) },
      { title: 'MB', values: [null, 20], format: (v) => v.toFixed(1) },
    ]);
    assert.equal((svg.match(/class="panel"/g) ?? []).length, 2);
    assert.equal((svg.match(/class="bar"/g) ?? []).length, 3);
    assert.equal((svg.match(/class="na"/g) ?? []).length, 1);
    assert.match(svg, /MyRocks &lt;zstd&gt;/);
    const widths = [...svg.matchAll(/class="bar" x="[\d.]+" y="[\d.]+" width="([\d.]+)"/g)].map((m) => Number(m[1]));
    assert.ok(Math.abs(widths[0]! / widths[1]! - 2) < 0.01, `widths ${widths.join(',')}`);
  });

  test('cumulative turns per-second rows into rows so far', () => {
    assert.deepEqual(cumulative([[2, 5], [1, 10], [3, 0]]), [[0, 0], [1, 10], [2, 15], [3, 15]]);
  });
});
