/**
 * Sentence BLEU-4 as the 3.3 evaluators compute it:
 * `nltk.translate.bleu_score.sentence_bleu([reference_tokens], candidate_tokens,
 * smoothing_function=SmoothingFunction().method1)` with tokens from
 * `nltk.word_tokenize(text.lower())`. Uniform 1-4-gram weights, clipped counts,
 * brevity penalty, method1 (epsilon 0.1 over the n-gram count for zero matches), and the
 * weighted log sum added with Python's exactly rounded `math.fsum`.
 */
import { nltkWordTokenize } from './nltk-tokenize.js';
import { pairTokenIds } from './token-ids.js';

/**
 * Each pair's tokens as small integers (ids local to the pair), so an n-gram of up to four
 * tokens is one exact number instead of a joined string: with fewer than 2^13 distinct
 * tokens, id1 * base^3 + ... stays below 2^53.
 */
function localIds(reference: readonly string[], candidate: readonly string[]): { reference: Int32Array; candidate: Int32Array; base: number } {
  const ids = pairTokenIds(reference, candidate);
  return { reference: ids.a, candidate: ids.b, base: ids.distinct + 1 };
}

function ngramKey(tokens: Int32Array, at: number, n: number, base: number): number {
  let key = 0;
  for (let k = 0; k < n; k++) key = key * base + tokens[at + k]! + 1;
  return key;
}

/**
 * An open-addressing table of reference n-gram counts, reused by every call (one thread, one
 * table): slots are valid only when stamped with the current call's epoch, so nothing is cleared.
 */
let slotKeys = new Float64Array(1 << 10);
let slotCounts = new Int32Array(1 << 10);
let slotEpochs = new Int32Array(1 << 10);
let epoch = 0;

function slotOf(key: number, mask: number): number {
  // Keys are integers below 2^53: mix the low and high 32 bits.
  let h = Math.imul(key >>> 0, 0x9e3779b1) ^ Math.imul(Math.floor(key / 4294967296), 0x85ebca77);
  h ^= h >>> 15;
  let slot = h & mask;
  while (slotEpochs[slot] === epoch && slotKeys[slot] !== key) slot = (slot + 1) & mask;
  return slot;
}

/** Sum over candidate n-grams of min(count, reference count): each candidate n-gram takes one reference occurrence while any is left. */
function clippedMatches(reference: Int32Array, candidate: Int32Array, n: number, base: number): number {
  const referenceGrams = reference.length - n + 1;
  if (referenceGrams <= 0 || candidate.length < n) return 0;
  let size = 1 << 10;
  while (size < 2 * referenceGrams) size <<= 1;
  if (size > slotKeys.length) {
    slotKeys = new Float64Array(size);
    slotCounts = new Int32Array(size);
    slotEpochs = new Int32Array(size);
    epoch = 0;
  }
  if (epoch === 0x7fffffff) {
    slotEpochs.fill(0);
    epoch = 0;
  }
  epoch++;
  const mask = size - 1;
  for (let i = 0; i < referenceGrams; i++) {
    const key = ngramKey(reference, i, n, base);
    const slot = slotOf(key, mask);
    if (slotEpochs[slot] === epoch) slotCounts[slot]!++;
    else {
      slotEpochs[slot] = epoch;
      slotKeys[slot] = key;
      slotCounts[slot] = 1;
    }
  }
  let clipped = 0;
  for (let i = 0; i + n <= candidate.length; i++) {
    const slot = slotOf(ngramKey(candidate, i, n, base), mask);
    if (slotEpochs[slot] === epoch && slotCounts[slot]! > 0) {
      slotCounts[slot]!--;
      clipped++;
    }
  }
  return clipped;
}

const SEPARATOR = '\u0000';

function stringNgramCounts(tokens: readonly string[], n: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i + n <= tokens.length; i++) {
    const gram = n === 1 ? tokens[i]! : tokens.slice(i, i + n).join(SEPARATOR);
    counts.set(gram, (counts.get(gram) ?? 0) + 1);
  }
  return counts;
}

/** Clipped matches and candidate n-gram totals for n = 1..maxOrder (nltk `modified_precision`). */
function modifiedPrecisions(reference: readonly string[], candidate: readonly string[], maxOrder: number): { numerators: number[]; denominators: number[] } {
  const numerators: number[] = [];
  const denominators: number[] = [];
  const encoded = localIds(reference, candidate);
  // Numeric keys are exact while base^maxOrder < 2^53; beyond that (never for real replies), strings.
  const numeric = encoded.base ** maxOrder < Number.MAX_SAFE_INTEGER;
  for (let n = 1; n <= maxOrder; n++) {
    if (numeric) {
      numerators.push(clippedMatches(encoded.reference, encoded.candidate, n, encoded.base));
      denominators.push(Math.max(1, candidate.length - n + 1));
      continue;
    }
    const counts = stringNgramCounts(candidate, n);
    const referenceCounts = stringNgramCounts(reference, n);
    let clipped = 0;
    let total = 0;
    for (const [gram, count] of counts) {
      clipped += Math.min(count, referenceCounts.get(gram) ?? 0);
      total += count;
    }
    numerators.push(clipped);
    denominators.push(Math.max(1, total));
  }
  return { numerators, denominators };
}

/** Python `math.fsum` (Shewchuk partials, CPython's final half-even correction). */
export function fsum(values: readonly number[]): number {
  const partials: number[] = [];
  for (let x of values) {
    let i = 0;
    for (let y of partials) {
      if (Math.abs(x) < Math.abs(y)) [x, y] = [y, x];
      const hi = x + y;
      const lo = y - (hi - x);
      if (lo !== 0) partials[i++] = lo;
      x = hi;
    }
    partials.length = i;
    partials.push(x);
  }
  let n = partials.length;
  if (n === 0) return 0;
  let hi = partials[--n]!;
  let lo = 0;
  while (n > 0) {
    const x = hi;
    const y = partials[--n]!;
    hi = x + y;
    lo = y - (hi - x);
    if (lo !== 0) break;
  }
  if (n > 0 && ((lo < 0 && partials[n - 1]! < 0) || (lo > 0 && partials[n - 1]! > 0))) {
    const y = lo * 2;
    const x = hi + y;
    if (y === x - hi) hi = x;
  }
  return hi;
}

/** `sentence_bleu([reference], candidate, smoothing_function=method1)` over token lists. */
export function sentenceBleu(reference: readonly string[], candidate: readonly string[], maxOrder = 4): number {
  const { numerators, denominators } = modifiedPrecisions(reference, candidate, maxOrder);
  if (numerators[0] === 0) return 0;
  const hypLength = candidate.length;
  const refLength = reference.length;
  const brevity = hypLength > refLength ? 1 : hypLength === 0 ? 0 : Math.exp(1 - refLength / hypLength);
  const weight = 1 / maxOrder;
  const terms: number[] = [];
  for (let i = 0; i < maxOrder; i++) {
    const precision = numerators[i] === 0 ? (0 + 0.1) / denominators[i]! : numerators[i]! / denominators[i]!;
    if (precision > 0) terms.push(weight * Math.log(precision));
  }
  return brevity * Math.exp(fsum(terms));
}

/** The evaluators' tokenisation for BLEU and METEOR: `nltk.word_tokenize(text.lower())`. */
export function evaluationTokens(text: string): string[] {
  return nltkWordTokenize(text.toLowerCase());
}

/** BLEU-4 of a candidate against a reference, from raw strings. */
export function bleuScore(reference: string, candidate: string): number {
  return sentenceBleu(evaluationTokens(reference), evaluationTokens(candidate));
}
