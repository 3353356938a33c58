import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { PlensError, usageError } from '../core/errors.js';
import type { Workspace } from '../core/workspace.js';
import { CallCache } from '../llm/call-cache.js';
import type { CacheMode } from '../llm/cache-mode.js';
import { LlmClient, type CallOutcome } from '../llm/client.js';
import { LlmCallError } from '../llm/errors.js';
import { DEFAULT_TIMEOUTS, type HttpTimeouts } from '../llm/http-transport.js';
import { batchMinItems, batchPriceFactor, checkBatchSupport, hasPrice, isSimulator, modelId, unpriced, type ModelSpec } from '../llm/model-spec.js';
import { DEFAULT_RETRY, type RetryPolicy } from '../llm/retry-policy.js';
import type { ChatRequest, SamplingParams } from '../llm/types.js';
import type { ColumnsOf, Partition, PartitionFormat } from './partition.js';
import { hashSources, modelSpecString, newRunId, RunRecorder, type RunFinish } from './run-record.js';
import type { Shard } from './shard.js';
import { addCallSpend, emptySpend, type SpendBreakdown, type SpendBudget } from './spend-budget.js';
import {
  runStage,
  zeroCost,
  type EngineOptions,
  type StageDefinition,
  type StageOutput,
  type StageSummary,
  type WorkContext,
  type WorkCost,
} from './stage-runner.js';

/** How any LLM stage runs: the same knobs on the same engine. */
export interface LlmStageOptions {
  workspace: Workspace;
  prompts?: string;
  cache: CacheMode;
  concurrency: number;
  limit?: number;
  shard?: Shard;
  retryFailed?: boolean;
  dryRun?: boolean;
  progress?: boolean;
  signal: AbortSignal;
  retry?: RetryPolicy;
  timeouts?: HttpTimeouts;
  env?: NodeJS.ProcessEnv;
  /** The run's spend cap (`--max-cost`), shared by every stage of the run; none when absent. */
  budget?: SpendBudget;
  /** Batch mode for single-call stages (engine/batch-run.ts): submit to the provider's batch API instead of calling online. */
  batch?: BatchOptions;
  /** The run this stage run is part of (a make run's id): its run record's parent_run_id (engine/run-record.ts). */
  parentRunId?: string;
  /** What the stage's run record says that the kit does not see (engine/run-record.ts). */
  runRecord?: StageRecordHints;
  /** What the stage's outputs are built on, when its benchmark checks it (PersonaLens: one dataset import). */
  inputs?: StageInputs;
}

/**
 * A benchmark's guard over what a stage's outputs are built on: the kit refuses to open when the
 * workspace mixes inputs, names them in the run record, and marks each output folder with them.
 */
export interface StageInputs {
  /** Throws when the workspace's outputs were made on other inputs; `doing` names the stage in the error. */
  assertConsistent(doing: string): void;
  /** The fingerprint of the inputs, for the run record (null when there is none). */
  fingerprint(): string | null;
  /** Marks an output folder with the inputs it is built on. */
  record(dir: string): Promise<void>;
}

/** A stage's part of its run record. */
export interface StageRecordHints {
  /** The benchmark the stage belongs to (personalens, personabench). */
  benchmark?: string;
  /**
   * The files or folders its prompts come from, in the order it reads them (the --prompts folder,
   * then the bundled one it falls back on): the record names the first and hashes them all.
   */
  promptSources?: readonly string[];
}

/** How batch mode runs: what happens to requests a batch did not answer, and how often it polls. */
export interface BatchOptions {
  /** online: call them online (the default); none: record them as failures. */
  fallback: 'online' | 'none';
  pollIntervalS: number;
  /** Requests per batch (OpenAI takes up to 50,000). */
  maxItems: number;
}

