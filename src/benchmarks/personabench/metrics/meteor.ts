/**
 * METEOR as `nltk.translate.meteor_score.meteor_score([reference], candidate)` computes
 * it (NLTK 3.8/3.9): alpha 0.9, beta 3, gamma 0.5; words aligned in three stages, exact,
 * then Porter stems, then WordNet synonyms, each stage walking both lists from the end
 * and taking the first match. As in NLTK, the synonym stage sees the *stemmed* leftovers
 * of the stem stage, and chunks are counted over matches sorted by candidate position.
 */
import { porterStem } from './porter.js';
import { loadWordNet, synonymSet, type WordNetData } from './wordnet.js';

type Enumerated = Array<[number, string]>;
type Match = [number, number];

function matchEnums(hypothesis: Enumerated, reference: Enumerated): Match[] {
  const matches: Match[] = [];
  for (let i = hypothesis.length - 1; i >= 0; i--) {
    for (let j = reference.length - 1; j >= 0; j--) {
      if (hypothesis[i]![1] === reference[j]![1]) {
        matches.push([hypothesis[i]![0], reference[j]![0]]);
        hypothesis.splice(i, 1);
        reference.splice(j, 1);
        break;
      }
    }
  }
  return matches;
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
    let hyp: Enumerated = hypothesis.map((word, i) => [i, word.toLowerCase()]);
    let ref: Enumerated = reference.map((word, i) => [i, word.toLowerCase()]);
    const translationLength = hyp.length;
    const referenceLength = ref.length;
    const exact = matchEnums(hyp, ref);
    hyp = hyp.map(([i, word]) => [i, this.stem(word)]);
    ref = ref.map(([i, word]) => [i, this.stem(word)]);
    const stemmed = matchEnums(hyp, ref);
    const synonym: Match[] = [];
    for (let i = hyp.length - 1; i >= 0; i--) {
      const syns = this.synonyms(hyp[i]![1]);
      for (let j = ref.length - 1; j >= 0; j--) {
        if (syns.has(ref[j]![1])) {
          synonym.push([hyp[i]![0], ref[j]![0]]);
          hyp.splice(i, 1);
          ref.splice(j, 1);
          break;
        }
      }
    }
    // Python's sort is stable and keys on the candidate index only.
    const matches = [...exact, ...stemmed, ...synonym].sort((a, b) => a[0] - b[0]);
    const matchCount = matches.length;
    if (matchCount === 0 || translationLength === 0 || referenceLength === 0) return 0;
    const precision = matchCount / translationLength;
    const recall = matchCount / referenceLength;
    const fmean = (precision * recall) / (alpha * precision + (1 - alpha) * recall);
    let chunks = 1;
    for (let i = 0; i < matches.length - 1; i++) {
      if (!(matches[i + 1]![0] === matches[i]![0] + 1 && matches[i + 1]![1] === matches[i]![1] + 1)) chunks++;
    }
    const fragmentation = chunks / matchCount;
    const penalty = gamma * fragmentation ** beta;
    return (1 - penalty) * fmean;
  }
}
