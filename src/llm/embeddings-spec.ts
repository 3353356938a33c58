import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { usageError } from '../core/errors.js';
import { parseModelSpec } from './model-spec.js';

// Syntax only, apart from embedders.ts (which loads LMDB and the HTTP client): the CLI and the
// pipeline loader check a spec without loading either.

export type EmbeddingsSpec = { kind: 'openai'; model: string; baseUrl: string; keyEnv?: string } | { kind: 'local'; folder: string };

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

/** What a model folder must hold (what Hugging Face ships for transformers.js, e.g. Xenova/all-MiniLM-L6-v2). */
export const LOCAL_MODEL_FILES = ['config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model.onnx'] as const;

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
