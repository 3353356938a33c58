/**
 * The two ways to get SBERT's sentence vectors, chosen by one spec string:
 *   openai:MODEL?base_url=URL[&key_env=VAR]   any OpenAI-compatible /embeddings endpoint
 *   local:FOLDER                              a model folder run through transformers.js, offline
 * Both cache their vectors in one LMDB directory.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { EmbeddingsClient, type Embedder } from './embeddings.js';
import { LOCAL_MODEL_FILES, LocalEmbedder } from './local-embeddings.js';
import { parseEmbeddingsSpec } from './embeddings-spec.js';

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
