// The four 3.3 lexical metrics on 300 generated long reply pairs (the bench's generator),
// against values NLTK and the rouge_score port computed in a separate program
// (test/expected/persona_metrics_generated.py): covers the tokeniser's fast paths, BLEU's
// numeric n-gram keys, METEOR's stack alignment and ROUGE-L over ids, and the worker threads.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sentenceBleu } from '../../../src/metrics/bleu.js';
import { GENERATION_METRICS, GenerationScorer } from '../../../src/metrics/generation.js';
import { scorePairs } from '../../../src/metrics/parallel.js';

const root = new URL('../../..', import.meta.url).pathname;
const expected = JSON.parse(readFileSync(join(root, 'test/expected/persona-metrics-generated.json'), 'utf8')) as {
  pairs: Array<{ reference: string; candidate: string; rouge1: number; rougeL: number; bleu: number; meteor: number }>;
};
const TOLERANCE = 1e-9;

describe('3.3 lexical metrics on generated long replies match NLTK / rouge_score', () => {
  it('on the calling thread', () => {
    expect(expected.pairs).toHaveLength(300);
    const scorer = new GenerationScorer();
    const off: string[] = [];
    for (const pair of expected.pairs) {
      const scores = scorer.score(pair.reference, pair.candidate);
      for (const metric of GENERATION_METRICS)
        if (!(Math.abs(scores[metric] - pair[metric]) < TOLERANCE))
          off.push(`${metric}: ${scores[metric]} vs ${pair[metric]} for ${JSON.stringify(pair.candidate.slice(0, 60))}`);
    }
    expect(off).toEqual([]);
    // The pairs reach every stage: nonzero BLEU and METEOR on most of them.
    expect(expected.pairs.filter((p) => p.bleu > 0).length).toBeGreaterThan(250);
    expect(expected.pairs.filter((p) => p.meteor > 0).length).toBeGreaterThan(250);
  });

  it('over two worker threads, in input order', async () => {
    const scores = await scorePairs(expected.pairs, { workers: 2, chunkSize: 64 });
    const off: string[] = [];
    expected.pairs.forEach((pair, i) => {
      for (const metric of GENERATION_METRICS) if (!(Math.abs(scores[metric][i]! - pair[metric]) < TOLERANCE)) off.push(`${i} ${metric}`);
    });
    expect(off).toEqual([]);
  });
});

describe('BLEU n-gram keys: numeric for usual pairs, strings beyond 9,741 distinct tokens', () => {
  // Reversed distinct tokens: every unigram matches, no longer n-gram does, so with method1
  // BLEU = exp((log 1 + log(0.1/(N-1)) + log(0.1/(N-2)) + log(0.1/(N-3))) / 4); NLTK 3.8 gives
  // the literals below (and 1.0 for the pair with itself).
  const tokens = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`);
  it('50 distinct tokens (numeric keys)', () => {
    expect(sentenceBleu(tokens(50), [...tokens(50)].reverse())).toBeCloseTo(0.009752505550693367, 15);
    expect(sentenceBleu(tokens(50), tokens(50))).toBe(1);
  });
  it('10,000 distinct tokens (string keys)', () => {
    expect(sentenceBleu(tokens(10_000), [...tokens(10_000)].reverse())).toBeCloseTo(0.0001778546203086966, 15);
    expect(sentenceBleu(tokens(10_000), tokens(10_000))).toBe(1);
  });
});
