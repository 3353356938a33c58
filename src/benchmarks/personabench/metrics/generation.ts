/**
 * Task 3.3 (next reply text) scores: ROUGE-1/L F-measure, BLEU-4, METEOR for one
 * (reference, candidate) pair, and the two ways the original scripts aggregate them.
 * SBERT similarity needs an embeddings provider and lives elsewhere.
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
    const referenceRouge = rougeTokens(reference);
    const candidateRouge = rougeTokens(candidate);
    const referenceTokens = evaluationTokens(reference);
    const candidateTokens = evaluationTokens(candidate);
    return {
      rouge1: rougeN(referenceRouge, candidateRouge, 1).fmeasure,
      rougeL: rougeL(referenceRouge, candidateRouge).fmeasure,
      bleu: sentenceBleu(referenceTokens, candidateTokens),
      meteor: this.meteor.score(referenceTokens, candidateTokens),
    };
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
}

/**
 * The 3.3 GPT scripts' oracle best-of-n: each metric is maximised independently over the
 * non-empty candidates, a maximum of exactly 0 leaves that metric's average (the scripts
 * store it as -1), and the result is the unweighted mean over prompts. A prompt with no
 * non-empty candidate is not scored at all.
 */
export function oracleBestOfN(prompts: readonly PromptCandidates[], scorer = new GenerationScorer()): AggregateResult {
  const perPrompt = prompts.map((prompt) => {
    const candidates = prompt.candidates.filter((candidate) => candidate !== '');
    const best = { rouge1: null, rougeL: null, bleu: null, meteor: null } as Record<GenerationMetric, number | null>;
    if (candidates.length === 0) return best;
    const scores = candidates.map((candidate) => scorer.score(prompt.reference, candidate));
    for (const metric of GENERATION_METRICS) {
      const maximum = Math.max(...scores.map((s) => s[metric]));
      best[metric] = maximum === 0 ? null : maximum;
    }
    return best;
  });
  return summarise(perPrompt);
}

/**
 * Single-sample scoring (3.3/Claude.py, LogEval3.3): the metrics of one candidate per
 * prompt, zeros counted. Prompts whose candidate is missing are left out.
 */
export function singleSample(prompts: ReadonlyArray<{ reference: string; candidate: string | null }>, scorer = new GenerationScorer()): AggregateResult {
  const perPrompt = prompts.map((prompt) => {
    if (prompt.candidate === null || prompt.candidate === '') return { rouge1: null, rougeL: null, bleu: null, meteor: null };
    return scorer.score(prompt.reference, prompt.candidate);
  });
  return summarise(perPrompt);
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
