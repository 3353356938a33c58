import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { LlmCallError, type LlmFailureKind } from './errors.js';
import type { HttpReply, HttpTimeouts } from './http-transport.js';

/** Messages to the HTTP worker thread. */
export type ToHttpWorker =
  | { op: 'open'; pool: number; timeouts: HttpTimeouts; connections: number }
  | { op: 'post'; id: number; pool: number; url: string; headers: Record<string, string>; body: string }
  | { op: 'cancel'; id: number }
  | { op: 'close'; id: number; pool: number };

/** Its answers, each to the post or close with the same id (posted in batches: FromHttpWorker[]). */
export type FromHttpWorker =
  | { id: number; reply: HttpReply }
  | { id: number; error: { kind: LlmFailureKind; message: string; retryable: boolean } }
  | { id: number; closed: true };

export interface ReplyWaiter {
  resolve(reply: HttpReply): void;
  reject(error: LlmCallError): void;
}

interface PoolConfig {
  timeouts: HttpTimeouts;
  connections: number;
}

/**
 * The one HTTP worker thread of this process, shared by every WorkerTransport (each its own pool
 * on it). Why a thread: undici writes a request on a reused keep-alive socket only in the event
 * loop's check phase, after every response that arrived together has been handled; on a thread
 * that also renders prompts and records results, answers that arrive together are sent on together,
 * and the convoy never breaks up. On its own thread a request goes out as soon as it is posted.
 *
 * The thread starts with the first pool and stops when the last pool closes. It holds the
 * process open only while a request is waiting. If it dies, every waiting call fails as a
 * retryable network error and the next request starts a new thread with the same pools.
 */
export class HttpWorkerHost {
  private static current: HttpWorkerHost | undefined;

  static shared(): HttpWorkerHost {
    return (HttpWorkerHost.current ??= new HttpWorkerHost());
  }

  private worker: Worker | undefined;
  private referenced = false;
  private readonly pools = new Map<number, PoolConfig>();
  private readonly waiting = new Map<number, ReplyWaiter>();
  /** Pools whose close the thread has not confirmed yet. */
  private readonly closing = new Map<number, () => void>();
  private nextId = 1;
  private nextPool = 1;

  private constructor() {}

  openPool(timeouts: HttpTimeouts, connections: number): number {
    const pool = this.nextPool++;
    this.pools.set(pool, { timeouts, connections });
    // The thread boots now, while the stage loads its first work, not when the first request
    // waits for it (at 256 in flight the first answers came ~0.1 s sooner). Started, it opens
    // every pool, this one included.
    if (this.worker) this.worker.postMessage({ op: 'open', pool, timeouts, connections } satisfies ToHttpWorker);
    else this.start();
    return pool;
  }

  /** Sends one request; returns its id, for cancel(). Throws only when it cannot send at all. */
  post(pool: number, url: string, headers: Record<string, string>, body: string, waiter: ReplyWaiter): number {
    if (!this.pools.has(pool)) throw new LlmCallError('config', 'HTTP transport used after it was closed', { retryable: false });
    const worker = this.start();
    const id = this.nextId++;
    this.wait(id, waiter);
    worker.postMessage({ op: 'post', id, pool, url, headers, body } satisfies ToHttpWorker);
    return id;
  }

  /** The caller has given up on this request (its run was aborted): the thread aborts it too. */
  cancel(id: number): void {
    if (!this.waiting.delete(id)) return;
    this.updateRef();
    this.worker?.postMessage({ op: 'cancel', id } satisfies ToHttpWorker);
  }

  /** Closes the pool's connections; the last pool to close stops the thread. */
  async closePool(pool: number): Promise<void> {
    if (!this.pools.delete(pool)) return;
    // Decided now, not after the await: two pools closing together must not both think they are
    // the last (the first would stop the thread while the second still waits for its answer).
    const last = this.pools.size === 0;
    // No new pool may open on a thread that is about to stop: the next transport gets a new host.
    if (last && HttpWorkerHost.current === this) HttpWorkerHost.current = undefined;
    const worker = this.worker;
    if (worker) {
      await new Promise<void>((done) => {
        const id = this.nextId++;
        this.closing.set(id, done);
        this.updateRef();
        worker.postMessage({ op: 'close', id, pool } satisfies ToHttpWorker);
      });
    }
    if (last) await this.stop();
  }

