import type { TopLevelSpec } from 'vega-lite';
import { escapeHtml } from '../tables/render.js';

/**
 * The report's charts: Vega-Lite specs over rows shaped here from the warehouse views, rendered
 * to SVG on the server so the page needs no script, no network and no font.
 */

/** A chart ready for the page: its section text and the inline SVG. */
export interface RenderedChart {
  id: string;
  title: string;
  caption: string;
  svg: string;
}

/** A chart's data and spec, before rendering (kept apart so tests can check the data). */
export interface ChartSpec {
  id: string;
  title: string;
  caption: string;
  spec: TopLevelSpec;
}

/** Vega's ids (clip paths, gradients) restart at 1 in every SVG: scope them so several charts share a page. */
export function scopeSvgIds(svg: string, prefix: string): string {
  const ids = new Set([...svg.matchAll(/\bid="([^"]+)"/g)].map((m) => m[1]!));
  if (ids.size === 0) return svg;
  return svg
    .replace(/\bid="([^"]+)"/g, (_, id: string) => `id="${prefix}-${id}"`)
    .replace(/url\(#([^)]+)\)/g, (whole, id: string) => (ids.has(id) ? `url(#${prefix}-${id})` : whole))
    .replace(/href="#([^"]+)"/g, (whole, id: string) => (ids.has(id) ? `href="#${prefix}-${id}"` : whole));
}

/**
 * Renders a Vega-Lite spec to SVG without a browser. Inline in HTML the namespace declarations are
 * implied, so they are dropped: the page then holds no URL of its own at all.
 */
export async function renderChart(chart: ChartSpec, warnings: string[] = []): Promise<RenderedChart> {
  // Loaded here, not at the top: the benchmarks' chart specs import this module's layout helpers,
  // and a command that draws no chart (--version, --help) must not load Vega.
  const [vega, { compile }] = await Promise.all([import('vega'), import('vega-lite')]);
  const logger = collectingLogger(warnings, chart.id, vega.Warn);
  const compiled = compile({ config: CHART_CONFIG, ...chart.spec } as TopLevelSpec, { logger }).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logger });
  try {
    const svg = (await view.toSVG()).replace(/ xmlns(:xlink)?="[^"]*"/g, '').replace(/^<svg /, `<svg role="img" aria-label="${escapeHtml(chart.title)}" `);
    return { id: chart.id, title: chart.title, caption: chart.caption, svg: scopeSvgIds(svg, chart.id) };
  } finally {
    view.finalize();
  }
}

/**
 * A neutral look; system fonts only (no font files, nothing fetched). No text is set below
 * MIN_CHART_TEXT_PX, and the page shows every chart at its natural size (never scaled down), so
 * that is the size a reader sees.
 */
const CHART_CONFIG = {
  font: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  view: { stroke: '#ddd' },
  axis: { labelFontSize: 11, titleFontSize: 12, gridColor: '#eee' },
  legend: { labelFontSize: 11, titleFontSize: 12 },
  header: { labelFontSize: 12, titleFontSize: 12 },
  title: { fontSize: 13 },
  text: { fontSize: 11 },
  concat: { spacing: 24 },
  facet: { spacing: 16 },
};

/** The smallest text a chart sets, in px (n labels); the browser check fails anything below 9 px. */
export const MIN_CHART_TEXT_PX = 10;

/**
 * The widest a chart may be drawn, in px: the page's text column in a 1200 px window (the
 * browser check's default) less a margin. Small multiples wrap into rows to stay within it.
 */
export const CHART_MAX_WIDTH = 1080;

/** How many panels of `panel` px (plus `gap`) fit in a row beside `fixed` px of labels and legend. */
export function panelsPerRow(panel: number, options: { fixed?: number; gap?: number; max?: number } = {}): number {
  const fit = Math.floor((CHART_MAX_WIDTH - (options.fixed ?? 0) + (options.gap ?? 16)) / (panel + (options.gap ?? 16)));
  return Math.max(1, Math.min(options.max ?? Number.POSITIVE_INFINITY, fit));
}

/** A measure's fixed scale: its domain and the axis tick step. */
export interface Scale {
  domain: [number, number];
  step: number;
}

/** The ticks of a fixed scale, from its floor to its ceiling. */
export function scaleTicks(scale: Scale): number[] {
  const out: number[] = [];
  for (let v = scale.domain[0]; v <= scale.domain[1] + 1e-9; v += scale.step) out.push(Math.round(v * 1000) / 1000);
  return out;
}

const round = (v: number) => Math.round(v * 100) / 100;

/** One bar of facetedBars: its panel (facet), row (category), measure, value, 95% interval and n. */
export interface FacetBar {
  facet: string;
  category: string;
  measure: string;
  /** The bar's group within a row (one bar per group, side by side), e.g. a task kind. */
  group: string;
  value: number | null;
  lo: number | null;
  hi: number | null;
  n: number | null;
}

/**
 * Small multiples of horizontal bars, legible at any grid size: one block per measure (on its fixed
 * scale), and in each block one panel per facet (an assistant, say) at a fixed width, wrapping into
 * rows so no block is wider than CHART_MAX_WIDTH. Rows are the categories (domains, settings), with
 * a bar per group side by side, its 95% interval as a rule (none when NULL) and its n as a label
 * (white inside a long bar, dark after a short one). Row labels stand at the left of each row of
 * panels, and every panel has its value axis.
 */