/** One LLM call as the events log records it (and calls.parquet holds it). */
export interface CallEvent {
  run_id: string;
  key: string;
  /** Where in the unit of work the call was (a dialogue's message index, a judged turn); null when it has none. */
  turn: number | null;
  /** What the call was for: user, assistant, judge:<dimension>, ... */
  role: string;
  model: string;
  status: 'ok' | 'failed';
  error_kind: string | null;
  cached: boolean;
  attempts: number;
  latency_ms: number | null;
  input_tokens: number | null;
  output_tokens: number | null;
  /** What this call cost now: nothing when the cache (or a shared identical call) answered it. */
  cost_usd: number | null;
  at: string;
}

export const CALL_EVENT_COLUMNS: ColumnsOf<CallEvent> = {
  run_id: 'VARCHAR',
  key: 'VARCHAR',
  turn: 'INTEGER',
  role: 'VARCHAR',
  model: 'VARCHAR',
  status: 'VARCHAR',
  error_kind: 'VARCHAR',
  cached: 'BOOLEAN',
  attempts: 'INTEGER',
  latency_ms: 'INTEGER',
  input_tokens: 'INTEGER',
  output_tokens: 'INTEGER',
  cost_usd: 'DOUBLE',
  at: 'TIMESTAMP',
};

/** The format of an LLM stage's partitions: its records, and one call event per LLM call. */
export function llmStageFormat(output: string, records: PartitionFormat['records'], required?: readonly string[]): PartitionFormat {
  return { output, records, events: CALL_EVENT_COLUMNS, ...(required ? { required } : {}) };
}

/** A failure as a stage record stores it: http errors by status (http_429), the rest by kind. */
export interface StageFailure {
  kind: string;
  message: string;
}

/**
 * Records every call of one unit of work: appends its call event (a success or a failure) and
 * adds what it cost, in this one place. A cache miss under --cache replay is not a failure: it
 * stops the run (replay exists to reproduce a finished run exactly).
 */
export class CallRecorder {
  readonly cost: WorkCost = zeroCost();

  constructor(
    private readonly runId: string,
    readonly key: string,
    private readonly ctx: WorkContext,
    private readonly missHint: string,
    /** The stage's spend by role and model, which every answered call adds to. */
    private readonly spend: SpendBreakdown = emptySpend(),
  ) {}

  get signal(): AbortSignal {
    return this.ctx.signal;
  }

  /** Calls `client`; `at` says where in the work the call is and what it is for. Throws what the client throws. */
  async call(client: LlmClient, request: ChatRequest, at: { turn: number | null; role: string }): Promise<CallOutcome> {
    let o: CallOutcome;
    try {
      o = await client.call(request, this.ctx.signal);
    } catch (error) {
      if (error instanceof LlmCallError) {
        this.cost.calls++;
        // Empty answers before the failure were billed all the same.
        const billed = error as { billed?: { inputTokens: number; outputTokens: number }; billedUsd?: number };
        if (billed.billed && billed.billedUsd !== undefined) {
          this.cost.inputTokens += billed.billed.inputTokens;
          this.cost.outputTokens += billed.billed.outputTokens;
          this.cost.costUsd += billed.billedUsd;
          this.ctx.reservation?.charge(billed.billedUsd);
          addCallSpend(this.spend, { role: at.role, model: client.id, cached: false, cost_usd: billed.billedUsd });
        }
        this.ctx.event(this.event(client, at, undefined, error));
        if (error.kind === 'cache_miss') throw new PlensError('E_CACHE_MISS', error.message, { hint: this.missHint });
      }
      throw error;
    }
    this.cost.calls++;
    if (o.cached) this.cost.cachedCalls++;
    else {
      this.cost.inputTokens += o.response.usage.inputTokens + (o.billed?.inputTokens ?? 0);
      this.cost.outputTokens += o.response.usage.outputTokens + (o.billed?.outputTokens ?? 0);
      this.cost.costUsd += o.costUsd;
      // Under a spend cap the unit's reservation gives way to what the call really cost.
      this.ctx.reservation?.charge(o.costUsd);
    }
    addCallSpend(this.spend, { role: at.role, model: client.id, cached: o.cached, cost_usd: o.costUsd });
    this.ctx.event(this.event(client, at, o, undefined));
    return o;
  }

