/**
 * PERSONA-bench predictions and scores: the record shapes, column maps, options and the two
 * stage entry points (`plens persona predict`, `plens persona score`). The warehouse views and the
 * pipeline build on exactly these names; keep them stable.
 */
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { PlensError, usageError } from '../../core/errors.js';
import { replaceDirectoryAtomic, writeFileAtomic } from '../../core/atomic.js';
import type { Workspace } from '../../core/workspace.js';
import { Database, sqlString } from '../../db/database.js';
import { hashParts, LlmStageKit, llmStageFormat, partitionName, samplingIdentity, type LlmStageOptions } from '../../engine/llm-stage.js';
import { Partition, type ColumnsOf, type PartitionFormat } from '../../engine/partition.js';
import { runSingleCall, type Answer } from '../../engine/single-call.js';
import type { StageOutput, StageSummary, WorkCost } from '../../engine/stage-runner.js';
import { isSimulator, parseModelSpec } from '../../llm/model-spec.js';
import type { PersonaSimulationFacts } from '../../llm/sim-persona.js';
import { openEmbedder } from '../../llm/embedders.js';
import type { Embedder } from '../../llm/embeddings.js';
import type { SamplingParams } from '../../llm/types.js';
import type { PromptRecord } from './build-prompts.js';
import { regressionScores, signScoresApi, signScoresLogEval } from '../../metrics/classification.js';
import { filteredMeans, GenerationScorer, oracleBestOfN, singleSample } from '../../metrics/generation.js';
import { sbertSimilarities } from '../../metrics/sbert.js';
import { parseImpact, parseSign, stripThink, type ImpactParser, type SignParser } from './parse.js';
import type { Fidelity, Setting, Task } from './selection.js';

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

/** The record body the stage writes (the engine adds key and try). */
export type PredictionBody = Omit<PredictionRecord, 'key' | 'try'>;

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
export const PREDICTIONS_FORMAT: PartitionFormat = llmStageFormat('predictions', PREDICTION_COLUMNS, ['sample_id', 'task', 'setting', 'model']);

import { predictionsRoot, scoresRoot } from './workspace-paths.js';

export { predictionsRoot, scoresRoot };
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

/**
 * A row of metrics.parquet; subreddit NULL = overall; mode NULL for 3.1/3.2. 'best-of-n-filtered'
 * (with SBERT only): the GPT scripts' averages over the prompts whose best SBERT lies in SBERT_FILTER.
 */
export interface MetricRecord {
  model: string;
  task: Task;
  setting: Setting;
  fidelity: string;
  parser: string;
  subreddit: string | null;
  mode: 'best-of-n' | 'best-of-n-filtered' | 'single-sample' | null;
  metric: string;
  value: number | null;
  n_total: number;
  n_scored: number;
  n_unparsed: number;
  n_failed: number;
}

/** The original decoding per task (spec "Decoding"): greedy 10 / 25 tokens; 3.3 n samples at T = 0.7, 256 tokens. */
export const PERSONA_DECODING: Record<Task, SamplingParams> = {
  '3.1': { temperature: 0, maxTokens: 10 },
  '3.2': { temperature: 0, maxTokens: 25 },
  '3.3': { temperature: 0.7, maxTokens: 256 },
};
/** The paper's n for 3.3 (oracle best-of-n). */
export const DEFAULT_SAMPLES = 10;

export type PersonaParser = SignParser | ImpactParser | 'text';
/** The parser each original API evaluator applies (3.1/GPT.py strict; 3.2/GPT.py float, then the last number). */
export const DEFAULT_PARSERS: Record<Task, PersonaParser> = { '3.1': 'strict', '3.2': 'float-then-last-number', '3.3': 'text' };
export const PARSERS: Record<Task, readonly PersonaParser[]> = {
  '3.1': ['strict', 'last-match'],
  '3.2': ['float-then-last-number', 'float-only', 'last-match'],
  '3.3': ['text'],
};

