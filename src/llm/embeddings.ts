/**
 * Sentence embeddings from any OpenAI-compatible `POST {base_url}/embeddings` endpoint: what
 * text-embeddings-inference, vLLM, Ollama and LiteLLM serve for all-MiniLM-L6-v2 (PERSONA-bench's
 * SBERT metric). Texts go in batches, several batches at a time, through the shared HTTP transport
 * and retry layer; each vector is cached by (model, endpoint, SHA-256 of the text) in its own
 * LMDB environment, and only vectors that came back whole are ever cached. The key comes from
 * an environment variable, is registered with the redactor and goes nowhere but the header.
 * The `Embedder` interface and the vector cache are shared with local-embeddings.ts (a model
 * folder run in-process).
 */
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, type RootDatabase } from 'lmdb';
import { PlensError, storageError, usageError } from '../core/errors.js';
import { registerSecret } from '../core/redact.js';
import { LlmCallError } from './errors.js';
import { postJson, redactUrl } from './http.js';
import { DEFAULT_TIMEOUTS, type HttpTimeouts, type HttpTransport } from './http-transport.js';
import { InlineTransport } from './inline-transport.js';
import { checkBaseUrl } from './model-spec.js';
import { withRetry } from './retry.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry-policy.js';

/** Anything that turns texts into vectors, one per text, in order. */
export interface Embedder {
  readonly id: string;
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float64Array[]>;
  close(): Promise<void>;
}

export interface EmbeddingsOptions {
  /** The model name the server knows, e.g. `sentence-transformers/all-MiniLM-L6-v2` or `all-minilm`. */
  model: string;
  /** Up to and including `/v1`, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /** The environment variable holding the key, if the server wants one (sent as a Bearer token). */
  keyEnv?: string;
  env?: NodeJS.ProcessEnv;
  /** Texts per request (TEI's default --max-client-batch-size is 32). */
  batchSize?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** An LMDB directory for the vector cache; none: no cache. */
  cacheDir?: string;
  retry?: RetryPolicy;
  timeouts?: HttpTimeouts;
  /** Tests pass their own; by default an inline undici pool of `concurrency` connections. */
  transport?: HttpTransport;
}

interface EmbeddingsResponse {
  data?: Array<{ index?: number; embedding?: unknown }>;
}

/** The cache key of one text's vector: every part length-prefixed, the text only as its hash. */
export function embeddingKey(model: string, endpoint: string, text: string): string {
  const h = createHash('sha256');
  const part = (s: string) => h.update(`${s.length}:`).update(s);
  part('plens-embedding-v1');
  part(model);
  part(endpoint);
  part(createHash('sha256').update(text).digest('hex'));
  return h.digest('hex');
}

/** The LMDB cache of vectors every embedder shares: float64 vectors by `embeddingKey`. */
export class VectorCache {
  private readonly db: RootDatabase<Buffer, string>;

  constructor(readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.db = open<Buffer, string>({ path: dir, encoding: 'binary' });
  }

  get(key: string): Float64Array | undefined {
    const hit = this.db.get(key);
    // Copied out: LMDB may reuse the buffer it returned.
    return hit === undefined ? undefined : new Float64Array(new Uint8Array(hit).buffer);
  }

  put(key: string, vector: Float64Array): Promise<unknown> {
    return this.db.put(key, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength));
  }

  /** Waits for the writes `put` started; a failed one is a storage error naming the cache. */
  async settle(writes: ReadonlyArray<Promise<unknown>>): Promise<void> {
    try {
      await Promise.all(writes);
    } catch (error) {
      throw (
        storageError(error, this.dir) ??
        new PlensError('E_STORAGE', 'the embeddings cache could not be written', { location: { file: this.dir }, cause: error })
      );
    }
  }

  close(): Promise<void> {
    return this.db.close();
  }
}

export class EmbeddingsClient implements Embedder {
  readonly id: string;
  /** Calls made and vectors served from the cache, for progress and summaries. */
  readonly stats = { requests: 0, cached: 0, embedded: 0 };
  private readonly endpoint: string;
  private readonly headers: Record<string, string>;
  private readonly batchSize: number;
  private readonly concurrency: number;
  private readonly retry: RetryPolicy;
  private readonly transport: HttpTransport;
  private readonly ownsTransport: boolean;
  private readonly cache: VectorCache | undefined;
  /** The endpoint as it enters cache keys: no credentials, no query string. */
  private readonly endpointIdentity: string;

