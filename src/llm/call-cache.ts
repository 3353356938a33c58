import { createHash } from 'node:crypto';
import { mkdirSync, statfsSync } from 'node:fs';
import { open, type RootDatabase } from 'lmdb';
import { PlensError, storageError, usageError } from '../core/errors.js';
import { SIM_VERSION } from './sim.js';
import type { ChatRequest, ChatResponse } from './types.js';
import { CACHE_MODES, type CacheMode } from './cache-mode.js';

export interface CachedCall {
  response: ChatResponse;
  /** The original call's latency, so a replayed run reports what the endpoint took. */
  latencyMs: number;
  /**
   * The answer ended as a failure (it did not parse): kept so `--cache replay` reproduces the
   * run, but never served to `on` / `read`, so a retry asks again instead of replaying it.
   */
  rejected?: boolean;
}

/**
 * Everything that decides an answer, and nothing else: no key, no headers. The endpoint counts
 * when it is not the vendor's default (two servers answer differently); never its credentials.
 */
export function callKey(provider: string, model: string, request: ChatRequest, endpoint?: string): string {
  // Length-prefixed pieces, so no two different requests share a byte stream (and no JSON of
  // the whole request is built for every call). The short pieces are joined and each prompt is
  // fed as it is: the same bytes as feeding every piece on its own (each prefix is ASCII, so no
  // surrogate pair forms across a joint), in a few update() calls instead of ~22, and no copy of
  // a prompt is made.
  const h = createHash('sha256');
  const part = (s: string) => `${s.length}:${s}`;
  let head = part('plens-call-v1') + part(provider) + part(model);
  // Only when set, so keys of calls to the default endpoint stay what they were.
  if (endpoint !== undefined) head += part(`endpoint:${endpoint}`);
  // The simulator's rules are its model: replies of an older version are not served.
  if (provider === 'sim') head += part(SIM_VERSION);
  head += part(String(request.params.temperature)) + part(String(request.params.maxTokens));
  // Only when set, so keys of calls without it stay what they were.
  if (request.params.topP !== undefined) head += part(`top_p:${request.params.topP}`);
  // Only when set, as top_p: the endpoint's defaults are other settings than the ones named.
  if (request.params.providerDefaults) head += part('provider-defaults');
  head += part(request.purpose) + part(request.promptVersion) + part(String(request.replicate));
  // No system prompt at all differs from an empty one; '-' is no length prefix, so no string collides.
  if (request.system === null) head += '-';
  else {
    h.update(`${head}${request.system.length}:`).update(request.system);
    head = '';
  }
  for (const m of request.messages) {
    h.update(`${head}${part(m.role)}${m.content.length}:`).update(m.content);
    head = '';
  }
  // Only when set, so keys of chat calls stay what they were; the tag keeps it apart from a message.
  if (request.prompt !== undefined) {
    h.update(`${head}${part('prompt')}${request.prompt.length}:`).update(request.prompt);
    head = '';
  }
  if (head !== '') h.update(head);
  return h.digest('hex');
}

/** Whether the file system holding `dir` has (almost) no space left: LMDB reports a full disk as EIO. */
function diskFull(dir: string): boolean {
  try {
    const s = statfsSync(dir);
    return s.bavail * s.bsize < 1 << 20;
  } catch {
    return false;
  }
}

/** How long cache writes gather before they go to LMDB together (ms). */
const COMMIT_DELAY_MS = 20;

/** A content-addressed record of every LLM call, in an LMDB environment shared by all stages (and shards). */
export class CallCache {
  /** The first write that failed (disk full, ...): reported by committed(), never swallowed. */
  private failure: unknown;
  /** Written but not yet committed: served by get() so a call repeated at once is still a hit. */
  private readonly pending = new Map<string, CachedCall>();
  /** Rejected in a mode that writes nothing (read): skipped for the rest of the run. */
  private readonly rejectedHere = new Set<string>();
  /** Writes not yet handed to LMDB, and the timer that will hand them over together. */
  private queue: Array<[string, CachedCall]> = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** Resolves once the queued writes are handed to LMDB (committed() then waits on LMDB). */
  private nextFlush: Promise<void> | undefined;
  private flushDone: (() => void) | undefined;

  private constructor(
    readonly mode: CacheMode,
    private readonly db: RootDatabase<CachedCall, string> | undefined,
    private readonly dir = '',
  ) {}

  static open(dir: string, mode: CacheMode): CallCache {
    if (!CACHE_MODES.includes(mode)) throw usageError(`--cache: unknown mode "${mode}"; use ${CACHE_MODES.join(', ')}`);
    if (mode === 'off') return new CallCache(mode, undefined);
    mkdirSync(dir, { recursive: true });
    // readOnly would fail on a cache that does not exist yet; read/replay simply never write.
    const cache = new CallCache(mode, open<CachedCall, string>({ path: dir, compression: true }), dir);
    // LMDB also rejects promises of its own that no caller holds when a commit fails (a full
    // disk): without this the process dies of an unhandled rejection instead of reporting it.
    watchLmdbRejections(cache.lmdbRejection);
    return cache;
  }

