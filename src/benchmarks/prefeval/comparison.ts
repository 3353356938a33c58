import type { ComparisonMeasure, ComparisonRow, ComparisonTable } from '../../report/comparison.js';
import { num, str } from '../../report/row-values.js';

type Row = Record<string, unknown>;

/** The baselines in the README's order, with their headings. */
const BASELINES: Array<{ key: string; label: string }> = [
  { key: 'zero-shot', label: 'Zero-shot' },
  { key: 'remind', label: 'Reminder' },
  { key: 'cot', label: 'CoT' },
  { key: 'selfcritic', label: 'Self-critic' },
  { key: 'rag', label: 'RAG' },
];
const FORMS: Array<{ key: string; label: string }> = [
  { key: 'explicit', label: 'Explicit preference' },
  { key: 'choice', label: 'Implicit preference (choice)' },
  { key: 'persona', label: 'Implicit preference (persona)' },
];

/**
 * A table the report opens with for one PrefEval task: a row per model (and judge, when the
 * warehouse holds more than one) under each preference form and number of filler turns, a column
 * per baseline, each the task's accuracy with its 95% Wilson interval, from its results view's rows.
 */
function accuracyComparison(rows: Row[], table: { id: string; title: string; caption: string }): ComparisonTable | null {
  const scored = rows.filter((r) => num(r['accuracy']) !== null);
  if (scored.length === 0) return null;
  const judges = new Set(scored.map((r) => str(r['judge_model'])));
  const known = new Set(BASELINES.map((b) => b.key));
  const baselines = [
    ...BASELINES.filter((b) => scored.some((r) => r['baseline'] === b.key)),
    ...[...new Set(scored.map((r) => str(r['baseline'])))]
      .filter((b) => !known.has(b))
      .sort()
      .map((key) => ({ key, label: key })),
  ];
  const formLabel = (f: string) => FORMS.find((x) => x.key === f)?.label ?? f;
  const formOrder = (f: string) => {
    const i = FORMS.findIndex((x) => x.key === f);
    return i < 0 ? FORMS.length : i;
  };
  const blockKeys = [...new Set(scored.map((r) => `${str(r['form'])}\u0000${num(r['inter_turns']) ?? ''}`))]
    .map((k) => {
      const [form, turns] = k.split('\u0000') as [string, string];
      return { form, turns: Number(turns) };
    })
    .sort((a, b) => formOrder(a.form) - formOrder(b.form) || a.form.localeCompare(b.form) || a.turns - b.turns);
  const blocks = blockKeys.map(({ form, turns }) => {
    const here = scored.filter((r) => str(r['form']) === form && num(r['inter_turns']) === turns);
    const out = new Map<string, ComparisonRow & { judged: number }>();
    for (const r of here) {
      const model = str(r['model']);
      const judge = str(r['judge_model']);
      const key = `${model}\u0000${judge}`;
      let row = out.get(key);
      if (!row) {
        row = { label: judges.size > 1 ? `${model} (judge ${judge})` : model, n: null, cells: {}, judged: 0 };
        out.set(key, row);
      }
      row.cells[str(r['baseline'])] = { value: num(r['accuracy']), lo: num(r['accuracy_lo']), hi: num(r['accuracy_hi']) };
      row.judged += num(r['n']) ?? 0;
    }
    const sorted = [...out.values()].sort((a, b) => a.label.localeCompare(b.label));
    return {
      label: `${formLabel(form)}, ${turns} filler turn${turns === 1 ? '' : 's'}`,
      rows: sorted.map(({ judged, ...row }) => ({ ...row, n: judged })),
    };
  });
  const measures: ComparisonMeasure[] = baselines.map((b) => ({ key: b.key, label: b.label, digits: 2 }));
  return { ...table, measures, blocks };
}

/** The generation task's models compared (prefeval_results). */
export async function prefevalComparison(rows: Row[]): Promise<ComparisonTable | null> {
  return accuracyComparison(rows, {
    id: 'prefeval',
    title: 'PrefEval: models compared (generation)',
    caption:
      "A row per model under each preference form and number of filler turns between the preference and the question, a column per baseline: the generation task's preference-following accuracy (0-1, the share of judged responses with none of the original's four errors) with its 95% Wilson interval under it. n: the responses judged over the baselines shown. prefeval_results under Result tables has the error counts and the failed calls.",
  });
}

/** The classification task's models compared (prefeval_mcq_results). */
export async function prefevalMcqComparison(rows: Row[]): Promise<ComparisonTable | null> {
  return accuracyComparison(rows, {
    id: 'prefeval-mcq',
    title: 'PrefEval: models compared (MCQ classification)',
    caption:
      'The same layout for the classification task: the share of answered records whose letter is the option that follows the preference (chance is 0.25), with its 95% Wilson interval under it. n: the records answered over the baselines shown. prefeval_mcq_results under Result tables has the answers without a letter and the failed calls.',
  });
}
