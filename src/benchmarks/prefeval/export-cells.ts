import { addUsageInto, type CellContent, type ExportCell, type ExportPart, type ExportSample, type ExportSource, type Usage } from '../../export/cells.js';

/**
 * PrefEval in `plens export`: a cell is one model under one preference form, baseline and number
 * of filler turns, on one task. Generation: the answered questions with the judge's four checks
 * (a sample follows the preference, 1, when none of the four errors is found); classification: the
 * multiple-choice answers (correct, 1/0). The metrics are prefeval_results' and
 * prefeval_mcq_results' rows: accuracy with its Wilson interval, and the error counts.
 */

interface CellRow {
  model: string;
  judge_model?: string;
  form: string;
  baseline: string;
  inter_turns: number;
  n: number;
  accuracy: number | null;
  accuracy_lo: number | null;
  accuracy_hi: number | null;
  [count: string]: unknown;
}

const usageOf = (r: { input_tokens: number | null; output_tokens: number | null; cost_usd: number | null }): Usage => ({
  input_tokens: r.input_tokens ?? 0,
  output_tokens: r.output_tokens ?? 0,
  cost_usd: r.cost_usd,
});

const ARGS = (r: CellRow) => ({ form: r.form, baseline: r.baseline, inter_turns: r.inter_turns });
const CELL_WHERE = 'model = $model AND form = $form AND baseline = $baseline AND inter_turns = $inter_turns';

function accuracyMetrics(r: CellRow, counts: string[]) {
  return [
    ...(r.accuracy !== null ? [{ name: 'accuracy', value: r.accuracy }] : []),
    ...(r.accuracy_lo !== null ? [{ name: 'ci95_lo', value: r.accuracy_lo }] : []),
    ...(r.accuracy_hi !== null ? [{ name: 'ci95_hi', value: r.accuracy_hi }] : []),
    ...counts.map((c) => ({ name: c.replace(/^n_/, ''), value: Number(r[c] ?? 0), group: 'count' })),
  ];
}

interface GenerationRow {
  key: string;
  status: string;
  error_kind: string | null;
  error: string | null;
  topic: string;
  task_index: number;
  acknow: string | null;
  violate: string | null;
  violate_explanation: string | null;
  hallucinate: string | null;
  hallucinate_explanation: string | null;
  helpful: string | null;
  helpful_explanation: string | null;
  acknowledgement: boolean | null;
  hallucination: boolean | null;
  violation: boolean | null;
  unhelpful: boolean | null;
  inconsistent: boolean | null;
  hallucination_of_preference_violation: boolean | null;
  preference_unaware_violation: boolean | null;
  follows_preference: boolean | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  r_status: string | null;
  preference: string | null;
  question: string | null;
  response_to_q: string | null;
  zero_shot_response_to_q: string | null;
  self_critic: string | null;
  retrieved: string | null;
  r_input_tokens: number | null;
  r_output_tokens: number | null;
  r_cost_usd: number | null;
}

function generationSample(r: GenerationRow, cell: CellRow): ExportSample {
  const question = r.question ?? '';
  const answer = r.response_to_q ?? '';
  const model = usageOf({ input_tokens: r.r_input_tokens, output_tokens: r.r_output_tokens, cost_usd: r.r_cost_usd });
  const judge = usageOf(r);
  const explanation = [
    r.violate_explanation && `violates: ${r.violate} (${r.violate_explanation})`,
    r.hallucinate_explanation && `hallucinates: ${r.hallucinate} (${r.hallucinate_explanation})`,
    r.helpful_explanation && `helpful: ${r.helpful} (${r.helpful_explanation})`,
    r.acknow && `acknowledges: ${r.acknow}`,
  ]
    .filter(Boolean)
    .join('\n');
  const ok = r.status === 'ok' && r.follows_preference !== null;
  const models: Record<string, Usage> = {};
  addUsageInto(models, { [cell.model]: model });
  if (cell.judge_model) addUsageInto(models, { [cell.judge_model]: judge });
  return {
    id: `${r.topic}/${r.task_index}`,
    epoch: 1,
    input: question,
    target: '',
    messages: [
      { role: 'user', content: question },
      { role: 'assistant', content: answer, model: cell.model },
    ],
    output: answer,
    scores: ok
      ? {
          follows_preference: {
            value: r.follows_preference ? 1 : 0,
            ...(explanation ? { explanation } : {}),
            metadata: {
              acknowledgement: r.acknowledgement,
              hallucination: r.hallucination,
              violation: r.violation,
              unhelpful: r.unhelpful,
              inconsistent: r.inconsistent,
              hallucination_of_preference_violation: r.hallucination_of_preference_violation,
              preference_unaware_violation: r.preference_unaware_violation,
            },
          },
        }
      : {},
    metadata: {
      key: r.key,
      topic: r.topic,
      task_index: r.task_index,
      preference: r.preference,
      ...(r.zero_shot_response_to_q ? { zero_shot_response: r.zero_shot_response_to_q } : {}),
      ...(r.self_critic ? { self_critic: r.self_critic } : {}),
      ...(r.retrieved ? { retrieved: r.retrieved } : {}),
    },
    usage: { models, roles: { model, judge } },
    ...(r.status !== 'ok'
      ? { error: `the judge's check ${r.status}${r.error_kind ? ` (${r.error_kind})` : ''}: ${r.error ?? 'no reply'}` }
      : r.r_status !== null && r.r_status !== 'ok'
        ? { error: `the response ${r.r_status}` }
        : {}),
  };
}

