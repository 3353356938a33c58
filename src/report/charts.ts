import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import { escapeHtml } from '../tables/render.js';

/**
 * The report's charts: Vega-Lite specs over rows shaped here from the warehouse views, rendered
 * to SVG on the server so the page needs no script, no network and no font.
 */

/** The paper's order of settings (Table 4); unknown settings sort after, by name. */
export const SETTING_ORDER = ['vanilla', 'base', 'base+d', 'base+i', 'base+s', 'base+all'];

type Row = Record<string, unknown>;

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

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));

export function settingRank(setting: string): number {
  const i = SETTING_ORDER.indexOf(setting);
  return i === -1 ? SETTING_ORDER.length : i;
}

/** Settings present, in the paper's order. */
function orderedSettings(rows: Row[]): string[] {
  return [...new Set(rows.map((r) => str(r['setting'])))].sort((a, b) => settingRank(a) - settingRank(b) || a.localeCompare(b));
}

/**
 * Figures 4 and 5 are drawn for one setting, as in the paper: base when the run has it, else the
 * first setting in the paper's order. Returns the rows kept and the setting.
 */
export function pickSetting(rows: Row[]): { setting: string | null; rows: Row[] } {
  const settings = orderedSettings(rows);
  const setting = settings.includes('base') ? 'base' : (settings[0] ?? null);
  return { setting, rows: rows.filter((r) => str(r['setting']) === setting) };
}

/** "run 9fb7ec (judge)": the row label when a warehouse holds several runs. */
function runLabel(r: Row): string {
  return `run ${str(r['run'])} (judge ${str(r['judge_model'])})`;
}

/** Facets by run only when there is more than one, so the usual single-run chart stays simple. */
function runFacet(rows: Array<{ run: string }>): { row?: { field: string; type: 'nominal'; title: null; header: { labelAngle: number; labelAlign: 'left'; labelOrient: 'top' } } } {
  return new Set(rows.map((r) => r.run)).size > 1
    ? { row: { field: 'run', type: 'nominal', title: null, header: { labelAngle: 0, labelAlign: 'left', labelOrient: 'top' } } }
    : {};
}

/** Bars side by side per assistant, with 95% intervals as rules; one panel per measure (and per run). */
function groupedBars(values: Array<Record<string, unknown>>, x: { field: string; title: string; sort: string[] }, panels: string[], assistants: string[]): TopLevelSpec {
  const step = Math.max(14, 8 * assistants.length + 6);
  return {
    data: { values },
    facet: {
      column: { field: 'panel', type: 'nominal', title: null, sort: panels, header: { labelFontSize: 13, labelFontWeight: 'bold' } },
      ...runFacet(values as Array<{ run: string }>),
    },
    spec: {
      width: { step },
      height: 220,
      encoding: {
        x: { field: x.field, type: 'nominal', title: x.title, sort: x.sort, axis: { labelAngle: -40, labelLimit: 140 } },
        xOffset: { field: 'assistant', type: 'nominal', sort: assistants },
        color: { field: 'assistant', type: 'nominal', sort: assistants, title: 'Assistant', legend: { orient: 'top', labelLimit: 400 } },
      },
      layer: [
        { mark: { type: 'bar' }, encoding: { y: { field: 'value', type: 'quantitative', title: null } } },
        // Intervals are NULL for a single observation: no error bar then, and no layer at all when none has one.
        ...(values.some((v) => v['lo'] !== null && v['hi'] !== null)
          ? [{ mark: { type: 'rule' }, encoding: { y: { field: 'lo', type: 'quantitative' }, y2: { field: 'hi' }, color: { value: '#333' } } }]
          : []),
      ],
    },
    resolve: { scale: { y: 'independent' } },
  } as TopLevelSpec;
}

/** Figure 4: TCR and P per domain and assistant (one setting), from the `figure4` view. */
export function figure4Chart(rows: Row[]): ChartSpec | null {
  const picked = pickSetting(rows);
  const values = picked.rows.flatMap((r) =>
    (
      [
        ['TCR (%)', 'tcr', 'tcr_lo', 'tcr_hi'],
        ['P', 'p', 'p_lo', 'p_hi'],
      ] as const
    )
      .filter(([, key]) => num(r[key]) !== null)
      // SD and MD rows of a domain are apart in the view (as the original reports them): MD ones are labelled.
      .map(([panel, key, lo, hi]) => ({ run: runLabel(r), assistant: str(r['assistant_model']), domain: r['kind'] === 'MD' ? `${str(r['domain'])} (MD)` : str(r['domain']), panel, value: num(r[key]), lo: num(r[lo]), hi: num(r[hi]) })),
  );
  if (values.length === 0) return null;
  const assistants = [...new Set(values.map((v) => v.assistant))].sort();
  const domains = [...new Set(values.map((v) => v.domain))].sort();
  return {
    id: 'figure4',
    title: `Figure 4: TCR and P per domain (${picked.setting} setting)`,
    caption: 'Task completion rate (%) and personalization (1-4) per domain and assistant, with 95% bootstrap intervals. Multi-domain dialogues count towards each of their domains.',
    spec: groupedBars(values, { field: 'domain', title: 'Domain', sort: domains }, ['TCR (%)', 'P'], assistants),
  };
}

