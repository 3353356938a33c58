import type { TopLevelSpec } from 'vega-lite';
import { type ChartSpec, MIN_CHART_TEXT_PX, panelsPerRow } from '../../report/charts.js';
import { num, str } from '../../report/row-values.js';

/**
 * PERSONA-bench's charts: the results per setting with their 95% intervals (persona_result_intervals)
 * and the paired setting comparison (persona_setting_comparison). Each metric gets its own panel on a
 * fixed scale, its natural range where it has one, so settings, models and reports compare at a
 * glance; the panels have a fixed width and wrap into rows, whatever the number of models.
 */

type Row = Record<string, unknown>;

/** The benchmark's order of settings. */
export const PERSONA_SETTINGS = ['P-Conv', 'P-NonConv', 'NP-Conv'];

/** The metrics charted, in the README's order, with their labels and natural ranges (null: unbounded above, from the data). */
export const PERSONA_METRICS: Array<{ task: string; metric: string; label: string; domain: [number, number] | null }> = [
  { task: '3.1', metric: 'accuracy', label: '3.1 accuracy', domain: [0, 1] },
  { task: '3.1', metric: 'f1', label: '3.1 F1', domain: [0, 1] },
  { task: '3.1', metric: 'mcc', label: '3.1 MCC', domain: [-1, 1] },
  { task: '3.2', metric: 'rmse', label: '3.2 RMSE', domain: null },
  { task: '3.2', metric: 'mae', label: '3.2 MAE', domain: null },
  { task: '3.3', metric: 'rouge1', label: '3.3 ROUGE-1', domain: [0, 1] },
  { task: '3.3', metric: 'rougeL', label: '3.3 ROUGE-L', domain: [0, 1] },
  { task: '3.3', metric: 'meteor', label: '3.3 METEOR', domain: [0, 1] },
  { task: '3.3', metric: 'bleu', label: '3.3 BLEU', domain: [0, 1] },
  { task: '3.3', metric: 'sbert', label: '3.3 SBERT', domain: [-1, 1] },
];

/** An unbounded metric's scale: from 0 to a round number above the largest value. */
function openScale(max: number): [number, number] {
  if (!(max > 0)) return [0, 1];
  const step = 10 ** Math.floor(Math.log10(max));
  return [0, Math.ceil((max * 1.1) / step) * step];
}

/** 3.3 is charted in one mode: best-of-n when the run has it (the paper's), else single-sample. */
export function chartedMode(rows: Row[]): string | null {
  const modes = new Set(rows.filter((r) => r['task'] === '3.3').map((r) => str(r['mode'])));
  return modes.has('best-of-n') ? 'best-of-n' : modes.has('single-sample') ? 'single-sample' : null;
}

/**
 * Panels, one per metric, each on its own fixed scale, wrapping into rows: `layer` draws one panel's
 * marks from rows carrying `value`, `lo`, `hi`, `n_text`, `setting`/`pair` and `model`. A panel has
 * three groups (settings or pairs) of a bar or point per model, at least 11 px each.
 */
function panels(
  values: Row[],
  labels: Array<{ label: string; domain: [number, number] }>,
  models: number,
  layer: (y: object, domain: [number, number]) => object[],
): TopLevelSpec {
  const width = Math.max(150, 3 * (11 * models + 12));
  return {
    data: { values },
    columns: panelsPerRow(width + 60, { gap: 24 }),
    concat: labels.map(({ label, domain }) => {
      const y = { type: 'quantitative', title: label, scale: { domain, nice: false, zero: false, clamp: true } };
      return { transform: [{ filter: { field: 'panel', equal: label } }], width, height: 180, layer: layer(y, domain) };
    }),
    // Each panel its own scales (its metric's range, its own bands); one colour legend for all.
    resolve: { scale: { x: 'independent', xOffset: 'independent', y: 'independent' } },
  } as unknown as TopLevelSpec;
}

/** A legend above the chart, in rows of at most three models so that long names keep it within the page. */
const LEGEND = { orient: 'top', columns: 3, labelLimit: 260 } as const;

/**
 * The results as bars: per metric, one bar per setting and model with its 95% interval (from
 * persona_result_intervals) and n, the predictions scored, at its foot (white inside a tall bar,
 * dark above a short one).
 */
