/** How an HTTP provider's request reaches the endpoint: on this thread, or on the HTTP worker thread. */

export interface HttpTimeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
  /** The whole call, from sending to the last body byte. */
  deadlineMs: number;
}

export const DEFAULT_TIMEOUTS: HttpTimeouts = { connectMs: 10_000, headersMs: 120_000, bodyMs: 120_000, deadlineMs: 180_000 };

/** What came back: any status, its Retry-After, and the whole body as text. */
export interface HttpReply {
  status: number;
  retryAfter: string | undefined;
  text: string;
}

/**
 * Sends one POST with a ready body. Fails only with an LlmCallError (network, timeout, aborted);
 * statuses and bodies are the caller's to judge. Holds one connection pool (keep-alive).
 */
export interface HttpTransport {
  post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<HttpReply>;
  close(): Promise<void>;
}

/**
 * `worker`: requests run on a shared worker thread, so sockets are written and read while this
 * thread renders prompts and records results (see http-worker-host.ts). `inline`: on this thread.
 * `auto` (the default): inline for the first INLINE_MAX_CONNECTIONS connections of the process,
 * then the worker thread (transport-choice.ts).
 */
export type TransportKind = 'worker' | 'inline' | 'auto';
