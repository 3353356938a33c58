// SBERT similarity for 3.3 through an embeddings endpoint on 127.0.0.1 (real HTTP) serving
// vectors chosen here, with cosines worked out by hand: util.cos_sim semantics, the GPT
// scripts' best-of-n (maximum per prompt, saved candidate, zeros and negatives kept, filtered
// averages) and single-sample scoring.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GenerationScorer, filteredMeans, oracleBestOfN, singleSample } from '../../../src/metrics/generation.js';
import { cosSim, sbertSimilarities } from '../../../src/metrics/sbert.js';
import { EmbeddingsClient } from '../../../src/llm/embeddings.js';
import { startEmbeddingsServer } from '../../helpers/embeddings-server.js';

// Raw (unnormalised) vectors, as a server that does not normalise would send them.
const VECTORS: Record<string, number[]> = {
  'the cat sat on the mat': [2, 0, 0],
  'a cat sat': [1, 1, 0], // cos with [2,0,0] = 1/sqrt(2)
  'the dog ran': [3, 4, 0], // 3/5
  'cats sit on mats': [4, 3, 0], // 4/5: the best
  'it rained all day': [0, 0, 5],
  'sunny weather': [0, 7, 0], // 0
  'no idea': [0, -1, -1], // -1/sqrt(2)
};

let server: Awaited<ReturnType<typeof startEmbeddingsServer>>;
let url: string;
let requests: string[][];

beforeAll(async () => {
  server = await startEmbeddingsServer((text) => (Object.hasOwn(VECTORS, text) ? VECTORS[text] : undefined));
  url = server.url;
  requests = server.requests;
});

afterAll(() => server.close());

describe('cosSim (sentence-transformers util.cos_sim)', () => {
  it('normalises both vectors, so scale does not matter', () => {
    expect(cosSim([1, 2, 2], [0, 3, 4])).toBeCloseTo(14 / 15, 15); // 14 / (3 * 5)
    expect(cosSim([10, 20, 20], [0, 0.3, 0.4])).toBeCloseTo(0.9333333333333333, 15);
    expect(cosSim([1, 0], [-1, 0])).toBe(-1);
  });

  it('gives 0 for a zero vector (norm clamped at 1e-12, as torch normalize does)', () => {
    expect(cosSim([0, 0, 0], [1, 2, 3])).toBe(0);
  });

  it('refuses vectors of different dimensions', () => {
    expect(() => cosSim([1, 2], [1, 2, 3])).toThrow(/dimensions/);
  });
});

describe('3.3 SBERT through /v1/embeddings', () => {
  const prompts = [
    { reference: 'the cat sat on the mat', candidates: ['a cat sat', '', 'the dog ran', 'cats sit on mats', 'cats sit on mats'] },
    { reference: 'it rained all day', candidates: ['sunny weather', 'no idea'] },
    { reference: 'the cat sat on the mat', candidates: ['', ''] },
  ];

  it('scores every non-empty candidate against its reference, each distinct text embedded once', async () => {
    const client = new EmbeddingsClient({ model: 'all-MiniLM-L6-v2', baseUrl: url, batchSize: 4 });
    const similarities = await sbertSimilarities(client, prompts);
    await client.close();
    const flat = requests.flat();
    expect(new Set(flat).size).toBe(flat.length);
    expect(flat).toHaveLength(7);
    expect(similarities[0]![4]).toBeCloseTo(0.8, 15);
    expect(similarities[0]![0]).toBeCloseTo(0.7071067811865475, 15);
    expect(similarities[0]![1]).toBeNull();
    expect(similarities[0]![2]).toBeCloseTo(0.6, 15);
    expect(similarities[0]![3]).toBeCloseTo(0.8, 15);
    expect(similarities[1]![0]).toBe(0);
    expect(similarities[1]![1]).toBeCloseTo(-0.7071067811865475, 15);
    expect(similarities[2]).toEqual([null, null]);
  });

  it('best-of-n: the maximum per prompt, the first candidate reaching it saved, zeros kept in the mean', async () => {
    const client = new EmbeddingsClient({ model: 'all-MiniLM-L6-v2', baseUrl: url });
    const similarities = await sbertSimilarities(client, prompts);
    await client.close();
    const result = oracleBestOfN(prompts, new GenerationScorer(), similarities);
    expect(result.sbert!.perPrompt[0]).toBeCloseTo(0.8, 15);
    expect(result.sbert!.perPrompt[1]).toBe(0);
    expect(result.sbert!.perPrompt[2]).toBeNull();
    expect(result.sbert!.bestCandidate).toEqual([3, 0, null]);
    // (0.8 + 0) / 2: unlike the lexical metrics, a best of 0 stays in the SBERT mean.
    expect(result.sbert!.counted).toBe(2);
    expect(result.sbert!.mean).toBeCloseTo(0.4, 15);
    // Filtered (GPT-4.1: 0.1 and 1.0): the prompt at 0 is left out of every metric.
    const filtered = filteredMeans(result, 0.1, 1.0);
    expect(filtered.counted.sbert).toBe(1);
    expect(filtered.mean.sbert).toBeCloseTo(0.8, 15);
    expect(filtered.mean.rouge1).toBe(result.perPrompt[0]!.rouge1);
    expect(filtered.counted.rouge1).toBe(1);
    // An upper threshold below 0.8 drops that prompt too.
    expect(filteredMeans(result, 0.1, 0.75).counted.sbert).toBe(0);
  });

  it('single sample: the one candidate, zeros and negatives counted, a missing one left out', async () => {
    const client = new EmbeddingsClient({ model: 'all-MiniLM-L6-v2', baseUrl: url });
    const single = [
      { reference: 'the cat sat on the mat', candidate: 'the dog ran' },
      { reference: 'it rained all day', candidate: 'sunny weather' },
      { reference: 'it rained all day', candidate: 'no idea' },
      { reference: 'it rained all day', candidate: null },
    ];
    const similarities = await sbertSimilarities(
      client,
      single.map((s) => ({ reference: s.reference, candidates: s.candidate ? [s.candidate] : [] })),
    );
    await client.close();
    const result = singleSample(
      single,
      new GenerationScorer(),
      similarities.map((s) => s[0] ?? null),
    );
    expect(result.sbert!.counted).toBe(3);
    // (0.6 + 0 - 1/sqrt(2)) / 3
    expect(result.sbert!.mean).toBeCloseTo(-0.0357022603955158, 14);
  });

  it('an endpoint failure is an error, never a score', async () => {
    const client = new EmbeddingsClient({
      model: 'all-MiniLM-L6-v2',
      baseUrl: url,
      retry: { retries: 0, minDelayMs: 1, maxDelayMs: 1, factor: 1, maxTotalMs: 1000, maxRetryAfterMs: 1 },
    });
    await expect(sbertSimilarities(client, [{ reference: 'unknown text', candidates: ['a cat sat'] }])).rejects.toThrow(/HTTP 400/);
    await client.close();
  });
});
