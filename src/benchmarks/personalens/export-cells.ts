import type { Database } from '../../db/database.js';
import {
  addUsage,
  type ExportCell,
  type ExportMessage,
  type ExportPart,
  type ExportSample,
  type ExportScore,
  type ExportSource,
  noUsage,
  type SampleScore,
  type Usage,
} from '../../export/cells.js';
import { SETTING_NAMES } from './settings.js';

/**
 * PersonaLens in `plens export`: a cell is one assistant in one setting, scored by one judge
 * configuration (dialogue_scores' `run`); its samples are the judged dialogues, each with its
 * messages and its dialogue-level scores (with the judge's justification). Dialogues that no judge
 * scored (a pipeline without a judge) form cells of their own, without scores.
 */

/** The dialogue-level scores: dialogue_scores' column, the scorer's name, the judgments' dimension and target. */
const DIMENSIONS = [
  { column: 'tc', scorer: 'task_completion', dimension: 'task_completion', target: 'dialogue' },
  { column: 'p', scorer: 'personalization', dimension: 'personalization', target: 'assistant' },
  { column: 'nat_a', scorer: 'naturalness', dimension: 'naturalness', target: 'assistant' },
  { column: 'coh_a', scorer: 'coherence', dimension: 'coherence', target: 'assistant' },
  { column: 'nat_u', scorer: 'user_naturalness', dimension: 'naturalness', target: 'user' },
  { column: 'coh_u', scorer: 'user_coherence', dimension: 'coherence', target: 'user' },
] as const;

const SETTING_ORDER = `[${SETTING_NAMES.map((s) => `'${s}'`).join(', ')}]`;

interface CellRow {
  judge_model: string | null;
  run: string | null;
  assistant_model: string;
  setting: string;
  user_model: string | null;
  judge_config: string | null;
  dialogue_config: string | null;
  assistant_temperature: number | null;
  assistant_max_tokens: number | null;
  prompt_version: string | null;
}

interface DialogueRow {
  dialogue_id: string;
  scenario_id: string;
  user_id: string;
  task_id: string;
  kind: string;
  setting: string;
  replicate: number;
  status: string;
  error: { kind: string | null; message: string | null } | null;
  end_reason: string | null;
  rounds: number | null;
  messages: Array<{ role: string; content: string }> | null;
  relevant_domains?: string[] | null;
  [column: string]: unknown;
}

/** Calls' usage per dialogue by role and model, from llm_calls (the dialogue's own, and its judgments' for one configuration). */
async function usageOf(db: Database, relations: ReadonlySet<string>, cell: CellRow): Promise<Map<string, ExportSample['usage']>> {
  const out = new Map<string, ExportSample['usage']>();
  if (!relations.has('llm_calls')) return out;
  const add = (dialogue: string, role: string, model: string, u: Usage) => {
    let entry = out.get(dialogue);
    if (!entry) out.set(dialogue, (entry = { models: {}, roles: {} }));
    entry.models[model] = addUsage(entry.models[model] ?? noUsage(), u);
    entry.roles[role] = addUsage(entry.roles[role] ?? noUsage(), u);
  };
  type Row = { dialogue_id: string; role: string; model: string; input_tokens: number; output_tokens: number; cost_usd: number | null };
  const toUsage = (r: Row): Usage => ({ input_tokens: r.input_tokens ?? 0, output_tokens: r.output_tokens ?? 0, cost_usd: r.cost_usd });
  const dialogues = await db.all<Row>(
    `SELECT c.work_key AS dialogue_id, c.role, c.model, sum(c.input_tokens)::BIGINT AS input_tokens, sum(c.output_tokens)::BIGINT AS output_tokens, sum(c.cost_usd) AS cost_usd
     FROM llm_calls c JOIN dialogues d ON d.dialogue_id = c.work_key
     WHERE c.stage = 'dialogues' AND d.assistant_model = $assistant AND d.setting = $setting
     GROUP BY ALL`,
    undefined,
    { assistant: cell.assistant_model, setting: cell.setting },
  );
  for (const r of dialogues) add(r.dialogue_id, r.role, r.model, toUsage(r));
  if (cell.run !== null && relations.has('judgment_configs')) {
    const judged = await db.all<Row>(
      `SELECT j.dialogue_id, 'judge' AS role, c.model, sum(c.input_tokens)::BIGINT AS input_tokens, sum(c.output_tokens)::BIGINT AS output_tokens, sum(c.cost_usd) AS cost_usd
       FROM llm_calls c JOIN judgment_configs j ON j.judgment_id = c.work_key
       WHERE c.stage = 'judge' AND j.run = $run AND j.judge_model = $judge AND j.assistant_model = $assistant AND j.setting = $setting
       GROUP BY ALL`,
      undefined,
      { run: cell.run, judge: cell.judge_model, assistant: cell.assistant_model, setting: cell.setting },
    );
    for (const r of judged) add(r.dialogue_id, r.role, r.model, toUsage(r));
  }
  return out;
}

