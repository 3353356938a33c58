/**
 * Sentence embeddings from a model folder on disk through transformers.js (ONNX Runtime on the
 * CPU), as sentence-transformers computes them for all-MiniLM-L6-v2: the tokenizer (truncating
 * at the model's max_seq_length as Hugging Face's tokenizers do), the transformer's
 * last_hidden_state, mean pooling over the attention mask, L2 normalisation. Remote loading is off and transformers.js's fetch is
 * replaced by one that throws, so nothing is ever downloaded; the package is an optional
 * dependency, imported only when a local model is used. Vectors share the endpoint client's
 * LMDB cache, keyed by the folder's content (a hash of its files), not its path.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { PlensError, usageError } from '../core/errors.js';
import { parseJsonText, readInputTextSync } from '../core/json-input.js';
import { embeddingKey, type Embedder, VectorCache } from './embeddings.js';

import { LOCAL_MODEL_FILES } from './embeddings-spec.js';

export { LOCAL_MODEL_FILES };
/** all-MiniLM-L6-v2's max_seq_length (sentence_bert_config.json), used when the folder does not say. */
export const DEFAULT_MAX_SEQ_LENGTH = 256;
const PACKAGE = '@huggingface/transformers';

export interface LocalEmbeddingsOptions {
  /** The model folder. */
  folder: string;
  /** An LMDB directory for the vector cache; none: no cache. */
  cacheDir?: string;
  /** Texts per forward pass. */
  batchSize?: number;
  /** Where the spec came from, for messages (`--embeddings`, `persona.embeddings`). */
  field?: string;
}

/**
 * The folder's absolute path once it holds every file a model needs; otherwise a usage error
 * naming the path and what is missing. Synchronous and touching nothing, so it runs before
 * anything is written.
 */
export function checkLocalModelFolder(folder: string, field = '--embeddings'): string {
  const path = resolve(folder);
  const expected = `a model folder with ${LOCAL_MODEL_FILES.join(', ')} (e.g. a clone of Xenova/all-MiniLM-L6-v2; plens never downloads models)`;
  if (!existsSync(path) || !statSync(path).isDirectory()) throw usageError(`${field}: ${path} is not a folder; expected ${expected}`);
  const missing = LOCAL_MODEL_FILES.filter((f) => !existsSync(join(path, f)) || !statSync(join(path, f)).isFile());
  if (missing.length > 0) throw usageError(`${field}: ${path} lacks ${missing.join(', ')}; expected ${expected}`);
  // The JSON files are read as every plens input is: a broken one is named with its line, before anything is created.
  for (const f of LOCAL_MODEL_FILES.filter((name) => name.endsWith('.json'))) parseJsonText(readInputTextSync(join(path, f)), join(path, f));
  return path;
}

/** The parts of transformers.js used here (typed locally: the package is optional and may be absent). */
interface Tensor {
  dims: number[];
  data: ArrayLike<number>;
}
interface TransformersModule {
  env: { allowRemoteModels: boolean; allowLocalModels: boolean; localModelPath: string; useFSCache: boolean; useBrowserCache: boolean; fetch: unknown };
  AutoTokenizer: { from_pretrained(id: string, options: object): Promise<Tokenizer> };
  AutoModel: { from_pretrained(id: string, options: object): Promise<Model> };
  Tensor: new (type: 'int64', data: BigInt64Array, dims: number[]) => Tensor;
}
interface Tokenizer {
  encode(text: string, options?: { add_special_tokens?: boolean }): number[];
  pad_token_id: number | null | undefined;
}
interface Model {
  (inputs: Record<string, Tensor>): Promise<Record<string, Tensor | undefined>>;
  dispose?(): Promise<unknown>;
}

async function importTransformers(): Promise<TransformersModule> {
  try {
    // Typed by the local interface above; optional-modules.d.ts lets the build pass without the package.
    return (await import('@huggingface/transformers')) as unknown as TransformersModule;
  } catch (error) {
    throw new PlensError('E_PREREQUISITE', `local embeddings models need the optional package ${PACKAGE}, which could not be loaded`, {
      hint: `install it with \`npm install ${PACKAGE}\` (npm ci installs it where ONNX Runtime has binaries for the platform), or use an OpenAI-compatible endpoint: openai:MODEL?base_url=URL`,
      cause: error,
    });
  }
}

/** SHA-256 over the files that decide the vectors, each length-prefixed by name. */
async function folderIdentity(folder: string, files: readonly string[]): Promise<string> {
  const h = createHash('sha256');
  for (const f of files) {
    h.update(`${f.length}:${f}`);
    for await (const chunk of createReadStream(join(folder, f))) h.update(chunk as Buffer);
    h.update('\0');
  }
  return h.digest('hex');
}

