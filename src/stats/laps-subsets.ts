/**
 * The message subsets of the LAPS lexical-diversity protocol (see
 * shared/spec/lexical-diversity.md): per iteration, shuffle all messages with Python's
 * `random.sample`, take messages from the front until a whitespace-token budget is
 * reached, and cut the first message that does not fit. The metrics themselves are
 * computed elsewhere; this module only reproduces which texts each iteration sees.
 */

import { PythonRandom } from './python-random.js';

/**
 * Python's `str.isspace()` set, which `str.split()` splits on. Spelled out because JS `\s`
 * differs (it has U+FEFF, lacks U+001C-U+001F and U+0085). None are astral, so UTF-16 code
 * units suffice.
 */
function isPythonSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0x1c && c <= 0x1f);
  if (c < 0x85) return false;
  return (
    c === 0x85 || c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000
  );
}

/** Python `str.split()` with no argument: split on runs of Python whitespace, no empty strings. */
export function pythonSplit(s: string): string[] {
  const out: string[] = [];
  const len = s.length;
  let i = 0;
  while (i < len) {
    while (i < len && isPythonSpace(s.charCodeAt(i))) i++;
    if (i >= len) break;
    const start = i;
    while (i < len && !isPythonSpace(s.charCodeAt(i))) i++;
    out.push(s.slice(start, i));
  }
  return out;
}

/** `len(s.split())` without building the token list. */
export function pythonSplitCount(s: string): number {
  let n = 0;
  let inToken = false;
  for (let i = 0; i < s.length; i++) {
    const space = isPythonSpace(s.charCodeAt(i));
    if (!space && !inToken) n++;
    inToken = !space;
  }
  return n;
}

/**
 * 'dist': the stream Dist-n and Ent-n see (each metric re-seeds with 42, so their subsets
 * are identical). 'self_bleu': as 'dist', plus one extra `sample(subset, len(subset))`
 * shuffle per iteration when the subset has more than one message, which also shifts the
 * random stream of every later iteration.
 */
export type LapsStream = 'dist' | 'self_bleu';

export interface LapsOptions {
  /** Number of subsets (default 100). */
  iterations?: number;
  /** Whitespace-token budget per subset (default 7,012). */
  tokenBudget?: number;
  /** Seed of Python's `random` (default 42); seeded once per call, i.e. once per metric. */
  seed?: number;
}

export interface LapsSubset {
  /** 0-based iteration index. */
  iteration: number;
  /** The subset's texts in the order the reference code iterates them. */
  texts: string[];
}

export const LAPS_DEFAULTS = { iterations: 100, tokenBudget: 7012, seed: 42 } as const;

function checkCount(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`lapsSubsets: ${name} must be a non-negative integer, got ${v}`);
  return v;
}

/**
 * Yields the subsets one iteration at a time (lazily, so a caller may stop early or stream
 * them into a metric). The random state carries over between iterations, as in the reference.
 *
 * Per iteration:
 * - order = `sample(messages, len(messages))`;
 * - walk `order`, keeping a message unchanged while `used + tokens <= tokenBudget`
 *   (tokens = `len(text.split())`, computed once per message for the whole call);
 * - the first message that does not fit is cut to its first `tokenBudget - used` tokens
 *   joined with single spaces, appended, and ends the subset. When exactly 0 tokens remain
 *   the cut text is '' and it is still appended (that is what slicing `split()[:0]` and
 *   joining gives in the reference reading); metrics then see an empty message;
 * - if every message fits, the subset is all messages in shuffled order;
 * - stream 'self_bleu': if the subset has more than one message, it is returned in the
 *   order of `sample(subset, len(subset))`.
 *
 * Texts are the original strings (no lowercasing or other preprocessing) except the cut one.
 */
export function lapsSubsetIterator(messages: readonly string[], stream: LapsStream, options: LapsOptions = {}): Generator<LapsSubset, void, undefined> {
  // Validate eagerly; a generator body would only throw on the first next().
  const iterations = checkCount('iterations', options.iterations ?? LAPS_DEFAULTS.iterations);
  const budget = checkCount('tokenBudget', options.tokenBudget ?? LAPS_DEFAULTS.tokenBudget);
  const seed = options.seed ?? LAPS_DEFAULTS.seed;
  if (stream !== 'dist' && stream !== 'self_bleu') throw new RangeError(`lapsSubsets: unknown stream ${String(stream)}`);

  return generateSubsets(messages, stream, iterations, budget, seed);
}

function* generateSubsets(
  messages: readonly string[],
  stream: LapsStream,
  iterations: number,
  budget: number,
  seed: number,
): Generator<LapsSubset, void, undefined> {
  const n = messages.length;
  const counts = new Int32Array(n);
  for (let i = 0; i < n; i++) counts[i] = pythonSplitCount(messages[i]!);
  const rng = new PythonRandom(seed);

  for (let iteration = 0; iteration < iterations; iteration++) {
    // The full permutation must always be drawn: it fixes the stream for later iterations,
    // even though only its prefix is used.
    const order = rng.sampleIndices(n, n);
    const texts: string[] = [];
    let used = 0;
    for (let p = 0; p < n; p++) {
      const idx = order[p]!;
      const c = counts[idx]!;
      if (used + c <= budget) {
        texts.push(messages[idx]!);
        used += c;
      } else {
        texts.push(
          pythonSplit(messages[idx]!)
            .slice(0, budget - used)
            .join(' '),
        );
        break;
      }
    }
    if (stream === 'self_bleu' && texts.length > 1) {
      const perm = rng.sampleIndices(texts.length, texts.length);
      const shuffled = new Array<string>(texts.length);
      for (let i = 0; i < perm.length; i++) shuffled[i] = texts[perm[i]!]!;
      yield { iteration, texts: shuffled };
    } else {
      yield { iteration, texts };
    }
  }
}

/** All subsets of one call, as an array (see `lapsSubsetIterator` for the procedure). */
export function lapsSubsets(messages: readonly string[], stream: LapsStream, options: LapsOptions = {}): LapsSubset[] {
  return Array.from(lapsSubsetIterator(messages, stream, options));
}
