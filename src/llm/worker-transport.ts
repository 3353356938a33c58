import type { HttpReply, HttpTimeouts, HttpTransport } from './http-transport.js';
import { HttpWorkerHost } from './http-worker-host.js';
import { abortedError, tiedTo, type CancellableCall } from './abort-waiters.js';

/** A connection pool on the process's HTTP worker thread. */
export class WorkerTransport implements HttpTransport {
  private readonly host = HttpWorkerHost.shared();
  private readonly pool: number;
  private closing: Promise<void> | undefined;

  constructor(timeouts: HttpTimeouts, connections: number) {
    this.pool = this.host.openPool(timeouts, connections);
  }

  post(url: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<HttpReply> {
    return tiedTo(signal, (settled) => this.send(url, headers, body, settled));
  }

  /** Posts one request to the thread (throws only when it cannot send at all); `settled` runs once it has an outcome. */
  private send(url: string, headers: Record<string, string>, body: string, settled: () => void): CancellableCall<HttpReply> {
    // The closures below name only what they use: one naming the body would keep it until the answer.
    let resolve!: (reply: HttpReply) => void;
    let reject!: (error: unknown) => void;
    const reply = new Promise<HttpReply>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    const id = this.host.post(this.pool, url, headers, body, {
      resolve: (answer) => {
        settled();
        resolve(answer);
      },
      reject: (error) => {
        settled();
        reject(error);
      },
    });
    return {
      reply,
      cancel: () => {
        this.host.cancel(id);
        settled();
        reject(abortedError());
      },
    };
  }

  close(): Promise<void> {
    return (this.closing ??= this.host.closePool(this.pool));
  }
}
