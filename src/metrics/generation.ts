/**
 * Task 3.3 (next reply text) scores: ROUGE-1/L F-measure, BLEU-4, METEOR for one
 * (reference, candidate) pair, and the two ways the original scripts aggregate them.
 * SBERT similarities come from an embeddings provider (sbert.ts) and are passed in.
 */
import { bleuScore, evaluationTokens, sentenceBleu } from './bleu.js';
import { Meteor } from './meteor.js';
import { numpyMean } from './numpy-sum.js';
import { rougeL, rougeN, rougeTokens } from './rouge.js';

export const GENERATION_METRICS = ['rouge1', 'rougeL', 'bleu', 'meteor'] as const;
export type GenerationMetric = (typeof GENERATION_METRICS)[number];
export type GenerationScores = Record<GenerationMetric, number>;

export class GenerationScorer {
  private readonly meteor: Meteor;

  constructor(meteor = new Meteor()) {
    this.meteor = meteor;
  }

  /** All four lexical metrics of one candidate against its reference (raw strings). */
  score(reference: string, candidate: string): GenerationScores {
    return this.scoreCandidates(reference, [candidate])[0]!;
  }

  /** The metrics of several candidates against one reference, which is tokenised once. */
  scoreCandidates(reference: string, candidates: readonly string[]): GenerationScores[] {
    const referenceRouge = rougeTokens(reference);
    const referenceTokens = evaluationTokens(reference);
    return candidates.map((candidate) => {
      const candidateRouge = rougeTokens(candidate);
      const candidateTokens = evaluationTokens(candidate);
      return {
        rouge1: rougeN(referenceRouge, candidateRouge, 1).fmeasure,
        rougeL: rougeL(referenceRouge, candidateRouge).fmeasure,
        bleu: sentenceBleu(referenceTokens, candidateTokens),
        meteor: this.meteor.score(referenceTokens, candidateTokens),
      };
    });
  }
}

export interface PromptCandidates {
  reference: string;
  candidates: readonly string[];
}

export interface AggregateResult {
  /** Per prompt and metric; null where the prompt is left out of that metric's mean. */
  perPrompt: Array<Record<GenerationMetric, number | null>>;
  mean: Record<GenerationMetric, number | null>;
  counted: Record<GenerationMetric, number>;
  /** Present when SBERT similarities were given. */
  sbert?: SbertAggregate;
}

export interface SbertAggregate {
  /** Per prompt: the (best) similarity; null where the prompt has no candidate. */
  perPrompt: Array<number | null>;
  /** Per prompt: the index of the candidate with the best similarity (the one the GPT scripts save). */
  bestCandidate: Array<number | null>;
  mean: number | null;
  counted: number;
}

/**
 * The 3.3 GPT scripts' oracle best-of-n: each metric is maximised independently over the
 * non-empty candidates, a maximum of exactly 0 leaves that metric's average (the scripts
 * store it as -1), and the result is the unweighted mean over prompts. A prompt with no
 * non-empty candidate is not scored at all.
 */
export function oracleBestOfN(
  prompts: readonly PromptCandidates[],
  scorer = new GenerationScorer(),
  sbert?: ReadonlyArray<ReadonlyArray<number | null>>,
): AggregateResult {
  const perPrompt = prompts.map((prompt) => {
    const candidates = prompt.candidates.filter((candidate) => candidate !== '');
    const best = { rouge1: null, rougeL: null, bleu: null, meteor: null } as Record<GenerationMetric, number | null>;
    if (candidates.length === 0) return best;
    const scores = scorer.scoreCandidates(prompt.reference, candidates);
    for (const metric of GENERATION_METRICS) {
      const maximum = Math.max(...scores.map((s) => s[metric]));
      best[metric] = maximum === 0 ? null : maximum;
    }
    return best;
  });
  const result = summarise(perPrompt);
  if (sbert !== undefined) result.sbert = bestSbert(prompts, sbert);
  return result;
}

/**
 * SBERT in the GPT scripts: the maximum similarity over the non-empty candidates (the first
 * candidate reaching it is the saved one), averaged over every prompt that has one, zeros and
 * negatives included.
 */
