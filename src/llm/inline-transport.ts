import { Agent, errors, type Dispatcher } from 'undici';
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

  /**
   * One POST through the pool's own dispatch interface, collecting the body as it arrives. It
   * sends and reads exactly what undici's `request()` would (origin and path from the URL, the
   * same headers, a UTF-8 body with a leading BOM skipped), without the response stream, the
   * header object and the abort-signal plumbing `request()` builds for every call: measured
   * against the mock, about half the client's CPU per call (docs/performance.md).
   */
  post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<HttpReply> {
    return new Promise<HttpReply>((resolve, reject) => {
      let target: { origin: string; path: string };
      try {
        target = targetOf(url);
      } catch (error) {
        reject(networkError(error, signal, false, this.timeouts));
        return;
      }
      let settled = false;
      let timedOut = false;
      // Set once undici starts the request; an abort before that is applied when it starts, so a
      // request still waiting for a connection is never sent.
      let started: Dispatcher.DispatchController | undefined;
      let abortReason: unknown;
      const chunks: Buffer[] = [];
      let length = 0;
      let status = 0;
      let retryAfter: string | undefined;
      const finish = (error: unknown, reply?: HttpReply) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        signal.removeEventListener('abort', onAbort);
        if (reply) resolve(reply);
        else reject(networkError(error, signal, timedOut, this.timeouts));
      };
      const abort = (reason: unknown) => {
        if (abortReason !== undefined) return;
        abortReason = reason ?? new Error('aborted');
        started?.abort(abortReason as Error);
        finish(abortReason);
      };
      // One timer per call: AbortSignal.any/timeout cost several times more per call, and any()
      // keeps a reference from the run's long-lived signal to every call's signal.
      const deadline = setTimeout(() => {
        timedOut = true;
        abort(new Error('deadline'));
      }, this.timeouts.deadlineMs);
      const onAbort = () => abort(signal.reason);
      if (signal.aborted) {
        onAbort();
        return;
      }
      signal.addEventListener('abort', onAbort, { once: true });
      try {
        this.dispatcher.dispatch(
          { origin: target.origin, path: target.path, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body },
          {
            onRequestStart(controller) {
              started = controller;
              if (abortReason !== undefined) controller.abort(abortReason as Error);
            },
            onResponseStart(_controller, statusCode, responseHeaders) {
              // An informational head (103 Early Hints) comes first; the final one overwrites it.
              status = statusCode;
              const value = responseHeaders['retry-after'];
              retryAfter = Array.isArray(value) ? value[0] : value;
            },
            onResponseData(_controller, chunk) {
              chunks.push(chunk);
              length += chunk.length;
            },
            onResponseEnd() {
              finish(undefined, { status, retryAfter, text: decodeBody(chunks, length) });
            },
            onResponseError(_controller, error) {
              finish(error);
            },
          },
        );
      } catch (error) {
        finish(error);
      }
    });
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

/** Origin and path of a URL as undici's request() takes them apart; parsed once per URL (a pool sees a handful). */
const targets = new Map<string, { origin: string; path: string }>();
function targetOf(url: string): { origin: string; path: string } {
  let target = targets.get(url);
  if (!target) {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:')
      throw new errors.InvalidArgumentError('Invalid URL protocol: the URL must start with `http:` or `https:`.');
    target = { origin: u.origin, path: u.search ? `${u.pathname}${u.search}` : u.pathname };
    if (targets.size >= 64) targets.clear();
    targets.set(url, target);
  }
  return target;
}

/** The body as text, as undici's `text()` reads it: UTF-8, a leading byte-order mark skipped. */
function decodeBody(chunks: Buffer[], length: number): string {
  if (length === 0) return '';
  const buffer = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, length);
  const start = buffer.length > 2 && buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf ? 3 : 0;
  return buffer.toString('utf8', start);
}

function networkError(error: unknown, signal: AbortSignal, timedOut: boolean, timeouts: HttpTimeouts): LlmCallError {
  if (signal.aborted) return new LlmCallError('aborted', 'call aborted', { retryable: false, cause: error });
  const code = (error as { code?: string }).code ?? '';
  if (timedOut) return new LlmCallError('timeout', `no complete answer within the ${timeouts.deadlineMs} ms call deadline`, { retryable: true, cause: error });
  if (/TIMEOUT/.test(code))
    return new LlmCallError('timeout', `${code.replace('UND_ERR_', '').toLowerCase().replace(/_/g, ' ')}`, { retryable: true, cause: error });
  return new LlmCallError('network', `${code || (error as Error).name}: ${(error as Error).message}`, { retryable: true, cause: error });
}
