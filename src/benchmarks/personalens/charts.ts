import type { TopLevelSpec } from 'vega-lite';
import { type ChartSpec, type FacetBar, facetedBars, panelsPerRow, type Scale, scaleTicks } from '../../report/charts.js';

/**
 * PersonaLens's report charts: Figures 4 and 5, Table 4 and the score distributions, as Vega-Lite
 * specs over rows shaped here from its warehouse views (rendered by src/report/charts.ts).
 */

/** The paper's order of settings (Table 4); unknown settings sort after, by name. */
export const SETTING_ORDER = ['vanilla', 'base', 'base+d', 'base+i', 'base+s', 'base+all'];

type Row = Record<string, unknown>;

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

/**
 * The measures' fixed scales: P is given on 1-4, Nat/Coh on 1-5, TCR is a percentage. Fixed scales
 * keep panels, runs and reports comparable, and bars start at the scale's floor (a P of 1 is no bar at all).
 */
export const SCALES = {
  tcr: { domain: [0, 100], step: 20 },
  p: { domain: [1, 4], step: 0.5 },
  likert5: { domain: [1, 5], step: 1 },
} as const satisfies Record<string, Scale>;

const scale = (s: (typeof SCALES)[keyof typeof SCALES]): Scale => ({ domain: [s.domain[0], s.domain[1]], step: s.step });

/** The panel of a row: its assistant, with the run when the warehouse holds several. */
function panelOf(rows: Row[]): (r: Row) => string {
  const several = new Set(rows.map(runLabel)).size > 1;
  return (r) => (several ? `${str(r['assistant_model'])} \u00b7 ${runLabel(r)}` : str(r['assistant_model']));
}

/** The TCR and P bars of rows holding `<prefix>tcr`, `<prefix>p`, their intervals and n. */
function tcrAndP(rows: Row[], category: (r: Row) => string, kinds: (r: Row) => Array<{ kind: string; prefix: string; n: string; nP: string }>): FacetBar[] {
  const facet = panelOf(rows);
  const measures = [
    { label: 'TCR (%)', key: 'tcr' },
    { label: 'P', key: 'p' },
  ];
  return rows.flatMap((r) =>
    kinds(r).flatMap((k) =>
      measures
        .filter((m) => num(r[`${k.prefix}${m.key}`]) !== null)
        .map((m) => ({
          facet: facet(r),
          category: category(r),
          group: k.kind,
          measure: m.label,
          value: num(r[`${k.prefix}${m.key}`]),
          lo: num(r[`${k.prefix}${m.key}_lo`]),
          hi: num(r[`${k.prefix}${m.key}_hi`]),
          n: num(r[m.key === 'tcr' ? k.n : k.nP]),
        })),
    ),
  );
}

const KINDS = ['SD', 'MD'];
const TCR_AND_P = [
  { label: 'TCR (%)', scale: scale(SCALES.tcr) },
  { label: 'P', scale: scale(SCALES.p) },
];
const byName = (a: string, b: string) => a.localeCompare(b);

/**
 * Figure 4: TCR and P per domain (one setting), from the `figure4` view: a block per measure, a
 * panel per assistant, a row per domain with its SD and MD bars.
 */
export function figure4Chart(rows: Row[]): ChartSpec | null {
  const picked = pickSetting(rows);
  const values = tcrAndP(
    picked.rows,
    (r) => str(r['domain']),
    (r) => [{ kind: str(r['kind']), prefix: '', n: 'n_tc', nP: 'n_p' }],
  );
  if (values.length === 0) return null;
  return {
    id: 'figure4',
    title: `Figure 4: TCR and P per domain (${picked.setting} setting)`,
    caption:
      'Task completion rate (%, 0-100) and personalization (P, 1-4) per domain, one panel per assistant, single-domain (SD) and multi-domain (MD) tasks apart, with 95% bootstrap intervals; the number on each bar is n, the dialogues it averages. Multi-domain dialogues count towards each of their domains.',
    spec: facetedBars({
      values,
      facets: [...new Set(values.map((v) => v.facet))].sort(byName),
      categories: [...new Set(values.map((v) => v.category))].sort(byName),
      groups: KINDS.filter((k) => values.some((v) => v.group === k)),
      measures: TCR_AND_P,
      categoryTitle: 'Domain',
      groupTitle: 'Tasks',
    }),
  };
}

