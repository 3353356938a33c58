/**
 * The HTTP worker thread (see http-worker-host.ts): runs each pool's requests through undici
 * and posts back the status, Retry-After and body text, or the LlmCallError's kind and message.
 * Answers that arrive in one turn of the event loop go back in one message: a message costs
 * about as much to post and receive as the rest of a call's trip through the thread.
 */
import { parentPort } from 'node:worker_threads';
import { LlmCallError } from './errors.js';
import type { FromHttpWorker, ToHttpWorker } from './http-worker-host.js';
import type { HttpReply } from './http-transport.js';
import { InlineTransport } from './inline-transport.js';

const port = parentPort!;
const pools = new Map<number, InlineTransport>();
/** Each request in flight's cancel. */
const calls = new Map<number, () => void>();
let outbox: FromHttpWorker[] = [];
const send = (message: FromHttpWorker) => {
  if (outbox.length === 0) setImmediate(flush);
  outbox.push(message);
};
function flush(): void {
  const batch = outbox;
  outbox = [];
  port.postMessage(batch);
}

port.on('message', (message: ToHttpWorker) => {
  switch (message.op) {
    case 'open':
      pools.set(message.pool, new InlineTransport(message.timeouts, message.connections));
      return;
    case 'post':
      post(message);
      return;
    case 'cancel':
      calls.get(message.id)?.();
      return;
    case 'close': {
      const pool = pools.get(message.pool);
      pools.delete(message.pool);
      void (pool?.close() ?? Promise.resolve()).finally(() => send({ id: message.id, closed: true }));
      return;
    }
  }
});

/**
 * Sends one request and posts its outcome back. Not async, and its callbacks name only the id: an
 * async frame or a closure here would hold the message, and so its body, until the answer came.
 */
function post(message: Extract<ToHttpWorker, { op: 'post' }>): void {
  const id = message.id;
  let call: { reply: Promise<HttpReply>; cancel: () => void };
  try {
    const pool = pools.get(message.pool);
    if (!pool) throw new LlmCallError('config', `no HTTP pool ${message.pool} on the worker thread`, { retryable: false });
    call = pool.send(message.url, message.headers, message.body);
  } catch (error) {
    fail(id, error);
    return;
  }
  calls.set(id, call.cancel);
  call.reply.then(
    (reply) => {
      calls.delete(id);
      send({ id, reply });
    },
    (error: unknown) => {
      calls.delete(id);
      fail(id, error);
    },
  );
}

function fail(id: number, error: unknown): void {
  const e = error instanceof LlmCallError ? error : new LlmCallError('network', (error as Error)?.message ?? String(error), { retryable: true });
  send({ id, error: { kind: e.kind, message: e.message, retryable: e.retryable } });
}
