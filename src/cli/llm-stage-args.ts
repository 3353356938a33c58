import type { Argv } from 'yargs';
import { usageError } from '../core/errors.js';
import { userPath } from '../core/paths.js';
import { resolveShard } from '../engine/shard.js';
import { CACHE_MODES, type CacheMode } from '../llm/call-cache.js';
import { DEFAULT_RETRY } from '../llm/retry.js';
import type { LlmStageOptions } from '../benchmarks/personalens/llm-stage-options.js';
import { showProgress, workspaceOf, type GlobalArgs } from './options.js';

export interface LlmStageArgs extends GlobalArgs {
  prompts?: string;
  cache: string;
  concurrency: number;
  limit?: number;
  shard?: string;
  'shard-count'?: string;
  'retry-failed': boolean;
  'dry-run': boolean;
  retries: number;
  'retry-delay-ms': number;
  'retry-window': number;
  'call-timeout': number;
  'connect-timeout': number;
}

/** The options every LLM stage (dialogues, judge) takes, declared once. */
export function llmStageOptions<T>(y: Argv<T>, what: string) {
  return y
    .option('prompts', { type: 'string', describe: 'Folder of prompt templates overriding the bundled ones, file by file' })
    .option('cache', { choices: CACHE_MODES, default: 'on', describe: 'Call cache: on (use+record), off, read (use only), write (record only), replay (use; a miss fails)' })
    .option('concurrency', { type: 'number', default: 16, describe: `${what} in flight at once` })
    .option('limit', { type: 'number', describe: `Run at most N ${what.toLowerCase()} this time` })
    .option('shard', {
      type: 'string',
      describe:
        'Run only shard i of n (i/n, 0-based), by key hash; each shard writes its own log. Absent or "auto": env PLENS_SHARD=i/n, else the array-job index JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID or AWS_BATCH_JOB_ARRAY_INDEX',
    })
    .option('shard-count', { type: 'string', describe: 'Number of shards when the scheduler gives only an index (Kubernetes, AWS Batch); env PLENS_SHARD_COUNT' })
    .option('retry-failed', { type: 'boolean', default: false, describe: 'Run again what is recorded as failed (or, for the judge, unparsed)' })
    .option('dry-run', { type: 'boolean', default: false, describe: 'Print the planned work and an estimate of calls, tokens and cost; call nothing' })
    .option('retries', { type: 'number', default: 6, describe: 'Retries per call on 408/409/429/5xx, resets, timeouts and unreadable answers (never on 400/401/403/404)' })
    .option('retry-delay-ms', { type: 'number', default: 1000, describe: 'First backoff delay; doubles per retry with jitter, at most 60 s; a Retry-After header is always honoured' })
    .option('retry-window', { type: 'number', default: 600, describe: 'Seconds after which a call stops retrying' })
    .option('call-timeout', { type: 'number', default: 180, describe: 'Seconds one attempt may take, start to last byte' })
    .option('connect-timeout', { type: 'number', default: 10, describe: 'Seconds to establish a connection' });
}

/** Checks the shared options once and turns them into the stage's options. */
export function llmStageRunOptions(args: LlmStageArgs, signal: AbortSignal, env: NodeJS.ProcessEnv = process.env): LlmStageOptions {
  if (!Number.isInteger(args.concurrency) || args.concurrency < 1) throw usageError('--concurrency must be a whole number >= 1');
  if (args.limit !== undefined && (!Number.isInteger(args.limit) || args.limit < 0)) throw usageError('--limit must be a whole number >= 0');
  for (const k of ['retries', 'retry-delay-ms', 'retry-window', 'call-timeout', 'connect-timeout'] as const) {
    if (!Number.isFinite(args[k]) || args[k] < 0) throw usageError(`--${k} must be a number >= 0`);
  }
  // A zero timeout would fail every call at once (and be retried until the window closes).
  for (const k of ['call-timeout', 'connect-timeout'] as const) if (args[k] === 0) throw usageError(`--${k} must be more than 0 seconds`);
  const callMs = args['call-timeout'] * 1000;
  return {
    workspace: workspaceOf(args),
    ...(args.prompts ? { prompts: userPath(args.prompts) } : {}),
    cache: args.cache as CacheMode,
    concurrency: args.concurrency,
    ...(args.limit !== undefined ? { limit: args.limit } : {}),
    ...shardOption(args, env),
    retryFailed: args['retry-failed'],
    dryRun: args['dry-run'],
    progress: showProgress(args),
    signal,
    retry: { ...DEFAULT_RETRY, retries: args.retries, minDelayMs: args['retry-delay-ms'], maxTotalMs: args['retry-window'] * 1000 },
    timeouts: { connectMs: args['connect-timeout'] * 1000, headersMs: callMs, bodyMs: callMs, deadlineMs: callMs },
  };
}

function shardOption(args: LlmStageArgs, env: NodeJS.ProcessEnv) {
  const shard = resolveShard(args.shard, args['shard-count'], env);
  return shard ? { shard } : {};
}
