/**
 * `nltk.word_tokenize(text)` as the 3.3 evaluators call it on lower-cased text: the
 * English Punkt sentence splitter (NLTK 3.8/3.9 `PunktSentenceTokenizer`, after the
 * ReDoS fix) followed by `NLTKWordTokenizer` on each sentence. Python's `re` character
 * classes differ from JavaScript's (`\w`, `\s`, `\d` and `\b` are Unicode-aware there,
 * `$` also matches before a final newline), so each pattern spells the Python class out.
 *
 * Punkt parameters: the abbreviation, collocation and sentence-starter lists of NLTK's
 * `punkt_tab/english` model (NLTK Data, Apache-2.0) are embedded below. Its orthographic
 * context table is not: on lower-cased text the table only decides a break after a
 * number or an initial when the next word was seen sentence-initially in lower case and
 * never capitalised in the training corpus, which the Wall Street Journal model almost
 * never records; we treat that set as empty (docs/personabench.md).
 */

const PY_SPACE_CHARS = '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const S = `[${PY_SPACE_CHARS}]`;
const NS = `[^${PY_SPACE_CHARS}]`;
const W = '[\\p{L}\\p{N}_]';
const WORD_BEFORE = `(?<!${W})`;
const WORD_AFTER = `(?!${W})`;
const PY_SPACE = new RegExp(`^${S}$`, 'u');

const PY_SPACE_RUN = new RegExp(`${S}+`, 'u');

/** Python str.split() with no arguments. */
function pySplit(text: string): string[] {
  return text.split(PY_SPACE_RUN).filter((part) => part !== '');
}

function pyRstrip(text: string): string {
  let end = text.length;
  while (end > 0 && PY_SPACE.test(text[end - 1]!)) end--;
  return text.slice(0, end);
}

function pyStrip(text: string): string {
  let start = 0;
  while (start < text.length && PY_SPACE.test(text[start]!)) start++;
  return pyRstrip(text.slice(start));
}

// ---------------------------------------------------------------------------------------
// Punkt (English model parameters)

const ABBREVIATIONS = new Set(
  'ct m.j t a.c n.h ms p.a.m dr pa p.m u.k st dec u.s.a lt g.k adm p h.m ga tenn yr sen n.c j.j d.h s.g inc vs s.p.a a.t n feb sr jan s.a.y n.y col g.f c.o.m.b d ft va r.k e.f chg r.i a.g minn a.h k n.j m l.f f.j gen i.m.s s.a aug j.p okla m.d.c ltd oct s vt r.a j.c ariz w.w b.v ore h w.r e.h mrs cie corp w n.v a.d r.j ok e.m w.c ill nov u.s prof conn u.s.s.r mg f.g ph.d g calif messrs h.f wash tues sw bros u.n l wis mr sep d.c ave e.l co s.s reps c r.t h.c r wed a.s v fla jr r.h c.v m.b.a rep a.a e c.i.t l.a b.f j.b d.w j.k ala f w.va sept mich n.m j.r l.p s.c colo fri a.m g.d kan maj ky a.m.e n.d t.j cos nev'.split(
    ' ',
  ),
);

const COLLOCATIONS = new Set(
  '##number## international|##number## rj|##number## commodities|##number## cooper|b stewart|##number## genentech|##number## wedgestone|i toussie|##number## pepper|j fialka|o ludcke|##number## insider|##number## aes|i magnin|##number## credit|##number## corrections|##number## financing|##number## henley|##number## business|##number## pay-fone|b wigton|b edelman|b levine|##number## leisure|b smith|j walter|##number## pegasus|##number## dividend|j aron|##number## review|##number## abreast|##number## who|##number## letters|##number## colgate|##number## cbot|##number## notable|##number## zimmer'
    .split('|')
    .map((pair) => pair.replace(' ', '\u0000')),
);

const SENTENCE_STARTERS = new Set(
  'most he since so both these it nevertheless this indeed however instead under similarly some though while when in despite although nonetheless thus there if the nor separately moreover but they yet many according sales among meanwhile even i'.split(
    ' ',
  ),
);

/** Orthographic context flags (see module comment: empty for the lower-cased text scored here). */
const ORTHO_CONTEXT = new Map<string, number>();
const ORTHO_BEG_UC = 1 << 1;
const ORTHO_MID_UC = 1 << 2;
const ORTHO_UNK_UC = 1 << 3;
const ORTHO_BEG_LC = 1 << 4;
const ORTHO_MID_LC = 1 << 5;
const ORTHO_UNK_LC = 1 << 6;
const ORTHO_UC = ORTHO_BEG_UC | ORTHO_MID_UC | ORTHO_UNK_UC;
const ORTHO_LC = ORTHO_BEG_LC | ORTHO_MID_LC | ORTHO_UNK_LC;

