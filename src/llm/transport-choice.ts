import type { HttpTimeouts, HttpTransport, TransportKind } from './http-transport.js';
import { InlineTransport } from './inline-transport.js';
import { WorkerTransport } from './worker-transport.js';

/**
 * How many connections this process's inline pools may hold together under `auto`. Up to about
 * this many calls in flight, requests made on the calling thread cost less CPU than the hop to
 * the worker thread and back (each message wakes the other thread when traffic is sparse); past
 * it, the calling thread saturates and the worker thread carries the sockets better. Measured with
 * the dialogues bench (`npm run bench -- dialogues`): at 64 in flight inline took ~0.08 ms less CPU
 * a call and ran as fast; at 128 both were even. At 256, measured again once both transports
 * drove undici's dispatch interface (5k dialogues, four alternating runs each): the worker thread
 * made ~3,970 calls/s against inline's ~3,680 (8% more), at about the same CPU per call.
 */
export const INLINE_MAX_CONNECTIONS = 128;

let inlineConnections = 0;

/**
 * The transport for a client's pool of `connections`: `inline` and `worker` as asked; `auto`
 * inline while this process's open inline pools, this one included, hold at most
 * INLINE_MAX_CONNECTIONS connections, else on the shared worker thread. The choice changes no
 * request, answer or error: both run the same undici client (the worker thread runs an
 * InlineTransport).
 */
export function openTransport(kind: TransportKind, timeouts: HttpTimeouts, connections: number): HttpTransport {
  if (kind === 'worker') return new WorkerTransport(timeouts, connections);
  if (kind === 'inline') return new InlineTransport(timeouts, connections);
  if (inlineConnections + connections > INLINE_MAX_CONNECTIONS) return new WorkerTransport(timeouts, connections);
  inlineConnections += connections;
  return new InlineTransport(timeouts, connections, () => {
    inlineConnections -= connections;
  });
}
