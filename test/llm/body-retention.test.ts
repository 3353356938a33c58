import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpReply, HttpTransport } from '../../src/llm/http-transport.js';
import { HttpWorkerHost } from '../../src/llm/http-worker-host.js';
import { InlineTransport } from '../../src/llm/inline-transport.js';
import { WorkerTransport } from '../../src/llm/worker-transport.js';

/**
 * A request body is needed until it is sent, not until its answer comes back. A transport that kept
 * it (a closure made beside it, an async frame holding it) kept every body in flight alive across
 * the young generation's collections: at 256 calls in flight that was ~4 KB promoted per call, and
 * the largest share of the stage's garbage-collection CPU (docs/performance.md). Here the server
 * holds every answer while the test collects garbage and weighs the heap that sent them (the main
 * thread's, or the HTTP thread's): 8 bodies of 4 MB each in flight must not be in it.
 */

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const TIMEOUTS = { connectMs: 2000, headersMs: 30_000, bodyMs: 30_000, deadlineMs: 30_000 };
const CALLS = 8;
const BODY_CHARS = 4 * 1024 * 1024;

let server: Server | undefined;
const transports: HttpTransport[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
  server?.closeAllConnections();
  await new Promise((r) => server?.close(r) ?? r(undefined));
  server = undefined;
});

/** A server that reads each request whole and answers only when `release()` is called. */
async function holdingServer(): Promise<{ url: string; received: () => number; release: () => void }> {
  const held: ServerResponse[] = [];
  let received = 0;
  server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    req.on('end', () => {
      received++;
      held.push(res);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`,
    received: () => received,
    release: () => {
      for (const res of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    },
  };
}

/** Starts one call with a fresh 4 MB body that nothing here keeps. */
function start(transport: HttpTransport, url: string, i: number, signal: AbortSignal): Promise<HttpReply> {
  return transport.post(url, {}, JSON.stringify({ i, pad: 'x'.repeat(BODY_CHARS) }), signal);
}

/** How much the heap holds: the main thread's used heap, or the HTTP thread's from a snapshot of it (taking one collects first). */
type Weigh = () => Promise<number>;
const mainHeap: Weigh = async () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const httpThreadHeap: Weigh = async () => {
  const worker = (HttpWorkerHost.shared() as unknown as { worker: Worker }).worker;
  const chunks: Buffer[] = [];
  for await (const chunk of await worker.getHeapSnapshot()) chunks.push(chunk as Buffer);
  // The own size of every JS object (a snapshot holds only the start of a long string's text). Not
  // native memory: undici keeps its own Buffer copy of a body until the answer, off the JS heap.
  const snapshot = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
  };
  const { node_fields: fields, node_types: types } = snapshot.snapshot.meta;
  const type = fields.indexOf('type');
  const selfSize = fields.indexOf('self_size');
  const native = types[0].indexOf('native');
  let bytes = 0;
  for (let i = 0; i < snapshot.nodes.length; i += fields.length) if (snapshot.nodes[i + type] !== native) bytes += snapshot.nodes[i + selfSize]!;
  return bytes;
};

async function heapWithCallsInFlight(transport: HttpTransport, weigh: Weigh): Promise<{ baseline: number; inFlight: number; replies: HttpReply[] }> {
  const { url, received, release } = await holdingServer();
  const signal = new AbortController().signal;
  // Warm: the pool's connections and code paths exist before the baseline.
  const warm = start(transport, url, -1, signal);
  while (received() < 1) await new Promise((r) => setTimeout(r, 10));
  release();
  await warm;
  const baseline = await weigh();
  const calls = Array.from({ length: CALLS }, (_, i) => start(transport, url, i, signal));
  while (received() < 1 + CALLS) await new Promise((r) => setTimeout(r, 10));
  // Every body has reached the server; every call still waits for its answer.
  const inFlight = await weigh();
  release();
  return { baseline, inFlight, replies: await Promise.all(calls) };
}

describe('a request body is not kept while its answer is awaited', () => {
  for (const [name, make, weigh] of [
    ['inline transport', () => new InlineTransport(TIMEOUTS, CALLS), mainHeap],
    ['HTTP worker transport, on the main thread', () => new WorkerTransport(TIMEOUTS, CALLS), mainHeap],
    ['HTTP worker transport, on the HTTP thread', () => new WorkerTransport(TIMEOUTS, CALLS), httpThreadHeap],
  ] as const) {
    it(name, async () => {
      const transport = make();
      transports.push(transport);
      const { baseline, inFlight, replies } = await heapWithCallsInFlight(transport, weigh);
      expect(replies.map((r) => r.status)).toEqual(Array(CALLS).fill(200));
      // Kept, the bodies would weigh CALLS x 4 MB = 32 MB; the calls themselves a few KB.
      expect((inFlight - baseline) / (1024 * 1024)).toBeLessThan(8);
    });
  }
});
