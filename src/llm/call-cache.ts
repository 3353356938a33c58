import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, type RootDatabase } from 'lmdb';
import { usageError } from '../core/errors.js';
import { SIM_VERSION } from './sim.js';
import type { ChatRequest, ChatResponse } from './types.js';

/**
 * on      serve hits, record misses (default)
 * off     neither read nor write
 * read    serve hits, record nothing
 * write   always call the endpoint, record the answer (refreshes entries)
 * replay  serve hits; a miss is an error (exact reproduction of a finished run)
 */
export const CACHE_MODES = ['on', 'off', 'read', 'write', 'replay'] as const;
export type CacheMode = (typeof CACHE_MODES)[number];

export interface CachedCall {
  response: ChatResponse;
  /** The original call's latency, so a replayed run reports what the endpoint took. */
  latencyMs: number;
}

/** Everything that decides an answer, and nothing else: no endpoint URL, no key, no headers. */
export function callKey(provider: string, model: string, request: ChatRequest): string {
  // Fed piece by piece, each length-prefixed, so no two different requests share a byte stream
  // (and no JSON of the whole request is built for every call).
  const h = createHash('sha256');
  const part = (s: string) => h.update(`${s.length}:`).update(s);
  part('plens-call-v1');
  part(provider);
  part(model);
  // The simulator's rules are its model: replies of an older version are not served.
  if (provider === 'sim') part(SIM_VERSION);
  part(String(request.params.temperature));
  part(String(request.params.maxTokens));
  part(request.purpose);
  part(request.promptVersion);
  part(String(request.replicate));
  part(request.system);
  for (const m of request.messages) {
    part(m.role);
    part(m.content);
  }
  return h.digest('hex');
}

/** A content-addressed record of every LLM call, in an LMDB environment shared by all stages (and shards). */
export class CallCache {
  /** The first write that failed (disk full, ...): reported by committed(), never swallowed. */
  private failure: unknown;
  /** Written but not yet committed: served by get() so a call repeated at once is still a hit. */
  private readonly pending = new Map<string, CachedCall>();

  private constructor(
    readonly mode: CacheMode,
    private readonly db: RootDatabase<CachedCall, string> | undefined,
  ) {}

  static open(dir: string, mode: CacheMode): CallCache {
    if (!CACHE_MODES.includes(mode)) throw usageError(`--cache: unknown mode "${mode}"; use ${CACHE_MODES.join(', ')}`);
    if (mode === 'off') return new CallCache(mode, undefined);
    mkdirSync(dir, { recursive: true });
    // readOnly would fail on a cache that does not exist yet; read/replay simply never write.
    return new CallCache(mode, open<CachedCall, string>({ path: dir, compression: true }));
  }

  get reads(): boolean {
    return this.mode === 'on' || this.mode === 'read' || this.mode === 'replay';
  }

  get writes(): boolean {
    return this.mode === 'on' || this.mode === 'write';
  }

  get(key: string): CachedCall | undefined {
    return this.reads ? (this.pending.get(key) ?? this.db!.get(key)) : undefined;
  }

  /**
   * Starts recording a call; LMDB commits it with the other writes of this event turn. Not
   * awaited per call (each await is one more event-loop turn on the call's path); committed()
   * is the barrier.
   */
  put(key: string, value: CachedCall): void {
    if (!this.writes) return;
    this.pending.set(key, value);
    this.db!.put(key, value).then(
      () => {
        if (this.pending.get(key) === value) this.pending.delete(key);
      },
      (error: unknown) => {
        this.failure ??= error;
      },
    );
  }

  /** Resolves once every write started so far is committed; rejects if any write failed. */
  async committed(): Promise<void> {
    if (!this.db || !this.writes) return;
    await this.db.committed;
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    await this.db?.close();
  }
}
