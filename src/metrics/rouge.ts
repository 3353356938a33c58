/**
 * ROUGE-1 and ROUGE-L F-measure with the semantics of Google's `rouge_score` package as
 * the 3.3 evaluators call it: `RougeScorer(['rougeL', 'rouge1'], use_stemmer=True)` and
 * `.score(reference, candidate)`. Its tokenizer lower-cases, turns every run of
 * characters outside [a-z0-9] into a space, splits, stems only tokens longer than three
 * characters with NLTK's Porter stemmer, and drops empty tokens.
 */
import { porterStem } from './porter.js';
import { pairTokenIds } from './token-ids.js';

export interface RougeScore {
  precision: number;
  recall: number;
  fmeasure: number;
}

const NON_ALPHANUMERIC = /[^a-z0-9]+/g;

/** rouge_score `tokenize.tokenize(text, PorterStemmer())`. */
export function rougeTokens(text: string, stem = true): string[] {
  const spaced = text.toLowerCase().replace(NON_ALPHANUMERIC, ' ');
  const tokens: string[] = [];
  for (const raw of spaced.split(' ')) {
    if (raw === '') continue;
    tokens.push(stem && raw.length > 3 ? porterStem(raw) : raw);
  }
  return tokens;
}

function fmeasure(precision: number, recall: number): number {
  return precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
}

/** ROUGE-N over token lists (rouge_score `_score_ngrams`). */
export function rougeN(referenceTokens: readonly string[], candidateTokens: readonly string[], n = 1): RougeScore {
  const reference = ngramCounts(referenceTokens, n);
  const candidate = ngramCounts(candidateTokens, n);
  let overlap = 0;
  for (const [gram, count] of candidate) {
    const other = reference.get(gram);
    if (other !== undefined) overlap += Math.min(count, other);
  }
  const referenceTotal = Math.max(referenceTokens.length - n + 1, 0);
  const candidateTotal = Math.max(candidateTokens.length - n + 1, 0);
  const precision = overlap / Math.max(candidateTotal, 1);
  const recall = overlap / Math.max(referenceTotal, 1);
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

/** ROUGE-L over token lists (rouge_score `_score_lcs`). */
export function rougeL(referenceTokens: readonly string[], candidateTokens: readonly string[]): RougeScore {
  if (referenceTokens.length === 0 || candidateTokens.length === 0) return { precision: 0, recall: 0, fmeasure: 0 };
  const lcs = lcsLength(referenceTokens, candidateTokens);
  const precision = lcs / candidateTokens.length;
  const recall = lcs / referenceTokens.length;
  return { precision, recall, fmeasure: fmeasure(precision, recall) };
}

/** Both ROUGE scores the 3.3 evaluators report, from raw strings. */
export function rougeScores(reference: string, candidate: string): { rouge1: RougeScore; rougeL: RougeScore } {
  const referenceTokens = rougeTokens(reference);
  const candidateTokens = rougeTokens(candidate);
  return { rouge1: rougeN(referenceTokens, candidateTokens, 1), rougeL: rougeL(referenceTokens, candidateTokens) };
}

function ngramCounts(tokens: readonly string[], n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    const gram = n === 1 ? tokens[i]! : tokens.slice(i, i + n).join(' ');
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  return counts;
}

/** Length of the longest common subsequence, one rolling row, over token ids (integer compares). */
function lcsLength(a: readonly string[], b: readonly string[]): number {
  const { a: left, b: right } = pairTokenIds(a, b);
  const row = new Uint32Array(b.length + 1);
  for (let i = 1; i <= left.length; i++) {
    let diagonal = 0;
    const token = left[i - 1]!;
    for (let j = 1; j <= right.length; j++) {
      const above = row[j]!;
      row[j] = token === right[j - 1] ? diagonal + 1 : Math.max(above, row[j - 1]!);
      diagonal = above;
    }
  }
  return row[b.length]!;
}