const NON_WORD_CHARS = `(?:[)";}\\]*:@'({\\[?!])`;
const MULTI_CHAR_PUNCT = `(?:-{2,}|\\.{2,}|(?:\\.${S}){2,}\\.)`;
const WORD_START = `[^("\`{\\[:;&#*@)}\\]\\-,]`;
const PUNKT_WORD = new RegExp(
  `${MULTI_CHAR_PUNCT}|(?=${WORD_START})${NS}+?(?=${S}|$|${NON_WORD_CHARS}|${MULTI_CHAR_PUNCT}|,(?=$|${S}|${NON_WORD_CHARS}|${MULTI_CHAR_PUNCT}))|${NS}`,
  'gu',
);
const PERIOD_CONTEXT = new RegExp(`[.?!](?=(?<after_tok>${NON_WORD_CHARS}|${S}+(?<next_tok>${NS}+)))`, 'gdu');
const RE_NUMERIC = /^-?[.,]?\p{Nd}[\p{Nd},.-]*\.?$/u;
const RE_ELLIPSIS = /^\.\.+$/;
const RE_INITIAL = /^[\p{L}\p{Nl}\p{No}_]\.$/u;
const FIRST_UPPER = /^\p{Uppercase}/u;
const FIRST_LOWER = /^\p{Lowercase}/u;
const BOUNDARY_REALIGNMENT = new RegExp(`^["')\\]}]+?(?:${S}+|(?=--)|(?=\\n|$))`, 'u');
const PUNKT_PUNCTUATION = new Set([';', ':', ',', '.', '!', '?']);

interface PunktToken {
  tok: string;
  type: string;
  periodFinal: boolean;
  sentbreak: boolean;
  abbr: boolean;
  ellipsis: boolean;
}

function punktToken(tok: string): PunktToken {
  const lowered = tok.toLowerCase();
  return { tok, type: RE_NUMERIC.test(lowered) ? '##number##' : lowered, periodFinal: tok.endsWith('.'), sentbreak: false, abbr: false, ellipsis: false };
}

function typeNoPeriod(token: PunktToken): string {
  return token.type.length > 1 && token.type.endsWith('.') ? token.type.slice(0, -1) : token.type;
}

function typeNoSentPeriod(token: PunktToken): string {
  return token.sentbreak ? typeNoPeriod(token) : token.type;
}

function tokenizeWords(text: string): PunktToken[] {
  const tokens: PunktToken[] = [];
  for (const line of text.split('\n')) {
    if (pyStrip(line) === '') continue;
    for (const match of line.matchAll(PUNKT_WORD)) tokens.push(punktToken(match[0]));
  }
  return tokens;
}

function firstPass(token: PunktToken): void {
  const tok = token.tok;
  if (tok === '.' || tok === '?' || tok === '!') token.sentbreak = true;
  else if (RE_ELLIPSIS.test(tok)) token.ellipsis = true;
  else if (token.periodFinal && !tok.endsWith('..')) {
    const stem = tok.slice(0, -1).toLowerCase();
    const parts = stem.split('-');
    if (ABBREVIATIONS.has(stem) || ABBREVIATIONS.has(parts[parts.length - 1]!)) token.abbr = true;
    else token.sentbreak = true;
  }
}

function orthoHeuristic(token: PunktToken): boolean | 'unknown' {
  if (PUNKT_PUNCTUATION.has(token.tok)) return false;
  const ortho = ORTHO_CONTEXT.get(typeNoSentPeriod(token)) ?? 0;
  if (FIRST_UPPER.test(token.tok) && ortho & ORTHO_LC && !(ortho & ORTHO_MID_UC)) return true;
  if (FIRST_LOWER.test(token.tok) && (ortho & ORTHO_UC || !(ortho & ORTHO_BEG_LC))) return false;
  return 'unknown';
}

