/**
 * NLTK's PorterStemmer in its default mode (NLTK_EXTENSIONS), the stemmer that both
 * rouge_score (`use_stemmer=True`) and NLTK's METEOR use. A port rather than `natural`'s
 * stemmer because the NLTK extensions change real words (e.g. "dies" -> "die",
 * "generously" -> "gener", "happy" -> "happi" but "enjoy" -> "enjoy"); the test suite
 * compares it with NLTK on a word list. Works on code points, as Python strings index,
 * so lengths and double-letter checks agree on astral characters.
 */

const IRREGULAR: Record<string, string> = {
  sky: 'sky',
  skies: 'sky',
  dying: 'die',
  lying: 'lie',
  tying: 'tie',
  news: 'news',
  innings: 'inning',
  inning: 'inning',
  outings: 'outing',
  outing: 'outing',
  cannings: 'canning',
  canning: 'canning',
  howe: 'howe',
  proceed: 'proceed',
  exceed: 'exceed',
  succeed: 'succeed',
};

type Word = string[];
type Condition = ((stem: Word) => boolean) | null;
/** [suffix, replacement, condition]; suffix '*d' means "ends in a double consonant". */
type Rule = [string, string, Condition];

const VOWELS = new Set(['a', 'e', 'i', 'o', 'u']);

function isConsonant(word: Word, i: number): boolean {
  const c = word[i]!;
  if (VOWELS.has(c)) return false;
  if (c === 'y') return i === 0 ? true : !isConsonant(word, i - 1);
  return true;
}

function measure(stem: Word): number {
  let count = 0;
  let previousVowel = false;
  for (let i = 0; i < stem.length; i++) {
    const consonant = isConsonant(stem, i);
    if (consonant && previousVowel) count++;
    previousVowel = !consonant;
  }
  return count;
}

const positiveMeasure = (stem: Word): boolean => measure(stem) > 0;
const measureAbove1 = (stem: Word): boolean => measure(stem) > 1;

function containsVowel(stem: Word): boolean {
  for (let i = 0; i < stem.length; i++) if (!isConsonant(stem, i)) return true;
  return false;
}

function endsDoubleConsonant(word: Word): boolean {
  const n = word.length;
  return n >= 2 && word[n - 1] === word[n - 2] && isConsonant(word, n - 1);
}

function endsCvc(word: Word): boolean {
  const n = word.length;
  return (
    (n >= 3 &&
      isConsonant(word, n - 3) &&
      !isConsonant(word, n - 2) &&
      isConsonant(word, n - 1) &&
      word[n - 1] !== 'w' &&
      word[n - 1] !== 'x' &&
      word[n - 1] !== 'y') ||
    (n === 2 && !isConsonant(word, 0) && isConsonant(word, 1))
  );
}

function endsWith(word: Word, suffix: string): boolean {
  if (suffix.length > word.length) return false;
  const offset = word.length - suffix.length;
  for (let i = 0; i < suffix.length; i++) if (word[offset + i] !== suffix[i]) return false;
  return true;
}

function withSuffix(stem: Word, replacement: string): Word {
  return replacement === '' ? stem : [...stem, ...replacement];
}

function applyRules(word: Word, rules: Rule[]): Word {
  for (const [suffix, replacement, condition] of rules) {
    if (suffix === '*d' && endsDoubleConsonant(word)) {
      const stem = word.slice(0, -2);
      return condition === null || condition(stem) ? withSuffix(stem, replacement) : word;
    }
    if (endsWith(word, suffix)) {
      const stem = word.slice(0, word.length - suffix.length);
      return condition === null || condition(stem) ? withSuffix(stem, replacement) : word;
    }
  }
  return word;
}

function step1a(word: Word): Word {
  if (endsWith(word, 'ies') && word.length === 4) return withSuffix(word.slice(0, -3), 'ie');
  return applyRules(word, [
    ['sses', 'ss', null],
    ['ies', 'i', null],
    ['ss', 'ss', null],
    ['s', '', null],
  ]);
}

function step1b(word: Word): Word {
  if (endsWith(word, 'ied')) return withSuffix(word.slice(0, -3), word.length === 4 ? 'ie' : 'i');
  if (endsWith(word, 'eed')) {
    const stem = word.slice(0, -3);
    return measure(stem) > 0 ? withSuffix(stem, 'ee') : word;
  }
  let intermediate: Word | undefined;
  for (const suffix of ['ed', 'ing']) {
    if (endsWith(word, suffix)) {
      const candidate = word.slice(0, word.length - suffix.length);
      if (containsVowel(candidate)) {
        intermediate = candidate;
        break;
      }
    }
  }
  if (intermediate === undefined) return word;
  const last = intermediate[intermediate.length - 1] ?? '';
  return applyRules(intermediate, [
    ['at', 'ate', null],
    ['bl', 'ble', null],
    ['iz', 'ize', null],
    ['*d', last, () => last !== 'l' && last !== 's' && last !== 'z'],
    ['', 'e', (stem) => measure(stem) === 1 && endsCvc(stem)],
  ]);
}

