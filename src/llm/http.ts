import { Agent, request, type Dispatcher } from 'undici';
import { LlmCallError, isRetryableStatus, parseRetryAfter } from './errors.js';

export interface HttpTimeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
  /** The whole call, from sending to the last body byte. */
  deadlineMs: number;
}

export const DEFAULT_TIMEOUTS: HttpTimeouts = { connectMs: 10_000, headersMs: 120_000, bodyMs: 120_000, deadlineMs: 180_000 };

/** One connection pool per endpoint; connections are reused across calls (keep-alive). */
export function createDispatcher(timeouts: HttpTimeouts, connections: number): Dispatcher {
  return new Agent({
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    connections,
    keepAliveTimeout: 30_000,
    pipelining: 1,
  });
}

/**
 * POSTs JSON and returns the parsed JSON body. Every way this can fail becomes an
 * LlmCallError that says whether a retry can help; no header (API key) ever reaches a message.
 */
export async function postJson(
  dispatcher: Dispatcher,
  url: string,
  headers: Record<string, string>,
  body: unknown,
  timeouts: HttpTimeouts,
  signal: AbortSignal,
): Promise<unknown> {
  // One controller and one timer per call: AbortSignal.any/timeout cost several times more per
  // call, and any() keeps a reference from the run's long-lived signal to every call's signal.
  const controller = new AbortController();
  let timedOut = false;
  const deadline = setTimeout(() => {
    timedOut = true;
    controller.abort(new Error('deadline'));
  }, timeouts.deadlineMs);
  const onAbort = () => controller.abort(signal.reason);
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  let status: number;
  let text: string;
  let retryAfter: string | string[] | undefined;
  try {
    const response = await request(url, {
      method: 'POST',
      dispatcher,
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    status = response.statusCode;
    retryAfter = response.headers['retry-after'];
    text = await response.body.text();
  } catch (error) {
    throw networkError(error, signal, timedOut, timeouts);
  } finally {
    clearTimeout(deadline);
    signal.removeEventListener('abort', onAbort);
  }
  if (status < 200 || status >= 300) {
    const retryAfterMs = parseRetryAfter(retryAfter);
    throw new LlmCallError('http', `HTTP ${status} from ${redactUrl(url)}: ${summariseBody(text)}`, {
      status,
      retryable: isRetryableStatus(status),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    // A 200 with a body that is not JSON (a proxy's HTML page, a cut-off stream) is a transient fault.
    throw new LlmCallError('bad_response', `response from ${redactUrl(url)} is not JSON: ${summariseBody(text)}`, { retryable: true, cause: error });
  }
}

function networkError(error: unknown, signal: AbortSignal, timedOut: boolean, timeouts: HttpTimeouts): LlmCallError {
  if (signal.aborted) return new LlmCallError('aborted', 'call aborted', { retryable: false, cause: error });
  const code = (error as { code?: string }).code ?? '';
  if (timedOut) return new LlmCallError('timeout', `no complete answer within the ${timeouts.deadlineMs} ms call deadline`, { retryable: true, cause: error });
  if (/TIMEOUT/.test(code)) return new LlmCallError('timeout', `${code.replace('UND_ERR_', '').toLowerCase().replace(/_/g, ' ')}`, { retryable: true, cause: error });
  return new LlmCallError('network', `${code || (error as Error).name}: ${(error as Error).message}`, { retryable: true, cause: error });
}

function summariseBody(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 300 ? `${flat.slice(0, 297)}...` : flat || '(empty body)';
}

/** Drops credentials and query strings from a URL before it reaches a message. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString();
  } catch {
    return '(invalid url)';
  }
}