function secondPass(token1: PunktToken, token2: PunktToken | undefined): void {
  if (token2 === undefined || !token1.periodFinal) return;
  const typ = typeNoPeriod(token1);
  const nextTyp = typeNoSentPeriod(token2);
  const isInitial = RE_INITIAL.test(token1.tok);
  if (COLLOCATIONS.has(`${typ}\u0000${nextTyp}`)) {
    token1.sentbreak = false;
    token1.abbr = true;
    return;
  }
  if ((token1.abbr || token1.ellipsis) && !isInitial) {
    const starter = orthoHeuristic(token2);
    if (starter === true) {
      token1.sentbreak = true;
      return;
    }
    if (FIRST_UPPER.test(token2.tok) && SENTENCE_STARTERS.has(nextTyp)) {
      token1.sentbreak = true;
      return;
    }
  }
  if (isInitial || typ === '##number##') {
    const starter = orthoHeuristic(token2);
    if (starter === false) {
      token1.sentbreak = false;
      token1.abbr = true;
      return;
    }
    if (starter === 'unknown' && isInitial && FIRST_UPPER.test(token2.tok) && !((ORTHO_CONTEXT.get(nextTyp) ?? 0) & ORTHO_LC)) {
      token1.sentbreak = false;
      token1.abbr = true;
    }
  }
}

function containsSentbreak(text: string): boolean {
  const tokens = tokenizeWords(text);
  for (const token of tokens) firstPass(token);
  for (let i = 0; i < tokens.length; i++) {
    secondPass(tokens[i]!, tokens[i + 1]);
    // A break counts only when some token follows it.
    if (tokens[i]!.sentbreak && i + 1 < tokens.length) return true;
  }
  return false;
}

function lastAsciiWhitespaceIndex(text: string): number {
  for (let i = text.length - 1; i >= 0; i--) if (' \t\n\r\x0b\x0c'.includes(text[i]!)) return i;
  return 0;
}

interface Span {
  start: number;
  stop: number;
}

function* potentialEndContexts(text: string): Generator<{ match: RegExpExecArray; context: string }> {
  let previousSlice: Span = { start: 0, stop: 0 };
  let previousMatch: RegExpExecArray | undefined;
  const contextOf = (slice: Span, match: RegExpExecArray): string => text.slice(slice.start, slice.stop) + match[0] + match.groups!.after_tok!;
  PERIOD_CONTEXT.lastIndex = 0;
  for (const match of text.matchAll(PERIOD_CONTEXT)) {
    const before = text.slice(previousSlice.stop, match.index);
    let afterLastSpace = lastAsciiWhitespaceIndex(before);
    afterLastSpace = afterLastSpace ? afterLastSpace + previousSlice.stop + 1 : previousSlice.start;
    const wordSlice = { start: afterLastSpace, stop: match.index };
    if (previousMatch && previousSlice.stop <= wordSlice.start) yield { match: previousMatch, context: contextOf(previousSlice, previousMatch) };
    previousMatch = match as RegExpExecArray;
    previousSlice = wordSlice;
  }
  if (previousMatch) yield { match: previousMatch, context: contextOf(previousSlice, previousMatch) };
}

/** `sent_tokenize(text)` with the English model, as spans. */
export function punktSentences(text: string): string[] {
  const slices: Span[] = [];
  let lastBreak = 0;
  for (const { match, context } of potentialEndContexts(text)) {
    if (containsSentbreak(context)) {
      const end = match.index + match[0].length;
      slices.push({ start: lastBreak, stop: end });
      const next = match.groups!.next_tok;
      lastBreak = next ? match.indices!.groups!.next_tok![0] : end;
    }
  }
  slices.push({ start: lastBreak, stop: pyRstrip(text).length });
  // _realign_boundaries: closing quotes/brackets after a break stay with the sentence before.
  const sentences: string[] = [];
  let realign = 0;
  for (let i = 0; i < slices.length; i++) {
    const first = { start: slices[i]!.start + realign, stop: slices[i]!.stop };
    const second = slices[i + 1];
    const firstText = first.start < first.stop ? text.slice(first.start, first.stop) : '';
    if (second === undefined) {
      if (firstText) sentences.push(firstText);
      continue;
    }
    const m = BOUNDARY_REALIGNMENT.exec(second.start < second.stop ? text.slice(second.start, second.stop) : '');
    if (m) {
      const stop = second.start + pyRstrip(m[0]).length;
      sentences.push(first.start < stop ? text.slice(first.start, stop) : '');
      realign = m[0].length;
    } else {
      realign = 0;
      if (firstText) sentences.push(firstText);
    }
  }
  return sentences;
}

// ---------------------------------------------------------------------------------------
// NLTKWordTokenizer (the improved Treebank tokenizer)