/** Table 4 as a chart: TCR and P per setting, a panel per assistant, SD and MD bars in each row. */
export function table4Chart(rows: Row[]): ChartSpec | null {
  const values = tcrAndP(
    rows,
    (r) => str(r['setting']),
    () => [
      { kind: 'SD', prefix: 'sd_', n: 'sd_n', nP: 'sd_n' },
      { kind: 'MD', prefix: 'md_', n: 'md_n', nP: 'md_n' },
    ],
  );
  if (values.length === 0) return null;
  return {
    id: 'table4-chart',
    title: 'Table 4 as a chart: settings ablation',
    caption:
      'TCR (%, 0-100) and P (1-4) per setting, one panel per assistant, single-domain (SD) and multi-domain (MD) tasks apart, with 95% bootstrap intervals; the number on each bar is n, the dialogues judged.',
    spec: facetedBars({
      values,
      facets: [...new Set(values.map((v) => v.facet))].sort(byName),
      categories: orderedSettings(values.map((v) => ({ setting: v.category }))),
      groups: KINDS.filter((k) => values.some((v) => v.group === k)),
      measures: TCR_AND_P,
      categoryTitle: 'Setting',
      groupTitle: 'Tasks',
    }),
  };
}

/** A legend above the chart, in rows of at most three entries so that long model names keep it within the page. */
const LEGEND = { orient: 'top', columns: 3, labelLimit: 260 } as const;

/** The width of one of Figure 5's panels, in px. */
const FIGURE5_PANEL = 150;

/**
 * Figure 5: mean P after each assistant turn, as small multiples: one panel per domain (its n in the
 * header: dialogues at the first turn), one line per assistant (and run), on P's fixed 1-4 scale.
 */
export function figure5Chart(rows: Row[]): ChartSpec | null {
  const picked = pickSetting(rows);
  const points = picked.rows
    .filter((r) => num(r['p']) !== null && num(r['turn']) !== null)
    .map((r) => ({
      run: runLabel(r),
      assistant: str(r['assistant_model']),
      domain: str(r['domain']),
      method: str(r['method'] ?? 'per_prefix'),
      turn: num(r['turn'])!,
      p: num(r['p']),
      n: num(r['n']) ?? 0,
    }));
  if (points.length === 0) return null;
  // n of a domain: the most dialogues any series has at its first turn.
  const firstTurn = new Map<string, number>();
  const nOf = new Map<string, number>();
  for (const v of points) {
    const key = `${v.domain}\u0000${v.assistant}\u0000${v.run}\u0000${v.method}`;
    if (!firstTurn.has(key) || v.turn < firstTurn.get(key)!) firstTurn.set(key, v.turn);
  }
  for (const v of points)
    if (firstTurn.get(`${v.domain}\u0000${v.assistant}\u0000${v.run}\u0000${v.method}`) === v.turn) nOf.set(v.domain, Math.max(nOf.get(v.domain) ?? 0, v.n));
  const severalRuns = new Set(points.map((v) => v.run)).size > 1;
  const values = points.map((v) => ({ ...v, panel: `${v.domain} (n=${nOf.get(v.domain)})`, series: severalRuns ? `${v.assistant}, ${v.run}` : v.assistant }));
  const panels = [...new Set(values.map((v) => v.panel))].sort();
  const series = [...new Set(values.map((v) => v.series))].sort();
  return {
    id: 'figure5',
    title: `Figure 5: Personalization by assistant turn, per domain (${picked.setting} setting)`,
    caption:
      'Mean P (1-4) after each assistant turn: one panel per domain (n: its dialogues at the first turn), one line per assistant; solid lines judge each prefix ending with an assistant turn (per_prefix), dashed lines score every turn in one call (chain_of_turn, the original prompt); later turns average fewer dialogues.',
    spec: {
      data: { values },
      facet: { field: 'panel', type: 'nominal', title: null, sort: panels, header: { labelFontSize: 11, labelFontWeight: 'bold' } },
      columns: panelsPerRow(FIGURE5_PANEL + 44, { gap: 16 }),
      spec: {
        width: FIGURE5_PANEL,
        height: 110,
        encoding: {
          x: { field: 'turn', type: 'quantitative', title: 'Assistant turn', axis: { tickMinStep: 1, format: 'd' } },
          // P is given on 1-4: a fixed scale keeps turns, domains, assistants and reports comparable.
          y: {
            field: 'p',
            type: 'quantitative',
            title: 'P',
            scale: { domain: [...SCALES.p.domain], nice: false },
            axis: { values: scaleTicks(scale(SCALES.p)).filter((t) => Number.isInteger(t)) },
          },
          color: {
            field: 'series',
            type: 'nominal',
            sort: series,
            title: severalRuns ? 'Assistant, run' : 'Assistant',
            legend: LEGEND,
          },
          // Per-prefix and chain-of-turn judgments of the same dialogues: solid and dashed lines.
          strokeDash: { field: 'method', type: 'nominal', title: 'Method', sort: ['per_prefix', 'chain_of_turn'], legend: { orient: 'top' } },
        },
        layer: [{ mark: { type: 'line' } }, { mark: { type: 'point', filled: true, size: 24 } }],
      },
    } as TopLevelSpec,
  };
}

