import { EmbeddingsClient, type Embedder } from './embeddings.js';
import { LocalEmbedder } from './local-embeddings.js';

export { embeddingsStateOf } from './embeddings-spec.js';
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