/** The judge's justifications of a cell's dialogue-level scores, by dialogue and scorer. */
async function justifications(db: Database, cell: CellRow): Promise<Map<string, Map<string, string>>> {
  const rows = await db.all<{ dialogue_id: string; dimension: string; target: string; justification: string | null }>(
    `SELECT dialogue_id, dimension, target, justification FROM judgment_configs
     WHERE run = $run AND judge_model = $judge AND assistant_model = $assistant AND setting = $setting
       AND turn IS NULL AND dimension <> 'personalization_chain' AND status = 'ok'`,
    undefined,
    { run: cell.run, judge: cell.judge_model, assistant: cell.assistant_model, setting: cell.setting },
  );
  const out = new Map<string, Map<string, string>>();
  for (const r of rows) {
    const d = DIMENSIONS.find((x) => x.dimension === r.dimension && x.target === r.target);
    if (!d || !r.justification) continue;
    let m = out.get(r.dialogue_id);
    if (!m) out.set(r.dialogue_id, (m = new Map()));
    m.set(d.scorer, r.justification);
  }
  return out;
}

function sampleOf(r: DialogueRow, cell: CellRow, usage: ExportSample['usage'] | undefined, why: Map<string, string> | undefined): ExportSample {
  const messages: ExportMessage[] = (r.messages ?? []).map((m) =>
    m.role === 'assistant'
      ? { role: 'assistant', content: m.content, model: cell.assistant_model }
      : { role: 'user', content: m.content, ...(cell.user_model ? { model: cell.user_model } : {}) },
  );
  const scores: Record<string, SampleScore> = {};
  for (const d of DIMENSIONS) {
    const value = r[d.column];
    if (typeof value !== 'number') continue;
    const explanation = why?.get(d.scorer);
    scores[d.scorer] = { value, ...(explanation ? { explanation } : {}) };
  }
  const failed = r.status !== 'ok';
  return {
    id: r.scenario_id,
    epoch: r.replicate + 1,
    input: messages[0]?.content ?? '',
    target: '',
    messages,
    output: [...messages].reverse().find((m) => m.role === 'assistant')?.content ?? '',
    scores,
    metadata: {
      dialogue_id: r.dialogue_id,
      scenario_id: r.scenario_id,
      user_id: r.user_id,
      task_id: r.task_id,
      kind: r.kind,
      setting: r.setting,
      replicate: r.replicate,
      ...(r.relevant_domains ? { relevant_domains: r.relevant_domains } : {}),
      end_reason: r.end_reason,
      rounds: r.rounds,
      ...(typeof r['n_failed'] === 'number' ? { judgments_failed: r['n_failed'], judgments_unparsed: r['n_unparsed'] } : {}),
    },
    usage: usage ?? { models: {}, roles: {} },
    ...(failed ? { error: `${r.status}${r.error?.kind ? ` (${r.error.kind})` : ''}: ${r.error?.message ?? 'no result'}` } : {}),
  };
}

/** Each dimension's mean and 95% interval over the cell, and the mean per task kind, as the result views compute them. */
async function metricsOf(db: Database, cell: CellRow, total: number): Promise<ExportScore[]> {
  const hist = DIMENSIONS.map((d) => `map_entries(histogram(${d.column})) AS ${d.column}`).join(', ');
  const stats = DIMENSIONS.map(
    (d) => `histogram_n(${d.column}) AS ${d.column}_n, histogram_mean(${d.column}) AS ${d.column}_mean, histogram_ci95(${d.column}) AS ${d.column}_ci`,
  ).join(', ');
  const rows = await db.all<Record<string, unknown> & { kind: string | null }>(
    `WITH g AS (
       SELECT kind, ${hist} FROM dialogue_scores
       WHERE judge_model = $judge AND run = $run AND assistant_model = $assistant AND setting = $setting
       GROUP BY GROUPING SETS ((kind), ())
     )
     SELECT kind, ${stats} FROM g ORDER BY kind NULLS FIRST`,
    undefined,
    { judge: cell.judge_model, run: cell.run, assistant: cell.assistant_model, setting: cell.setting },
  );
  const all = rows.find((r) => r.kind === null);
  const kinds = rows.filter((r) => r.kind !== null).sort((a, b) => String(b.kind).localeCompare(String(a.kind)));
  return DIMENSIONS.flatMap((d) => {
    const n = Number(all?.[`${d.column}_n`] ?? 0);
    if (!all || n === 0) return [];
    const ci = all[`${d.column}_ci`] as { lo: number | null; hi: number | null } | null;
    const metrics = [
      { name: 'mean', value: Number(all[`${d.column}_mean`]) },
      ...(ci?.lo !== null && ci?.lo !== undefined ? [{ name: 'ci95_lo', value: ci.lo }] : []),
      ...(ci?.hi !== null && ci?.hi !== undefined ? [{ name: 'ci95_hi', value: ci.hi }] : []),
      ...kinds
        .filter((k) => Number(k[`${d.column}_n`]) > 0)
        .map((k) => ({ name: String(k.kind), value: Number(k[`${d.column}_mean`]), group: 'mean_by_kind' })),
    ];
    return [{ scorer: d.scorer, metrics, scored: n, unscored: total - n }];
  });
}

