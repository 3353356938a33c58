import pRetry, { AbortError } from 'p-retry';
import { setTimeout as sleep } from 'node:timers/promises';
import { LlmCallError } from './errors.js';

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

/**
 * The single retry layer: retries what LlmCallError marks retryable (408/409/429/5xx,
 * resets, timeouts, unreadable bodies), waits at least the server's Retry-After, and gives up
 * at once on 400/401/403/404. Returns the result and the number of attempts made.
 */
export async function withRetry<T>(call: (attempt: number) => Promise<T>, policy: RetryPolicy, signal: AbortSignal): Promise<{ value: T; attempts: number }> {
  let attempts = 0;
  const value = await pRetry(
    async (attempt) => {
      attempts = attempt;
      try {
        return await call(attempt);
      } catch (error) {
        if (error instanceof LlmCallError && !error.retryable) throw new AbortError(error);
        throw error;
      }
    },
    {
      retries: policy.retries,
      minTimeout: policy.minDelayMs,
      maxTimeout: policy.maxDelayMs,
      factor: policy.factor,
      randomize: true,
      maxRetryTime: policy.maxTotalMs,
      signal,
      shouldRetry: ({ error }) => !(error instanceof LlmCallError) || error.retryable,
      onFailedAttempt: async ({ error, retriesLeft }) => {
        if (retriesLeft > 0 && error instanceof LlmCallError && error.retryAfterMs !== undefined) {
          await sleep(Math.min(error.retryAfterMs, policy.maxRetryAfterMs), undefined, { signal });
        }
      },
    },
  ).catch((error: unknown) => {
    // p-retry rethrows the original error; make sure the attempt count travels with it.
    if (error instanceof Error) Object.assign(error, { attempts });
    throw error;
  });
  return { value, attempts };
}