export interface PersonaPredictOptions extends Omit<LlmStageOptions, 'prompts'> {
  /** The prompt records: prompts.jsonl from `persona select` or `persona import-prompts`. */
  promptRecords: string;
  /** provider:model */
  model: string;
  /** The selection's fidelity the plens-built prompt records were made with (default original); imported original prompt files are 'original'. */
  fidelity?: Fidelity;
  tasks?: readonly Task[];
  settings?: readonly Setting[];
  /** 3.3 samples per prompt (default 10, the paper's n); 1 = the single-sample mode. */
  samples?: number;
  /** Parser variant per task; default DEFAULT_PARSERS. */
  parsers?: Partial<Record<Task, PersonaParser>>;
}

export interface PersonaPredictSummary extends Omit<StageSummary, 'partitions'> {
  model: string;
  simulated: boolean;
  price_unknown: string[];
  partitions: { dir: string; task: Task; setting: Setting; rows: number | null }[];
}

export interface PersonaScoreOptions {
  workspace: Workspace;
  /**
   * The SBERT embeddings model as `openai:MODEL?base_url=URL[&key_env=VAR]` (any OpenAI-compatible
   * /embeddings endpoint serving all-MiniLM-L6-v2) or `local:FOLDER` (a model folder run through
   * transformers.js, never downloaded); SBERT is scored only when given.
   */
  embeddings?: string;
  env?: NodeJS.ProcessEnv;
}

export interface PersonaScoreSummary {
  sample_scores: string;
  metrics: string;
  rows: number;
  /** The embeddings model SBERT came from (model@endpoint, or local:FOLDER#content-hash), or null when SBERT was not scored. */
  sbert: string | null;
  /** Per partition, predictions of earlier prompts that were kept but not scored. */
  superseded: Record<string, number>;
}

/** The GPT-4.1 3.3 script's thresholds for its "filtered" averages (prompts whose best SBERT lies in [0.1, 1.0]). */
export const SBERT_FILTER = { low: 0.1, high: 1.0 } as const;

interface Item {
  record: PromptRecord;
  replicate: number;
  partition: Partition;
  fidelity: string;
  source: string;
  parser: PersonaParser;
}

/** Read one reply with the chosen parser; 3.3 keeps the text (closed <think> blocks dropped), an empty one is unparsed. */
export function parsePrediction(task: Task, parser: PersonaParser, text: string): { ok: true; value: string } | { ok: false; error: string } {
  if (task === '3.1') {
    const p = parseSign(text, parser as SignParser);
    return p.state === 'parsed' ? { ok: true, value: p.value } : { ok: false, error: p.reason };
  }
  if (task === '3.2') {
    const p = parseImpact(text, parser as ImpactParser);
    return p.state === 'parsed' ? { ok: true, value: String(p.value) } : { ok: false, error: p.reason };
  }
  const reply = stripThink(text).trim();
  return reply === '' ? { ok: false, error: 'empty reply' } : { ok: true, value: reply };
}

async function readPromptRecords(file: string): Promise<PromptRecord[]> {
  const records: PromptRecord[] = [];
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    line += 1;
    if (text.trim() === '') continue;
    try {
      records.push(JSON.parse(text) as PromptRecord);
    } catch (error) {
      throw new PlensError('E_INPUT_JSON', `${file}:${line}: not a JSON prompt record (${(error as Error).message})`);
    }
  }
  return records;
}

