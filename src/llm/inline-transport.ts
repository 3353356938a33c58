import { Agent, errors, type Dispatcher } from 'undici';
import type { HttpReply, HttpTimeouts, HttpTransport } from './http-transport.js';
import { tiedTo, type CancellableCall } from './abort-waiters.js';
import { InlineCall } from './inline-call.js';

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
    return tiedTo(signal, (settled) => this.send(url, headers, body, settled));
  }

  /**
   * One POST through the pool's own dispatch interface, collecting the body as it arrives. It
   * sends and reads exactly what undici's `request()` would (origin and path from the URL, the
   * same headers, a UTF-8 body with a leading BOM skipped), without the response stream, the
   * header object and the abort-signal plumbing `request()` builds for every call: measured
   * against the mock, about half the client's CPU per call (docs/performance.md).
   * `cancel()` gives the call up (it fails as aborted); `settled` runs once it has an outcome.
   */
  send(url: string, headers: Record<string, string>, body: string, settled?: () => void): CancellableCall<HttpReply> {
    // No closure is made here: one would keep this scope, and so the body, alive until the answer.
    const call = new InlineCall(this.timeouts, settled);
    try {
      const target = targetOf(url);
      this.dispatcher.dispatch(
        { origin: target.origin, path: target.path, method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body },
        call,
      );
    } catch (error) {
      call.finish(error);
    }
    return { reply: call.reply, cancel: call.cancel };
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
