/**
 * One construction stage on the engine: a single-call LLM stage (engine/single-call.ts) whose
 * items are the stage's units (a user, a user and a domain, a domain, a user and a task ...).
 * Each unit's request is rendered from the build's prompts, its reply parsed by the stage's
 * parser, and one record written: the value and what the parser noticed, or the parse state that
 * refused it (kept with the reply, never a value), or the failed call. Keys, partitions, the call
 * cache, batching, spend caps, resumption and the run record come from the kit.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../../core/atomic.js';
import { hashParts, LlmStageKit, llmStageFormat, partitionName, samplingIdentity, type LlmStageOptions } from '../../../engine/llm-stage.js';
import { Partition, type ColumnsOf, type PartitionFormat } from '../../../engine/partition.js';
import { runSingleCall, type Answer } from '../../../engine/single-call.js';
import type { StageOutput, StageSummary, WorkCost } from '../../../engine/stage-runner.js';
import { parseModelSpec } from '../../../llm/model-spec.js';
import type { BuildLlmStage, ParseNotes, ParseResult } from './types.js';

/** The folder of a stage's records in the workspace. */
export const buildStageRoot = (workspace: string, stage: BuildLlmStage) => join(workspace, 'build', stage);

/** One unit's outcome: a row of <stage>.parquet. */
export interface BuildRecord {
  key: string;
  try: number;
  /** ok: a value; parse_error: the reply was refused (parse_state says why); failed: the call failed. */
  status: 'ok' | 'parse_error' | 'failed';
  error_kind: string | null;
  error: string | null;
  /** Why a reply was refused (types.ts ParseState), null otherwise. */
  parse_state: string | null;
  /** The first reply was refused and the model asked again (with why): `first_parse_state` is why. */
  reasked: boolean;
  first_parse_state: string | null;
  stage: string;
  /** The unit, e.g. `user3`, `user3/Music`, `Music`, `user3/SD-Music-task-2`, `all`. */
  unit: string;
  user_id: string | null;
  domain: string | null;
  task_id: string | null;
  model: string;
  prompts: string;
  /** The parsed value as JSON (null unless ok). */
  value: string | null;
  /** What the parser noticed in an accepted reply (off-list values, reshaped values), as JSON. */
  notes: string | null;
  n_off_list: number | null;
  n_reshaped: number | null;
  /** The reply as sent (null when the call failed). */
  reply: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

const COLUMNS: ColumnsOf<BuildRecord> = {
  key: 'VARCHAR',
  try: 'INTEGER',
  status: 'VARCHAR',
  error_kind: 'VARCHAR',
  error: 'VARCHAR',
  parse_state: 'VARCHAR',
  reasked: 'BOOLEAN',
  first_parse_state: 'VARCHAR',
  stage: 'VARCHAR',
  unit: 'VARCHAR',
  user_id: 'VARCHAR',
  domain: 'VARCHAR',
  task_id: 'VARCHAR',
  model: 'VARCHAR',
  prompts: 'VARCHAR',
  value: 'VARCHAR',
  notes: 'VARCHAR',
  n_off_list: 'INTEGER',
  n_reshaped: 'INTEGER',
  reply: 'VARCHAR',
  input_tokens: 'INTEGER',
  output_tokens: 'INTEGER',
  cost_usd: 'DOUBLE',
};

export const BUILD_FORMAT: PartitionFormat = llmStageFormat('records', COLUMNS, ['stage', 'unit', 'model']);

/** A unit of a stage: who it is about, and what its request says. */
export interface BuildUnit {
  unit: string;
  user_id?: string;
  domain?: string;
  task_id?: string;
  /** The consistency check: the profile's domains the verdict must cover (not part of the key: the prompt lists them). */
  domains?: readonly string[];
  /** Everything the request is built from (its key): the rendered prompt is enough. */
  system?: string;
  user: string;
  /** The offline simulator's reply (sim:default), and its reply when asked again after a refused one. */
  simulated: string;
  simulatedReask?: string;
}

export interface BuildStageOptions extends Omit<LlmStageOptions, 'prompts' | 'limit'> {
  model: string;
  /** The sha256 of the effective prompt templates (part of every key). */
  promptsHash: string;
  /** The most tokens a reply may have. */
  maxTokens: number;
  /** The tokens a unit's reply is expected to have (the plan's estimate; the cap otherwise). */
  expectedTokens?: (u: BuildUnit) => number;
  temperature: number;
}

export interface BuildStageSummary extends StageSummary {
  dir: string;
  rows: number | null;
  price_unknown: string[];
}

const tokens = (chars: number) => Math.ceil(chars / 4);

/** The parse a reply gets: the stage's parser, its refusal carried as `<state>: <why>`. */
function parsed<V>(result: ParseResult<V>): { ok: true; value: { value: V; notes: ParseNotes } } | { ok: false; error: string } {
  return result.ok ? { ok: true, value: { value: result.value, notes: result.notes } } : { ok: false, error: `${result.state}: ${result.error}` };
}

/** Runs a construction stage over its units; a dry run prices it. */
export async function runBuildStage<V>(
  stage: BuildLlmStage,
  units: readonly BuildUnit[],
  parse: (text: string, unit: BuildUnit) => ParseResult<V>,
  options: BuildStageOptions,
): Promise<BuildStageSummary> {
  const spec = parseModelSpec(options.model, `build.models.${stage}`);
  const runRecord = { benchmark: 'personalens', promptSources: [] };
  return LlmStageKit.with({ runRecord, ...options }, `plens make build-${stage}`, 'run with --cache on to call the model for what is missing', async (kit) => {
    const client = kit.client(spec, `build:${stage}`);
    const params = client.params({ temperature: options.temperature, maxTokens: options.maxTokens });
    const partition = Partition.in(
      buildStageRoot(options.workspace.root, stage),
      partitionName([stage, client.id], [stage, client.id, options.promptsHash, ...samplingIdentity(params)]),
      BUILD_FORMAT,
    );
    // The runner asks for each unit's key twice (counting, then running), and a key hashes the
    // unit's whole prompt: computed once per unit.
    const keys = new WeakMap<BuildUnit, string>();
    const keyOf = (u: BuildUnit) => {
      let key = keys.get(u);
      if (key === undefined) keys.set(u, (key = buildKey(stage, u, partition.dir)));
      return key;
    };
    const firstRefusal = new Map<BuildUnit, string>();
    const summary = await runSingleCall<BuildUnit, { value: V; notes: ParseNotes }>(kit, {
      stage: `build-${stage}`,
      items: async function* () {
        yield* units;
      },
      keyOf: (u) => ({ key: keyOf(u), partition }),
      client: () => client,
      at: () => ({ turn: null, role: `build:${stage}` }),
      request: (u) => ({
        system: u.system ?? null,
        messages: [{ role: 'user', content: u.user }],
        params,
        purpose: `build:${stage}`,
        promptVersion: options.promptsHash,
        replicate: 0,
        simulation: { reply: u.simulated, ...(u.simulatedReask !== undefined ? { reask: u.simulatedReask } : {}) },
      }),
      parse: (text, u) => {
        const result = parse(text, u);
        // The first refusal of a unit is kept: a re-ask's record says why it was needed.
        if (!result.ok && !firstRefusal.has(u)) firstRefusal.set(u, result.state);
        return parsed(result);
      },
      // A refused reply is asked about once more, with why; a second refusal is recorded.
      reask: (error) => `Your reply could not be read (${error}). Please answer again, in exactly the format the instructions ask for and with nothing else.`,
      record: (u, answer, cost) => {
        const first = answer.status !== 'failed' && answer.reasked ? (firstRefusal.get(u) ?? null) : null;
        firstRefusal.delete(u);
        return {
          ...recordOf(stage, u, client.id, options.promptsHash, answer, cost),
          reasked: answer.status !== 'failed' && answer.reasked,
          first_parse_state: first,
        } as unknown as StageOutput;
      },
      estimate: (u) => {
        const usage = { inputTokens: tokens((u.system?.length ?? 0) + u.user.length), outputTokens: options.expectedTokens?.(u) ?? options.maxTokens };
        return { calls: 1, cachedCalls: 0, ...usage, costUsd: client.costOf(usage) };
      },
    });
    return { ...summary, dir: partition.dir, rows: await kit.compact(partition), price_unknown: kit.priceUnknown };
  });
}

function recordOf<V>(stage: string, u: BuildUnit, model: string, prompts: string, answer: Answer<{ value: V; notes: ParseNotes }>, cost: WorkCost) {
  const base = {
    stage,
    unit: u.unit,
    user_id: u.user_id ?? null,
    domain: u.domain ?? null,
    task_id: u.task_id ?? null,
    model,
    prompts,
    input_tokens: cost.inputTokens,
    output_tokens: cost.outputTokens,
    cost_usd: cost.costUsd,
  };
  if (answer.status === 'ok')
    return {
      ...base,
      status: 'ok',
      error_kind: null,
      error: null,
      parse_state: null,
      value: JSON.stringify(answer.value.value),
      notes: JSON.stringify(answer.value.notes),
      n_off_list: answer.value.notes.off_list.length,
      n_reshaped: answer.value.notes.reshaped.length,
      reply: answer.text,
    };
  if (answer.status === 'parse_error')
    return {
      ...base,
      status: 'parse_error',
      error_kind: 'parse_error',
      error: answer.error.message,
      parse_state: answer.error.message.split(':')[0] ?? null,
      value: null,
      notes: null,
      n_off_list: null,
      n_reshaped: null,
      reply: answer.text,
    };
  return {
    ...base,
    status: 'failed',
    error_kind: answer.error.kind,
    error: answer.error.message,
    parse_state: null,
    value: null,
    notes: null,
    n_off_list: null,
    n_reshaped: null,
    reply: null,
  };
}

/** A unit's key: its stage, unit, rendered prompt and partition (model, prompts, sampling). */
export const buildKey = (stage: BuildLlmStage, u: BuildUnit, dir: string) => hashParts(['plens-build-v1', stage, u.unit, u.system ?? null, u.user, dir]);

/** The file of a partition's current key per unit. */
const CURRENT_KEYS = 'current-keys.json';

/**
 * Records the units' keys now, before any is asked (and when none is left to ask): a unit asked
 * again with other inputs (an example, an upstream record changed) has a new key, and its earlier
 * records stay in the partition; readers keep the current ones (as PERSONA-bench's predictions do).
 */
export async function writeCurrentKeys(stage: BuildLlmStage, units: readonly BuildUnit[], dir: string): Promise<void> {
  const file = join(dir, CURRENT_KEYS);
  const before = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : {};
  const now = { ...before, ...Object.fromEntries(units.map((u) => [u.unit, buildKey(stage, u, dir)])) };
  if (JSON.stringify(now) !== JSON.stringify(before)) await writeFileAtomic(file, `${JSON.stringify(now)}\n`);
}

/**
 * Every unit's record in a stage's partition (its dir, as the stage's run or dry run names it), by
 * unit: the latest try of the unit's current key. Records of a unit's earlier keys (asked before an
 * input changed) are kept on disk but not read.
 */
export async function readBuildRecords(dir: string): Promise<Map<string, BuildRecord>> {
  const out = new Map<string, BuildRecord>();
  const partition = new Partition(dir, BUILD_FORMAT);
  if (!partition.exists()) return out;
  const file = join(dir, CURRENT_KEYS);
  const current = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>) : null;
  for (const r of (await partition.latest<BuildRecord>()).values()) if (!current || current[r.unit] === r.key) out.set(r.unit, r);
  return out;
}