  private event(client: LlmClient, at: { turn: number | null; role: string }, o: CallOutcome | undefined, error: LlmCallError | undefined): CallEvent {
    return {
      run_id: this.runId,
      key: this.key,
      turn: at.turn,
      role: at.role,
      model: client.id,
      status: o ? 'ok' : 'failed',
      error_kind: error ? error.reason : null,
      cached: o?.cached ?? false,
      attempts: o?.attempts ?? (error as { attempts?: number } | undefined)?.attempts ?? 1,
      // A batch answer has no latency of its own (the batch took hours).
      latency_ms: o?.batch ? null : (o?.latencyMs ?? null),
      input_tokens: o
        ? o.response.usage.inputTokens + (o.billed?.inputTokens ?? 0)
        : ((error as { billed?: { inputTokens: number } } | undefined)?.billed?.inputTokens ?? null),
      output_tokens: o
        ? o.response.usage.outputTokens + (o.billed?.outputTokens ?? 0)
        : ((error as { billed?: { outputTokens: number } } | undefined)?.billed?.outputTokens ?? null),
      cost_usd: o ? (o.cached ? 0 : o.costUsd) : ((error as { billedUsd?: number } | undefined)?.billedUsd ?? null),
      at: new Date().toISOString(),
    };
  }
}

/** How a failed call is stored: never a score, with a kind a summary can count. */
export function failureOf(error: LlmCallError): StageFailure {
  return { kind: error.kind === 'http' ? `http_${error.status}` : error.kind, message: error.message };
}

/** A stable key from the declared inputs: sha256 of their JSON, hex, cut to `length`. */
export function hashParts(parts: readonly unknown[], length = 32): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, length);
}

/**
 * Sampling settings as part of a key or a partition's identity: temperature and max tokens, and
 * top_p only when it is set, so the keys of runs without it stay what they were.
 */
export function samplingIdentity(p: SamplingParams): unknown[] {
  const identity: unknown[] = p.topP === undefined ? [p.temperature, p.maxTokens] : [p.temperature, p.maxTokens, { top_p: p.topP }];
  return p.providerDefaults ? [...identity, 'provider-defaults'] : identity;
}

/** A name safe in a folder name: runs of other characters become '_'. */
export const slugName = (s: string): string => s.replace(/[^A-Za-z0-9.+-]+/g, '_');

/** A partition's folder name: readable labels, then a short hash of everything that decides its records. */
export function partitionName(labels: readonly string[], identity: readonly unknown[]): string {
  return [...labels.map(slugName), hashParts(identity, 8)].join('__');
}

/** A unit of work of an LLM stage: what the engine needs, with a recorder in place of the raw context. */
export interface LlmStageDefinition<I> extends Omit<StageDefinition<I>, 'run' | 'durable'> {
  run(item: I, calls: CallRecorder): Promise<StageOutput>;
}

/**
 * What every LLM stage shares: the call cache and the clients (opened once, closed once), the
 * run id, the call recorder, the partitions' description files and compaction. A stage is a
 * declaration on it: its items, their keys, and what one item does.
 */
export class LlmStageKit {
  /** Stamped on every call event of the run and names its run record (engine/run-record.ts). */
  readonly runId = newRunId();
  private readonly clients: LlmClient[] = [];
  private readonly specs: ModelSpec[] = [];
  /** The role of each of `specs`, for the run record. */
  private readonly roles: string[] = [];
  private readonly closers: Array<() => Promise<void>> = [];

  private openedCache: CallCache | undefined;
  /** The run record, once the stage's work has started (never for a dry run). */
  private recording: Promise<RunRecorder> | undefined;
  /** The stage's summary as its last run left it, for the run record when the stage returns something else. */
  private lastSummary: StageSummary | undefined;