/** `plens persona predict`: one call per prompt record (3.3: one per replicate), each reply parsed. */
export async function runPersonaPredictions(options: PersonaPredictOptions): Promise<PersonaPredictSummary> {
  const spec = parseModelSpec(options.model, '--model');
  const samples = options.samples ?? DEFAULT_SAMPLES;
  if (!Number.isInteger(samples) || samples < 1) throw usageError(`--samples must be a positive integer, got ${samples}`);
  const parsers: Record<Task, PersonaParser> = { ...DEFAULT_PARSERS, ...options.parsers };
  for (const task of ['3.1', '3.2', '3.3'] as const)
    if (!PARSERS[task].includes(parsers[task])) throw usageError(`--parser ${parsers[task]} is not a ${task} parser (${PARSERS[task].join(', ')})`);
  const all = await readPromptRecords(options.promptRecords);
  const records = all.filter((r) => (!options.tasks || options.tasks.includes(r.task)) && (!options.settings || options.settings.includes(r.setting)));
  const fidelityOf = (r: PromptRecord): string => (r.source === 'plens' ? (options.fidelity ?? 'original') : 'original');
  const sourceOf = (r: PromptRecord): string => (r.source === 'plens' ? 'plens' : r.source.file);
  const runRecord = { benchmark: 'personabench', promptSources: [options.promptRecords] };
  return LlmStageKit.with({ runRecord, ...options }, 'plens persona predict', 'run with --cache on to call the model for what is missing', async (kit) => {
    const client = kit.client(spec, 'predictor');
    const partitions = new Map<string, { dir: string; task: Task; setting: Setting; partition: Partition }>();
    const partitionOf = (r: PromptRecord): Partition => {
      const params = client.params(PERSONA_DECODING[r.task]);
      const n = r.task === '3.3' ? samples : 1;
      const identity = [client.id, r.task, r.setting, fidelityOf(r), sourceOf(r), ...samplingIdentity(params), n, parsers[r.task]];
      const name = partitionName([r.task, r.setting, client.id], identity);
      let entry = partitions.get(name);
      if (!entry) {
        const partition = Partition.in(predictionsRoot(options.workspace.root), name, PREDICTIONS_FORMAT);
        entry = { dir: partition.dir, task: r.task, setting: r.setting, partition };
        partitions.set(name, entry);
      }
      return entry.partition;
    };
    const items = (): Item[] =>
      records.flatMap((record) =>
        Array.from({ length: record.task === '3.3' ? samples : 1 }, (_, replicate) => ({
          record,
          replicate,
          partition: partitionOf(record),
          fidelity: fidelityOf(record),
          source: sourceOf(record),
          parser: parsers[record.task],
        })),
      );
    const keyOf = (item: Item): string =>
      hashParts(['persona-prediction-v1', item.record.sampleId, item.source, item.record.prompt, item.replicate, item.parser, item.partition.dir]);
    if (!options.dryRun) {
      // Each partition records the keys of the prompts in force: predictions of earlier prompts
      // (another plens's wording, another selection) stay in the partition, paid for and kept,
      // but scoring counts only these.
      const current = new Map<string, string[]>();
      for (const item of items()) {
        const list = current.get(item.partition.dir) ?? [];
        list.push(keyOf(item));
        current.set(item.partition.dir, list);
      }
      for (const [dir, keys] of current) {
        await mkdir(dir, { recursive: true });
        await writeFileAtomic(join(dir, CURRENT_KEYS), `${JSON.stringify({ keys: keys.sort() })}\n`);
      }
    }
    const summary = await runSingleCall<Item, string>(kit, {
      stage: 'persona-predict',
      items: async function* () {
        yield* items();
      },
      keyOf: (item) => ({ key: keyOf(item), partition: item.partition }),
      client: () => client,
      at: (item) => ({ turn: item.replicate, role: `persona:${item.record.task}` }),
      request: (item) => {
        const simulation: PersonaSimulationFacts = {
          benchmark: 'persona-bench',
          task: item.record.task,
          sampleId: item.record.sampleId,
          trueLabel: item.record.trueLabel,
          replicate: item.replicate,
        };
        return {
          system: null,
          messages: [{ role: 'user', content: item.record.prompt }],
          params: client.params(PERSONA_DECODING[item.record.task]),
          purpose: `persona:${item.record.task}`,
          promptVersion: 'persona-bench-v1',
          replicate: item.replicate,
          simulation,
        };
      },
      parse: (text, item) => parsePrediction(item.record.task, item.parser, text),
      // error is the message (VARCHAR, as the warehouse views read it); error_kind its kind.
      record: (item, answer, cost) => predictionRecord(item, client.id, answer, cost) as unknown as StageOutput,
      estimate: (item) => {
        const usage = { inputTokens: Math.ceil(item.record.prompt.length / 4), outputTokens: PERSONA_DECODING[item.record.task].maxTokens };
        return { calls: 1, cachedCalls: 0, ...usage, costUsd: client.costOf(usage) };
      },
    });
    const out: PersonaPredictSummary['partitions'] = [];
    for (const p of partitions.values())
      out.push({ dir: p.dir, task: p.task, setting: p.setting, rows: options.dryRun ? null : await kit.compact(p.partition) });
    return { ...summary, model: client.id, simulated: isSimulator(spec), price_unknown: kit.priceUnknown, partitions: out };
  });
}