/** Table 4 as a chart: TCR and P per setting and assistant, for SD and MD tasks. */
export function table4Chart(rows: Row[]): ChartSpec | null {
  const panels = [
    ['SD TCR (%)', 'sd_tcr'],
    ['SD P', 'sd_p'],
    ['MD TCR (%)', 'md_tcr'],
    ['MD P', 'md_p'],
  ] as const;
  const values = rows.flatMap((r) =>
    panels
      .filter(([, key]) => num(r[key]) !== null)
      .map(([panel, key]) => ({ run: runLabel(r), assistant: str(r['assistant_model']), setting: str(r['setting']), panel, value: num(r[key]), lo: num(r[`${key}_lo`]), hi: num(r[`${key}_hi`]) })),
  );
  if (values.length === 0) return null;
  const assistants = [...new Set(values.map((v) => v.assistant))].sort();
  return {
    id: 'table4-chart',
    title: 'Table 4 as a chart: settings ablation',
    caption: 'TCR (%) and P per setting and assistant, single-domain (SD) and multi-domain (MD) tasks, with 95% bootstrap intervals.',
    spec: groupedBars(values, { field: 'setting', title: 'Setting', sort: orderedSettings(values) }, panels.map(([p]) => p).filter((p) => values.some((v) => v.panel === p)), assistants),
  };
}

/** Figure 5: mean P after each assistant turn, one line per domain, one panel per assistant (one setting). */
export function figure5Chart(rows: Row[]): ChartSpec | null {
  const picked = pickSetting(rows);
  const values = picked.rows
    .filter((r) => num(r['p']) !== null && num(r['turn']) !== null)
    .map((r) => ({ run: runLabel(r), assistant: str(r['assistant_model']), domain: str(r['domain']), method: str(r['method'] ?? 'per_prefix'), turn: num(r['turn']), p: num(r['p']), n: num(r['n']) }));
  if (values.length === 0) return null;
  const domains = [...new Set(values.map((v) => v.domain))].sort();
  return {
    id: 'figure5',
    title: `Figure 5: Personalization by assistant turn, per domain (${picked.setting} setting)`,
    caption: 'Mean P (1-4) after each assistant turn, per domain: solid lines judge each prefix ending with an assistant turn (per_prefix), dashed lines score every turn in one call (chain_of_turn, the original prompt).',
    spec: {
      data: { values },
      facet: {
        column: { field: 'assistant', type: 'nominal', title: null, header: { labelFontSize: 13, labelFontWeight: 'bold' } },
        ...runFacet(values),
      },
      spec: {
        width: 420,
        height: 260,
        encoding: {
          x: { field: 'turn', type: 'quantitative', title: 'Assistant turn', axis: { tickMinStep: 1, format: 'd' } },
          // P is given on 1-4: a fixed scale keeps turns, assistants and reports comparable.
          y: { field: 'p', type: 'quantitative', title: 'P', scale: { domain: [1, 4] }, axis: { format: '.1f', tickCount: 6 } },
          color: { field: 'domain', type: 'nominal', sort: domains, title: 'Domain', scale: { scheme: domains.length > 10 ? 'category20' : 'tableau10' } },
          // Per-prefix and chain-of-turn judgments of the same dialogues: solid and dashed lines.
          strokeDash: { field: 'method', type: 'nominal', title: 'Method', sort: ['per_prefix', 'chain_of_turn'] },
        },
        layer: [{ mark: { type: 'line' } }, { mark: { type: 'point', filled: true, size: 30 } }],
      },
    } as TopLevelSpec,
  };
}

/** The dialogue-level score columns of `dialogue_scores`, with the range each is given on. */
export const SCORE_DIMENSIONS = [
  { key: 'tc', label: 'TC' },
  { key: 'p', label: 'P' },
  { key: 'nat_a', label: 'Nat (A)' },
  { key: 'coh_a', label: 'Coh (A)' },
  { key: 'nat_u', label: 'Nat (U)' },
  { key: 'coh_u', label: 'Coh (U)' },
] as const;

/** Rows of (run, judge, assistant, dimension, score, n): counts of dialogue_scores per score. */
export function scoreDistributionChart(rows: Row[]): ChartSpec | null {
  const values = rows
    .filter((r) => num(r['score']) !== null && num(r['n']) !== null)
    .map((r) => ({ run: runLabel(r), assistant: str(r['assistant_model']), panel: SCORE_DIMENSIONS.find((d) => d.key === r['dimension'])?.label ?? str(r['dimension']), score: num(r['score']), n: num(r['n']) }));
  if (values.length === 0) return null;
  const assistants = [...new Set(values.map((v) => v.assistant))].sort();
  const panels = SCORE_DIMENSIONS.map((d) => d.label as string).filter((p) => values.some((v) => v.panel === p));
  return {
    id: 'score-distributions',
    title: 'Score distributions',
    caption: 'Dialogues per score the judge gave, for each dimension and assistant, all settings pooled: TC task completion (0/1), P personalization (1-4), Nat and Coh naturalness and coherence (1-5) of the assistant (A) and the user agent (U). Failed and unparsed judgments are not scores and are left out.',
    spec: {
      data: { values },
      facet: {
        column: { field: 'panel', type: 'nominal', title: null, sort: panels, header: { labelFontSize: 13, labelFontWeight: 'bold' } },
        ...runFacet(values),
      },
      spec: {
        width: { step: Math.max(22, 8 * assistants.length + 8) },
        height: 180,
        mark: { type: 'bar' },
        encoding: {
          x: { field: 'score', type: 'ordinal', title: 'Score', axis: { labelAngle: 0 } },
          xOffset: { field: 'assistant', type: 'nominal', sort: assistants },
          y: { field: 'n', type: 'quantitative', title: 'Dialogues' },
          color: { field: 'assistant', type: 'nominal', sort: assistants, title: 'Assistant', legend: { orient: 'top', labelLimit: 400 } },
        },
      },
      resolve: { scale: { x: 'independent' } },
    } as TopLevelSpec,
  };
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
    const svg = (await view.toSVG())
      .replace(/ xmlns(:xlink)?="[^"]*"/g, '')
      .replace(/^<svg /, `<svg role="img" aria-label="${escapeHtml(chart.title)}" `);
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
