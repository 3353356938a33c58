/**
 * Synthetic (reference, candidate) reply pairs for the PERSONA-bench metrics bench and the
 * larger reference test: a Reddit-like reference reply of 3-123 words (mean about 50) and a
 * model reply of 10-180 words (mean about 95, as 256 tokens allow), from a Zipf-weighted English
 * vocabulary (function words, inflected content words that exercise Porter stemming and
 * WordNet's morphy, numbers, contractions, punctuation, several sentences). The candidate
 * reuses part of the reference, inflects some words differently and adds its own, so all
 * three METEOR stages and every BLEU order find matches. Deterministic for a seed.
 */

const FUNCTION_WORDS =
  'the a an i you he she it we they this that to of in on for with at by from about as is was are were be been have has had do does did not no but and or so if then just really very too also more most some any all my your our their his her its me him them us what which who when where why how can could would should will'.split(
    ' ',
  );
const CONTENT_WORDS =
  'game play player team win lose score season coach watch love hate think feel know say tell ask answer work job boss pay money buy sell price car drive road city house home family friend dog cat walk run eat food cook dinner phone call text reply post comment thread people person man woman child kid school teach learn study read write book story movie show music song listen sound voice loud quiet happy sad angry funny good bad great small big long short old new young fast slow hard easy right wrong true false problem question idea reason point fact argument agree disagree change move start stop wait try need want like help make take give find keep leave open close break fix build design plan hope wish fear worry care mind believe understand explain remember forget happen seem look see hear smell taste touch grow fall rise turn hold bring send spend save waste lose choose decide quick slowly generous generously happiness kindness darkness relation relational conditional national nationality operate operator operation organize organization sensible sensitivity electric electricity connect connection hopeful hopefully careful carefully beautiful beauty rain weather storm sun cold hot warm summer winter night morning evening week month year today tomorrow yesterday'.split(
    ' ',
  );
const SUFFIXES = ['', '', '', 's', 'ed', 'ing', 'er', 'est', 'ly', 'ness', 'es', 'ies'];
const EXTRAS = [
  "don't",
  "can't",
  "it's",
  "i'm",
  "they're",
  "won't",
  'gonna',
  'wanna',
  'lol',
  'tbh',
  'e.g.',
  'u.s.',
  '10',
  '3.5',
  '2,000',
  '"quoted"',
  '(really)',
  '--',
  '...',
  '$5',
  '#1',
  '@user',
];
const ENDINGS = ['.', '.', '.', '!', '?', '...', ''];

/** A small, fast, seedable PRNG (mulberry32). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface ReplyPair {
  reference: string;
  candidate: string;
}

function inflect(word: string, random: () => number): string {
  const suffix = SUFFIXES[Math.floor(random() * SUFFIXES.length)]!;
  if (suffix === 'ies' && word.endsWith('y')) return word.slice(0, -1) + 'ies';
  if (suffix === 'ies') return word;
  if (suffix.startsWith('e') && word.endsWith('e')) return word + suffix.slice(1);
  return word + suffix;
}

function word(random: () => number): string {
  const r = random();
  if (r < 0.45) return FUNCTION_WORDS[Math.floor(random() ** 2 * FUNCTION_WORDS.length)]!;
  if (r < 0.5) return EXTRAS[Math.floor(random() * EXTRAS.length)]!;
  // Zipf-like: low indices are much more frequent.
  const base = CONTENT_WORDS[Math.floor(random() ** 2.5 * CONTENT_WORDS.length)]!;
  return inflect(base, random);
}

function sentences(words: string[], random: () => number): string {
  // Parts joined once: `+=` would leave a rope of small strings behind every text.
  const parts: string[] = [];
  let sinceBreak = 0;
  for (let i = 0; i < words.length; i++) {
    let w = words[i]!;
    if (sinceBreak === 0 && random() < 0.5) w = w.charAt(0).toUpperCase() + w.slice(1);
    if (i > 0) parts.push(random() < 0.06 ? ', ' : ' ');
    parts.push(w);
    sinceBreak++;
    if (sinceBreak > 4 && random() < 0.15 && i < words.length - 1) {
      parts.push(ENDINGS[Math.floor(random() * (ENDINGS.length - 1))]!);
      sinceBreak = 0;
    }
  }
  parts.push(ENDINGS[Math.floor(random() * ENDINGS.length)]!);
  return parts.join('');
}

/** `count` pairs from `seed`; pair i depends only on (seed, i), so ranges can be made apart. */
export function syntheticPairs(count: number, seed = 1, start = 0): ReplyPair[] {
  const pairs: ReplyPair[] = [];
  for (let i = start; i < start + count; i++) {
    const random = mulberry32(seed * 1_000_003 + i);
    const length = 3 + Math.floor(random() ** 1.5 * 121);
    const reference = Array.from({ length }, () => word(random));
    const candidate: string[] = [];
    const candidateLength = 10 + Math.floor(random() * 171);
    for (let k = 0; k < candidateLength; k++) {
      const r = random();
      const from = reference[Math.min(reference.length - 1, Math.floor((k / candidateLength) * reference.length + (random() - 0.5) * 4))] ?? reference[0]!;
      if (r < 0.35) candidate.push(from);
      else if (r < 0.45) candidate.push(inflect(from.replace(/(s|ed|ing|er|est|ly|ness|es|ies)$/, ''), random));
      else candidate.push(word(random));
    }
    pairs.push({ reference: sentences(reference, random), candidate: sentences(candidate, random) });
  }
  return pairs;
}
