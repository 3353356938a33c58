import { Agent, errors, type Dispatcher } from 'undici';
import { LlmCallError } from './errors.js';
import type { HttpReply, HttpTimeouts, HttpTransport } from './http-transport.js';
import { abortedError, waitingOn } from './abort-waiters.js';

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

  /** One POST, given up at once when `signal` aborts (the call then fails as aborted). */
  post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<HttpReply> {
    if (signal.aborted) return Promise.reject(abortedError());
    const waiting = waitingOn(signal);
    let cancel: (() => void) | undefined;
    let settled = false;
    const call = this.send(url, headers, body, () => {
      settled = true;
      if (cancel) waiting.delete(cancel);
    });
    // A call can settle before send() returns (a URL undici refuses): it waits on nothing then.
    if (!settled) waiting.add((cancel = call.cancel));
    return call.reply;
  }

  /**
   * One POST through the pool's own dispatch interface, collecting the body as it arrives. It
   * sends and reads exactly what undici's `request()` would (origin and path from the URL, the
   * same headers, a UTF-8 body with a leading BOM skipped), without the response stream, the
   * header object and the abort-signal plumbing `request()` builds for every call: measured
   * against the mock, about half the client's CPU per call (docs/performance.md).
   * `cancel()` gives the call up (it fails as aborted); `settled` runs once it has an outcome.
   */
  send(url: string, headers: Record<string, string>, body: string, settled?: () => void): { reply: Promise<HttpReply>; cancel: () => void } {
    let cancel: () => void = () => undefined;
    const reply = new Promise<HttpReply>((resolve, reject) => {
      let done = false;
      let timedOut = false;
      let cancelled = false;
      // Set once undici starts the request; a cancel before that is applied when it starts, so a
      // request still waiting for a connection is never sent.
      let started: Dispatcher.DispatchController | undefined;
      let stopReason: Error | undefined;
      const chunks: Buffer[] = [];
      let length = 0;
      let status = 0;
      let retryAfter: string | undefined;
      const finish = (error: unknown, answer?: HttpReply) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        settled?.();
        if (answer) resolve(answer);
        else reject(cancelled ? abortedError(error) : networkError(error, timedOut, this.timeouts));
      };
      const stop = (reason: Error) => {
        if (stopReason !== undefined) return;
        stopReason = reason;
        started?.abort(reason);
        finish(reason);
      };
      cancel = () => {
        if (done) return;
        cancelled = true;
        stop(new Error('aborted'));
      };
      // One timer per call: AbortSignal.timeout costs several times more.
      const deadline = setTimeout(() => {
        timedOut = true;
        stop(new Error('deadline'));
      }, this.timeouts.deadlineMs);
      let target: { origin: string; path: string };
      try {
        target = targetOf(url);
      } catch (error) {
        finish(error);
        return;
      }
      try {
        this.dispatcher.dispatch(
          { origin: target.origin, path: target.path, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body },
          {
            onRequestStart(controller) {
              started = controller;
              if (stopReason !== undefined) controller.abort(stopReason);
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
    return { reply, cancel };
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

function networkError(error: unknown, timedOut: boolean, timeouts: HttpTimeouts): LlmCallError {
  const code = (error as { code?: string }).code ?? '';
  if (timedOut) return new LlmCallError('timeout', `no complete answer within the ${timeouts.deadlineMs} ms call deadline`, { retryable: true, cause: error });
  if (/TIMEOUT/.test(code))
    return new LlmCallError('timeout', `${code.replace('UND_ERR_', '').toLowerCase().replace(/_/g, ' ')}`, { retryable: true, cause: error });
  return new LlmCallError('network', `${code || (error as Error).name}: ${(error as Error).message}`, { retryable: true, cause: error });
}
