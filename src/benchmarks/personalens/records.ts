import { join } from 'node:path';
import type { Workspace } from '../../core/workspace.js';
import { llmStageFormat } from '../../engine/llm-stage.js';
import { Partition, type ColumnsOf, type PartitionFormat } from '../../engine/partition.js';

/** What every stage record starts with: its key, which try of the key it is, and how it ended. */
interface RecordHead {
  key: string;
  try: number;
  status: 'ok' | 'failed' | 'parse_error';
}

/** One message of a dialogue as stored (tokens, latency and finish reason are unknown for imported dialogues). */
export interface StoredMessage {
  role: 'user' | 'assistant';
  content: string;
  input_tokens: number | null;
  output_tokens: number | null;
  latency_ms: number | null;
  finish_reason: string | null;
}

/** One dialogue of a cell: a row of dialogues.parquet. */
export interface DialogueRecord extends RecordHead {
  error: { kind: string; message: string; status: number | null; turn: number } | null;
  scenario_id: string;
  user_id: string;
  task_id: string;
  kind: 'SD' | 'MD';
  setting: string;
  replicate: number;
  assistant_model: string;
  assistant_temperature: number | null;
  assistant_max_tokens: number | null;
  user_model: string;
  user_temperature: number | null;
  user_max_tokens: number | null;
  prompt_version: string;
  simulated: boolean;
  end_reason: 'terminated' | 'round_limit' | null;
  rounds: number;
  messages: StoredMessage[];
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
}

/** One judgment of a dialogue on one dimension (and target, and turn): a row of judgments.parquet. */
export interface JudgmentRecord extends RecordHead {
  error: { kind: string; message: string } | null;
  dialogue_id: string;
  scenario_id: string;
  user_id: string;
  task_id: string;
  kind: 'SD' | 'MD';
  setting: string;
  assistant_model: string;
  user_model: string;
  dialogue_prompt_version: string;
  replicate: number;
  relevant_domains: string[];
  dimension: string;
  target: string;
  turn: number | null;
  judge_model: string;
  judge_temperature: number | null;
  judge_max_tokens: number | null;
  judge_prompt_version: string;
  simulated: boolean;
  verdict: boolean | null;
  score: number | null;
  /** personalization_chain: the score after each assistant turn, in order (score stays NULL). */
  turn_scores: number[] | null;
  /** The reply as the released gather script reads it (original-scoring.ts); NULL when the call failed. */
  original_score: number | null;
  justification: string | null;
  raw: string | null;
  reasked: boolean;
  input_tokens: number | null;
  output_tokens: number | null;
  cost_usd: number | null;
}

/** Column types of the JSONL records, so DuckDB never guesses (and an empty field stays typed). */
export const DIALOGUE_COLUMNS: ColumnsOf<DialogueRecord> = {
  key: 'VARCHAR',
  try: 'INTEGER',
  status: 'VARCHAR',
  error: 'STRUCT(kind VARCHAR, message VARCHAR, status INTEGER, turn INTEGER)',
  scenario_id: 'VARCHAR',
  user_id: 'VARCHAR',
  task_id: 'VARCHAR',
  kind: 'VARCHAR',
  setting: 'VARCHAR',
  replicate: 'INTEGER',
  assistant_model: 'VARCHAR',
  assistant_temperature: 'DOUBLE',
  assistant_max_tokens: 'INTEGER',
  user_model: 'VARCHAR',
  user_temperature: 'DOUBLE',
  user_max_tokens: 'INTEGER',
  prompt_version: 'VARCHAR',
  simulated: 'BOOLEAN',
  end_reason: 'VARCHAR',
  rounds: 'INTEGER',
  messages: 'STRUCT(role VARCHAR, content VARCHAR, input_tokens INTEGER, output_tokens INTEGER, latency_ms INTEGER, finish_reason VARCHAR)[]',
  input_tokens: 'BIGINT',
  output_tokens: 'BIGINT',
  cost_usd: 'DOUBLE',
};

export const JUDGMENT_COLUMNS: ColumnsOf<JudgmentRecord> = {
  key: 'VARCHAR',
  try: 'INTEGER',
  status: 'VARCHAR',
  error: 'STRUCT(kind VARCHAR, message VARCHAR)',
  dialogue_id: 'VARCHAR',
  scenario_id: 'VARCHAR',
  user_id: 'VARCHAR',
  task_id: 'VARCHAR',
  kind: 'VARCHAR',
  setting: 'VARCHAR',
  assistant_model: 'VARCHAR',
  user_model: 'VARCHAR',
  dialogue_prompt_version: 'VARCHAR',
  replicate: 'INTEGER',
  relevant_domains: 'VARCHAR[]',
  dimension: 'VARCHAR',
  target: 'VARCHAR',
  turn: 'INTEGER',
  judge_model: 'VARCHAR',
  judge_temperature: 'DOUBLE',
  judge_max_tokens: 'INTEGER',
  judge_prompt_version: 'VARCHAR',
  simulated: 'BOOLEAN',
  verdict: 'BOOLEAN',
  score: 'INTEGER',
  turn_scores: 'INTEGER[]',
  original_score: 'INTEGER',
  justification: 'VARCHAR',
  raw: 'VARCHAR',
  reasked: 'BOOLEAN',
  input_tokens: 'INTEGER',
  output_tokens: 'INTEGER',
  cost_usd: 'DOUBLE',
};

