import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CellContent, ExportCell, ExportPart, ExportSample, ExportScore, ExportSource, SampleScore } from '../../export/cells.js';

/**
 * PERSONA-bench in `plens export`: a cell is one model on one task (3.1 score sentiment, 3.2 score
 * value, 3.3 reply generation) in one setting; its samples are the predictions (each replicate of
 * a best-of-n sample an epoch), with the prompt the selection wrote and the sample's scores:
 * 3.1 correct (1/0), 3.2 the absolute error, 3.3 each generation metric. The metrics are
 * persona_results' rows; a best-of-n metric comes with the per-sample maxima it averages.
 */

interface CellRow {
  task: string;
  setting: string;
  model: string;
  fidelity: string;
  parser: string;
  source: string;
}

interface PredictionRow {
  key: string;
  status: string;
  error_kind: string | null;
  error: string | null;
  sample_id: string;
  replicate: number;
  subreddit: string | null;
  user: string | null;
  target_reply_id: string | null;
  true_label: string | null;
  reply: string | null;
  predicted: string | null;
  true_number: number | null;
  predicted_number: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
  rouge1: number | null;
  rouge_l: number | null;
  bleu: number | null;
  meteor: number | null;
  sbert: number | null;
}

/** persona_results' metric names -> the per-sample score they average (rougeL is rouge_l per sample). */
const SAMPLE_SCORE: Record<string, string> = { rougeL: 'rouge_l' };
/** The generation metrics each 3.3 prediction has. */
const GENERATION = ['rouge1', 'rouge_l', 'bleu', 'meteor', 'sbert'] as const;
/** The per-sample score of a classification or regression task, and the metrics persona_results gives for it. */
const SCORER: Record<string, string> = { '3.1': 'correct', '3.2': 'abs_error' };

/** The selection's prompts by sample id (the folder of one fidelity), read once per export. */
function promptsOf(workspace: string | null, fidelity: string, cache: Map<string, Map<string, string>>): Map<string, string> {
  let prompts = cache.get(fidelity);
  if (prompts) return prompts;
  prompts = new Map();
  cache.set(fidelity, prompts);
  const file = workspace ? join(workspace, 'persona', `selection-${fidelity}`, 'prompts.jsonl') : '';
  if (!file || !existsSync(file)) return prompts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as { sampleId?: unknown; prompt?: unknown };
      if (typeof r.sampleId === 'string' && typeof r.prompt === 'string') prompts.set(r.sampleId, r.prompt);
    } catch {
      // A line that is not JSON: that sample's input is described instead of quoted.
    }
  }
  return prompts;
}

function scoresOf(r: PredictionRow, task: string): Record<string, SampleScore> {
  if (r.status !== 'ok') return {};
  if (task === '3.1' && r.true_label !== null && r.predicted !== null) return { correct: { value: r.predicted === r.true_label ? 1 : 0, answer: r.predicted } };
  if (task === '3.2' && r.true_number !== null && r.predicted_number !== null)
    return { abs_error: { value: Math.abs(r.predicted_number - r.true_number), answer: String(r.predicted_number) } };
  const out: Record<string, SampleScore> = {};
  for (const m of GENERATION) {
    const v = r[m];
    if (typeof v === 'number') out[m] = { value: v };
  }
  return out;
}

function sampleOf(r: PredictionRow, cell: CellRow, prompt: string | undefined): ExportSample {
  const input = prompt ?? `PERSONA-bench ${cell.task} ${cell.setting} sample ${r.sample_id} (the prompt is in the workspace's selection)`;
  const reply = r.reply ?? '';
  const usage = { input_tokens: r.input_tokens ?? 0, output_tokens: r.output_tokens ?? 0, cost_usd: r.cost_usd };
  return {
    id: r.sample_id,
    epoch: r.replicate + 1,
    input,
    target: r.true_label ?? (r.true_number !== null ? String(r.true_number) : ''),
    messages: [{ role: 'user', content: input }, ...(r.status === 'failed' ? [] : [{ role: 'assistant' as const, content: reply, model: cell.model }])],
    output: reply,
    scores: scoresOf(r, cell.task),
    metadata: {
      key: r.key,
      status: r.status,
      subreddit: r.subreddit,
      user: r.user,
      target_reply_id: r.target_reply_id,
      predicted: r.predicted ?? r.predicted_number,
      ...(r.status === 'parse_error' ? { note: 'the reply did not parse: not scored' } : {}),
    },
    usage: { models: { [cell.model]: usage }, roles: { model: usage } },
    ...(r.status === 'failed' ? { error: `failed${r.error_kind ? ` (${r.error_kind})` : ''}: ${r.error ?? 'no reply'}` } : {}),
  };
}

