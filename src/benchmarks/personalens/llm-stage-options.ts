import type { Workspace } from '../../core/workspace.js';
import type { Shard } from '../../engine/shard.js';
import type { CacheMode } from '../../llm/call-cache.js';
import type { HttpTimeouts } from '../../llm/http-transport.js';
import type { RetryPolicy } from '../../llm/retry.js';

/** How any LLM stage (dialogues, judge) runs: the same knobs on the same engine. */
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
}

/** The engine's options, from a stage's options. */
export function engineOptions(o: LlmStageOptions) {
  return {
    concurrency: o.concurrency,
    signal: o.signal,
    ...(o.limit !== undefined ? { limit: o.limit } : {}),
    ...(o.shard ? { shard: o.shard } : {}),
    retryFailed: Boolean(o.retryFailed),
    dryRun: Boolean(o.dryRun),
    progress: Boolean(o.progress),
  };
}

/** A client's options (cache, retries, timeouts, key environment), from a stage's options. */
export function clientOptions<C>(o: LlmStageOptions, cache: C) {
  return {
    cache,
    connections: o.concurrency,
    // Each shard takes its share of the spec's rpm/tpm (issue 17), so n machines do not send n times the limit.
    ...(o.shard ? { shards: o.shard.count } : {}),
    ...(o.retry ? { retry: o.retry } : {}),
    ...(o.timeouts ? { timeouts: o.timeouts } : {}),
    ...(o.env ? { env: o.env } : {}),
    // A plan calls nothing: no key, no connection.
    planOnly: Boolean(o.dryRun),
  };
}
