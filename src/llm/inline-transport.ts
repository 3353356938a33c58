import { Agent, request, type Dispatcher } from 'undici';
import { LlmCallError } from './errors.js';
import type { HttpReply, HttpTimeouts, HttpTransport } from './http-transport.js';

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

/** Requests through undici on the calling thread; also what the HTTP worker thread runs. */
export class InlineTransport implements HttpTransport {
  private readonly dispatcher: Dispatcher;
  private closing: Promise<void> | undefined;

  /** `onClose` runs once, when the pool is first closed. */
  constructor(
    private readonly timeouts: HttpTimeouts,
    connections: number,
    private readonly onClose?: () => void,
  ) {
    this.dispatcher = createDispatcher(timeouts, connections);
  }

  async post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<HttpReply> {
    // One controller and one timer per call: AbortSignal.any/timeout cost several times more per
    // call, and any() keeps a reference from the run's long-lived signal to every call's signal.
    const controller = new AbortController();
    let timedOut = false;
    const deadline = setTimeout(() => {
      timedOut = true;
      controller.abort(new Error('deadline'));
    }, this.timeouts.deadlineMs);
    const onAbort = () => controller.abort(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await request(url, {
        method: 'POST',
        dispatcher: this.dispatcher,
        headers: { 'content-type': 'application/json', ...headers },
        body,
        signal: controller.signal,
      });
      const retryAfter = response.headers['retry-after'];
      return { status: response.statusCode, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter, text: await response.body.text() };
    } catch (error) {
      throw networkError(error, signal, timedOut, this.timeouts);
    } finally {
      clearTimeout(deadline);
      signal.removeEventListener('abort', onAbort);
    }
  }

  /** Closes the pool; closing again waits on the same close. */
  close(): Promise<void> {
    if (!this.closing) {
      this.onClose?.();
      this.closing = this.dispatcher.close();
    }
    return this.closing;
  }
}

function networkError(error: unknown, signal: AbortSignal, timedOut: boolean, timeouts: HttpTimeouts): LlmCallError {
  if (signal.aborted) return new LlmCallError('aborted', 'call aborted', { retryable: false, cause: error });
  const code = (error as { code?: string }).code ?? '';
  if (timedOut) return new LlmCallError('timeout', `no complete answer within the ${timeouts.deadlineMs} ms call deadline`, { retryable: true, cause: error });
  if (/TIMEOUT/.test(code))
    return new LlmCallError('timeout', `${code.replace('UND_ERR_', '').toLowerCase().replace(/_/g, ' ')}`, { retryable: true, cause: error });
  return new LlmCallError('network', `${code || (error as Error).name}: ${(error as Error).message}`, { retryable: true, cause: error });
}
