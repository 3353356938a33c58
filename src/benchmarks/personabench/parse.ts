/**
 * Reply parsers for tasks 3.1 and 3.2, one per variant the original evaluators use
 * (spec §2.1.5, §2.2.5, §4.2b.9). Python's `re` and `float()` semantics are spelled out:
 * `\b`, `\w` and `\d` are Unicode-aware, and `float()` accepts any Unicode decimal digits
 * (full-width "１２" is 12), underscores between digits, exponents, inf and nan.
 * A reply that does not parse is its own state, never a score.
 */

export type Parsed<T> = { state: 'parsed'; value: T } | { state: 'unparsed'; reason: string };

export type SignParser = 'strict' | 'last-match';
export type ImpactParser = 'float-then-last-number' | 'float-only' | 'last-match';

const PY_SPACE = '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
const W = '[\\p{L}\\p{N}_]';
const BEFORE_WORD = `(?<!${W})`;
const AFTER_WORD = `(?!${W})`;
const STRIP = new RegExp(`^${PY_SPACE}+|${PY_SPACE}+$`, 'gu');

const pyStrip = (text: string): string => text.replace(STRIP, '');

/** `re.sub(r'<think>.*?</think>', '', text, flags=re.DOTALL)`: only closed blocks go. */
export function stripThink(text: string): string {
  return text.replace(/<think>[\s\S]*?<\/think>/g, '');
}

const SIGN_WORD = new RegExp(`${BEFORE_WORD}(positive|negative)${AFTER_WORD}`, 'giu');

/**
 * 3.1. `strict` (3.1/GPT.py, Claude.py): the stripped, lower-cased reply must be exactly
 * "positive" or "negative". `last-match` (LogEval3.1): drop <think> blocks, take the last
 * whole-word, case-insensitive "positive"/"negative".
 */
export function parseSign(reply: string, parser: SignParser): Parsed<'positive' | 'negative'> {
  if (parser === 'strict') {
    const text = pyStrip(reply).toLowerCase();
    return text === 'positive' || text === 'negative'
      ? { state: 'parsed', value: text }
      : { state: 'unparsed', reason: 'not exactly "positive" or "negative"' };
  }
  const matches = [...stripThink(reply).matchAll(SIGN_WORD)];
  const last = matches[matches.length - 1];
  return last
    ? { state: 'parsed', value: last[1]!.toLowerCase() as 'positive' | 'negative' }
    : { state: 'unparsed', reason: 'no "positive" or "negative" word' };
}

/** Converts Unicode decimal digits to ASCII (Python's float() and int() accept them). */
function asciiDigits(text: string): string {
  return text.replace(/\p{Nd}/gu, (digit) => {
    if (digit >= '0' && digit <= '9') return digit;
    // Decimal digits come in runs of ten: count back to the run's zero.
    let cp = digit.codePointAt(0)!;
    let steps = 0;
    while (/\p{Nd}/u.test(String.fromCodePoint(cp - 1))) {
      cp--;
      steps++;
    }
    return String(steps % 10);
  });
}

const PY_FLOAT = /^[+-]?(?:(?:\d(?:_?\d)*)(?:\.(?:\d(?:_?\d)*)?)?|\.\d(?:_?\d)*)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const PY_FLOAT_SPECIAL = /^[+-]?(?:inf|infinity|nan)$/i;

/** Python `float(text)`, or null where it raises ValueError. */
export function pythonFloat(text: string): number | null {
  const s = asciiDigits(pyStrip(text));
  if (PY_FLOAT.test(s)) return Number(s.replace(/_/g, ''));
  if (PY_FLOAT_SPECIAL.test(s)) {
    const negative = s.startsWith('-');
    if (/nan/i.test(s)) return NaN;
    return negative ? -Infinity : Infinity;
  }
  return null;
}

const API_NUMBER = new RegExp(`[-+]?${BEFORE_WORD}(?=${W})\\p{Nd}+(?:\\.\\p{Nd}+)?${AFTER_WORD}`, 'gu');
const LOG_NUMBER = /-?\p{Nd}+(?:\.\p{Nd}+)?/gu;

/**
 * 3.2. `float-then-last-number` (3.2/GPT.py; Claude in 3.2/Claude.py): `float(reply.strip())`,
 * else the last signed number standing as a word. `float-only` (GPT-4o and Gemini in
 * 3.2/Claude.py). `last-match` (LogEval3.2): drop <think> blocks, last `-?\d+(\.\d+)?`.
 */
export function parseImpact(reply: string, parser: ImpactParser): Parsed<number> {
  if (parser !== 'last-match') {
    const direct = pythonFloat(reply);
    if (direct !== null) return { state: 'parsed', value: direct };
    if (parser === 'float-only') return { state: 'unparsed', reason: 'not a number' };
    const matches = [...reply.matchAll(API_NUMBER)];
    const last = matches[matches.length - 1];
    return last ? { state: 'parsed', value: pythonFloat(last[0])! } : { state: 'unparsed', reason: 'no number' };
  }
  const matches = [...stripThink(reply).matchAll(LOG_NUMBER)];
  const last = matches[matches.length - 1];
  return last ? { state: 'parsed', value: pythonFloat(last[0])! } : { state: 'unparsed', reason: 'no number' };
}