function predictionRecord(item: Item, model: string, answer: Answer<string>, cost: WorkCost): PredictionBody {
  const r = item.record;
  const ok = answer.status === 'ok';
  const trueNumber = r.task === '3.2' ? Number(r.trueLabel) : null;
  return {
    status: answer.status,
    error_kind: answer.status === 'ok' ? null : answer.error.kind,
    error: answer.status === 'ok' ? null : answer.error.message,
    sample_id: r.sampleId,
    task: r.task,
    setting: r.setting,
    position: r.position,
    fidelity: item.fidelity,
    source: item.source,
    model,
    parser: item.parser,
    replicate: item.replicate,
    subreddit: r.subreddit,
    user: r.user,
    target_reply_id: r.targetReplyId,
    true_label: String(r.trueLabel),
    reply: answer.status === 'failed' ? null : answer.text,
    predicted: ok ? answer.value : null,
    true_number: trueNumber,
    predicted_number: ok && r.task === '3.2' ? Number(answer.value) : null,
    input_tokens: cost.inputTokens,
    output_tokens: cost.outputTokens,
    cost_usd: cost.costUsd,
  };
}

const SAMPLE_SCORE_COLUMNS: ColumnsOf<SampleScoreRecord> = {
  key: 'VARCHAR',
  sample_id: 'VARCHAR',
  task: 'VARCHAR',
  setting: 'VARCHAR',
  model: 'VARCHAR',
  fidelity: 'VARCHAR',
  replicate: 'INTEGER',
  subreddit: 'VARCHAR',
  user: 'VARCHAR',
  rouge1: 'DOUBLE',
  rouge_l: 'DOUBLE',
  bleu: 'DOUBLE',
  meteor: 'DOUBLE',
  sbert: 'DOUBLE',
};

const METRIC_COLUMNS: ColumnsOf<MetricRecord> = {
  model: 'VARCHAR',
  task: 'VARCHAR',
  setting: 'VARCHAR',
  fidelity: 'VARCHAR',
  parser: 'VARCHAR',
  subreddit: 'VARCHAR',
  mode: 'VARCHAR',
  metric: 'VARCHAR',
  value: 'DOUBLE',
  n_total: 'INTEGER',
  n_scored: 'INTEGER',
  n_unparsed: 'INTEGER',
  n_failed: 'INTEGER',
};

type Row = Pick<
  PredictionRecord,
  | 'key'
  | 'status'
  | 'sample_id'
  | 'task'
  | 'setting'
  | 'fidelity'
  | 'model'
  | 'parser'
  | 'replicate'
  | 'subreddit'
  | 'user'
  | 'true_label'
  | 'predicted'
  | 'true_number'
  | 'predicted_number'
>;

