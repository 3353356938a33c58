// Apart from retry.ts (which loads p-retry) so the CLI's option defaults cost nothing to load.

/** How hard to try: exponential backoff with jitter, bounded in attempts and in total time. */
export interface RetryPolicy {
  /** Retries after the first attempt. */
  retries: number;
  minDelayMs: number;
  maxDelayMs: number;
  factor: number;
  /** No new attempt starts after this much time since the first. */
  maxTotalMs: number;
  /** Cap on a server's Retry-After we are willing to honour. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 6, minDelayMs: 1000, maxDelayMs: 60_000, factor: 2, maxTotalMs: 10 * 60_000, maxRetryAfterMs: 5 * 60_000 };