async function readGeneration(source: ExportSource, cell: CellRow): Promise<CellContent> {
  const rows = await source.db.all<GenerationRow>(
    `SELECT c.*, r.status AS r_status, r.preference, r.question, r.response_to_q, r.zero_shot_response_to_q, r.self_critic, r.retrieved,
       r.input_tokens AS r_input_tokens, r.output_tokens AS r_output_tokens, r.cost_usd AS r_cost_usd
     FROM prefeval_checks c LEFT JOIN prefeval_responses r ON r."key" = c.response_key
     WHERE c.model = $model AND c.judge_model = $judge AND c.form = $form AND c.baseline = $baseline AND c.inter_turns = $inter_turns
     ORDER BY c.topic, c.task_index, c."key"`,
    undefined,
    { model: cell.model, judge: cell.judge_model ?? '', form: cell.form, baseline: cell.baseline, inter_turns: cell.inter_turns },
  );
  return {
    samples: rows.map((r) => generationSample(r, cell)),
    scores: [
      {
        scorer: 'follows_preference',
        metrics: accuracyMetrics(cell, ['n_acknowledged', 'n_unhelpful', 'n_inconsistent', 'n_hallucinated_violation', 'n_unaware_violation']),
        scored: cell.n,
        unscored: rows.length - cell.n,
      },
    ],
  };
}

interface McqRow {
  key: string;
  status: string;
  error_kind: string | null;
  error: string | null;
  topic: string;
  task_index: number;
  preference: string | null;
  question: string | null;
  options: string | null;
  correct: string | null;
  response_to_q: string | null;
  first_choice: string | null;
  self_critic: string | null;
  choice: string | null;
  is_correct: boolean | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
}

function mcqSample(r: McqRow, cell: CellRow): ExportSample {
  let choices: string[] | undefined;
  try {
    const parsed: unknown = r.options ? JSON.parse(r.options) : undefined;
    if (Array.isArray(parsed) && parsed.every((o) => typeof o === 'string')) choices = parsed;
  } catch {
    // Options that are not a JSON list: kept in the metadata as they are.
  }
  const question = r.question ?? '';
  const reply = r.response_to_q ?? '';
  const usage = usageOf(r);
  return {
    id: `${r.topic}/${r.task_index}`,
    epoch: 1,
    input: question,
    target: r.correct ?? '',
    ...(choices ? { choices } : {}),
    messages: [{ role: 'user', content: question }, ...(r.status === 'failed' ? [] : [{ role: 'assistant' as const, content: reply, model: cell.model }])],
    output: reply,
    scores: r.status === 'ok' && r.is_correct !== null ? { correct: { value: r.is_correct ? 1 : 0, ...(r.choice ? { answer: r.choice } : {}) } } : {},
    metadata: {
      key: r.key,
      topic: r.topic,
      task_index: r.task_index,
      preference: r.preference,
      ...(choices ? {} : { options: r.options }),
      ...(r.first_choice ? { first_choice: r.first_choice } : {}),
      ...(r.self_critic ? { self_critic: r.self_critic } : {}),
    },
    usage: { models: { [cell.model]: usage }, roles: { model: usage } },
    ...(r.status !== 'ok' ? { error: `${r.status}${r.error_kind ? ` (${r.error_kind})` : ''}: ${r.error ?? 'no answer'}` } : {}),
  };
}

async function readMcq(source: ExportSource, cell: CellRow): Promise<CellContent> {
  const rows = await source.db.all<McqRow>(`SELECT * FROM prefeval_mcq WHERE ${CELL_WHERE} ORDER BY topic, task_index, "key"`, undefined, {
    model: cell.model,
    form: cell.form,
    baseline: cell.baseline,
    inter_turns: cell.inter_turns,
  });
  return {
    samples: rows.map((r) => mcqSample(r, cell)),
    scores: [{ scorer: 'correct', metrics: accuracyMetrics(cell, ['n_no_choice']), scored: cell.n, unscored: rows.length - cell.n }],
  };
}

export const PREFEVAL_EXPORT: ExportPart = {
  requires: [],
  async cells(source) {
    const { db, relations } = source;
    const cells: ExportCell[] = [];
    const dataset = { name: 'PrefEval', ...(source.workspace ? { location: source.workspace } : {}) };
    if (relations.has('prefeval_results') && relations.has('prefeval_checks'))
      for (const row of await db.all<CellRow>('SELECT * FROM prefeval_results'))
        cells.push({
          task: 'prefeval-generation',
          args: ARGS(row),
          model: row.model,
          roles: row.judge_model ? { judge: row.judge_model } : {},
          dataset,
          metadata: {},
          read: () => readGeneration(source, row),
        });
    if (relations.has('prefeval_mcq_results') && relations.has('prefeval_mcq'))
      for (const row of await db.all<CellRow>('SELECT * FROM prefeval_mcq_results'))
        cells.push({ task: 'prefeval-classification', args: ARGS(row), model: row.model, roles: {}, dataset, metadata: {}, read: () => readMcq(source, row) });
    return cells;
  },
};
