// PERSONA-bench metrics against reference values computed by Debian's NLTK 3.8 and
// scikit-learn 1.2 (test/expected/persona_metrics_reference.py, a separate program that
// never imports plens) and written to test/expected/persona-metrics.json.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluationTokens, fsum, sentenceBleu } from '../../../src/metrics/bleu.js';
import { groupBySubreddit, scoreGroups } from '../../../src/benchmarks/personabench/by-subreddit.js';
import {
  accuracy,
  binaryF1,
  matthewsCorrelation,
  regressionScores,
  signScoresApi,
  signScoresLogEval,
  weightedF1,
} from '../../../src/metrics/classification.js';
import { GenerationScorer, oracleBestOfN, singleSample } from '../../../src/metrics/generation.js';
import { Meteor } from '../../../src/metrics/meteor.js';
import { numpyPairwiseSum } from '../../../src/metrics/numpy-sum.js';
import { porterStem } from '../../../src/metrics/porter.js';
import { rougeScores, rougeTokens } from '../../../src/metrics/rouge.js';
import { loadWordNet, wordnetDirectories, type WordNetData } from '../../../src/metrics/wordnet.js';

const root = new URL('../../..', import.meta.url).pathname;
const expected = JSON.parse(readFileSync(join(root, 'test/expected/persona-metrics.json'), 'utf8'));
const TOLERANCE = 1e-9;

interface Pair {
  reference: string;
  candidate: string;
  reference_tokens: string[];
  rouge_tokens: string[];
  rouge1: number;
  rougeL: number;
  bleu: number;
  meteor: number;
}

let wordnet: WordNetData;
let scorer: GenerationScorer;
beforeAll(() => {
  wordnet = loadWordNet();
  scorer = new GenerationScorer(new Meteor(wordnet));
});

describe('3.3 lexical metrics match NLTK / rouge_score on tricky pairs', () => {
  const pairs = expected.pairs as Pair[];
  it.each(pairs.map((pair, i) => [i, pair.reference.slice(0, 40), pair] as const))('pair %i: %s', (_i, _label, pair) => {
    expect(evaluationTokens(pair.reference)).toEqual(pair.reference_tokens);
    expect(rougeTokens(pair.reference)).toEqual(pair.rouge_tokens);
    const scores = scorer.score(pair.reference, pair.candidate);
    expect(Math.abs(scores.rouge1 - pair.rouge1)).toBeLessThan(TOLERANCE);
    expect(Math.abs(scores.rougeL - pair.rougeL)).toBeLessThan(TOLERANCE);
    expect(Math.abs(scores.bleu - pair.bleu)).toBeLessThan(TOLERANCE);
    expect(Math.abs(scores.meteor - pair.meteor)).toBeLessThan(TOLERANCE);
    const rouge = rougeScores(pair.reference, pair.candidate);
    expect(rouge.rouge1.fmeasure).toBe(scores.rouge1);
  });

  it('200 random Reddit-like pairs (markdown, URLs, emoji, full-width, abbreviations, newlines)', () => {
    const random = expected.random_pairs as Array<Pair & { candidate_tokens: string[] }>;
    expect(random.length).toBe(200);
    for (const pair of random) {
      expect(evaluationTokens(pair.reference)).toEqual(pair.reference_tokens);
      expect(evaluationTokens(pair.candidate)).toEqual(pair.candidate_tokens);
      const scores = scorer.score(pair.reference, pair.candidate);
      for (const metric of ['rouge1', 'rougeL', 'bleu', 'meteor'] as const) {
        expect([pair.reference, pair.candidate, metric, Math.abs(scores[metric] - pair[metric]) < TOLERANCE]).toEqual([
          pair.reference,
          pair.candidate,
          metric,
          true,
        ]);
      }
    }
  });

  it('the reference pairs exercise every stage: some METEOR matches come only from WordNet synonyms', () => {
    // dog ~ hound survive stemming; NLTK matches synonyms on the stems left over by the
    // stem stage, so "bought"/"purchased" ("bought"/"purchas") do not match at all.
    const pair = pairs.find((p) => p.reference === 'The dog barked at the mailman.')!;
    const withoutSynonyms = new Meteor({ index: new Map(), lemmaNames: wordnet.lemmaNames, exceptions: wordnet.exceptions });
    const tokens = (text: string): string[] => evaluationTokens(text);
    expect(withoutSynonyms.score(tokens(pair.reference), tokens(pair.candidate))).toBeLessThan(pair.meteor - 0.05);
  });
});