  constructor(private readonly options: EmbeddingsOptions) {
    checkBaseUrl(options.baseUrl, 'embeddings base_url');
    this.endpoint = `${options.baseUrl.replace(/\/$/, '')}/embeddings`;
    this.endpointIdentity = redactUrl(this.endpoint);
    this.id = `${options.model}@${this.endpointIdentity}`;
    let key: string | undefined;
    if (options.keyEnv !== undefined) {
      key = (options.env ?? process.env)[options.keyEnv];
      if (!key) throw usageError(`the embeddings endpoint needs a key: set ${options.keyEnv}`);
      registerSecret(key);
    }
    this.headers = key ? { authorization: `Bearer ${key}` } : {};
    this.batchSize = options.batchSize ?? 32;
    this.concurrency = options.concurrency ?? 4;
    if (!(this.batchSize >= 1) || !(this.concurrency >= 1)) throw usageError('embeddings: batch size and concurrency must be at least 1');
    this.retry = options.retry ?? DEFAULT_RETRY;
    this.ownsTransport = options.transport === undefined;
    this.transport = options.transport ?? new InlineTransport(options.timeouts ?? DEFAULT_TIMEOUTS, this.concurrency);
    if (options.cacheDir !== undefined) this.cache = new VectorCache(options.cacheDir);
  }

  /** One vector per text, in order; equal texts are sent once. */
  async embed(texts: readonly string[], signal: AbortSignal = new AbortController().signal): Promise<Float64Array[]> {
    const unique = [...new Set(texts)];
    const vectors = new Map<string, Float64Array>();
    const missing: string[] = [];
    for (const text of unique) {
      const hit = this.cache?.get(embeddingKey(this.options.model, this.endpointIdentity, text));
      if (hit !== undefined) {
        vectors.set(text, hit);
        this.stats.cached++;
      } else missing.push(text);
    }
    const batches: string[][] = [];
    for (let i = 0; i < missing.length; i += this.batchSize) batches.push(missing.slice(i, i + this.batchSize));
    // A failed batch stops the others: the caller gets that failure, not a half-filled answer.
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    let next = 0;
    const writes: Array<Promise<unknown>> = [];
    const lane = async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        const { value } = await withRetry(() => this.request(batch, stop.signal), this.retry, stop.signal);
        for (let k = 0; k < batch.length; k++) {
          vectors.set(batch[k]!, value[k]!);
          // Only whole, checked answers reach this point: a failure is never cached.
          if (this.cache) writes.push(this.cache.put(embeddingKey(this.options.model, this.endpointIdentity, batch[k]!), value[k]!));
        }
        this.stats.embedded += batch.length;
      }
    };
    try {
      await Promise.all(
        Array.from({ length: Math.min(this.concurrency, batches.length) }, () =>
          lane().catch((error: unknown) => {
            stop.abort(error);
            throw error;
          }),
        ),
      );
    } finally {
      signal.removeEventListener('abort', onAbort);
    }
    await this.cache?.settle(writes);
    return texts.map((text) => vectors.get(text)!);
  }

  private async request(batch: string[], signal: AbortSignal): Promise<Float64Array[]> {
    this.stats.requests++;
    const json = (await postJson(
      this.transport,
      this.endpoint,
      this.headers,
      { model: this.options.model, input: batch, encoding_format: 'float' },
      signal,
    )) as EmbeddingsResponse;
    const data = json?.data;
    const bad = (why: string) => new LlmCallError('bad_response', `embeddings response from ${redactUrl(this.endpoint)}: ${why}`, { retryable: true });
    if (!Array.isArray(data) || data.length !== batch.length)
      throw bad(`expected data with ${batch.length} embeddings, got ${Array.isArray(data) ? data.length : 'none'}`);
    const out: Float64Array[] = new Array(batch.length);
    let dimension: number | undefined;
    data.forEach((item, position) => {
      // Servers return items with their input index; order by it, defaulting to position.
      const index = typeof item?.index === 'number' ? item.index : position;
      const embedding = item?.embedding;
      if (!Number.isInteger(index) || index < 0 || index >= batch.length || out[index] !== undefined)
        throw bad(`item ${position} has a bad or repeated index ${String(index)}`);
      if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))) {
        throw bad(`item ${position}: embedding is not a non-empty list of finite numbers`);
      }
      if (dimension !== undefined && embedding.length !== dimension) throw bad(`item ${position}: ${embedding.length} dimensions, earlier items ${dimension}`);
      dimension = embedding.length;
      out[index] = Float64Array.from(embedding as number[]);
    });
    return out;
  }

  async close(): Promise<void> {
    if (this.ownsTransport) await this.transport.close();
    await this.cache?.close();
  }
}
