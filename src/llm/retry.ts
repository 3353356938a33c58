import pRetry, { AbortError } from 'p-retry';
import { setTimeout as sleep } from 'node:timers/promises';
import { LlmCallError } from './errors.js';
import type { RetryPolicy } from './retry-policy.js';

/**
 * The single retry layer: retries what LlmCallError marks retryable (408/409/429/5xx,
 * resets, timeouts, unreadable bodies), waits at least the server's Retry-After, and gives up
 * at once on 400/401/403/404. Returns the result and the number of attempts made.
 */
export async function withRetry<T>(call: (attempt: number) => Promise<T>, policy: RetryPolicy, signal: AbortSignal): Promise<{ value: T; attempts: number }> {
  let attempts = 0;
  const started = performance.now();
  // The first attempt is made here, and nearly every call ends with it: p-retry (its option
  // checks, its bookkeeping) is entered only after a failure, and then behaves as if it had made
  // the first attempt itself (the same failure handling, delays and overall time limit).
  let first: unknown;
  try {
    signal.throwIfAborted();
    attempts = 1;
    const value = await call(1);
    signal.throwIfAborted();
    return { value, attempts };
  } catch (error) {
    first = error;
  }
  const value = await pRetry(
    async (attempt) => {
      attempts = attempt;
      try {
        if (attempt === 1) throw first;
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
      // Counted from the first attempt, as when p-retry makes it.
      maxRetryTime: Math.max(0, policy.maxTotalMs - (performance.now() - started)),
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