describe('Porter stemmer (NLTK_EXTENSIONS mode)', () => {
  it('agrees with NLTK on hand-picked words, including the NLTK extensions', () => {
    for (const [word, stem] of Object.entries(expected.porter.samples as Record<string, string>)) {
      expect([word, porterStem(word)]).toEqual([word, stem]);
    }
  });

  it('agrees with NLTK on every single-word WordNet lemma and exception form, and inflections of every tenth', () => {
    const dirs = wordnetDirectories();
    const words = new Set<string>();
    for (const pos of ['noun', 'verb', 'adj', 'adv']) {
      for (const line of readFileSync(join(dirs.database, `index.${pos}`), 'latin1').split('\n')) {
        if (line === '' || line.startsWith(' ')) continue;
        const lemma = line.split(/\s+/)[0]!;
        if (!lemma.includes('_')) words.add(lemma);
      }
      for (const line of readFileSync(join(dirs.exceptions, `${pos}.exc`), 'latin1').split('\n')) {
        for (const term of line.split(/\s+/)) if (term !== '' && !term.includes('_')) words.add(term);
      }
    }
    const all = new Set(words);
    for (const w of [...words].sort().filter((_, i) => i % 10 === 0)) {
      for (const suffix of ['s', 'es', 'ed', 'ing', 'ly', 'ness', 'ies', 'ied', 'er', 'est', 'ation', 'ization', 'fulness', 'alli', 'logi'])
        all.add(w + suffix);
    }
    const sorted = [...all].sort();
    expect(sorted.length).toBe(expected.porter.count);
    const text = sorted.map((w) => `${w}\t${porterStem(w)}`).join('\n');
    expect(createHash('sha256').update(text, 'utf8').digest('hex')).toBe(expected.porter.sha256);
  });
});

describe('BLEU internals', () => {
  it('fsum rounds exactly where a running sum does not', () => {
    expect(fsum([0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1])).toBe(1);
    expect(fsum([1e100, 1, -1e100, 1e-100])).toBe(1);
    expect(fsum([])).toBe(0);
  });

  it('no unigram overlap gives exactly 0, and a perfect match gives 1', () => {
    expect(sentenceBleu(['a', 'b'], ['c', 'd'])).toBe(0);
    expect(sentenceBleu(['a', 'b', 'c', 'd'], ['a', 'b', 'c', 'd'])).toBe(1);
  });
});

describe('3.1 sign metrics match scikit-learn', () => {
  const c = expected.classification;
  it('accuracy, binary F1 (both scripts), weighted F1, MCC', () => {
    expect(accuracy(c.truth, c.pred)).toBeCloseTo(c.accuracy, 12);
    expect(binaryF1(c.truth, c.pred)).toBeCloseTo(c.f1_binary, 12);
    expect(binaryF1(c.truth, c.pred, 'positive')).toBeCloseTo(c.f1_binary_pos_label, 12);
    expect(weightedF1(c.truth, c.pred)).toBeCloseTo(c.f1_weighted, 12);
    expect(matthewsCorrelation(c.truth, c.pred)).toBeCloseTo(c.mcc, 12);
    const api = signScoresApi(c.truth, c.pred);
    expect(api.f1).toBe(binaryF1(c.truth, c.pred));
    expect(signScoresLogEval(c.truth, c.pred).f1).toBe(weightedF1(c.truth, c.pred));
  });

  it("the spec's worked example (accuracy 2/3, F1 2/3, MCC 0.5)", () => {
    const s = c.spec_example;
    const scores = signScoresApi(s.truth, s.pred);
    expect(scores.accuracy).toBeCloseTo(s.accuracy, 12);
    expect(scores.f1).toBeCloseTo(s.f1_binary, 12);
    expect(scores.mcc).toBeCloseTo(s.mcc, 12);
    expect(scores.mcc).toBeCloseTo(0.5, 12);
    expect(weightedF1(s.truth, s.pred)).toBeCloseTo(s.f1_weighted, 12);
  });

  it('LogEval3.1 with one true class: binary F1 on that class and MCC 0', () => {
    const o = c.one_class;
    const scores = signScoresLogEval(o.truth, o.pred);
    expect(scores.f1).toBeCloseTo(o.f1_binary_that_class, 12);
    expect(scores.mcc).toBe(0);
    expect(scores.accuracy).toBeCloseTo(o.accuracy, 12);
    expect(matthewsCorrelation(o.truth, o.pred)).toBeCloseTo(o.mcc_sklearn, 12);
  });

  it('nothing positive anywhere: F1 0 (zero_division=0), MCC 0', () => {
    expect(binaryF1(['negative', 'negative', 'negative'], ['negative', 'negative', 'negative'])).toBe(c.all_negative.f1_binary);
    expect(matthewsCorrelation(['negative', 'negative', 'negative'], ['negative', 'negative', 'negative'])).toBe(c.all_negative.mcc);
  });
});

