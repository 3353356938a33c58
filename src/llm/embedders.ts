/**
 * The two ways to get SBERT's sentence vectors, chosen by one spec string:
 *   openai:MODEL?base_url=URL[&key_env=VAR]   any OpenAI-compatible /embeddings endpoint
 *   local:FOLDER                              a model folder run through transformers.js, offline
 * Both cache their vectors in one LMDB directory.
 */
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { usageError } from '../core/errors.js';
import { EmbeddingsClient, type Embedder } from './embeddings.js';
import { LOCAL_MODEL_FILES, LocalEmbedder } from './local-embeddings.js';
import { parseModelSpec } from './model-spec.js';

export type EmbeddingsSpec = { kind: 'openai'; model: string; baseUrl: string; keyEnv?: string } | { kind: 'local'; folder: string };

export const EMBEDDINGS_SPEC_FORMS =
  'openai:MODEL?base_url=URL[&key_env=VAR] (an OpenAI-compatible embeddings endpoint) or local:FOLDER (a model folder for transformers.js)';

/** A spec's parts; a relative local folder is resolved against the working directory. Syntax only: nothing is opened. */
export function parseEmbeddingsSpec(spec: string, field = '--embeddings'): EmbeddingsSpec {
  const trimmed = spec.trim();
  if (trimmed.startsWith('local:')) {
    const folder = trimmed.slice('local:'.length);
    if (folder === '') throw usageError(`${field} "${spec}": local: needs a model folder, e.g. local:models/all-MiniLM-L6-v2`);
    return { kind: 'local', folder: resolve(folder) };
  }
  const parsed = parseModelSpec(trimmed, field);
  if (parsed.provider !== 'openai' || parsed.baseUrl === undefined)
    throw usageError(
      `${field} "${spec}": give an OpenAI-compatible embeddings endpoint, e.g. openai:sentence-transformers/all-MiniLM-L6-v2?base_url=http://127.0.0.1:8080/v1, or a local model folder, local:FOLDER`,
    );
  return { kind: 'openai', model: parsed.model, baseUrl: parsed.baseUrl, ...(parsed.keyEnv === undefined ? {} : { keyEnv: parsed.keyEnv }) };
}

/** The embedder of a spec, its vectors cached in `cacheDir`. A local folder is checked here, before anything is written. */
export function openEmbedder(spec: string, o: { cacheDir: string; env?: NodeJS.ProcessEnv; field?: string }): Embedder {
  const field = o.field ?? '--embeddings';
  const parsed = parseEmbeddingsSpec(spec, field);
  if (parsed.kind === 'local') return new LocalEmbedder({ folder: parsed.folder, cacheDir: o.cacheDir, field });
  return new EmbeddingsClient({
    model: parsed.model,
    baseUrl: parsed.baseUrl,
    ...(parsed.keyEnv === undefined ? {} : { keyEnv: parsed.keyEnv }),
    ...(o.env === undefined ? {} : { env: o.env }),
    cacheDir: o.cacheDir,
  });
}

/**
 * What decides whether SBERT scores are out of date: the spec, and for a local folder each
 * model file's size and modification time (cheap; the vector cache itself keys by content).
 */
export function embeddingsStateOf(spec: string): unknown {
  const parsed = parseEmbeddingsSpec(spec);
  if (parsed.kind === 'openai') return spec;
  return [
    'local',
    parsed.folder,
    LOCAL_MODEL_FILES.map((f) => {
      try {
        const s = statSync(join(parsed.folder, f));
        return [f, s.size, s.mtimeMs];
      } catch {
        return [f, null];
      }
    }),
  ];
}
