/**
 * METEOR as `nltk.translate.meteor_score.meteor_score([reference], candidate)` computes
 * it (NLTK 3.8/3.9): alpha 0.9, beta 3, gamma 0.5; words aligned in three stages, exact,
 * then Porter stems, then WordNet synonyms, each stage walking both lists from the end
 * and taking the first match. As in NLTK, the synonym stage sees the *stemmed* leftovers
 * of the stem stage, and chunks are counted over matches sorted by candidate position.
 */
import { porterStem } from './porter.js';
import { loadWordNet, synonymSet, type WordNetData } from './wordnet.js';

/** Alive reference positions of each word, ascending: the last is the one NLTK's walk from the end meets first. */
function positionsOf(ref: string[], refAlive: Uint8Array): Map<string, number[]> {
  const positions = new Map<string, number[]>();
  for (let j = 0; j < ref.length; j++) {
    if (!refAlive[j]) continue;
    const stack = positions.get(ref[j]!);
    if (stack === undefined) positions.set(ref[j]!, [j]);
    else stack.push(j);
  }
  return positions;
}

/**
 * The exact and stem stages over the words still unmatched (`alive`): NLTK walks the
 * candidate from its end and, for each word, the reference from its end, taking the first
 * equal word and removing both. That word is the top of the word's stack of positions, so
 * the stacks give the same pairs without the nested walk.
 */
function matchEqual(hyp: string[], hypAlive: Uint8Array, ref: string[], refAlive: Uint8Array, matches: number[]): void {
  const positions = positionsOf(ref, refAlive);
  for (let i = hyp.length - 1; i >= 0; i--) {
    if (!hypAlive[i]) continue;
    const stack = positions.get(hyp[i]!);
    if (stack === undefined || stack.length === 0) continue;
    const j = stack.pop()!;
    matches.push(i, j);
    hypAlive[i] = 0;
    refAlive[j] = 0;
  }
}

export class Meteor {
  private wordnet: WordNetData | undefined;
  private readonly synonymCache = new Map<string, Set<string>>();
  private readonly stemCache = new Map<string, string>();

  constructor(wordnet?: WordNetData) {
    this.wordnet = wordnet;
  }

  private stem(word: string): string {
    let stemmed = this.stemCache.get(word);
    if (stemmed === undefined) this.stemCache.set(word, (stemmed = porterStem(word)));
    return stemmed;
  }

  private synonyms(word: string): Set<string> {
    let set = this.synonymCache.get(word);
    if (set === undefined) {
      this.wordnet ??= loadWordNet();
      this.synonymCache.set(word, (set = synonymSet(this.wordnet, word)));
    }
    return set;
  }

  /** `single_meteor_score(reference, hypothesis)` over token lists. */
  score(reference: readonly string[], hypothesis: readonly string[], alpha = 0.9, beta = 3, gamma = 0.5): number {
    const hyp = hypothesis.map((word) => word.toLowerCase());
    const ref = reference.map((word) => word.toLowerCase());
    const hypAlive = new Uint8Array(hyp.length).fill(1);
    const refAlive = new Uint8Array(ref.length).fill(1);
    // Flat (candidate index, reference index) pairs, in the order NLTK finds them.
    const found: number[] = [];
    matchEqual(hyp, hypAlive, ref, refAlive, found);
    for (let i = 0; i < hyp.length; i++) if (hypAlive[i]) hyp[i] = this.stem(hyp[i]!);
    for (let j = 0; j < ref.length; j++) if (refAlive[j]) ref[j] = this.stem(ref[j]!);
    matchEqual(hyp, hypAlive, ref, refAlive, found);
    // Synonym stage: NLTK takes the last alive reference word in the synonym set; that is the
    // highest top among the stacks of the set's words, found from whichever side is smaller.
    const positions = positionsOf(ref, refAlive);
    for (let i = hyp.length - 1; i >= 0; i--) {
      if (!hypAlive[i]) continue;
      const syns = this.synonyms(hyp[i]!);
      let best: number[] | undefined;
      if (syns.size <= positions.size) {
        for (const name of syns) {
          const stack = positions.get(name);
          if (stack !== undefined && stack.length > 0 && (best === undefined || stack[stack.length - 1]! > best[best.length - 1]!)) best = stack;
        }
      } else {
        for (const [word, stack] of positions) {
          if (stack.length > 0 && (best === undefined || stack[stack.length - 1]! > best[best.length - 1]!) && syns.has(word)) best = stack;
        }
      }
      if (best === undefined) continue;
      const j = best.pop()!;
      found.push(i, j);
      hypAlive[i] = 0;
      refAlive[j] = 0;
    }
    const translationLength = hyp.length;
    const referenceLength = ref.length;
    const matchCount = found.length / 2;
    if (matchCount === 0 || translationLength === 0 || referenceLength === 0) return 0;
    const precision = matchCount / translationLength;
    const recall = matchCount / referenceLength;
    const fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall);
    // NLTK sorts the matches by candidate index (each occurs once) and counts a new chunk
    // wherever the next match is not one step on in both lists.
    const referenceOf = new Int32Array(translationLength).fill(-1);
    for (let k = 0; k < found.length; k += 2) referenceOf[found[k]!] = found[k + 1]!;
    let chunks = 0;
    let previousHyp = -2;
    let previousRef = -2;
    for (let i = 0; i < translationLength; i++) {
      const j = referenceOf[i]!;
      if (j < 0) continue;
      if (!(i === previousHyp + 1 && j === previousRef + 1)) chunks++;
      previousHyp = i;
      previousRef = j;
    }
    const fragmentation = chunks / matchCount;
    const penalty = gamma * fragmentation ** beta;
    return (1 - penalty) * fmean;
  }
}