function step1c(word: Word): Word {
  return applyRules(word, [['y', 'i', (stem) => stem.length > 1 && isConsonant(stem, stem.length - 1)]]);
}

function step2(word: Word): Word {
  if (endsWith(word, 'alli') && positiveMeasure(word.slice(0, -4))) return step2(withSuffix(word.slice(0, -4), 'al'));
  return applyRules(word, [
    ['ational', 'ate', positiveMeasure],
    ['tional', 'tion', positiveMeasure],
    ['enci', 'ence', positiveMeasure],
    ['anci', 'ance', positiveMeasure],
    ['izer', 'ize', positiveMeasure],
    ['bli', 'ble', positiveMeasure],
    ['alli', 'al', positiveMeasure],
    ['entli', 'ent', positiveMeasure],
    ['eli', 'e', positiveMeasure],
    ['ousli', 'ous', positiveMeasure],
    ['ization', 'ize', positiveMeasure],
    ['ation', 'ate', positiveMeasure],
    ['ator', 'ate', positiveMeasure],
    ['alism', 'al', positiveMeasure],
    ['iveness', 'ive', positiveMeasure],
    ['fulness', 'ful', positiveMeasure],
    ['ousness', 'ous', positiveMeasure],
    ['aliti', 'al', positiveMeasure],
    ['iviti', 'ive', positiveMeasure],
    ['biliti', 'ble', positiveMeasure],
    ['fulli', 'ful', positiveMeasure],
    // NLTK tests the measure of the word minus three letters here, not of the stem.
    ['logi', 'log', () => positiveMeasure(word.slice(0, -3))],
  ]);
}

function step3(word: Word): Word {
  return applyRules(word, [
    ['icate', 'ic', positiveMeasure],
    ['ative', '', positiveMeasure],
    ['alize', 'al', positiveMeasure],
    ['iciti', 'ic', positiveMeasure],
    ['ical', 'ic', positiveMeasure],
    ['ful', '', positiveMeasure],
    ['ness', '', positiveMeasure],
  ]);
}

function step4(word: Word): Word {
  return applyRules(word, [
    ['al', '', measureAbove1],
    ['ance', '', measureAbove1],
    ['ence', '', measureAbove1],
    ['er', '', measureAbove1],
    ['ic', '', measureAbove1],
    ['able', '', measureAbove1],
    ['ible', '', measureAbove1],
    ['ant', '', measureAbove1],
    ['ement', '', measureAbove1],
    ['ment', '', measureAbove1],
    ['ent', '', measureAbove1],
    ['ion', '', (stem) => measure(stem) > 1 && (stem[stem.length - 1] === 's' || stem[stem.length - 1] === 't')],
    ['ou', '', measureAbove1],
    ['ism', '', measureAbove1],
    ['ate', '', measureAbove1],
    ['iti', '', measureAbove1],
    ['ous', '', measureAbove1],
    ['ive', '', measureAbove1],
    ['ize', '', measureAbove1],
  ]);
}

function step5a(word: Word): Word {
  if (endsWith(word, 'e')) {
    const stem = word.slice(0, -1);
    const m = measure(stem);
    if (m > 1) return stem;
    if (m === 1 && !endsCvc(stem)) return stem;
  }
  return word;
}

function step5b(word: Word): Word {
  return applyRules(word, [['ll', 'l', () => measure(word.slice(0, -1)) > 1]]);
}

const ASCII_ONLY = /^[\x00-\x7f]*$/;

const STEM_CACHE = new Map<string, string>();
const STEM_CACHE_LIMIT = 500_000;

/** `nltk.stem.PorterStemmer().stem(word)` (lower-cases first, as NLTK does by default); memoised. */
export function porterStem(word: string): string {
  let stem = STEM_CACHE.get(word);
  if (stem === undefined) {
    if (STEM_CACHE.size >= STEM_CACHE_LIMIT) STEM_CACHE.clear();
    STEM_CACHE.set(word, (stem = stemUncached(word)));
  }
  return stem;
}

function stemUncached(word: string): string {
  const lowered = pythonLower(word);
  const irregular = Object.hasOwn(IRREGULAR, word) ? IRREGULAR[lowered] : undefined;
  if (irregular !== undefined) return irregular;
  let chars: Word = ASCII_ONLY.test(lowered) ? lowered.split('') : Array.from(lowered);
  const originalLength = ASCII_ONLY.test(word) ? word.length : Array.from(word).length;
  if (originalLength <= 2) return lowered;
  chars = step1a(chars);
  chars = step1b(chars);
  chars = step1c(chars);
  chars = step2(chars);
  chars = step3(chars);
  chars = step4(chars);
  chars = step5a(chars);
  chars = step5b(chars);
  return chars.join('');
}

/** Python's str.lower() for what matters here; JS toLowerCase agrees except for a few rare letters. */
export function pythonLower(text: string): string {
  return text.toLowerCase();
}