export class LocalEmbedder implements Embedder {
  readonly stats = { batches: 0, cached: 0, embedded: 0 };
  readonly folder: string;
  readonly maxSeqLength: number;
  private readonly batchSize: number;
  /** Opened once the model has loaded (or when it holds vectors already): a broken model leaves no empty cache behind. */
  private cache: VectorCache | undefined;
  private readonly cacheDir: string | undefined;
  private identity: string | undefined;
  private loaded: Promise<{ t: TransformersModule; tokenizer: Tokenizer; model: Model }> | undefined;

  constructor(options: LocalEmbeddingsOptions) {
    const field = options.field ?? '--embeddings';
    this.folder = checkLocalModelFolder(options.folder, field);
    this.maxSeqLength = readMaxSeqLength(this.folder, field);
    this.batchSize = options.batchSize ?? 32;
    if (!(this.batchSize >= 1)) throw usageError('embeddings: batch size must be at least 1');
    this.cacheDir = options.cacheDir;
    if (this.cacheDir !== undefined && existsSync(this.cacheDir)) this.cache = new VectorCache(this.cacheDir);
  }

  /** `local:FOLDER`, with the first 12 hex digits of the content hash once it is known. */
  get id(): string {
    return `local:${this.folder}${this.identity ? `#${this.identity.slice(0, 12)}` : ''}`;
  }

  /** One vector per text, in order; equal texts are embedded once. */
  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float64Array[]> {
    this.identity ??= await folderIdentity(this.folder, [...LOCAL_MODEL_FILES, ...(existsSync(join(this.folder, SBERT_CONFIG)) ? [SBERT_CONFIG] : [])]);
    const model = `transformers.js/mean-pooled/normalised/max_seq_length=${this.maxSeqLength}`;
    const source = `local-folder-sha256:${this.identity}`;
    const vectors = new Map<string, Float64Array>();
    const missing: string[] = [];
    for (const text of new Set(texts)) {
      const hit = this.cache?.get(embeddingKey(model, source, text));
      if (hit !== undefined) {
        vectors.set(text, hit);
        this.stats.cached++;
      } else missing.push(text);
    }
    const writes: Array<Promise<unknown>> = [];
    if (missing.length > 0 && this.cacheDir !== undefined && !this.cache) {
      await this.load();
      this.cache = new VectorCache(this.cacheDir);
    }
    for (let i = 0; i < missing.length; i += this.batchSize) {
      signal?.throwIfAborted();
      const batch = missing.slice(i, i + this.batchSize);
      const out = await this.forward(batch);
      batch.forEach((text, k) => {
        vectors.set(text, out[k]!);
        if (this.cache) writes.push(this.cache.put(embeddingKey(model, source, text), out[k]!));
      });
      this.stats.batches++;
      this.stats.embedded += batch.length;
    }
    await this.cache?.settle(writes);
    return texts.map((text) => vectors.get(text)!);
  }

  /**
   * The word pieces of one text cut as Hugging Face's tokenizers cut them: the text's own pieces
   * to max_seq_length less the special tokens, then [CLS] ... [SEP] (the template) around them.
   * transformers.js's own truncation cuts after adding them, dropping [SEP].
   */
  private pieces(tokenizer: Tokenizer, text: string): number[] {
    const full = tokenizer.encode(text);
    if (full.length <= this.maxSeqLength) return full;
    const content = tokenizer.encode(text, { add_special_tokens: false });
    const specials = full.length - content.length;
    let prefix = -1;
    for (let p = 0; p <= specials && prefix < 0; p++) if (content.every((id, i) => full[p + i] === id)) prefix = p;
    if (prefix < 0 || specials < 0 || this.maxSeqLength < specials)
      throw new PlensError(
        'E_INPUT_LAYOUT',
        `${this.folder}: cannot truncate to max_seq_length ${this.maxSeqLength}: the tokenizer's special tokens do not wrap the text`,
      );
    return [...full.slice(0, prefix), ...content.slice(0, this.maxSeqLength - specials), ...full.slice(prefix + content.length)];
  }

