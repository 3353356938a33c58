import type { StepContext } from './benchmark.js';
import type { Argv } from 'yargs';
import { PlensError, usageError, type InputLocation } from '../core/errors.js';
import type { Workspace } from '../core/workspace.js';
import type { BatchOptions } from '../engine/llm-stage.js';
import type { Shard } from '../engine/shard.js';
import { SpendBudget } from '../engine/spend-budget.js';
import { CACHE_MODES, type CacheMode } from '../llm/cache-mode.js';
import { DEFAULT_RETRY } from '../llm/retry-policy.js';
import type { LlmStageOptions } from '../engine/llm-stage.js';

/**
 * How LLM stages run, whether asked for by flags (`plens dialogues`, `plens judge`, `plens make`)
 * or by a pipeline's `limits:`. None of these enters a key or a folder hash: they change how fast
 * and how hard work is done, never what is computed.
 */
export interface RunLimits {
  /** Grid cells run at once (`plens make` only). */
  cells: number;
  concurrency: number;
  cache: CacheMode;
  retries: number;
  retryDelayMs: number;
  retryWindowS: number;
  callTimeoutS: number;
  connectTimeoutS: number;
  /** The run's spend cap in USD (`--max-cost`, `limits.max_cost`); undefined for none. */
  maxCost: number | undefined;
}

type Check = 'count>=1' | 'count>=0' | 'number>=0' | 'seconds>0' | 'cache';

interface LimitSetting<K extends keyof RunLimits> {
  /** The CLI flag, without dashes. */
  flag: string;
  /** The field under `limits:` in a pipeline file. */
  field: string;
  default: RunLimits[K];
  check: Check;
  describe: (what: string) => string;
}

/**
 * The one schema of the run limits: flag, pipeline field, default and check of each, declared
 * once. schemas/pipeline.schema.json lists the same fields (a test holds them together).
 */
export const LIMIT_SETTINGS: { [K in keyof RunLimits]: LimitSetting<K> } = {
  cells: { flag: 'cells', field: 'cells', default: 2, check: 'count>=1', describe: () => 'Grid cells (assistant x setting) run at once' },
  concurrency: { flag: 'concurrency', field: 'concurrency', default: 16, check: 'count>=1', describe: (what) => `${what} in flight at once` },
  cache: {
    flag: 'cache',
    field: 'cache',
    default: 'on',
    check: 'cache',
    describe: () => 'Call cache: on (use+record), off, read (use only), write (record only), replay (use; a miss fails)',
  },
  retries: {
    flag: 'retries',
    field: 'retries',
    default: 6,
    check: 'count>=0',
    describe: () => 'Retries per call on 408/409/429/5xx, resets, timeouts and unreadable answers (never on 400/401/403/404)',
  },
  retryDelayMs: {
    flag: 'retry-delay-ms',
    field: 'retry_delay_ms',
    default: 1000,
    check: 'number>=0',
    describe: () => 'First backoff delay; doubles per retry with jitter, at most 60 s; a Retry-After header is always honoured',
  },
  retryWindowS: {
    flag: 'retry-window',
    field: 'retry_window_s',
    default: 600,
    check: 'number>=0',
    describe: () => 'Seconds after which a call stops retrying',
  },
  callTimeoutS: {
    flag: 'call-timeout',
    field: 'call_timeout_s',
    default: 180,
    check: 'seconds>0',
    describe: () => 'Seconds one attempt may take, start to last byte',
  },
  connectTimeoutS: {
    flag: 'connect-timeout',
    field: 'connect_timeout_s',
    default: 10,
    check: 'seconds>0',
    describe: () => 'Seconds to establish a connection',
  },
  maxCost: {
    flag: 'max-cost',
    field: 'max_cost',
    default: undefined,
    check: 'number>=0',
    describe: () =>
      'Spend cap for this run, in USD: no work starts once spent + reserved would pass it (exit 6; rerun with a higher cap to go on). Every model needs a price',
  },
};

export const LIMIT_KEYS = Object.keys(LIMIT_SETTINGS) as Array<keyof RunLimits>;
/** The limits every LLM stage command takes (cells is a grid's, so `make`'s only). */
export const STAGE_LIMIT_KEYS = LIMIT_KEYS.filter((k) => k !== 'cells');

export const DEFAULT_LIMITS = Object.fromEntries(LIMIT_KEYS.map((k) => [k, LIMIT_SETTINGS[k].default])) as unknown as RunLimits;

/** The limits as yargs parses them, by flag name. */
export interface LimitFlagValues {
  cells: number;
  concurrency: number;
  cache: string;
  retries: number;
  'retry-delay-ms': number;
  'retry-window': number;
  'call-timeout': number;
  'connect-timeout': number;
  'max-cost'?: number;
}

/**
 * Declares the limits as flags. With `defaults` (a stage command, which has no other source) the
 * flags carry the defaults, shown by --help; without (`plens make`), an absent flag leaves the
 * pipeline's value in place.
 */