function bestSbert(prompts: readonly PromptCandidates[], sbert: ReadonlyArray<ReadonlyArray<number | null>>): SbertAggregate {
  if (sbert.length !== prompts.length) throw new Error(`SBERT similarities for ${sbert.length} prompts, expected ${prompts.length}`);
  const perPrompt: Array<number | null> = [];
  const bestCandidate: Array<number | null> = [];
  prompts.forEach((prompt, p) => {
    let best: number | null = null;
    let at: number | null = null;
    prompt.candidates.forEach((candidate, c) => {
      const similarity = sbert[p]![c];
      if (candidate === '' || similarity === null || similarity === undefined) return;
      if (best === null || similarity > best) [best, at] = [similarity, c];
    });
    perPrompt.push(best);
    bestCandidate.push(at);
  });
  const values = perPrompt.filter((v): v is number => v !== null);
  return { perPrompt, bestCandidate, mean: values.length === 0 ? null : numpyMean(values), counted: values.length };
}

/**
 * The GPT scripts' "filtered" averages: every metric's mean over the prompts whose best SBERT
 * lies within [low, high] (a prompt below `low` or above `high` is "confusing" and left out;
 * GPT-4.1's script uses 0.1 and 1.0). With one model, as here, that is the whole rule.
 */
export function filteredMeans(
  result: AggregateResult,
  low: number,
  high: number,
): { mean: Record<GenerationMetric | 'sbert', number | null>; counted: Record<GenerationMetric | 'sbert', number> } {
  if (result.sbert === undefined) throw new Error('filtered averages need SBERT similarities');
  const keep = result.sbert.perPrompt.map((s) => s !== null && !(s < low) && !(s > high));
  const kept = summarise(result.perPrompt.filter((_, i) => keep[i]));
  const sbertValues = result.sbert.perPrompt.filter((s, i): s is number => keep[i]! && s !== null);
  return {
    mean: { ...kept.mean, sbert: sbertValues.length === 0 ? null : numpyMean(sbertValues) },
    counted: { ...kept.counted, sbert: sbertValues.length },
  };
}

/**
 * Single-sample scoring (3.3/Claude.py, LogEval3.3): the metrics of one candidate per
 * prompt, zeros counted. Prompts whose candidate is missing are left out.
 */
export function singleSample(
  prompts: ReadonlyArray<{ reference: string; candidate: string | null }>,
  scorer = new GenerationScorer(),
  sbert?: ReadonlyArray<number | null>,
): AggregateResult {
  const perPrompt = prompts.map((prompt) => {
    if (prompt.candidate === null || prompt.candidate === '') return { rouge1: null, rougeL: null, bleu: null, meteor: null };
    return scorer.score(prompt.reference, prompt.candidate);
  });
  const result = summarise(perPrompt);
  if (sbert !== undefined) {
    if (sbert.length !== prompts.length) throw new Error(`SBERT similarities for ${sbert.length} prompts, expected ${prompts.length}`);
    // One candidate, zeros counted; a missing candidate has no similarity.
    const values = sbert.map((s, i) => (prompts[i]!.candidate ? (s ?? null) : null));
    const counted = values.filter((v): v is number => v !== null);
    result.sbert = {
      perPrompt: values,
      bestCandidate: values.map((v) => (v === null ? null : 0)),
      mean: counted.length === 0 ? null : numpyMean(counted),
      counted: counted.length,
    };
  }
  return result;
}

function summarise(perPrompt: Array<Record<GenerationMetric, number | null>>): AggregateResult {
  const mean = {} as Record<GenerationMetric, number | null>;
  const counted = {} as Record<GenerationMetric, number>;
  for (const metric of GENERATION_METRICS) {
    const values = perPrompt.map((p) => p[metric]).filter((v): v is number => v !== null);
    counted[metric] = values.length;
    mean[metric] = values.length === 0 ? null : numpyMean(values);
  }
  return { perPrompt, mean, counted };
}

export { bleuScore };