/** The metrics of one group of predictions (one model x task x setting x fidelity x parser, overall or one subreddit). */
function groupMetrics(
  rows: readonly Row[],
  scorer: GenerationScorer,
  sbertByKey?: ReadonlyMap<string, number | null>,
): Array<Pick<MetricRecord, 'mode' | 'metric' | 'value' | 'n_total' | 'n_scored' | 'n_unparsed' | 'n_failed'>> {
  const task = rows[0]!.task;
  const ok = rows.filter((r) => r.status === 'ok');
  const counts = {
    n_total: rows.length,
    n_scored: ok.length,
    n_unparsed: rows.filter((r) => r.status === 'parse_error').length,
    n_failed: rows.filter((r) => r.status === 'failed').length,
  };
  const out = (mode: MetricRecord['mode'], values: Record<string, number | null>) =>
    Object.entries(values).map(([metric, value]) => ({ mode, metric, value, ...counts }));
  if (task === '3.1') {
    if (ok.length === 0) return out(null, { accuracy: null, f1: null, f1_weighted: null, mcc: null });
    const truth = ok.map((r) => r.true_label);
    const predicted = ok.map((r) => r.predicted!);
    const s = signScoresApi(truth, predicted);
    // f1 is 3.1/GPT.py's binary F1; f1_weighted LogEval3.1's (accuracy and MCC agree between them).
    return out(null, { accuracy: s.accuracy, f1: s.f1, f1_weighted: signScoresLogEval(truth, predicted).f1, mcc: s.mcc });
  }
  if (task === '3.2') {
    if (ok.length === 0) return out(null, { mse: null, rmse: null, mae: null });
    const s = regressionScores(
      ok.map((r) => r.true_number!),
      ok.map((r) => r.predicted_number!),
    );
    return out(null, { mse: s.mse, rmse: s.rmse, mae: s.mae });
  }
  // 3.3: one prompt per sample; its candidates are the ok replies in replicate order.
  const bySample = new Map<string, { reference: string; candidates: string[]; keys: string[]; replicates: number }>();
  for (const r of rows) {
    const entry = bySample.get(r.sample_id) ?? { reference: r.true_label, candidates: [], keys: [], replicates: 0 };
    entry.replicates += 1;
    if (r.status === 'ok') {
      entry.candidates.push(r.predicted!);
      entry.keys.push(r.key);
    }
    bySample.set(r.sample_id, entry);
  }
  const prompts = [...bySample.values()];
  const manySamples = prompts.some((p) => p.replicates > 1);
  const similarity = (key: string | undefined) => (key === undefined ? null : (sbertByKey?.get(key) ?? null));
  const result = manySamples
    ? oracleBestOfN(prompts, scorer, sbertByKey && prompts.map((p) => p.keys.map(similarity)))
    : singleSample(
        prompts.map((p) => ({ reference: p.reference, candidate: p.candidates[0] ?? null })),
        scorer,
        sbertByKey && prompts.map((p) => similarity(p.keys[0])),
      );
  const mode = manySamples ? 'best-of-n' : 'single-sample';
  const means = { rouge1: result.mean.rouge1, rougeL: result.mean.rougeL, bleu: result.mean.bleu, meteor: result.mean.meteor };
  if (result.sbert === undefined) return out(mode, means);
  const rowsOut = out(mode, { ...means, sbert: result.sbert.mean });
  // The GPT scripts also report every metric over the prompts whose best SBERT is not "confusing".
  if (manySamples) {
    const filtered = filteredMeans(result, SBERT_FILTER.low, SBERT_FILTER.high).mean;
    rowsOut.push(...out('best-of-n-filtered', filtered));
  }
  return rowsOut;
}

/**
 * `plens persona score`: the original evaluators' metrics of the compacted predictions
 * (metrics.parquet, overall and per subreddit) and every 3.3 reply's own scores
 * (sample_scores.parquet), written together atomically; a rerun writes the same bytes.
 */
export async function runPersonaScores(options: PersonaScoreOptions): Promise<PersonaScoreSummary> {
  const root = predictionsRoot(options.workspace.root);
  // Opened (and a local folder checked) before anything is read or written.
  const embedder =
    options.embeddings === undefined
      ? undefined
      : openEmbedder(options.embeddings, {
          cacheDir: join(options.workspace.root, 'cache', 'embeddings'),
          ...(options.env === undefined ? {} : { env: options.env }),
        });
  if (Partition.list(root, PREDICTIONS_FORMAT, true).length === 0)
    throw new PlensError('E_PREREQUISITE', `no compacted predictions in ${root}`, { hint: 'run `plens persona predict` first' });
  const db = await Database.open(':memory:');
  try {
    // The latest try of each key is the prediction.
    const all = await db.all<Row & { filename: string }>(
      `SELECT filename, key, status, sample_id, task, setting, fidelity, model, parser, replicate, subreddit, "user", true_label, predicted, true_number, predicted_number
       FROM read_parquet(?, union_by_name = true, filename = true)
       QUALIFY row_number() OVER (PARTITION BY key ORDER BY try DESC) = 1
       ORDER BY model, task, setting, fidelity, parser, sample_id, replicate`,
      undefined,
      [Partition.outputGlob(root, PREDICTIONS_FORMAT)],
    );
    const { rows, superseded } = currentPredictions(all);
    const scorer = new GenerationScorer();
    const sbertByKey = embedder && (await replySimilarities(embedder, rows));
    const groups = new Map<string, Row[]>();
    for (const r of rows) {
      for (const subreddit of [null, r.subreddit]) {
        const id = JSON.stringify([r.model, r.task, r.setting, r.fidelity, r.parser, subreddit]);
        const list = groups.get(id) ?? [];
        list.push(r);
        groups.set(id, list);
      }
    }
    const metrics: MetricRecord[] = [];
    for (const [id, list] of groups) {
      const [model, task, setting, fidelity, parser, subreddit] = JSON.parse(id) as [string, Task, Setting, string, string, string | null];
      for (const m of groupMetrics(list, scorer, sbertByKey)) metrics.push({ model, task, setting, fidelity, parser, subreddit, ...m });
    }
    const sampleScores: SampleScoreRecord[] = rows
      .filter((r) => r.task === '3.3' && r.status === 'ok')
      .map((r) => {
        const s = scorer.score(r.true_label, r.predicted!);
        return {
          key: r.key,
          sample_id: r.sample_id,
          task: r.task,
          setting: r.setting,
          model: r.model,
          fidelity: r.fidelity,
          replicate: r.replicate,
          subreddit: r.subreddit,
          user: r.user,
          rouge1: s.rouge1,
          rouge_l: s.rougeL,
          bleu: s.bleu,
          meteor: s.meteor,
          sbert: sbertByKey?.get(r.key) ?? null,
        };
      });
    const dir = scoresRoot(options.workspace.root);
    await replaceDirectoryAtomic(dir, async (staging) => {
      await writeParquet(
        db,
        join(staging, 'metrics.parquet'),
        metrics,
        METRIC_COLUMNS,
        'model, task, setting, fidelity, parser, subreddit NULLS FIRST, mode, metric',
      );
      await writeParquet(
        db,
        join(staging, 'sample_scores.parquet'),
        sampleScores,
        SAMPLE_SCORE_COLUMNS,
        'model, task, setting, fidelity, sample_id, replicate',
      );
    });
    return {
      sample_scores: join(dir, 'sample_scores.parquet'),
      metrics: join(dir, 'metrics.parquet'),
      rows: metrics.length,
      sbert: embedder?.id ?? null,
      superseded,
    };
  } finally {
    await embedder?.close();
    await db.close();
  }
}