  private async stop(): Promise<void> {
    const stopping = this.worker;
    if (!stopping) return;
    this.worker = undefined;
    // Whatever still waits (another pool's close) is answered now, not left hanging.
    this.releaseAll(new LlmCallError('aborted', 'the HTTP worker thread was stopped', { retryable: false }));
    await stopping.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    // None of the process's own flags (`node --input-type=module -e ...` and the like are refused
    // by a worker thread, and the thread runs one known module that needs none) but a CPU
    // profile's: a profiled run profiles this thread too (the bench's CPU breakdown).
    const worker = new Worker(workerEntry(), { execArgv: profilingFlags(process.execArgv) });
    this.worker = worker;
    this.referenced = true;
    this.updateRef();
    worker.on('message', (batch: FromHttpWorker[]) => {
      for (const message of batch) this.onMessage(message);
    });
    worker.on('error', (error) => this.onFailure(worker, `the HTTP worker thread failed: ${error.message}`));
    worker.on('exit', (code) => this.onFailure(worker, `the HTTP worker thread exited (code ${code})`));
    // Node refs the thread's port as the thread comes up: an unref() made before that does not
    // hold, and an idle thread started with its pool would keep the process alive.
    worker.once('online', () => {
      if (this.worker === worker && !this.referenced) worker.unref();
    });
    for (const [pool, config] of this.pools) worker.postMessage({ op: 'open', pool, ...config } satisfies ToHttpWorker);
    return worker;
  }

  private wait(id: number, waiter: ReplyWaiter): void {
    this.waiting.set(id, waiter);
    this.updateRef();
  }

  private onMessage(message: FromHttpWorker): void {
    if ('closed' in message) {
      const done = this.closing.get(message.id);
      this.closing.delete(message.id);
      this.updateRef();
      done?.();
      return;
    }
    const waiter = this.waiting.get(message.id);
    if (!waiter) return; // cancelled: its caller has already failed with "aborted"
    this.waiting.delete(message.id);
    this.updateRef();
    if ('reply' in message) waiter.resolve(message.reply);
    else waiter.reject(new LlmCallError(message.error.kind, message.error.message, { retryable: message.error.retryable }));
  }

  private onFailure(worker: Worker, message: string): void {
    if (this.worker !== worker) return; // one we stopped, or a failure already handled
    this.worker = undefined;
    this.releaseAll(new LlmCallError('network', message, { retryable: true }));
  }

  /** The thread is gone: every waiting call fails with `error`, and every close is done. */
  private releaseAll(error: LlmCallError): void {
    const waiters = [...this.waiting.values()];
    const closers = [...this.closing.values()];
    this.waiting.clear();
    this.closing.clear();
    for (const waiter of waiters) waiter.reject(error);
    for (const done of closers) done();
  }

  /** The thread keeps the process alive only while some call or close waits on it. */
  private updateRef(): void {
    const want = this.waiting.size + this.closing.size > 0;
    if (!this.worker || want === this.referenced) return;
    if (want) this.worker.ref();
    else this.worker.unref();
    this.referenced = want;
  }
}

/** `--cpu-prof` and its settings, from a process's flags (`--cpu-prof-dir=D` or `--cpu-prof-dir D`). */
export function profilingFlags(execArgv: readonly string[]): string[] {
  const flags: string[] = [];
  for (let i = 0; i < execArgv.length; i++) {
    const flag = execArgv[i]!;
    if (!flag.startsWith('--cpu-prof')) continue;
    flags.push(flag);
    if (flag !== '--cpu-prof' && !flag.includes('=') && i + 1 < execArgv.length) flags.push(execArgv[++i]!);
  }
  return flags;
}

function workerEntry(): URL {
  const beside = new URL('./http-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  // Running from the TypeScript sources (the tests): the thread runs the build of the same module.
  const built = new URL('../../dist/llm/http-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(built))) return built;
  throw new LlmCallError('config', `the HTTP worker module is missing (${fileURLToPath(beside)}); run npm run build`, { retryable: false });
}
