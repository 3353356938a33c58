/**
 * SBERT similarity for task 3.3, as the evaluators compute it with sentence-transformers
 * (all-MiniLM-L6-v2): `util.cos_sim(candidate, reference)`, which L2-normalises both vectors
 * (torch `normalize`, eps 1e-12) and takes their dot product. Normalising here makes the score
 * the same whether a server returns normalised vectors (TEI, vLLM for this model) or raw ones.
 * The arithmetic is float64 over the vectors as served; sentence-transformers works in
 * float32, so scores agree with the original to about 1e-7, not bit for bit.
 */
import type { Embedder } from '../llm/embeddings.js';

/** sentence-transformers `util.cos_sim(a, b)` for one pair of vectors. */
export function cosSim(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`cosine of vectors of different dimensions (${a.length} and ${b.length})`);
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < a.length; i++) {
    aa += a[i]! * a[i]!;
    bb += b[i]! * b[i]!;
  }
  // normalize(x) = x / max(||x||, 1e-12), then the dot product of the two unit vectors.
  const na = Math.max(Math.sqrt(aa), 1e-12);
  const nb = Math.max(Math.sqrt(bb), 1e-12);
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += (a[i]! / na) * (b[i]! / nb);
  return dot;
}

/**
 * The similarity of every candidate to its prompt's reference, embedding each distinct text
 * once; null for an empty candidate (the evaluators drop those before scoring).
 */
export async function sbertSimilarities(
  embedder: Embedder,
  prompts: ReadonlyArray<{ reference: string; candidates: readonly string[] }>,
  signal?: AbortSignal,
): Promise<Array<Array<number | null>>> {
  const texts: string[] = [];
  for (const prompt of prompts) {
    texts.push(prompt.reference);
    for (const candidate of prompt.candidates) if (candidate !== '') texts.push(candidate);
  }
  const vectors = await embedder.embed(texts, signal);
  const byText = new Map<string, Float64Array>();
  texts.forEach((text, i) => byText.set(text, vectors[i]!));
  return prompts.map((prompt) => {
    const reference = byText.get(prompt.reference)!;
    return prompt.candidates.map((candidate) => (candidate === '' ? null : cosSim(byText.get(candidate)!, reference)));
  });
}