const CELL_COLUMNS = `any_value(d.user_model) AS user_model, any_value(d.assistant_temperature) AS assistant_temperature,
  any_value(d.assistant_max_tokens) AS assistant_max_tokens, any_value(d.prompt_version) AS prompt_version`;

async function judgedCells(db: Database): Promise<CellRow[]> {
  return db.all(
    `SELECT s.judge_model, s.run, s.assistant_model, s.setting, any_value(s.judge_config) AS judge_config,
       any_value(s.dialogue_config) AS dialogue_config, ${CELL_COLUMNS}
     FROM dialogue_scores s JOIN dialogues d USING (dialogue_id)
     GROUP BY s.judge_model, s.run, s.assistant_model, s.setting
     ORDER BY s.judge_model, s.run, s.assistant_model, list_position(${SETTING_ORDER}, s.setting), s.setting`,
  );
}

/** Dialogue cells no judge scored (a pipeline without a judge, or one not judged yet). */
async function unjudgedCells(db: Database, relations: ReadonlySet<string>): Promise<CellRow[]> {
  const scored = relations.has('dialogue_scores')
    ? 'AND NOT EXISTS (SELECT 1 FROM dialogue_scores s WHERE s.assistant_model = d.assistant_model AND s.setting = d.setting)'
    : '';
  return db.all(
    `SELECT NULL AS judge_model, NULL AS run, d.assistant_model, d.setting, NULL AS judge_config, NULL AS dialogue_config, ${CELL_COLUMNS}
     FROM dialogues d WHERE true ${scored}
     GROUP BY d.assistant_model, d.setting
     ORDER BY d.assistant_model, list_position(${SETTING_ORDER}, d.setting), d.setting`,
  );
}

function cellOf(source: ExportSource, row: CellRow): ExportCell {
  const { db, relations } = source;
  const judged = row.run !== null;
  return {
    task: 'personalens',
    args: { setting: row.setting },
    model: row.assistant_model,
    roles: { ...(row.user_model ? { user: row.user_model } : {}), ...(row.judge_model ? { judge: row.judge_model } : {}) },
    generate: { temperature: row.assistant_temperature, max_tokens: row.assistant_max_tokens },
    dataset: { name: 'PersonaLens scenarios', ...(source.workspace ? { location: source.workspace } : {}) },
    metadata: {
      ...(judged ? { run: row.run, judge_config: row.judge_config, dialogue_config: row.dialogue_config } : { judged: false }),
      prompt_version: row.prompt_version,
    },
    async read() {
      const usage = await usageOf(db, relations, row);
      const rows = judged
        ? await db.all<DialogueRow>(
            `SELECT s.*, d.user_id, d.task_id, d.status, d.error, d.end_reason, d.rounds, d.messages
             FROM dialogue_scores s JOIN dialogues d USING (dialogue_id)
             WHERE s.judge_model = $judge AND s.run = $run AND s.assistant_model = $assistant AND s.setting = $setting
             ORDER BY s.scenario_id, s.replicate, s.dialogue_id`,
            undefined,
            { judge: row.judge_model, run: row.run, assistant: row.assistant_model, setting: row.setting },
          )
        : await db.all<DialogueRow>(
            `SELECT * FROM dialogues WHERE assistant_model = $assistant AND setting = $setting ORDER BY scenario_id, replicate, dialogue_id`,
            undefined,
            { assistant: row.assistant_model, setting: row.setting },
          );
      const why = judged ? await justifications(db, row) : new Map<string, Map<string, string>>();
      return {
        samples: rows.map((r) => sampleOf(r, row, usage.get(r.dialogue_id), why.get(r.dialogue_id))),
        scores: judged ? await metricsOf(db, row, rows.length) : [],
      };
    },
  };
}

export const PERSONALENS_EXPORT: ExportPart = {
  requires: ['dialogues'],
  async cells(source) {
    const { db, relations } = source;
    const judged = relations.has('dialogue_scores') ? await judgedCells(db) : [];
    return [...judged, ...(await unjudgedCells(db, relations))].map((row) => cellOf(source, row));
  },
};
