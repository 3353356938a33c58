import type { HttpReply, HttpTimeouts, HttpTransport } from './http-transport.js';
import { HttpWorkerHost } from './http-worker-host.js';
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
    const waiting = waitingOn(signal);
    return new Promise<HttpReply>((resolve, reject) => {
      const onAbort = () => {
        this.host.cancel(id);
        reject(abortedError());
      };
      // Sends at once (or throws, which rejects this promise before it is listed as waiting).
      const id = this.host.post(this.pool, url, headers, body, {
        resolve: (reply) => {
          waiting.delete(onAbort);
          resolve(reply);
        },
        reject: (error) => {
          waiting.delete(onAbort);
          reject(error);
        },
      });
      waiting.add(onAbort);
    });
  }

  close(): Promise<void> {
    return (this.closing ??= this.host.closePool(this.pool));
  }
}
