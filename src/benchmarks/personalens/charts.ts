import type { TopLevelSpec } from 'vega-lite';
import type { ChartSpec } from '../../report/charts.js';

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
 * A measure's fixed scale: P is given on 1-4, Nat/Coh on 1-5, TCR is a percentage. Fixed scales keep
 * panels, runs and reports comparable, and bars start at the scale's floor (a P of 1 is no bar at all).
 */
export interface Scale {
  domain: [number, number];
  /** Axis tick step. */
  step: number;
}

export const SCALES = {
  tcr: { domain: [0, 100], step: 20 },
  p: { domain: [1, 4], step: 0.5 },
  likert5: { domain: [1, 5], step: 1 },
} as const satisfies Record<string, Scale>;

/** One panel of grouped bars: the measure's label (the `panel` value of its rows) and its scale. */
export interface BarPanel {
  label: string;
  scale: Scale;
}

/** A bar's row: the panel it belongs to, the bar's value, its 95% interval (NULL: none) and its n. */
interface BarValue {
  run: string;
  assistant: string;
  panel: string;
  value: number | null;
  lo: number | null;
  hi: number | null;
  n: number | null;
  [key: string]: unknown;
}

function ticks(scale: Scale): number[] {
  const out: number[] = [];
  for (let v = scale.domain[0]; v <= scale.domain[1] + 1e-9; v += scale.step) out.push(Math.round(v * 1000) / 1000);
  return out;
}

/**
 * Bars side by side per assistant, with 95% intervals as rules, one panel per measure (and a row per
 * run when there are several). Each panel has its measure's fixed scale, and every bar shows its n
 * (white at the foot of a tall bar, dark grey above a short one).
 */
function groupedBars(values: BarValue[], x: { field: string; title: string; sort: string[] }, panels: BarPanel[], assistants: string[]): TopLevelSpec {
  const step = Math.max(16, 10 * assistants.length + 6);
  const rows = values.map((v) => {
    const scale = panels.find((p) => p.label === v.panel)!.scale;
    const tall = v.value !== null && (v.value - scale.domain[0]) / (scale.domain[1] - scale.domain[0]) > 0.3;
    // Inside a tall bar at its foot in white; above a short bar's top in dark grey.
    return { ...v, n_text: v.n === null ? '' : String(v.n), n_color: tall ? '#fff' : '#333', n_y: tall || v.value === null ? scale.domain[0] : v.value };
  });
  return {
    data: { values: rows },
    hconcat: panels.map((panel) => {
      const y = {
        type: 'quantitative',
        title: panel.label,
        scale: { domain: panel.scale.domain, zero: false, clamp: true, nice: false },
        axis: { values: ticks(panel.scale) },
      };
      const layer = {
        width: { step },
        height: 220,
        encoding: {
          x: { field: x.field, type: 'nominal', title: x.title, sort: x.sort, axis: { labelAngle: -40, labelLimit: 140 } },
          xOffset: { field: 'assistant', type: 'nominal', sort: assistants },
          color: { field: 'assistant', type: 'nominal', sort: assistants, title: 'Assistant', legend: { orient: 'top', labelLimit: 400 } },
        },
        layer: [
          { mark: { type: 'bar' }, encoding: { y: { field: 'value', ...y }, y2: { datum: panel.scale.domain[0] } } },
          // Intervals are NULL for a single observation: no error bar then, and no layer at all when none has one.
          ...(rows.some((v) => v.panel === panel.label && v.lo !== null && v.hi !== null)
            ? [{ mark: { type: 'rule' }, encoding: { y: { field: 'lo', ...y }, y2: { field: 'hi' }, color: { value: '#333' } } }]
            : []),
          {
            mark: { type: 'text', angle: 270, align: 'left', baseline: 'middle', dx: 3, fontSize: 9 },
            encoding: { y: { field: 'n_y', ...y }, text: { field: 'n_text' }, color: { field: 'n_color', type: 'nominal', scale: null } },
          },
        ],
      };
      return {
        transform: [{ filter: { field: 'panel', equal: panel.label } }],
        ...(new Set(values.map((v) => v.run)).size > 1
          ? { facet: { row: { field: 'run', type: 'nominal', title: null, header: { labelAngle: 0, labelAlign: 'left', labelOrient: 'top' } } }, spec: layer }
          : layer),
      };
    }),
  } as TopLevelSpec;
}