describe('3.2 regression metrics match scikit-learn', () => {
  const r = expected.regression;
  it('MSE, RMSE, MAE on 300 decimal predictions (numpy pairwise summation)', () => {
    const scores = regressionScores(r.truth, r.pred);
    expect(Math.abs(scores.mse - r.mse)).toBeLessThan(TOLERANCE);
    expect(Math.abs(scores.rmse - r.rmse)).toBeLessThan(TOLERANCE);
    expect(Math.abs(scores.mae - r.mae)).toBeLessThan(TOLERANCE);
  });

  it("the spec's worked example: RMSE sqrt(44.5), MAE 6.5", () => {
    const scores = regressionScores(r.spec_example.truth, r.spec_example.pred);
    expect(scores.rmse).toBeCloseTo(Math.sqrt(44.5), 12);
    expect(scores.rmse).toBeCloseTo(r.spec_example.rmse, 12);
    expect(scores.mae).toBe(6.5);
  });

  it('pairwise summation: blocks of 8 accumulators, split above 128', () => {
    const values = Array.from({ length: 300 }, (_, i) => 0.1 * (i % 7) + 1e-3 * i);
    let sequential = 0;
    for (const v of values) sequential += v;
    expect(numpyPairwiseSum(values)).toBeCloseTo(sequential, 9);
    expect(numpyPairwiseSum([1, 2, 3])).toBe(6);
  });
});

describe('3.3 aggregation', () => {
  const b = expected.best_of_n;
  it('oracle best-of-n: per-metric maxima, zero maxima excluded, mean over prompts', () => {
    const result = oracleBestOfN(b.prompts, scorer);
    for (const metric of ['rouge1', 'rougeL', 'bleu', 'meteor'] as const) {
      expect(result.counted[metric]).toBe(b.counted[metric]);
      expect(Math.abs(result.mean[metric]! - b.mean[metric])).toBeLessThan(TOLERANCE);
      result.perPrompt.forEach((p, i) => {
        const want = b.per_prompt[metric][i];
        if (want === -1) expect(p[metric]).toBeNull();
        else expect(Math.abs(p[metric]! - want)).toBeLessThan(TOLERANCE);
      });
    }
  });

  it('single sample: zeros counted', () => {
    const prompts = (b.prompts as Array<{ reference: string; candidates: string[] }>).map((p) => ({
      reference: p.reference,
      candidate: p.candidates.find((c) => c !== '')!,
    }));
    const result = singleSample(prompts, scorer);
    for (const metric of ['rouge1', 'rougeL', 'bleu', 'meteor'] as const) {
      expect(result.counted[metric]).toBe(prompts.length);
      expect(Math.abs(result.mean[metric]! - b.single_first_mean[metric])).toBeLessThan(TOLERANCE);
    }
  });
});

describe('per-subreddit grouping', () => {
  const rows = [
    { sub: 'Science', t: 'positive', p: 'positive' },
    { sub: 'science', t: 'negative', p: 'positive' },
    { sub: null, t: 'positive', p: 'positive' },
    { sub: '', t: 'negative', p: 'negative' },
  ];
  it('3.1/GPT.py lower-cases domains; LogEval drops null subreddits from the domain rows only', () => {
    const lower = scoreGroups(
      groupBySubreddit(rows, (r) => r.sub, 'lowercase'),
      (g) =>
        signScoresApi(
          g.map((r) => r.t),
          g.map((r) => r.p),
        ),
    );
    expect(lower.byDomain.map((d) => [d.domain, d.count])).toEqual([
      ['science', 2],
      ['unknown_domain', 1],
      ['', 1],
    ]);
    expect(lower.all.accuracy).toBe(0.75);
    expect(lower.byDomain[0]!.scores.accuracy).toBe(0.5);
    const logeval = groupBySubreddit(rows, (r) => r.sub, 'logeval');
    expect([...logeval.byDomain.keys()]).toEqual(['Science', 'science', '']);
    expect(logeval.all.length).toBe(4);
  });
});
