import { CHART_MAX_WIDTH, type ChartSpec } from '../../report/charts.js';
import { num } from '../../report/row-values.js';

type Row = Record<string, unknown>;

/**
 * Preference-following accuracy against the number of filler turns, one panel per baseline, a
 * line per model, each point with its 95% interval: how fast a preference is forgotten.
 */
export function prefevalAccuracyChart(rows: Row[]): ChartSpec | null {
  const values = rows
    .filter((r) => num(r['accuracy']) !== null)
    .map((r) => ({
      model: String(r['model']),
      baseline: String(r['baseline']),
      form: String(r['form']),
      turns: num(r['inter_turns']),
      accuracy: num(r['accuracy']),
      lo: num(r['accuracy_lo']),
      hi: num(r['accuracy_hi']),
      n: num(r['n']),
    }));
  if (values.length === 0) return null;
  const y = { field: 'accuracy', type: 'quantitative', title: 'accuracy', scale: { domain: [0, 1] } } as const;
  // A column per baseline, as wide as the page allows (the row labels and axis take about 110 px).
  const baselines = new Set(values.map((v) => v.baseline)).size;
  const width = Math.max(120, Math.min(220, Math.floor((CHART_MAX_WIDTH - 110) / baselines) - 20));
  return {
    id: 'prefeval-accuracy',
    title: 'PrefEval: accuracy by filler turns',
    caption:
      'Preference-following accuracy (0-1) of each model after 0 to 300 filler turns between its stated preference and the question, per baseline (columns) and preference form (rows: explicit, choice, persona), with 95% Wilson intervals. Generation task.',
    spec: {
      data: { values },
      facet: {
        column: { field: 'baseline', type: 'nominal', title: null },
        row: { field: 'form', type: 'nominal', title: null, sort: ['explicit', 'choice', 'persona'] },
      },
      spec: {
        width,
        height: 180,
        layer: [
          {
            mark: { type: 'rule' },
            encoding: {
              x: { field: 'turns', type: 'ordinal', title: 'filler turns' },
              y: { field: 'lo', type: 'quantitative', scale: { domain: [0, 1] } },
              y2: { field: 'hi' },
              color: { field: 'model', type: 'nominal' },
            },
          },
          {
            mark: { type: 'line', point: true },
            encoding: {
              x: { field: 'turns', type: 'ordinal', title: 'filler turns' },
              y,
              color: { field: 'model', type: 'nominal', title: 'model', legend: { orient: 'top', columns: 3, labelLimit: 260 } },
            },
          },
        ],
      },
    } as ChartSpec['spec'],
  };
}
