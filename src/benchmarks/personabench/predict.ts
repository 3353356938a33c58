/**
 * PERSONA-bench predictions and scores: the record shapes, column maps, options and the two
 * stage entry points (`plens persona predict`, `plens persona score`). The warehouse views and the
 * pipeline build on exactly these names; keep them stable.
 */
import { join } from 'node:path';
import { llmStageFormat } from '../../engine/llm-stage.js';
import { Partition, type ColumnsOf, type PartitionFormat } from '../../engine/partition.js';
import type { Setting, Task } from './selection.js';

/** One prediction: a row of predictions.parquet (one call: one sample, one replicate). */
export interface PredictionRecord {
  key: string;
  try: number;
  status: 'ok' | 'parse_error' | 'failed';
  error_kind: string | null;
  error: string | null;
  sample_id: string;
  task: Task;
  setting: Setting;
  position: number;
  fidelity: string;
  source: string;
  /** provider:model */
  model: string;
  parser: string;
  replicate: number;
  subreddit: string;
  user: string | null;
  target_reply_id: string | null;
  true_label: string;
  /** The raw reply text; NULL when the call failed. */
  reply: string | null;
  /** The parsed label, the number as text, or the reply text (3.3); NULL unless ok. */
  predicted: string | null;
  true_number: number | null;
  /** 3.2 only; NULL unless ok. */
  predicted_number: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
}

export const PREDICTION_COLUMNS: ColumnsOf<PredictionRecord> = {
  key: 'VARCHAR',
  try: 'INTEGER',
  status: 'VARCHAR',
  error_kind: 'VARCHAR',
  error: 'VARCHAR',
  sample_id: 'VARCHAR',
  task: 'VARCHAR',
  setting: 'VARCHAR',
  position: 'INTEGER',
  fidelity: 'VARCHAR',
  source: 'VARCHAR',
  model: 'VARCHAR',
  parser: 'VARCHAR',
  replicate: 'INTEGER',
  subreddit: 'VARCHAR',
  user: 'VARCHAR',
  target_reply_id: 'VARCHAR',
  true_label: 'VARCHAR',
  reply: 'VARCHAR',
  predicted: 'VARCHAR',
  true_number: 'DOUBLE',
  predicted_number: 'DOUBLE',
  input_tokens: 'INTEGER',
  output_tokens: 'INTEGER',
  cost_usd: 'DOUBLE',
};

/** A predictions partition's folder: predictions.parquet and calls.parquet, compacted from its logs. */
export const PREDICTIONS_FORMAT: PartitionFormat = llmStageFormat('predictions', PREDICTION_COLUMNS);

/** Where prediction partitions live: one folder per (task, setting, model, fidelity/source, decoding). */
export const predictionsRoot = (workspace: string): string => join(workspace, 'persona', 'predictions');
/** Where the scoring step writes sample_scores.parquet and metrics.parquet. */
export const scoresRoot = (workspace: string): string => join(workspace, 'persona', 'scores');
export const predictionPartition = (dir: string): Partition => new Partition(dir, PREDICTIONS_FORMAT);

/** A row of sample_scores.parquet (3.3 only): one reply's generation scores. */
export interface SampleScoreRecord {
  key: string;
  sample_id: string;
  task: Task;
  setting: Setting;
  model: string;
  fidelity: string;
  replicate: number;
  subreddit: string;
  user: string | null;
  rouge1: number | null;
  rouge_l: number | null;
  bleu: number | null;
  meteor: number | null;
  sbert: number | null;
}

/** A row of metrics.parquet; subreddit NULL = overall; mode NULL for 3.1/3.2. */
export interface MetricRecord {
  model: string;
  task: Task;
  setting: Setting;
  fidelity: string;
  parser: string;
  subreddit: string | null;
  mode: 'best-of-n' | 'single-sample' | null;
  metric: string;
  value: number | null;
  n_total: number;
  n_scored: number;
  n_unparsed: number;
  n_failed: number;
}

export type PersonaDecoding = { temperature: number; maxTokens: number; samples: number };

export interface PersonaPredictOptions {
  workspace: string;
  /** The prompt records (prompts.jsonl from `persona select` or `persona import-prompts`). */
  prompts: string;
  /** provider:model */
  model: string;
  tasks?: readonly Task[];
  settings?: readonly Setting[];
  /** 3.3 samples per prompt (default 10, the paper's n); 1 = the single-sample mode. */
  samples?: number;
  /** Parser variant per task; default = what the original evaluator does. */
  parsers?: Partial<Record<'3.1' | '3.2', string>>;
  concurrency?: number;
  limit?: number;
  shard?: { index: number; count: number };
  cache?: boolean;
  retryFailed?: boolean;
  dryRun?: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface PersonaPredictSummary {
  dry_run: boolean;
  partitions: { name: string; task: Task; setting: Setting; records: number; ok: number; parse_error: number; failed: number }[];
  calls: number;
  estimated_cost_usd: number | null;
  cost_usd: number | null;
}

export interface PersonaScoreOptions {
  workspace: string;
  /** provider:model of an embeddings model; SBERT is scored only when given. */
  embeddings?: string;
  env?: NodeJS.ProcessEnv;
}

export interface PersonaScoreSummary {
  sample_scores: string;
  metrics: string;
  rows: number;
}

/** `plens persona predict`: not implemented yet on this branch (see the report). */
export async function runPersonaPredictions(options: PersonaPredictOptions): Promise<PersonaPredictSummary> {
  void options;
  throw new Error('persona predict: not implemented yet');
}

/** `plens persona score`: not implemented yet on this branch (see the report). */
export async function runPersonaScores(options: PersonaScoreOptions): Promise<PersonaScoreSummary> {
  void options;
  throw new Error('persona score: not implemented yet');
}