  private constructor(
    readonly options: LlmStageOptions,
    /** The hint a replay miss gives. */
    private readonly missHint: string,
  ) {}

  /** Opens the kit for a stage (`doing` names it in errors): refuses a workspace that mixes the stage's inputs. */
  static open(options: LlmStageOptions, doing: string, missHint: string): LlmStageKit {
    options.inputs?.assertConsistent(doing);
    return new LlmStageKit(options, missHint);
  }

  /** The workspace's call cache, opened with the first client (a dry run calls nothing: it neither opens nor creates it). */
  get cache(): CallCache {
    this.openedCache ??= CallCache.open(join(this.options.workspace.root, 'cache', 'llm'), this.options.dryRun ? 'off' : this.options.cache);
    return this.openedCache;
  }

  /**
   * Runs `body` with a kit and closes everything it opened, whatever happens. When the stage's work
   * started (`begin`), its run record is finished with how the run ended: the stage summary `body`
   * returns, or the error it threw.
   */
  static async with<T>(options: LlmStageOptions, doing: string, missHint: string, body: (kit: LlmStageKit) => Promise<T>): Promise<T> {
    const kit = LlmStageKit.open(options, doing, missHint);
    let ended: { result: T } | { error: unknown };
    try {
      ended = { result: await body(kit) };
    } catch (error) {
      ended = { error };
    }
    try {
      await kit.close();
    } catch (error) {
      if ('result' in ended) ended = { error };
    }
    try {
      await kit.finishRecord(
        'result' in ended
          ? outcomeOf(isStageSummary(ended.result) ? ended.result : kit.lastSummary, options.signal)
          : failedOutcome(ended.error, options.signal),
      );
    } catch (error) {
      // The stage's own error is the one to report; a record that cannot be written fails a run that did not.
      if ('result' in ended) throw error;
    }
    if ('error' in ended) throw ended.error;
    return ended.result;
  }

  /**
   * Starts the stage's run record, `<workspace>/runs/<runId>.json` (engine/run-record.ts), once:
   * called as the stage's work starts (kit.run, batch mode), after its clients are made. A dry
   * run writes none.
   */
  async begin(stage: string): Promise<void> {
    if (this.options.dryRun) return;
    this.recording ??= this.startRecord(stage);
    await this.recording;
  }

  private async startRecord(stage: string): Promise<RunRecorder> {
    const o = this.options;
    const hints = o.runRecord ?? {};
    const promptSources = hints.promptSources ?? (o.prompts ? [o.prompts] : []);
    return RunRecorder.start(o.workspace.root, {
      run_id: this.runId,
      kind: 'stage',
      name: stage,
      parent_run_id: o.parentRunId ?? null,
      spec: {
        benchmark: hints.benchmark ?? null,
        models: this.specs.map((spec, i) => ({ role: this.roles[i]!, spec: modelSpecString(spec) })),
        prompts: promptSources.length ? { dir: resolve(promptSources[0]!), sha256: await hashSources(promptSources) } : null,
        pipeline: null,
        dataset_fingerprint: o.inputs?.fingerprint() ?? null,
        limits: {
          concurrency: o.concurrency,
          cache: o.cache,
          limit: o.limit ?? null,
          retry_failed: Boolean(o.retryFailed),
          shard: o.shard ? { index: o.shard.index, count: o.shard.count } : null,
          retry: o.retry ?? DEFAULT_RETRY,
          timeouts: o.timeouts ?? DEFAULT_TIMEOUTS,
          max_cost_usd: o.budget ? o.budget.maxUsd : null,
          batch: o.batch ?? null,
        },
        settings: stageSettings(o),
      },
    });
  }

  /** Rewrites the run record with how the run ended (nothing when it never started). */
  private async finishRecord(outcome: RunFinish): Promise<void> {
    if (!this.recording) return;
    let recorder: RunRecorder;
    try {
      recorder = await this.recording;
    } catch {
      // The start failed, and the run with it: that error is the one reported.
      return;
    }
    await recorder.finish(outcome);
  }