export function facetedBars(o: {
  values: FacetBar[];
  facets: string[];
  categories: string[];
  groups: string[];
  measures: Array<{ label: string; scale: Scale }>;
  categoryTitle: string;
  groupTitle: string;
}): TopLevelSpec {
  // Row labels at the left of each row of panels (Vega has no canvas here and takes 0.8 x the font
  // size for a character's width).
  const labelWidth = Math.min(200, 14 + Math.ceil(0.8 * 11 * Math.max(4, ...o.categories.map((c) => c.length))));
  // Panels share the page: as wide as the facets allow, between 130 and 300 px.
  const width = Math.max(130, Math.min(300, Math.floor((CHART_MAX_WIDTH - labelWidth) / o.facets.length) - 16));
  const columns = panelsPerRow(width, { gap: 16, fixed: labelWidth });
  const barHeight = 11;
  const height = o.categories.length * (o.groups.length * barHeight + 5);
  const rows = o.values.map((v) => {
    const scale = o.measures.find((m) => m.label === v.measure)!.scale;
    const long = v.value !== null && (v.value - scale.domain[0]) / (scale.domain[1] - scale.domain[0]) > 0.3;
    const interval = v.lo !== null && v.hi !== null ? ` [${round(v.lo)}, ${round(v.hi)}]` : '';
    return {
      ...v,
      n_text: v.n === null ? '' : String(v.n),
      n_color: long ? '#fff' : '#333',
      n_x: long || v.value === null ? scale.domain[0] : v.value,
      // What a screen reader says of the bar (its aria-label): the panel is not in the bar's own fields.
      description: `${v.facet}; ${o.categoryTitle}: ${v.category}; ${o.groupTitle}: ${v.group}; ${v.measure}: ${v.value === null ? '-' : round(v.value)}${interval}; n: ${v.n ?? '-'}`,
    };
  });
  return {
    data: { values: rows },
    vconcat: o.measures
      .filter((m) => rows.some((r) => r.measure === m.label))
      .map((m) => {
        const x = {
          type: 'quantitative',
          title: m.label,
          scale: { domain: m.scale.domain, zero: false, clamp: true, nice: false },
          axis: { values: scaleTicks(m.scale), labelFlush: true },
        };
        const hasInterval = rows.some((r) => r.measure === m.label && r.lo !== null && r.hi !== null);
        return {
          title: { text: m.label, anchor: 'start', fontSize: 13 },
          transform: [{ filter: { field: 'measure', equal: m.label } }],
          facet: {
            field: 'facet',
            type: 'nominal',
            sort: o.facets,
            title: null,
            header: { labelOrient: 'top', labelAnchor: 'start', labelLimit: width, labelFontWeight: 'bold' },
          },
          columns,
          spec: {
            width,
            height,
            encoding: {
              y: { field: 'category', type: 'nominal', sort: o.categories, title: o.categoryTitle, axis: { title: null, labelLimit: labelWidth - 6 } },
              yOffset: { field: 'group', type: 'nominal', sort: o.groups, title: o.groupTitle },
            },
            layer: [
              {
                mark: { type: 'bar' },
                encoding: {
                  x: { field: 'value', ...x },
                  x2: { datum: m.scale.domain[0] },
                  description: { field: 'description' },
                  color: { field: 'group', type: 'nominal', sort: o.groups, title: o.groupTitle, legend: { orient: 'top', direction: 'horizontal' } },
                },
              },
              ...(hasInterval ? [{ mark: { type: 'rule' }, encoding: { x: { field: 'lo', ...x }, x2: { field: 'hi' }, color: { value: '#333' } } }] : []),
              {
                mark: { type: 'text', align: 'left', baseline: 'middle', dx: 3, fontSize: MIN_CHART_TEXT_PX },
                encoding: { x: { field: 'n_x', ...x }, text: { field: 'n_text' }, color: { field: 'n_color', type: 'nominal', scale: null } },
              },
            ],
          },
          // Every panel keeps its value axis (a wrapped grid shows a shared one under its last row only).
          resolve: { axis: { x: 'independent' } },
        };
      }),
  } as unknown as TopLevelSpec;
}

/** Vega and Vega-Lite log through console by default: keep their warnings for the page instead. */
function collectingLogger(warnings: string[], id: string, warn: number) {
  let level = warn;
  const logger = {
    level(l?: number) {
      if (l === undefined) return level;
      level = l;
      return logger;
    },
    error(...args: unknown[]) {
      warnings.push(`${id}: ${args.map(String).join(' ')}`);
      return logger;
    },
    warn(...args: unknown[]) {
      const text = args.map(String).join(' ');
      // A panel whose intervals are all NULL has an empty extent for them; the bars are drawn all the same.
      if (level >= warn && !text.startsWith('Infinite extent')) warnings.push(`${id}: ${text}`);
      return logger;
    },
    info() {
      return logger;
    },
    debug() {
      return logger;
    },
  };
  return logger;
}
