import { redact } from '../core/redact.js';

/**
 * Why an LLM call failed, and whether trying again can help. The retry layer reads
 * `retryable` and `retryAfterMs`; stages record `kind` and `message` as the failure reason.
 * Messages never contain request headers (API keys), and pass through the shared redactor
 * (a server may echo a key in its error body).
 */
export type LlmFailureKind =
  | 'http'
  | 'network'
  | 'timeout'
  | 'bad_response'
  | 'empty_response'
  | 'aborted'
  | 'cache_miss'
  | 'config'
  /** A request of a provider batch that got no answer (batch_expired, batch_cancelled, batch_failed, ...). */
  | `batch_${string}`;

export class LlmCallError extends Error {
  readonly kind: LlmFailureKind;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(kind: LlmFailureKind, message: string, options: { status?: number; retryable: boolean; retryAfterMs?: number; cause?: unknown }) {
    super(redact(message), options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'LlmCallError';
    this.kind = kind;
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }

  /** A short reason for failure records and summaries, e.g. "http 429" or "timeout". */
  get reason(): string {
    return this.kind === 'http' ? `http ${this.status}` : this.kind;
  }
}

/** 408, 409, 429, 5xx and Anthropic's 529 "overloaded" are worth another try; other 4xx are not. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Retry-After in seconds or as an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