export function limitFlags<T>(y: Argv<T>, o: { what: string; keys: Array<keyof RunLimits>; defaults: true }): Argv<T & LimitFlagValues>;
export function limitFlags<T>(y: Argv<T>, o: { what: string; keys: Array<keyof RunLimits>; defaults: false }): Argv<T & Partial<LimitFlagValues>>;
export function limitFlags<T>(y: Argv<T>, o: { what: string; keys: Array<keyof RunLimits>; defaults: boolean }): Argv<T> {
  let out = y;
  for (const key of o.keys) {
    const s = LIMIT_SETTINGS[key];
    const describe = s.describe(o.what) + (o.defaults ? '' : ` (overrides the pipeline's limits.${s.field}; default ${String(s.default ?? 'none')})`);
    const base = s.check === 'cache' ? { choices: CACHE_MODES, describe } : { type: 'number' as const, describe };
    out = out.option(s.flag, o.defaults && s.default !== undefined ? { ...base, default: s.default } : base) as Argv<T>;
  }
  return out;
}

/** Where a layer's values come from: CLI flags (by flag name) or a pipeline file's `limits:`. */
export interface LimitSources {
  flags?: Record<string, unknown>;
  pipeline?: { limits?: Record<string, unknown>; locate: (pointer: string) => InputLocation };
}

/**
 * The limits in force: a flag given beats the pipeline's field, which beats the default. Each
 * value is checked where it came from: a bad flag is a usage error naming it, a bad field an
 * input error at its line in the pipeline file.
 */
export function resolveLimits(sources: LimitSources): RunLimits {
  const out = { ...DEFAULT_LIMITS } as Record<keyof RunLimits, unknown>;
  for (const key of LIMIT_KEYS) {
    const s = LIMIT_SETTINGS[key];
    const flag = sources.flags?.[s.flag];
    const field = sources.pipeline?.limits?.[s.field];
    if (flag !== undefined) {
      const problem = checkValue(s.check, flag);
      if (problem) throw usageError(`--${s.flag} ${problem}`);
      out[key] = flag;
    } else if (field !== undefined) {
      const problem = checkValue(s.check, field);
      if (problem)
        throw new PlensError('E_INPUT_SCHEMA', `limits.${s.field} ${problem}`, {
          location: sources.pipeline!.locate(`/limits/${s.field}`),
          hint: 'the format is in schemas/pipeline.schema.json and docs/pipelines.md',
        });
      out[key] = field;
    }
  }
  return out as unknown as RunLimits;
}

function checkValue(check: Check, v: unknown): string | undefined {
  if (check === 'cache') return (CACHE_MODES as readonly unknown[]).includes(v) ? undefined : `must be one of ${CACHE_MODES.join(', ')}`;
  const n = v as number;
  switch (check) {
    case 'count>=1':
      return typeof v === 'number' && Number.isInteger(n) && n >= 1 ? undefined : 'must be a whole number >= 1';
    case 'count>=0':
      return typeof v === 'number' && Number.isInteger(n) && n >= 0 ? undefined : 'must be a whole number >= 0';
    case 'number>=0':
      return typeof v === 'number' && Number.isFinite(n) && n >= 0 ? undefined : 'must be a number >= 0';
    case 'seconds>0':
      if (typeof v !== 'number' || !Number.isFinite(n) || n < 0) return 'must be a number >= 0';
      // A zero timeout would fail every call at once (and be retried until the window closes).
      return n === 0 ? 'must be more than 0 seconds' : undefined;
  }
}

/** What a stage run adds to the limits: where, what for, and how it reports. */
export interface StageRunContext {
  workspace: Workspace;
  signal: AbortSignal;
  dryRun: boolean;
  progress: boolean;
  retryFailed: boolean;
  prompts?: string;
  limit?: number;
  shard?: Shard;
  /** The run's spend budget when the run spans stages (`plens make`); else one is made from maxCost. */
  budget?: SpendBudget;
  batch?: BatchOptions;
  /** The run this stage run is part of (a make run): its record names it as parent. */
  parentRunId?: string;
}

/** The options an LLM stage (runDialogues, runJudge) takes, from resolved limits: retry policy and timeouts built here only. */
export function llmStageOptionsOf(l: Omit<RunLimits, 'cells'>, ctx: StageRunContext): LlmStageOptions {
  const callMs = l.callTimeoutS * 1000;
  return {
    workspace: ctx.workspace,
    ...(ctx.prompts ? { prompts: ctx.prompts } : {}),
    cache: l.cache,
    concurrency: l.concurrency,
    ...(ctx.limit !== undefined ? { limit: ctx.limit } : {}),
    ...(ctx.shard ? { shard: ctx.shard } : {}),
    ...(ctx.batch ? { batch: ctx.batch } : {}),
    ...(ctx.parentRunId ? { parentRunId: ctx.parentRunId } : {}),
    retryFailed: ctx.retryFailed,
    dryRun: ctx.dryRun,
    progress: ctx.progress,
    signal: ctx.signal,
    retry: { ...DEFAULT_RETRY, retries: l.retries, minDelayMs: l.retryDelayMs, maxTotalMs: l.retryWindowS * 1000 },
    timeouts: { connectMs: l.connectTimeoutS * 1000, headersMs: callMs, bodyMs: callMs, deadlineMs: callMs },
    ...(ctx.budget ? { budget: ctx.budget } : l.maxCost !== undefined ? { budget: new SpendBudget(l.maxCost) } : {}),
  };
}