  /** sentence-transformers' Pooling(mean) + Normalize over one padded batch, in float64. */
  private async forward(batch: string[]): Promise<Float64Array[]> {
    const { t, tokenizer, model } = await this.load();
    const rows = batch.map((text) => this.pieces(tokenizer, text));
    const tokens = Math.max(...rows.map((r) => r.length));
    const ids = new BigInt64Array(rows.length * tokens).fill(BigInt(tokenizer.pad_token_id ?? 0));
    const mask = new BigInt64Array(rows.length * tokens);
    rows.forEach((row, b) =>
      row.forEach((id, k) => {
        ids[b * tokens + k] = BigInt(id);
        mask[b * tokens + k] = 1n;
      }),
    );
    const shape = [rows.length, tokens];
    let outputs: Record<string, Tensor | undefined>;
    try {
      // transformers.js feeds the session only the inputs the graph declares.
      outputs = await model({
        input_ids: new t.Tensor('int64', ids, shape),
        attention_mask: new t.Tensor('int64', mask, shape),
        token_type_ids: new t.Tensor('int64', new BigInt64Array(rows.length * tokens), shape),
      });
    } catch (error) {
      throw new PlensError('E_INPUT_LAYOUT', `${this.folder}: the model failed to run: ${(error as Error)?.message ?? String(error)}`, { cause: error });
    }
    const hidden = outputs.last_hidden_state ?? outputs.token_embeddings;
    if (hidden === undefined || hidden.dims.length !== 3 || hidden.dims[0] !== rows.length || hidden.dims[1] !== tokens)
      throw new PlensError('E_INPUT_LAYOUT', `${this.folder}: the model does not output last_hidden_state [batch, tokens, dim]`);
    const dim = hidden.dims[2]!;
    const data = hidden.data;
    return rows.map((row, b) => {
      const v = new Float64Array(dim);
      for (let k = 0; k < row.length; k++) {
        const base = (b * tokens + k) * dim;
        for (let d = 0; d < dim; d++) v[d]! += data[base + d]!;
      }
      // sum / clamp(mask sum, 1e-9), then v / max(||v||, 1e-12), as sentence-transformers.
      const n = Math.max(row.length, 1e-9);
      let norm = 0;
      for (let d = 0; d < dim; d++) {
        v[d] = v[d]! / n;
        norm += v[d]! * v[d]!;
      }
      norm = Math.max(Math.sqrt(norm), 1e-12);
      for (let d = 0; d < dim; d++) v[d] = v[d]! / norm;
      if (!v.every(Number.isFinite)) throw new PlensError('E_INPUT_LAYOUT', `${this.folder}: the model gave a vector that is not finite`);
      return v;
    });
  }

  private load(): Promise<{ t: TransformersModule; tokenizer: Tokenizer; model: Model }> {
    this.loaded ??= (async () => {
      const t = await importTransformers();
      t.env.allowRemoteModels = false;
      t.env.allowLocalModels = true;
      t.env.localModelPath = dirname(this.folder);
      t.env.useFSCache = false;
      t.env.useBrowserCache = false;
      // Nothing is fetched, whatever a future version tries.
      t.env.fetch = (url: unknown) => Promise.reject(new Error(`plens does not download models (asked for ${String(url)})`));
      const options = { local_files_only: true };
      // Each part is loaded on its own, so a failure names the file it came from.
      const loadPart = async <T>(file: string, what: string, load: () => Promise<T>): Promise<T> => {
        try {
          return await load();
        } catch (error) {
          throw new PlensError('E_INPUT_LAYOUT', `transformers.js could not load the ${what}: ${(error as Error)?.message ?? String(error)}`, {
            location: { file: join(this.folder, file) },
            hint: `expected ${LOCAL_MODEL_FILES.join(', ')} as Hugging Face ships them for transformers.js`,
            cause: error,
          });
        }
      };
      // An absolute path is not a Hub id, so transformers.js reads it as a path as it stands.
      const tokenizer = await loadPart('tokenizer.json', 'tokenizer', () => t.AutoTokenizer.from_pretrained(this.folder, options));
      const model = await loadPart('onnx/model.onnx', 'model', () => t.AutoModel.from_pretrained(this.folder, { ...options, dtype: 'fp32', device: 'cpu' }));
      return { t, tokenizer, model };
    })();
    return this.loaded;
  }

  async close(): Promise<void> {
    const loaded = await this.loaded?.catch(() => undefined);
    await loaded?.model.dispose?.();
    await this.cache?.close();
  }
}

const SBERT_CONFIG = 'sentence_bert_config.json';

/** sentence_bert_config.json's max_seq_length when the folder has one, else all-MiniLM-L6-v2's 256. */
function readMaxSeqLength(folder: string, field: string): number {
  const file = join(folder, SBERT_CONFIG);
  if (!existsSync(file)) return DEFAULT_MAX_SEQ_LENGTH;
  let value: unknown;
  try {
    value = (JSON.parse(readFileSync(file, 'utf8')) as { max_seq_length?: unknown }).max_seq_length;
  } catch (error) {
    throw usageError(`${field}: ${file} is not valid JSON (${(error as Error).message})`);
  }
  if (value === undefined || value === null) return DEFAULT_MAX_SEQ_LENGTH;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 2)
    throw usageError(`${field}: ${file}: max_seq_length must be an integer of at least 2`);
  return value;
}