/** Figure 4: TCR and P per domain and assistant (one setting), from the `figure4` view. */
export function figure4Chart(rows: Row[]): ChartSpec | null {
  const picked = pickSetting(rows);
  const measures = [
    { panel: 'TCR (%)', key: 'tcr', n: 'n_tc', scale: SCALES.tcr },
    { panel: 'P', key: 'p', n: 'n_p', scale: SCALES.p },
  ];
  const values = picked.rows.flatMap((r) =>
    measures
      .filter((m) => num(r[m.key]) !== null)
      // SD and MD rows of a domain are apart in the view (as the original reports them): MD ones are labelled.
      .map((m) => ({
        run: runLabel(r),
        assistant: str(r['assistant_model']),
        domain: r['kind'] === 'MD' ? `${str(r['domain'])} (MD)` : str(r['domain']),
        panel: m.panel,
        value: num(r[m.key]),
        lo: num(r[`${m.key}_lo`]),
        hi: num(r[`${m.key}_hi`]),
        n: num(r[m.n]),
      })),
  );
  if (values.length === 0) return null;
  const assistants = [...new Set(values.map((v) => v.assistant))].sort();
  const domains = [...new Set(values.map((v) => v.domain))].sort();
  return {
    id: 'figure4',
    title: `Figure 4: TCR and P per domain (${picked.setting} setting)`,
    caption:
      'Task completion rate (%, 0-100) and personalization (P, 1-4) per domain and assistant, with 95% bootstrap intervals; the number at the foot of each bar is n, the dialogues it averages. Multi-domain dialogues count towards each of their domains.',
    spec: groupedBars(
      values,
      { field: 'domain', title: 'Domain', sort: domains },
      measures.filter((m) => values.some((v) => v.panel === m.panel)).map((m) => ({ label: m.panel, scale: m.scale })),
      assistants,
    ),
  };
}

/** Table 4 as a chart: TCR and P per setting and assistant, for SD and MD tasks. */
export function table4Chart(rows: Row[]): ChartSpec | null {
  const measures = [
    { panel: 'SD TCR (%)', key: 'sd_tcr', n: 'sd_n', scale: SCALES.tcr },
    { panel: 'SD P', key: 'sd_p', n: 'sd_n', scale: SCALES.p },
    { panel: 'MD TCR (%)', key: 'md_tcr', n: 'md_n', scale: SCALES.tcr },
    { panel: 'MD P', key: 'md_p', n: 'md_n', scale: SCALES.p },
  ];
  const values = rows.flatMap((r) =>
    measures
      .filter((m) => num(r[m.key]) !== null)
      .map((m) => ({
        run: runLabel(r),
        assistant: str(r['assistant_model']),
        setting: str(r['setting']),
        panel: m.panel,
        value: num(r[m.key]),
        lo: num(r[`${m.key}_lo`]),
        hi: num(r[`${m.key}_hi`]),
        n: num(r[m.n]),
      })),
  );
  if (values.length === 0) return null;
  const assistants = [...new Set(values.map((v) => v.assistant))].sort();
  return {
    id: 'table4-chart',
    title: 'Table 4 as a chart: settings ablation',
    caption:
      'TCR (%, 0-100) and P (1-4) per setting and assistant, single-domain (SD) and multi-domain (MD) tasks, with 95% bootstrap intervals; the number at the foot of each bar is n, the dialogues judged.',
    spec: groupedBars(
      values,
      { field: 'setting', title: 'Setting', sort: orderedSettings(values) },
      measures.filter((m) => values.some((v) => v.panel === m.panel)).map((m) => ({ label: m.panel, scale: m.scale })),
      assistants,
    ),
  };
}

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
      columns: 5,
      spec: {
        width: 170,
        height: 110,
        encoding: {
          x: { field: 'turn', type: 'quantitative', title: 'Assistant turn', axis: { tickMinStep: 1, format: 'd' } },
          // P is given on 1-4: a fixed scale keeps turns, domains, assistants and reports comparable.
          y: {
            field: 'p',
            type: 'quantitative',
            title: 'P',
            scale: { domain: [...SCALES.p.domain], nice: false },
            axis: { values: ticks(SCALES.p).filter((t) => Number.isInteger(t)) },
          },
          color: {
            field: 'series',
            type: 'nominal',
            sort: series,
            title: severalRuns ? 'Assistant, run' : 'Assistant',
            legend: { orient: 'top', labelLimit: 400 },
          },
          // Per-prefix and chain-of-turn judgments of the same dialogues: solid and dashed lines.
          strokeDash: { field: 'method', type: 'nominal', title: 'Method', sort: ['per_prefix', 'chain_of_turn'] },
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
  return {
    id: 'score-distributions',
    title: 'Score distributions',
    caption:
      'Dialogues per score the judge gave, for each dimension and assistant, all settings pooled: TC task completion (0/1), P personalization (1-4), Nat and Coh naturalness and coherence (1-5) of the assistant (A) and the user agent (U); n in each title is the dialogues scored. Failed and unparsed judgments are not scores and are left out.',
    spec: {
      data: { values },
      hconcat: dims.map((d) => {
        const n = values.filter((v) => v.dimension === d.key).reduce((s, v) => s + v.n, 0);
        const panel = {
          width: { step: Math.max(22, 8 * assistants.length + 8) },
          height: 180,
          mark: { type: 'bar' },
          encoding: {
            x: { field: 'score', type: 'ordinal', title: 'Score', scale: { domain: [...d.scores] }, axis: { labelAngle: 0 } },
            xOffset: { field: 'assistant', type: 'nominal', sort: assistants },
            y: { field: 'n', type: 'quantitative', title: 'Dialogues' },
            color: { field: 'assistant', type: 'nominal', sort: assistants, title: 'Assistant', legend: { orient: 'top', labelLimit: 400 } },
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