/**
 * A substitution and, where it helps, the characters one of which must be in the text for
 * the pattern to match at all: checking them is far cheaper than running the regex, and
 * most sentences hold none of the rarer ones. They are checked on the text as it stands
 * before the substitution, so skipping changes nothing.
 */
type Substitution = [RegExp, string, string?];
const u = (pattern: string, flags = ''): RegExp => new RegExp(pattern, `gu${flags}`);

const STARTING_QUOTES: Substitution[] = [
  [u('([«“‘„]|[`]+)'), ' $1 ', '«“‘„`'],
  [u('^"'), '``', '"'],
  [u('(``)'), ' $1 ', '`'],
  [u('([ (\\[{<])("|\'{2})'), '$1 `` ', `"'`],
  [u(`(')(?!re|ve|ll|m|t|s|d|n)(${W})${WORD_AFTER}`, 'i'), '$1 $2', "'"],
];

const PUNCTUATION: Substitution[] = [
  [u(`([^.])(\\.)([\\])}>"'»”’ ]*)${S}*$`), '$1 $2 $3 ', '.'],
  [u('([:,])([^\\p{Nd}])'), ' $1 $2', ':,'],
  [u('([:,])(?=\\n?$)'), ' $1 ', ':,'],
  [u('\\.{2,}'), ' $& ', '.'],
  [u('[;@#$%&]'), ' $& ', ';@#$%&'],
  [u(`([^.])(\\.)([\\])}>"']*)${S}*$`), '$1 $2$3 ', '.'],
  [u('[?!]'), ' $& ', '?!'],
  [u("([^'])' "), "$1 ' ", "'"],
  [u('[*]'), ' $& ', '*'],
];

const PARENS_BRACKETS: Substitution = [u('[\\][(){}<>]'), ' $& ', '[](){}<>'];
const DOUBLE_DASHES: Substitution = [u('--'), ' -- ', '-'];

const ENDING_QUOTES: Substitution[] = [
  [u('([»”’])'), ' $1 ', '»”’'],
  [u("''"), " '' ", "'"],
  [u('"'), " '' ", '"'],
  [u("([^' ])('[sS]|'[mM]|'[dD]|') "), '$1 $2 ', "'"],
  [u("([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), '$1 $2 ', "'"],
];

const CONTRACTIONS: Substitution[] = [
  ...['(can)(not)', "(d)('ye)", '(gim)(me)', '(gon)(na)', '(got)(ta)', '(lem)(me)', "(more)('n)"].map(
    (body): Substitution => [u(`${WORD_BEFORE}${body}${WORD_AFTER}`, 'i'), ' $1 $2 '],
  ),
  [u(`${WORD_BEFORE}(wan)(na)(?=${S})`, 'i'), ' $1 $2 '],
  [u(` ('t)(is)${WORD_AFTER}`, 'i'), ' $1 $2 '],
  [u(` ('t)(was)${WORD_AFTER}`, 'i'), ' $1 $2 '],
];
/** Each contraction's letters in sequence, with the same flags: no match here, none above. */
const ANY_CONTRACTION = /cannot|d'ye|gimme|gonna|gotta|lemme|more'n|wanna|'tis|'twas/iu;

function substitute(text: string, [pattern, replacement, needs]: Substitution): string {
  if (needs !== undefined) {
    let present = false;
    for (let i = 0; i < needs.length && !present; i++) present = text.includes(needs[i]!);
    if (!present) return text;
  }
  return text.replace(pattern, replacement);
}

/** `NLTKWordTokenizer().tokenize(sentence)`. */
export function treebankWordTokens(sentence: string): string[] {
  let text = sentence;
  for (const substitution of STARTING_QUOTES) text = substitute(text, substitution);
  for (const substitution of PUNCTUATION) text = substitute(text, substitution);
  text = substitute(text, PARENS_BRACKETS);
  text = substitute(text, DOUBLE_DASHES);
  text = ` ${text} `;
  for (const substitution of ENDING_QUOTES) text = substitute(text, substitution);
  if (ANY_CONTRACTION.test(text)) for (const substitution of CONTRACTIONS) text = substitute(text, substitution);
  return pySplit(text);
}

/** `nltk.word_tokenize(text)` (English Punkt sentences, then the word tokenizer). */
export function nltkWordTokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const sentence of punktSentences(text)) tokens.push(...treebankWordTokens(sentence));
  return tokens;
}