  /** A client for a model spec, sharing the stage's cache; closed with the kit. `role` names it in the run record (user, assistant, judge, ...). */
  client(spec: ModelSpec, role = 'model'): LlmClient {
    const o = this.options;
    // A cap cannot be honoured for a model whose calls cannot be priced.
    if (o.budget && !hasPrice(spec))
      throw usageError(
        `--max-cost: no price is known for ${modelId(spec)}, so a spend cap cannot be kept`,
        'add price_in=...&price_out=... (USD per 1M tokens) to its model spec, or run without --max-cost',
      );
    // Refused before anything runs, a dry run included: a provider without a batch API says why.
    if (o.batch) checkBatchSupport(spec, 'model');
    // A batch's price is committed when it is submitted, not call by call, so the per-call
    // reservations of a spend cap cannot hold it: refused rather than a cap that is not kept.
    if (o.batch && o.budget)
      throw usageError(
        '--max-cost cannot be combined with --batch yet',
        'run the batch without a cap (--dry-run --batch shows its price), or judge online under the cap',
      );
    const client = LlmClient.create(spec, {
      cache: this.cache,
      connections: o.concurrency,
      // Each shard takes its share of the spec's rpm/tpm (issue 17), so n machines do not send n times the limit.
      ...(o.shard ? { shards: o.shard.count } : {}),
      ...(o.retry ? { retry: o.retry } : {}),
      ...(o.timeouts ? { timeouts: o.timeouts } : {}),
      ...(o.env ? { env: o.env } : {}),
      // A plan calls nothing: no key, no connection.
      planOnly: Boolean(o.dryRun),
    });
    this.clients.push(client);
    this.specs.push(spec);
    this.roles.push(role);
    return client;
  }

  /** Something else the stage opened (its input source), closed after the clients and the cache. */
  onClose(close: () => Promise<void>): void {
    this.closers.push(close);
  }

  /** Whether any model is the offline simulator. */
  get simulated(): boolean {
    return this.specs.some(isSimulator);
  }

  /** The share of the online price the stage's models cost through their batch API (the highest, when they differ). */
  get batchPriceFactor(): number {
    return Math.max(0, ...this.specs.map((s) => batchPriceFactor(s) ?? 1));
  }

  /** The largest of the stage's models' minimum batch sizes (Bedrock: 100), or undefined when none has one. */
  get batchMinItems(): number | undefined {
    const mins = this.specs.flatMap((s) => batchMinItems(s) ?? []);
    return mins.length ? Math.max(...mins) : undefined;
  }

  /** Models whose spec gives no price: an estimate leaves them out. */
  get priceUnknown(): string[] {
    return unpriced(this.specs);
  }

  /**
   * Writes a partition's description file once (what made it), with the dataset it was made
   * from. Nothing is written by a dry run.
   */
  async describe(partition: Partition, file: string, about: object): Promise<void> {
    if (this.options.dryRun || existsSync(partition.file(file))) return;
    await writeFileAtomic(partition.file(file), JSON.stringify(about, null, 2) + '\n');
    await this.options.inputs?.record(partition.dir);
  }

  /** Runs the stage on the engine: each item gets a recorder, and a result is recorded only once its calls are in the cache. */
  async run<I>(def: LlmStageDefinition<I>, engine: Partial<EngineOptions> = {}): Promise<StageSummary> {
    const o = this.options;
    await this.begin(def.stage);
    const spend = emptySpend();
    const summary = await runStage<I>(
      {
        ...def,
        run: async (item, ctx) => {
          const calls = new CallRecorder(this.runId, ctx.key, ctx, this.missHint, spend);
          const record = await def.run(item, calls);
          return { record, cost: calls.cost };
        },
        durable: () => this.cache.committed(),
      },
      {
        concurrency: o.concurrency,
        signal: o.signal,
        ...(o.limit !== undefined ? { limit: o.limit } : {}),
        ...(o.shard ? { shard: o.shard } : {}),
        retryFailed: Boolean(o.retryFailed),
        dryRun: Boolean(o.dryRun),
        progress: Boolean(o.progress),
        ...(o.budget ? { budget: o.budget } : {}),
        ...engine,
      },
    );
    this.lastSummary = { ...summary, spend };
    return this.lastSummary;
  }