  private readonly lmdbRejection = (reason: unknown): void => {
    if (!(reason instanceof Error && 'commitError' in reason)) throw reason;
    this.failed(reason);
  };

  get reads(): boolean {
    return this.mode === 'on' || this.mode === 'read' || this.mode === 'replay';
  }

  get writes(): boolean {
    return this.mode === 'on' || this.mode === 'write';
  }

  get(key: string): CachedCall | undefined {
    if (!this.reads) return undefined;
    const hit = this.pending.get(key) ?? this.db!.get(key);
    if (this.mode === 'replay') return hit;
    return hit?.rejected || this.rejectedHere.has(key) ? undefined : hit;
  }

  /** Marks a recorded answer as a failure: no longer served except by replay (see CachedCall.rejected). */
  reject(key: string): void {
    if (!this.db || this.mode === 'read' || this.mode === 'replay') {
      // Nothing may be written: not served again for the rest of this run at least.
      this.rejectedHere.add(key);
      return;
    }
    const entry = this.pending.get(key) ?? this.db.get(key);
    if (!entry || entry.rejected) return;
    this.write(key, { ...entry, rejected: true });
  }

  /**
   * Starts recording a call. Not awaited per call (each await is one more event-loop turn on the
   * call's path); committed() is the barrier.
   */
  put(key: string, value: CachedCall): void {
    if (!this.writes) return;
    this.write(key, value);
  }

  /**
   * Queues a write: served by get() at once (from `pending`), handed to LMDB with the others
   * queued within COMMIT_DELAY_MS, in one event turn, so they commit in one transaction. One
   * transaction (and one fsync) per event turn was nearly one per call at 64 calls in flight:
   * the largest cost on the call path.
   */
  private write(key: string, value: CachedCall): void {
    this.pending.set(key, value);
    this.queue.push([key, value]);
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), COMMIT_DELAY_MS);
      this.nextFlush = new Promise((resolve) => (this.flushDone = resolve));
    }
  }

  /** Hands the queued writes to LMDB now, in this event turn (one transaction). */
  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.queue;
    this.queue = [];
    let last: Promise<boolean> | undefined;
    try {
      for (const [key, value] of batch) last = this.db!.put(key, value);
    } catch (error) {
      this.failed(error);
    }
    // The writes of one event turn commit (or fail) together: one handler for the batch.
    last?.then(
      () => {
        for (const [key, value] of batch) if (this.pending.get(key) === value) this.pending.delete(key);
      },
      (error: unknown) => this.failed(error),
    );
    this.flushDone?.();
    this.flushDone = undefined;
  }

  /**
   * Keeps the first failed write (a full disk) for committed() to report, as a typed error naming
   * the cache. LMDB rejects with "Commit failed" and the cause in a second promise, which must be
   * handled too, or the process dies of an unhandled rejection.
   */
  private failed(error: unknown): void {
    const cause = (error as { commitError?: Promise<unknown> } | undefined)?.commitError;
    if (cause && typeof cause.then === 'function') {
      cause.then(undefined, (inner: unknown) => {
        this.failure = storageError(inner, this.dir) ?? storageError(error, this.dir) ?? this.failure;
      });
    }
    this.failure ??=
      storageError(error, this.dir) ??
      (diskFull(this.dir) ? storageError(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }), this.dir) : undefined) ??
      new PlensError('E_STORAGE', 'the call cache could not be written (its LMDB commit failed)', { location: { file: this.dir }, cause: error });
  }

  /** Resolves once every write started so far is committed; rejects if any write failed. */
  async committed(): Promise<void> {
    if (!this.db || !this.writes) return;
    // Writes still queued go to LMDB with their batch (at most COMMIT_DELAY_MS from now), not
    // one by one: many items wait here at once and share that batch's commit.
    if (this.timer) await this.nextFlush;
    try {
      await this.db.committed;
    } catch (error) {
      this.failed(error);
    }
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    if (this.timer) this.flush();
    unwatchLmdbRejections(this.lmdbRejection);
    await this.db?.close();
  }
}

// One process listener for all open caches (make runs many cells, each with its own cache open):
// a listener per cache would trip Node's leak warning past ten.
const lmdbWatchers = new Set<(reason: unknown) => void>();
const onUnhandledRejection = (reason: unknown): void => {
  if (!(reason instanceof Error && 'commitError' in reason)) throw reason;
  for (const w of lmdbWatchers) w(reason);
};
function watchLmdbRejections(w: (reason: unknown) => void): void {
  if (lmdbWatchers.size === 0) process.on('unhandledRejection', onUnhandledRejection);
  lmdbWatchers.add(w);
}
function unwatchLmdbRejections(w: (reason: unknown) => void): void {
  if (!lmdbWatchers.delete(w) || lmdbWatchers.size > 0) return;
  process.off('unhandledRejection', onUnhandledRejection);
}