/** The dialogue-level score columns of `dialogue_scores`, with the scale each is given on. */
export const SCORE_DIMENSIONS = [
  { key: 'tc', label: 'TC', scores: [0, 1] },
  { key: 'p', label: 'P', scores: [1, 2, 3, 4] },
  { key: 'nat_a', label: 'Nat (A)', scores: [1, 2, 3, 4, 5] },
  { key: 'coh_a', label: 'Coh (A)', scores: [1, 2, 3, 4, 5] },
  { key: 'nat_u', label: 'Nat (U)', scores: [1, 2, 3, 4, 5] },
  { key: 'coh_u', label: 'Coh (U)', scores: [1, 2, 3, 4, 5] },
] as const;

/**
 * Rows of (run, judge, assistant, dimension, score, n): counts of dialogue_scores per score. One panel
 * per dimension with every score of its scale on the axis (a score nobody got shows as no bar), n (the
 * dialogues scored) in the panel's title.
 */
export function scoreDistributionChart(rows: Row[]): ChartSpec | null {
  const values = rows
    .filter((r) => num(r['score']) !== null && num(r['n']) !== null)
    .map((r) => ({ run: runLabel(r), assistant: str(r['assistant_model']), dimension: str(r['dimension']), score: num(r['score']), n: num(r['n'])! }));
  if (values.length === 0) return null;
  const assistants = [...new Set(values.map((v) => v.assistant))].sort();
  const severalRuns = new Set(values.map((v) => v.run)).size > 1;
  const dims = SCORE_DIMENSIONS.filter((d) => values.some((v) => v.dimension === d.key));
  // Five scores of a bar per assistant each, at least 6 px a bar.
  const width = Math.max(160, Math.min(320, 5 * (6 * assistants.length + 10)));
  return {
    id: 'score-distributions',
    title: 'Score distributions',
    caption:
      'Dialogues per score the judge gave, for each dimension and assistant, all settings pooled: TC task completion (0/1), P personalization (1-4), Nat and Coh naturalness and coherence (1-5) of the assistant (A) and the user agent (U); n in each title is the dialogues scored. Failed and unparsed judgments are not scores and are left out.',
    spec: {
      data: { values },
      // Fixed-width panels wrapping into rows: as many as fit on the page.
      columns: panelsPerRow(width + 56, { gap: 24 }),
      // Each panel has its own bands: a shared offset scale would size every panel's bars by the widest band.
      resolve: { scale: { x: 'independent', xOffset: 'independent', y: 'independent' } },
      concat: dims.map((d) => {
        const n = values.filter((v) => v.dimension === d.key).reduce((s, v) => s + v.n, 0);
        const panel = {
          width,
          height: 160,
          mark: { type: 'bar' },
          encoding: {
            x: { field: 'score', type: 'ordinal', title: 'Score', scale: { domain: [...d.scores] }, axis: { labelAngle: 0 } },
            xOffset: { field: 'assistant', type: 'nominal', sort: assistants },
            y: { field: 'n', type: 'quantitative', title: 'Dialogues' },
            color: { field: 'assistant', type: 'nominal', sort: assistants, title: 'Assistant', legend: LEGEND },
          },
        };
        return {
          title: { text: `${d.label} (n=${n})`, fontSize: 13 },
          transform: [{ filter: { field: 'dimension', equal: d.key } }],
          ...(severalRuns
            ? { facet: { row: { field: 'run', type: 'nominal', title: null, header: { labelAngle: 0, labelAlign: 'left', labelOrient: 'top' } } }, spec: panel }
            : panel),
        };
      }),
    } as TopLevelSpec,
  };
}