/**
 * The LLM-stage options of a make step: the pipeline's limits, the make's signal, progress and
 * --retry-failed, the run's one spend budget and its id as the stage run's parent. A dry run calls
 * nothing, so it neither opens the cache nor draws on the budget.
 */
export function stepStageOptions(ctx: StepContext, dryRun: boolean): LlmStageOptions {
  return llmStageOptionsOf(
    { ...ctx.p.limits, cache: dryRun ? 'off' : ctx.p.limits.cache },
    {
      workspace: ctx.ws,
      signal: ctx.signal,
      dryRun,
      progress: ctx.progress && !dryRun,
      retryFailed: ctx.retryFailed,
      ...(ctx.budget && !dryRun ? { budget: ctx.budget } : {}),
      parentRunId: ctx.runId,
    },
  );
}

/** Batch mode's settings as flags and pipeline fields give them (`plens judge --batch`, a pipeline's `judge: {batch: true}`). */
export interface BatchSources {
  flags?: { batch?: unknown; 'batch-fallback'?: unknown; 'poll-interval'?: unknown; 'batch-size'?: unknown };
  /** The pipeline section that holds the fields, under its own name (`section` names it when there are several), and where the file's fields are. */
  pipeline?: { section?: string; locate: (pointer: string) => InputLocation; [section: string]: unknown };
}

export const BATCH_DEFAULTS: BatchOptions = { fallback: 'online', pollIntervalS: 60, maxItems: 50_000 };

/** The batch settings, declared once: flag, the field in the pipeline section that holds them, check. */
const BATCH_SETTINGS = {
  fallback: { flag: 'batch-fallback', field: 'batch_fallback', ok: (v: unknown) => v === 'online' || v === 'none', must: 'must be online or none' },
  pollIntervalS: {
    flag: 'poll-interval',
    field: 'poll_interval_s',
    ok: (v: unknown) => typeof v === 'number' && Number.isFinite(v) && v > 0,
    must: 'must be a number of seconds > 0',
  },
  maxItems: {
    flag: 'batch-size',
    field: 'batch_size',
    ok: (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 50_000,
    must: 'must be a whole number from 1 to 50000',
  },
} as const;

/**
 * Batch mode in force, or undefined when off: a flag given beats the pipeline's field, which
 * beats the default; each value is checked where it came from (a usage error naming the flag, an
 * input error at the field's line).
 */
export function resolveBatch(sources: BatchSources): BatchOptions | undefined {
  const section = sources.pipeline?.section ?? Object.keys(sources.pipeline ?? {}).find((k) => k !== 'locate' && k !== 'section') ?? '';
  const fields = sources.pipeline?.[section] as Record<string, unknown> | undefined;
  const on = sources.flags?.batch ?? fields?.['batch'] ?? false;
  if (on !== true) return undefined;
  const out: Record<string, unknown> = { ...BATCH_DEFAULTS };
  for (const [key, s] of Object.entries(BATCH_SETTINGS)) {
    const flag = sources.flags?.[s.flag as keyof NonNullable<BatchSources['flags']>];
    const field = fields?.[s.field];
    if (flag !== undefined) {
      if (!s.ok(flag)) throw usageError(`--${s.flag} ${s.must}`);
      out[key] = flag;
    } else if (field !== undefined) {
      if (!s.ok(field))
        throw new PlensError('E_INPUT_SCHEMA', `${section}.${s.field} ${s.must}`, {
          location: sources.pipeline!.locate(`/${section}/${s.field}`),
          hint: 'the format is in schemas/pipeline.schema.json and docs/batch.md',
        });
      out[key] = field;
    }
  }
  return out as unknown as BatchOptions;
}

/** Declares the batch flags of a single-call stage command. */
export function batchFlags<T>(y: Argv<T>) {
  return y
    .option('batch', {
      type: 'boolean',
      describe: "Send the calls through the provider's batch API: about half price, answers within 24 h; a rerun resumes polling and never resubmits",
    })
    .option('batch-fallback', {
      choices: ['online', 'none'] as const,
      describe: `With --batch: requests a batch did not answer (expired, cancelled, failed) are called online, or recorded as failures (default ${BATCH_DEFAULTS.fallback})`,
    })
    .option('poll-interval', { type: 'number', describe: `With --batch: seconds between status checks (default ${BATCH_DEFAULTS.pollIntervalS})` })
    .option('batch-size', { type: 'number', describe: `With --batch: requests per batch (default and most ${BATCH_DEFAULTS.maxItems})` });
}
