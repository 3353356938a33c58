/**
 * The HTTP worker thread (see http-worker-host.ts): runs each pool's requests through undici
 * and posts back the status, Retry-After and body text, or the LlmCallError's kind and message.
 */
import { parentPort } from 'node:worker_threads';
import { LlmCallError } from './errors.js';
import type { FromHttpWorker, ToHttpWorker } from './http-worker-host.js';
import { InlineTransport } from './inline-transport.js';

const port = parentPort!;
const pools = new Map<number, InlineTransport>();
const calls = new Map<number, AbortController>();
const send = (message: FromHttpWorker) => port.postMessage(message);

port.on('message', (message: ToHttpWorker) => {
  switch (message.op) {
    case 'open':
      pools.set(message.pool, new InlineTransport(message.timeouts, message.connections));
      return;
    case 'post':
      void post(message);
      return;
    case 'cancel':
      calls.get(message.id)?.abort(new Error('cancelled'));
      return;
    case 'close': {
      const pool = pools.get(message.pool);
      pools.delete(message.pool);
      void (pool?.close() ?? Promise.resolve()).finally(() => send({ id: message.id, closed: true }));
      return;
    }
  }
});

async function post(message: Extract<ToHttpWorker, { op: 'post' }>): Promise<void> {
  const controller = new AbortController();
  calls.set(message.id, controller);
  try {
    const pool = pools.get(message.pool);
    if (!pool) throw new LlmCallError('config', `no HTTP pool ${message.pool} on the worker thread`, { retryable: false });
    send({ id: message.id, reply: await pool.post(message.url, message.headers, message.body, controller.signal) });
  } catch (error) {
    const e = error instanceof LlmCallError ? error : new LlmCallError('network', (error as Error)?.message ?? String(error), { retryable: true });
    send({ id: message.id, error: { kind: e.kind, message: e.message, retryable: e.retryable } });
  } finally {
    calls.delete(message.id);
  }
}
