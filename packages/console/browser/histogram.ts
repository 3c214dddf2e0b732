/**
 * @module histogram
 * Hits over time, stacked by severity band, drawn as SVG by hand (no chart library: a few dozen rectangles do
 * not need one). Dragging across the plot selects a sub-range and calls `onZoom` with it (brush to zoom).
 */
import { el, svg } from './dom.js';
import { BANDS, bandOf } from './severity.js';

/** The answer of `count by severity, bucket(w)`. */
export type BucketCounts = readonly { readonly key: readonly string[]; readonly count?: number }[];

/** What {@link renderHistogram} draws. */
export interface HistogramInput {
  readonly counts: BucketCounts;
  readonly fromMs: number;
  readonly toMs: number;
  readonly widthSecs: number;
  readonly onZoom: (fromMs: number, toMs: number) => void;
}

const W = 1000;
const H = 120;
const AXIS = 18;

/** Per bucket start (ms), the count per band. */
function tally(counts: BucketCounts): Map<number, number[]> {
  const out = new Map<number, number[]>();
  for (const row of counts) {
    const [sev, bucket] = row.key;
    if (bucket === undefined) continue;
    const t = Date.parse(bucket);
    const perBand = out.get(t) ?? BANDS.map(() => 0);
    perBand[BANDS.indexOf(bandOf(Number(sev)))]! += row.count ?? 0;
    out.set(t, perBand);
  }
  return out;
}

function label(ms: number, spanMs: number): string {
  const iso = new Date(ms).toISOString();
  return spanMs > 2 * 86_400_000 ? iso.slice(5, 16).replace('T', ' ') : iso.slice(11, 19);
}

/** Replaces `host`'s content with the histogram; returns the total hits drawn. */
export function renderHistogram(host: HTMLElement, input: HistogramInput): number {
  const { fromMs, toMs, widthSecs } = input;
  const spanMs = Math.max(1, toMs - fromMs);
  const widthMs = widthSecs * 1000;
  const buckets = tally(input.counts);
  let max = 0;
  let total = 0;
  for (const perBand of buckets.values()) {
    const sum = perBand.reduce((a, b) => a + b, 0);
    max = Math.max(max, sum);
    total += sum;
  }
  const x = (ms: number): number => ((ms - fromMs) / spanMs) * W;
  const plotH = H - AXIS;
  const root = svg('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none', class: 'histogram-svg' });
  root.setAttribute('data-testid', 'histogram-svg');
  for (const [start, perBand] of [...buckets.entries()].sort((a, b) => a[0] - b[0])) {
    let y = plotH;
    const x0 = Math.max(0, x(start));
    const barW = Math.max(1, Math.min(W, x(start + widthMs)) - x0 - 1);
    perBand.forEach((n, i) => {
      if (n === 0 || max === 0) return;
      const h = (n / max) * (plotH - 4);
      y -= h;
      const rect = svg('rect', { x: x0, y, width: barW, height: h, class: `bar sev-${BANDS[i]!.name}` });
      const title = svg('title');
      title.textContent = `${new Date(start).toISOString()} ${BANDS[i]!.name}: ${n}`;
      rect.append(title);
      root.append(rect);
    });
  }
  for (let i = 0; i <= 4; i++) {
    const ms = fromMs + (spanMs * i) / 4;
    const t = svg('text', {
      x: Math.min(W - 4, Math.max(4, x(ms))),
      y: H - 4,
      class: 'axis',
      'text-anchor': i === 0 ? 'start' : i === 4 ? 'end' : 'middle',
    });
    t.textContent = label(ms, spanMs);
    root.append(t);
  }
  const maxLabel = svg('text', { x: 4, y: 12, class: 'axis' });
  maxLabel.textContent = `max ${max}`;
  root.append(maxLabel);
  const brush = svg('rect', { x: 0, y: 0, width: 0, height: plotH, class: 'brush' });
  brush.style.display = 'none';
  root.append(brush);
  attachBrush(root, brush, (a, b) => {
    const t0 = fromMs + (Math.min(a, b) / W) * spanMs;
    const t1 = fromMs + (Math.max(a, b) / W) * spanMs;
    if (t1 - t0 >= 1000) input.onZoom(Math.floor(t0), Math.ceil(t1));
  });
  const legend = el(
    'div',
    { class: 'legend' },
    ...BANDS.map((b) => el('span', { class: `legend-item sev-${b.name}` }, b.name)),
    el('span', { class: 'hint' }, 'drag across the chart to zoom'),
  );
  host.replaceChildren(root, legend);
  return total;
}

/** Mouse drag on `root` → `done(x0, x1)` in viewBox units. */
function attachBrush(root: SVGSVGElement, brush: SVGRectElement, done: (x0: number, x1: number) => void): void {
  let start: number | null = null;
  const toX = (e: MouseEvent): number => {
    const r = root.getBoundingClientRect();
    return Math.min(W, Math.max(0, ((e.clientX - r.left) / Math.max(1, r.width)) * W));
  };
  root.addEventListener('mousedown', (e) => {
    start = toX(e);
    brush.setAttribute('x', String(start));
    brush.setAttribute('width', '0');
    brush.style.display = '';
    e.preventDefault();
  });
  root.addEventListener('mousemove', (e) => {
    if (start === null) return;
    const now = toX(e);
    brush.setAttribute('x', String(Math.min(start, now)));
    brush.setAttribute('width', String(Math.abs(now - start)));
  });
  const finish = (e: MouseEvent): void => {
    if (start === null) return;
    const a = start;
    start = null;
    brush.style.display = 'none';
    done(a, toX(e));
  };
  root.addEventListener('mouseup', finish);
  root.addEventListener('mouseleave', finish);
}