  /** The summary a stage's run ends with when it is not the last kit.run's (batch mode's): its run record's counts. */
  settle(summary: StageSummary): void {
    this.lastSummary = summary;
  }

  /** Compacts a partition after the run: its row count, or null for a dry run or a partition never written. */
  async compact(partition: Partition): Promise<number | null> {
    return this.options.dryRun || !partition.exists() ? null : (await partition.compact()).rows;
  }

  async close(): Promise<void> {
    await Promise.all(this.clients.map((c) => c.close()));
    await this.openedCache?.close();
    for (const close of this.closers) await close();
  }
}

/** The kit's own options: the run record holds them as limits, or not at all (the workspace, the signal, the environment). */
const KIT_OPTIONS = new Set<string>([
  'workspace',
  'prompts',
  'cache',
  'concurrency',
  'limit',
  'shard',
  'retryFailed',
  'dryRun',
  'progress',
  'signal',
  'retry',
  'timeouts',
  'env',
  'budget',
  'batch',
  'parentRunId',
  'runRecord',
]);

/** The stage's own options (its models, settings, dimensions, ...): every plain JSON value beside the kit's. */
function stageSettings(options: LlmStageOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(options)) if (!KIT_OPTIONS.has(name) && isPlainJson(value)) out[name] = value;
  return out;
}

function isPlainJson(value: unknown): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (Array.isArray(value)) return value.every(isPlainJson);
  if (typeof value === 'object' && (value as object).constructor === Object) return Object.values(value as object).every(isPlainJson);
  return false;
}

/** A stage summary's part of its run record: how it ended, its counts and its spend. */
function outcomeOf(s: SummaryCounts | undefined, signal: AbortSignal): RunFinish {
  if (!s) return { status: signal.aborted ? 'interrupted' : 'ok', counts: {} };
  const counts: Record<string, number> = {
    planned: s.planned,
    ok: s.ok,
    failed: s.failed,
    already_done: s.already_done,
    already_failed: s.already_failed,
    calls: s.calls,
    cached_calls: s.cached_calls,
    input_tokens: s.input_tokens,
    output_tokens: s.output_tokens,
  };
  for (const [kind, n] of Object.entries(s.failure_reasons ?? {})) counts[`failure:${kind}`] = n;
  for (const [name, n] of Object.entries(s.batch ?? {})) if (typeof n === 'number') counts[`batch_${name}`] = n;
  return {
    status: s.interrupted || signal.aborted ? 'interrupted' : s.spend_capped ? 'spend-capped' : 'ok',
    counts,
    spend: s.spend ?? emptySpend(),
  };
}

function failedOutcome(error: unknown, signal: AbortSignal): RunFinish {
  const message = error instanceof PlensError ? `${error.code}: ${error.message}` : error instanceof Error ? error.message : String(error);
  return { status: signal.aborted ? 'interrupted' : 'failed', counts: {}, error: message };
}

type SummaryCounts = Pick<
  StageSummary,
  | 'interrupted'
  | 'spend_capped'
  | 'planned'
  | 'ok'
  | 'failed'
  | 'already_done'
  | 'already_failed'
  | 'failure_reasons'
  | 'calls'
  | 'cached_calls'
  | 'input_tokens'
  | 'output_tokens'
  | 'spend'
  | 'batch'
>;

/** Whether what a stage returned is (an extension of) a stage summary. */
function isStageSummary(value: unknown): value is SummaryCounts {
  const v = value as Partial<SummaryCounts> | null;
  return typeof v === 'object' && v !== null && typeof v.interrupted === 'boolean' && typeof v.ok === 'number' && typeof v.failed === 'number';
}