/** A dialogue cell's folder: dialogues.parquet and calls.parquet, compacted from its logs. */
export const DIALOGUES_FORMAT: PartitionFormat = llmStageFormat('dialogues', DIALOGUE_COLUMNS, ['scenario_id', 'setting', 'messages']);
/** A judge's folder: judgments.parquet and calls.parquet. */
export const JUDGMENTS_FORMAT: PartitionFormat = llmStageFormat('judgments', JUDGMENT_COLUMNS, ['dialogue_id', 'dimension', 'judge_model']);

/** Where the dialogue cells live in a workspace. */
export const dialoguesRoot = (ws: Workspace): string => join(ws.root, 'dialogues');
/** Where the judges' folders live in a workspace. */
export const judgmentsRoot = (ws: Workspace): string => join(ws.root, 'judgments');

/** A dialogue cell's partition, from its folder. */
export const dialogueCell = (dir: string): Partition => new Partition(dir, DIALOGUES_FORMAT);
/** A judge's partition, from its folder. */
export const judgeFolder = (dir: string): Partition => new Partition(dir, JUDGMENTS_FORMAT);

/** The record body a stage writes and an import builds (the engine adds key and try), its fields in column order. */
export type DialogueBody = Omit<DialogueRecord, 'key' | 'try'>;
export type JudgmentBody = Omit<JudgmentRecord, 'key' | 'try'>;

/** What a dialogue record says about the dialogue's scenario and cell, whoever made it. */
export type DialogueIdentity = Pick<
  DialogueRecord,
  | 'scenario_id'
  | 'user_id'
  | 'task_id'
  | 'kind'
  | 'setting'
  | 'replicate'
  | 'assistant_model'
  | 'assistant_temperature'
  | 'assistant_max_tokens'
  | 'user_model'
  | 'user_temperature'
  | 'user_max_tokens'
  | 'prompt_version'
  | 'simulated'
>;

/** What a dialogue record says about how it went. */
export type DialogueOutcome = Pick<DialogueRecord, 'status' | 'error' | 'end_reason' | 'rounds' | 'messages' | 'input_tokens' | 'output_tokens' | 'cost_usd'>;

/** A dialogue record's body, from who had it and how it went. */
export function dialogueRecord(id: DialogueIdentity, o: DialogueOutcome): DialogueBody {
  return {
    status: o.status,
    error: o.error,
    scenario_id: id.scenario_id,
    user_id: id.user_id,
    task_id: id.task_id,
    kind: id.kind,
    setting: id.setting,
    replicate: id.replicate,
    assistant_model: id.assistant_model,
    assistant_temperature: id.assistant_temperature,
    assistant_max_tokens: id.assistant_max_tokens,
    user_model: id.user_model,
    user_temperature: id.user_temperature,
    user_max_tokens: id.user_max_tokens,
    prompt_version: id.prompt_version,
    simulated: id.simulated,
    end_reason: o.end_reason,
    rounds: o.rounds,
    messages: o.messages,
    input_tokens: o.input_tokens,
    output_tokens: o.output_tokens,
    cost_usd: o.cost_usd,
  };
}

/** What a judgment record says about the dialogue, the dimension and the judge. */
export type JudgmentIdentity = Pick<
  JudgmentRecord,
  | 'dialogue_id'
  | 'scenario_id'
  | 'user_id'
  | 'task_id'
  | 'kind'
  | 'setting'
  | 'assistant_model'
  | 'user_model'
  | 'dialogue_prompt_version'
  | 'replicate'
  | 'relevant_domains'
  | 'dimension'
  | 'target'
  | 'turn'
  | 'judge_model'
  | 'judge_temperature'
  | 'judge_max_tokens'
  | 'judge_prompt_version'
  | 'simulated'
>;

/** What a judgment record says about the judge's answer. */
export type JudgmentOutcome = Pick<
  JudgmentRecord,
  | 'status'
  | 'error'
  | 'verdict'
  | 'score'
  | 'turn_scores'
  | 'original_score'
  | 'justification'
  | 'raw'
  | 'reasked'
  | 'input_tokens'
  | 'output_tokens'
  | 'cost_usd'
>;

/** A judgment record's body, from what was judged by whom and what the judge answered. */
export function judgmentRecord(id: JudgmentIdentity, o: JudgmentOutcome): JudgmentBody {
  return {
    dialogue_id: id.dialogue_id,
    scenario_id: id.scenario_id,
    user_id: id.user_id,
    task_id: id.task_id,
    kind: id.kind,
    setting: id.setting,
    assistant_model: id.assistant_model,
    user_model: id.user_model,
    dialogue_prompt_version: id.dialogue_prompt_version,
    replicate: id.replicate,
    relevant_domains: id.relevant_domains,
    dimension: id.dimension,
    target: id.target,
    turn: id.turn,
    judge_model: id.judge_model,
    judge_temperature: id.judge_temperature,
    judge_max_tokens: id.judge_max_tokens,
    judge_prompt_version: id.judge_prompt_version,
    simulated: id.simulated,
    status: o.status,
    error: o.error,
    verdict: o.verdict,
    score: o.score,
    turn_scores: o.turn_scores,
    original_score: o.original_score,
    justification: o.justification,
    raw: o.raw,
    reasked: o.reasked,
    input_tokens: o.input_tokens,
    output_tokens: o.output_tokens,
    cost_usd: o.cost_usd,
  };
}
