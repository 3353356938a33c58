import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
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
  const logger = collectingLogger(warnings, chart.id);
  const compiled = compile({ config: CHART_CONFIG, ...chart.spec } as TopLevelSpec, { logger }).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none', logger });
  try {
    const svg = (await view.toSVG()).replace(/ xmlns(:xlink)?="[^"]*"/g, '').replace(/^<svg /, `<svg role="img" aria-label="${escapeHtml(chart.title)}" `);
    return { id: chart.id, title: chart.title, caption: chart.caption, svg: scopeSvgIds(svg, chart.id) };
  } finally {
    view.finalize();
  }
}

/** A neutral look; system fonts only (no font files, nothing fetched). */
const CHART_CONFIG = {
  font: 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif',
  view: { stroke: '#ddd' },
  axis: { labelFontSize: 11, titleFontSize: 12, gridColor: '#eee' },
  legend: { labelFontSize: 11, titleFontSize: 12 },
};

/** Vega and Vega-Lite log through console by default: keep their warnings for the page instead. */
function collectingLogger(warnings: string[], id: string) {
  let level = vega.Warn;
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
      if (level >= vega.Warn && !text.startsWith('Infinite extent')) warnings.push(`${id}: ${text}`);
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
