import type { TopLevelSpec } from 'vega-lite';
import type { ChartSpec } from '../../report/charts.js';

type Row = Record<string, unknown>;
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const BLOCKS = ['base+d', 'base+i', 'base+s', 'base+all'];

/**
 * The personalization lift (paired_lift, overall scope): per context block, the lift over Base of each
 * assistant with its clustered bootstrap interval, one panel for TC (points) and one for P, and a zero line.
 */
export function liftChart(rows: Row[]): ChartSpec | null {
  const values = rows
    .filter((r) => r['scope_type'] === 'all' && num(r['lift']) !== null)
    .map((r) => ({
      run: `run ${String(r['run'])} (judge ${String(r['judge_model'])})`,
      assistant: String(r['assistant_model']),
      block: String(r['block']),
      panel: r['dimension'] === 'TC' ? 'TC lift (points)' : 'P lift',
      lift: num(r['lift']),
      lo: num(r['lift_lo']) ?? num(r['lift']),
      hi: num(r['lift_hi']) ?? num(r['lift']),
      significant: typeof r['p_holm'] === 'number' && (r['p_holm'] as number) < 0.05 ? 'Holm p < 0.05' : 'not significant',
    }));
  if (values.length === 0) return null;
  const layer = {
    layer: [
      { mark: { type: 'rule', color: '#888' }, encoding: { y: { datum: 0, type: 'quantitative' } } },
      {
        mark: { type: 'rule' },
        encoding: {
          x: { field: 'block', type: 'nominal', sort: BLOCKS, title: 'Context block' },
          xOffset: { field: 'assistant' },
          y: { field: 'lo', type: 'quantitative', title: 'Lift over Base' },
          y2: { field: 'hi' },
          color: { field: 'assistant', title: 'Assistant' },
        },
      },
      {
        mark: { type: 'point', filled: true, size: 50 },
        encoding: {
          x: { field: 'block', type: 'nominal', sort: BLOCKS },
          xOffset: { field: 'assistant' },
          y: { field: 'lift', type: 'quantitative' },
          color: { field: 'assistant' },
          shape: { field: 'significant', title: '' },
        },
      },
    ],
  };
  const spec = {
    data: { values },
    // The panel's name above it (not rotated at its left, where the y axis title is).
    facet: {
      row: { field: 'panel', title: null, header: { labelAngle: 0, labelOrient: 'top', labelAnchor: 'start', labelFontWeight: 'bold' } },
      ...(new Set(values.map((v) => v.run)).size > 1 ? { column: { field: 'run', title: null } } : {}),
    },
    spec: { width: 60 * BLOCKS.length + 40, height: 160, ...layer },
    resolve: { scale: { y: 'independent' } },
  } as unknown as TopLevelSpec;
  return {
    id: 'lift-chart',
    title: 'The personalization lift over Base',
    caption:
      'Per context block, the paired lift over Base on the same scenarios (all tasks), with 95% bootstrap intervals clustered by user; filled shapes distinguish lifts whose Holm-corrected p is below 0.05. From paired_lift.',
    spec,
  };
}