async function readCell(source: ExportSource, cell: CellRow, prompts: Map<string, Map<string, string>>): Promise<CellContent> {
  const { db } = source;
  const params = { task: cell.task, setting: cell.setting, model: cell.model, fidelity: cell.fidelity, parser: cell.parser, source: cell.source };
  const rows = await db.all<PredictionRow>(
    `WITH last AS (
       SELECT * FROM persona_predictions QUALIFY row_number() OVER (PARTITION BY "key" ORDER BY try DESC) = 1
     )
     SELECT l.*, s.rouge1, s.rouge_l, s.bleu, s.meteor, s.sbert
     FROM last l LEFT JOIN persona_sample_scores s ON s."key" = l."key"
     WHERE l.task = $task AND l.setting = $setting AND l.model = $model AND l.fidelity = $fidelity AND l.parser = $parser AND l.source = $source
     ORDER BY l.position, l.sample_id, l.replicate`,
    undefined,
    params,
  );
  const results = await db.all<{ metric: string; mode: string | null; value: number | null; n_scored: number; n_total: number }>(
    `SELECT metric, mode, value, n_scored, n_total FROM persona_results
     WHERE task = $task AND setting = $setting AND model = $model AND fidelity = $fidelity AND parser = $parser
     ORDER BY metric, mode NULLS FIRST`,
    undefined,
    { task: cell.task, setting: cell.setting, model: cell.model, fidelity: cell.fidelity, parser: cell.parser },
  );
  const classification = SCORER[cell.task];
  const scores: ExportScore[] = classification
    ? // 3.1 and 3.2: one per-sample score, the task's metrics over it.
      [
        {
          scorer: classification,
          metrics: results.filter((r) => r.value !== null).map((r) => ({ name: r.metric, value: r.value! })),
          ...(results[0] ? { scored: results[0].n_scored, unscored: results[0].n_total - results[0].n_scored } : {}),
        },
      ].filter((s) => s.metrics.length > 0)
    : results
        .filter((r) => r.value !== null)
        .map((r) => ({
          scorer: SAMPLE_SCORE[r.metric] ?? r.metric,
          ...(r.mode === 'best-of-n' ? { reducer: 'max' } : {}),
          metrics: [{ name: r.mode ?? 'mean', value: r.value! }],
          scored: r.n_scored,
          unscored: r.n_total - r.n_scored,
        }));
  // The per-sample values a best-of-n metric averages (max over the replicates).
  const reductions = classification
    ? []
    : (
        await db.all<{ metric: string; sample_id: string; value: number }>(
          `SELECT metric, sample_id, value FROM persona_sample_values
           WHERE task = $task AND setting = $setting AND model = $model AND fidelity = $fidelity AND mode = 'best-of-n'
           ORDER BY metric, sample_id`,
          undefined,
          { task: cell.task, setting: cell.setting, model: cell.model, fidelity: cell.fidelity },
        )
      ).reduce(
        (out, r) => {
          let red = out.find((x) => x.scorer === r.metric);
          if (!red) out.push((red = { scorer: r.metric, reducer: 'max', samples: [] }));
          red.samples.push({ id: r.sample_id, value: r.value });
          return out;
        },
        [] as NonNullable<CellContent['reductions']>,
      );
  const byId = cell.source === 'plens' ? promptsOf(source.workspace, cell.fidelity, prompts) : new Map<string, string>();
  return { samples: rows.map((r) => sampleOf(r, cell, byId.get(r.sample_id))), scores, reductions };
}

export const PERSONABENCH_EXPORT: ExportPart = {
  requires: ['persona_predictions', 'persona_results'],
  async cells(source) {
    const rows = await source.db.all<CellRow>(
      `SELECT DISTINCT task, setting, model, fidelity, parser, source FROM persona_predictions ORDER BY task, setting, model, fidelity, parser, source`,
    );
    const prompts = new Map<string, Map<string, string>>();
    return rows.map(
      (row): ExportCell => ({
        task: `persona-bench-${row.task}`,
        args: { setting: row.setting },
        model: row.model,
        roles: {},
        dataset: { name: `PERSONA-bench ${row.task} (${row.fidelity})`, ...(source.workspace ? { location: join(source.workspace, 'persona') } : {}) },
        metadata: { task: row.task, fidelity: row.fidelity, parser: row.parser, source: row.source },
        read: () => readCell(source, row, prompts),
      }),
    );
  },
};
