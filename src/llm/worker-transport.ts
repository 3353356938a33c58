import type { HttpReply, HttpTimeouts, HttpTransport } from './http-transport.js';
import { HttpWorkerHost, type ReplyWaiter } from './http-worker-host.js';
import { abortedError, waitingOn } from './abort-waiters.js';

/** A connection pool on the process's HTTP worker thread. */
export class WorkerTransport implements HttpTransport {
  private readonly host = HttpWorkerHost.shared();
  private readonly pool: number;
  private closing: Promise<void> | undefined;

  constructor(timeouts: HttpTimeouts, connections: number) {
    this.pool = this.host.openPool(timeouts, connections);
  }

  post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<HttpReply> {
    if (signal.aborted) return Promise.reject(abortedError());
    // The waiter's closures are made in a scope of their own: made here, they would keep the body
    // alive until the answer came back (so every body in flight survived a scavenge).
    const call = this.waiter(signal);
    try {
      call.sent(this.host.post(this.pool, url, headers, body, call.waiter));
    } catch (error) {
      // It cannot send at all: the call fails, and was never listed as waiting.
      return Promise.reject(error);
    }
    return call.reply;
  }

  private waiter(signal: AbortSignal): { reply: Promise<HttpReply>; waiter: ReplyWaiter; sent: (id: number) => void } {
    const waiting = waitingOn(signal);
    let id = -1;
    let resolve!: (reply: HttpReply) => void;
    let reject!: (error: unknown) => void;
    const reply = new Promise<HttpReply>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const onAbort = () => {
      this.host.cancel(id);
      reject(abortedError());
    };
    return {
      reply,
      waiter: {
        resolve: (answer) => {
          waiting.delete(onAbort);
          resolve(answer);
        },
        reject: (error) => {
          waiting.delete(onAbort);
          reject(error);
        },
      },
      sent: (sentId) => {
        id = sentId;
        waiting.add(onAbort);
      },
    };
  }

  close(): Promise<void> {
    return (this.closing ??= this.host.closePool(this.pool));
  }
}