export function personaResultsChart(rows: Row[]): ChartSpec | null {
  const mode = chartedMode(rows);
  const picked = rows
    .filter((r) => num(r['value']) !== null && (r['task'] !== '3.3' || str(r['mode']) === mode))
    .flatMap((r) => {
      const m = PERSONA_METRICS.find((x) => x.task === r['task'] && x.metric === r['metric']);
      if (!m) return [];
      return [
        {
          panel: m.label,
          setting: str(r['setting']),
          model: str(r['model']),
          value: num(r['value'])!,
          lo: num(r['lo']),
          hi: num(r['hi']),
          n: num(r['n_scored']),
        },
      ];
    });
  if (picked.length === 0) return null;
  const labels = PERSONA_METRICS.filter((m) => picked.some((v) => v.panel === m.label)).map((m) => ({
    label: m.label,
    domain: m.domain ?? openScale(Math.max(...picked.filter((v) => v.panel === m.label).flatMap((v) => [v.value, v.hi ?? v.value]))),
  }));
  const values = picked.map((v) => {
    const [floor, ceiling] = labels.find((l) => l.label === v.panel)!.domain;
    const base = floor <= 0 && ceiling >= 0 ? 0 : floor;
    const tall = (v.value - base) / (ceiling - floor) > 0.3;
    return { ...v, base, n_text: `n=${v.n ?? '?'}`, n_y: tall ? base : v.value, n_color: tall ? '#fff' : '#333' };
  });
  const models = [...new Set(values.map((v) => v.model))].sort();
  const x = { field: 'setting', type: 'nominal', title: null, sort: PERSONA_SETTINGS, axis: { labelAngle: 0 } };
  const spec = panels(values, labels, models.length, (y, domain) => {
    // Bars grow from 0 (MCC and SBERT can fall below it), or from the scale's floor when 0 is off it.
    const base = domain[0] <= 0 && domain[1] >= 0 ? 0 : domain[0];
    const enc = { x, xOffset: { field: 'model', sort: models } };
    return [
      {
        mark: { type: 'bar' },
        encoding: {
          ...enc,
          y: { field: 'value', ...y },
          y2: { datum: base },
          color: { field: 'model', type: 'nominal', sort: models, title: 'Model', legend: LEGEND },
        },
      },
      ...(values.some((v) => v.lo !== null && v.hi !== null)
        ? [{ mark: { type: 'rule' }, encoding: { ...enc, y: { field: 'lo', ...y }, y2: { field: 'hi' }, color: { value: '#333' } } }]
        : []),
      {
        mark: { type: 'text', angle: 270, align: 'left', baseline: 'middle', dx: 3, fontSize: MIN_CHART_TEXT_PX },
        encoding: { ...enc, y: { field: 'n_y', ...y }, text: { field: 'n_text' }, color: { field: 'n_color', type: 'nominal', scale: null } },
      },
    ];
  });
  return {
    id: 'persona-results',
    title: 'PERSONA-bench: results per setting',
    caption: `Each metric per setting (P-Conv, P-NonConv, NP-Conv) and model with its 95% interval, from persona_result_intervals: accuracy a Wilson interval, the other metrics a bootstrap over users (none below 2 users). n on each bar is the predictions scored (unparsed and failed ones are counted in the table, never scored). Fixed scales: accuracy, F1, ROUGE, METEOR and BLEU on 0-1, MCC and SBERT on -1-1; RMSE and MAE from 0.${mode ? ` 3.3 shows the ${mode} scores.` : ''}`,
    spec,
  };
}

/** The per-sample quantity each comparison metric differs in, with the range of a difference of it. */
const COMPARED: Record<string, { label: string; domain: [number, number] | null }> = {
  correct: { label: '3.1 correct', domain: [-1, 1] },
  abs_error: { label: '3.2 |error|', domain: null },
  rouge1: { label: '3.3 ROUGE-1', domain: [-1, 1] },
  rouge_l: { label: '3.3 ROUGE-L', domain: [-1, 1] },
  meteor: { label: '3.3 METEOR', domain: [-1, 1] },
  bleu: { label: '3.3 BLEU', domain: [-1, 1] },
  sbert: { label: '3.3 SBERT', domain: [-2, 2] },
};

/**
 * The paired setting comparison: per metric, each pair of settings (A - B on the same targets) as a
 * point with its 95% interval clustered by user, n (the pairs) beside it, and the zero line.
 */
export function personaSettingChart(rows: Row[]): ChartSpec | null {
  const mode = chartedMode(rows);
  const values = rows
    .filter((r) => num(r['mean_difference']) !== null && (r['task'] !== '3.3' || str(r['mode']) === mode))
    .flatMap((r) => {
      const c = COMPARED[str(r['metric'])];
      if (!c) return [];
      const d = num(r['mean_difference'])!;
      return [
        {
          panel: c.label,
          pair: `${str(r['setting_a'])} - ${str(r['setting_b'])}`,
          model: str(r['model']),
          value: d,
          lo: num(r['lo']) ?? d,
          hi: num(r['hi']) ?? d,
          n_text: `n=${num(r['n_pairs']) ?? '?'}`,
        },
      ];
    });
  if (values.length === 0) return null;
  const labels = Object.values(COMPARED)
    .filter((c) => values.some((v) => v.panel === c.label))
    .map((c) => {
      if (c.domain) return { label: c.label, domain: c.domain };
      // A difference of absolute errors: symmetric around 0, wide enough for every interval.
      const m = openScale(Math.max(...values.filter((v) => v.panel === c.label).flatMap((v) => [Math.abs(v.lo), Math.abs(v.hi)])))[1];
      return { label: c.label, domain: [-m, m] as [number, number] };
    });
  const pairs = ['P-Conv - P-NonConv', 'P-Conv - NP-Conv', 'P-NonConv - NP-Conv'];
  const models = [...new Set(values.map((v) => v.model))].sort();
  const spec = panels(values, labels, models.length, (y) => {
    const enc = {
      x: { field: 'pair', type: 'nominal', title: null, sort: pairs, axis: { labelAngle: -30, labelLimit: 200 } },
      xOffset: { field: 'model', sort: models },
      color: { field: 'model', type: 'nominal', sort: models, title: 'Model', legend: LEGEND },
    };
    return [
      { mark: { type: 'rule', color: '#888' }, encoding: { y: { datum: 0, ...y } } },
      { mark: { type: 'rule' }, encoding: { ...enc, y: { field: 'lo', ...y }, y2: { field: 'hi' } } },
      { mark: { type: 'point', filled: true, size: 40 }, encoding: { ...enc, y: { field: 'value', ...y } } },
    ];
  });
  return {
    id: 'persona-settings',
    title: 'PERSONA-bench: P-Conv vs P-NonConv vs NP-Conv on the same targets',
    caption: `Mean per-sample difference between two settings (A - B) over the targets both scored, with 95% bootstrap intervals clustered by user, from persona_setting_comparison (its table gives n, the pairs). 3.1: correctness (a positive difference: A is right more often); 3.2: absolute error (negative: A errs less); 3.3: each generation score${mode ? ` (${mode})` : ''}. Fixed scales: -1-1 for correctness and the 0-1 scores, -2-2 for SBERT; 3.2 symmetric around 0.`,
    spec,
  };
}
