import type { ComparisonMeasure, ComparisonRow, ComparisonTable } from '../../report/comparison.js';
import { chartedMode, PERSONA_SETTINGS } from './charts.js';
import { num, str } from '../../report/row-values.js';

type Row = Record<string, unknown>;

/** Each task's headline metric: the README's first for 3.1 and 3.3, RMSE for 3.2. */
const HEADLINE: Array<{ task: string; metric: string; label: string }> = [
  { task: '3.1', metric: 'accuracy', label: '3.1 Acc.' },
  { task: '3.2', metric: 'rmse', label: '3.2 RMSE' },
  { task: '3.3', metric: 'rougeL', label: '3.3 ROUGE-L' },
];

/** The intervals' view, with the values it stands beside (persona_results' own). */
const INTERVALS_SQL = 'SELECT task, metric, mode, setting, model, fidelity, parser, value, lo, hi, n_scored FROM persona_result_intervals';

/**
 * The report's opening table for PERSONA-bench: a row per model (and fidelity, when the warehouse
 * holds more than one), and for each task's headline metric a column per setting, so a model's
 * settings stand side by side, each value with its 95% interval. Built from persona_results'
 * rows, with the intervals of persona_result_intervals when the warehouse has that view (else
 * the values alone).
 */
export async function personaComparison(rows: Row[], query: ((sql: string) => Promise<Row[]>) | null): Promise<ComparisonTable | null> {
  const source = query ? await query(INTERVALS_SQL) : rows;
  const mode = chartedMode(source);
  const headline = (r: Row) => HEADLINE.find((h) => h.task === r['task'] && h.metric === r['metric']);
  const wanted = source.filter((r) => headline(r) && num(r['value']) !== null && (r['task'] !== '3.3' || str(r['mode']) === mode));
  if (wanted.length === 0) return null;
  const present = new Set(wanted.map((r) => str(r['setting'])));
  const settings = [...PERSONA_SETTINGS.filter((s) => present.has(s)), ...[...present].filter((s) => !PERSONA_SETTINGS.includes(s)).sort()];
  const measures: ComparisonMeasure[] = HEADLINE.flatMap((h) =>
    settings
      .filter((s) => wanted.some((r) => headline(r) === h && str(r['setting']) === s))
      .map((s) => ({ key: `${h.task}/${s}`, label: `${h.label} ${s}`, digits: 3 })),
  );
  const fidelities = new Set(wanted.map((r) => str(r['fidelity'])));
  // Each task has its own reply parser (3.3 none). A model's task read with more than one parser
  // in the warehouse gets a row per parser; the model's other tasks stay on its main row.
  const parsersOf = new Map<string, Set<string>>();
  for (const r of wanted.filter((x) => x['task'] !== '3.3')) {
    const k = `${str(r['model'])}\u0000${str(r['fidelity'])}\u0000${str(r['task'])}`;
    parsersOf.set(k, (parsersOf.get(k) ?? new Set()).add(str(r['parser'])));
  }
  const out = new Map<string, ComparisonRow & { scored: number }>();
  for (const r of wanted) {
    const model = str(r['model']);
    const fidelity = str(r['fidelity']);
    const task = str(r['task']);
    const split = (parsersOf.get(`${model}\u0000${fidelity}\u0000${task}`)?.size ?? 0) > 1;
    const parts = [...(fidelities.size > 1 ? [fidelity] : []), ...(split ? [`${task} parser ${str(r['parser'])}`] : [])];
    const label = parts.length ? `${model} (${parts.join(', ')})` : model;
    let row = out.get(label);
    if (!row) out.set(label, (row = { label, n: null, cells: {}, scored: 0 }));
    row.cells[`${task}/${str(r['setting'])}`] = { value: num(r['value']), lo: num(r['lo']), hi: num(r['hi']) };
    row.scored += num(r['n_scored']) ?? 0;
  }
  const sorted = [...out.values()].sort((a, b) => a.label.localeCompare(b.label));
  return {
    id: 'persona',
    title: 'PERSONA-bench: models compared',
    caption: `A row per model; for each task's headline metric a column per setting (P-Conv, P-NonConv, NP-Conv): 3.1 sentiment accuracy, 3.2 impact RMSE (lower is better), 3.3 next-text ROUGE-L (${mode ?? 'no'} scores), each with its 95% interval under it: accuracy a Wilson interval, the others a bootstrap over users (none below 2 users). n: the predictions scored over the three tasks and settings. persona_results under Result tables has every metric (F1, MCC, MAE, ROUGE-1, METEOR, BLEU, SBERT), and the unparsed and failed predictions.`,
    measures,
    blocks: [{ label: "Each task's headline metric, per setting", rows: sorted.map(({ scored, ...row }) => ({ ...row, n: scored || null })) }],
  };
}
