import type { Dispatcher } from 'undici';
import { LlmCallError } from './errors.js';
import type { HttpReply, HttpTimeouts } from './http-transport.js';
import { abortedError } from './abort-waiters.js';

/**
 * One POST in flight through undici's dispatch interface: the handler undici calls, the call's
 * deadline, its cancel and its outcome. Collects the body as it arrives and reads it as undici's
 * `text()` would (UTF-8, a leading byte-order mark skipped).
 *
 * A class, not closures in the function that sends: closures made there would keep that
 * function's scope, and with it the request body, alive until the answer came back, so every
 * body in flight survived a scavenge and was promoted (about 4 KB a call at 256 in flight).
 */
export class InlineCall implements Dispatcher.DispatchHandler {
  readonly reply: Promise<HttpReply>;
  private resolve!: (reply: HttpReply) => void;
  private reject!: (error: unknown) => void;
  private done = false;
  private timedOut = false;
  private cancelled = false;
  /** Set once undici starts the request; a stop before that is applied when it starts, so a request still waiting for a connection is never sent. */
  private started: Dispatcher.DispatchController | undefined;
  private stopReason: Error | undefined;
  private chunks: Buffer[] = [];
  private length = 0;
  private status = 0;
  private retryAfter: string | undefined;
  /** One timer per call: AbortSignal.timeout costs several times more. */
  private readonly deadline: NodeJS.Timeout;

  /** `settled` runs once the call has an outcome. */
  constructor(
    private readonly timeouts: HttpTimeouts,
    private readonly settled?: () => void,
  ) {
    this.reply = new Promise<HttpReply>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.deadline = setTimeout(() => {
      this.timedOut = true;
      this.stop(new Error('deadline'));
    }, timeouts.deadlineMs);
  }

  /** Gives the call up: it fails as aborted. A function of its own, to hand to whoever may cancel. */
  readonly cancel = (): void => {
    if (this.done) return;
    this.cancelled = true;
    this.stop(new Error('aborted'));
  };

  /** Settles the call with an answer, or with the error `error` makes (once; later outcomes are dropped). */
  finish(error: unknown, answer?: HttpReply): void {
    if (this.done) return;
    this.done = true;
    clearTimeout(this.deadline);
    this.chunks = [];
    this.settled?.();
    if (answer) this.resolve(answer);
    else this.reject(this.cancelled ? abortedError(error) : networkError(error, this.timedOut, this.timeouts));
  }

  private stop(reason: Error): void {
    if (this.stopReason !== undefined) return;
    this.stopReason = reason;
    this.started?.abort(reason);
    this.finish(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.started = controller;
    if (this.stopReason !== undefined) controller.abort(this.stopReason);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[] | undefined>): void {
    // An informational head (103 Early Hints) comes first; the final one overwrites it.
    this.status = statusCode;
    const value = headers['retry-after'];
    this.retryAfter = Array.isArray(value) ? value[0] : value;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
  }

  onResponseEnd(): void {
    this.finish(undefined, { status: this.status, retryAfter: this.retryAfter, text: decodeBody(this.chunks, this.length) });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.finish(error);
  }
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