/** The file in a predictions partition listing the keys of the prompts in force. */
const CURRENT_KEYS = 'current-keys.json';

/**
 * The predictions of the prompts in force: where a partition lists its current keys, rows of
 * other keys (predictions of earlier prompts, kept) are left out and counted per partition.
 */
function currentPredictions<R extends { filename: string; key: string }>(all: readonly R[]): { rows: R[]; superseded: Record<string, number> } {
  const current = new Map<string, Set<string> | null>();
  const superseded: Record<string, number> = {};
  const rows: R[] = [];
  for (const r of all) {
    const dir = dirname(r.filename);
    if (!current.has(dir)) {
      const file = join(dir, CURRENT_KEYS);
      current.set(dir, existsSync(file) ? new Set((JSON.parse(readFileSync(file, 'utf8')) as { keys: string[] }).keys) : null);
    }
    const keys = current.get(dir)!;
    if (keys === null || keys.has(r.key)) rows.push(r);
    else superseded[basename(dir)] = (superseded[basename(dir)] ?? 0) + 1;
  }
  return { rows, superseded };
}

/** Each scored 3.3 reply's SBERT similarity to its reference, by prediction key (each distinct text embedded once). */
async function replySimilarities(embedder: Embedder, rows: readonly Row[]): Promise<Map<string, number | null>> {
  const replies = rows.filter((r) => r.task === '3.3' && r.status === 'ok');
  const similarities = await sbertSimilarities(
    embedder,
    replies.map((r) => ({ reference: r.true_label, candidates: [r.predicted!] })),
  );
  return new Map(replies.map((r, i) => [r.key, similarities[i]![0]!]));
}

/** Records to one Parquet file, typed by their column map, in a fixed order. */
async function writeParquet(db: Database, file: string, records: readonly object[], columns: Record<string, string>, order: string): Promise<void> {
  const jsonl = `${file}.jsonl`;
  await writeFile(jsonl, records.map((r) => JSON.stringify(r)).join('\n') + (records.length ? '\n' : ''));
  const spec = `{${Object.entries(columns)
    .map(([name, type]) => `${sqlString(name)}: ${sqlString(type)}`)
    .join(', ')}}`;
  await db.run(
    `COPY (SELECT ${Object.keys(columns)
      .map((c) => `"${c}"`)
      .join(
        ', ',
      )} FROM read_json(${sqlString(jsonl)}, format = 'newline_delimited', columns = ${spec}) ORDER BY ${order}) TO ${sqlString(file)} (FORMAT parquet)`,
  );
  await rm(jsonl);
}
