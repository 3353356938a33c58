/**
 * Parsing of the PersonaLens judge's replies (protocol, "Judge agent J"; the output formats are
 * the ones pipelines/prompts/personalens/judge-*.md ask for).
 *
 * The rule: parsing never invents a score. It is tolerant of formatting variants (markdown
 * emphasis, headings, bullets, case, CRLF, `3/4`, `3 out of 4`, `3.0`, `[3]`, missing or unclosed
 * `<response>` tags) and strict about range and ambiguity. A reply that does not parse yields
 * `{ ok: false, error }` with a reason; the caller stores the raw text, leaves it out of means and
 * may ask again. `parseJudgment` never throws.
 *
 * Rules (see also test/fixtures/judge-replies/, one reply per file):
 * - Region. If the reply contains `<response>` (case-insensitive), only the text inside the
 *   response block(s) is read; an unclosed block runs to the end of the reply. Several blocks are
 *   read together (so they must agree). Stray `</response>` tags are dropped.
 * - Label at the start of a line. "Line start" allows leading whitespace, markdown headings
 *   (`#`), blockquotes (`>`), bullets (`-`, `*`, `+`, `•`), numbered items (`1.`) and emphasis
 *   (`*`, `_`, backticks). An optional qualifier word may precede the label:
 *   `Overall|Final|User|Assistant('s)`.
 * - Score labels: `<Dimension> Score:` (Personalization, also spelled Personalisation;
 *   Naturalness; Coherence), case-insensitive, with emphasis around or inside the label and an
 *   optional parenthesis before the colon (`Personalization Score (1-4):`). If nothing follows
 *   the colon on that line, the value is read from the next non-blank line (a bold heading with
 *   the number under it).
 * - Values: `3`, `3/4` and `3 out of 4` (denominator must equal the scale's maximum), `3.0`
 *   (whole only: `3.5` is "not a whole number"), `[3]`, `(3)`, `<3>`, `**3**`. Anything may follow
 *   the value (`3 (STRONG)`), except a second number that makes it ambiguous (`2-3`, `3 or 4`,
 *   `3, 4`). Out of range is an error ("out of range 1-4").
 * - Which label counts: the FIRST labelled score at line start wins; every later labelled score
 *   at line start must give the same value, otherwise "conflicting scores" (the same value twice
 *   is fine). Labelled scores inside a sentence ("a Personalization Score: 4 would require ...")
 *   are ignored whenever a line-start label exists. With no line-start label, a labelled score
 *   inside a sentence is accepted only if it ends its sentence or line ("..., so my final
 *   Coherence Score: 4."); several such must agree. A bare `Score:` at line start is accepted only
 *   if no label of this dimension exists anywhere and it is the only `Score:` in the region. A
 *   label of another dimension is not accepted (the error names it). A score mentioned only in
 *   prose ("I would give it a 3") is an error.
 * - Task completion: `VERDICT: True|False` by the same line-start / conflict rules (qualifier
 *   `Final` allowed, emphasis and quotes around label and value, trailing punctuation). Values
 *   other than True/False ("Yes", "No", "Partially") are an error; `True/False` is ambiguous; two
 *   line-start verdicts that disagree are "conflicting verdicts"; none is "no VERDICT line".
 *   score is 1 for True, 0 for False.
 * - Justification. Task completion: text after the first `EXPLANATION:` up to a line-start
 *   VERDICT line, trimmed ('' if absent; still ok). Personalization: the `Justification:`
 *   section up to the next known heading (Key Observations / Justification / Improvement
 *   Suggestions / Personalization Score) or the end; if absent or empty, the whole region trimmed
 *   (the response block's content when tags are present). Naturalness and coherence: text after
 *   `Justification:` up to a line-start score label; if absent, the rest of the reply after the
 *   score value (rest of that line and the lines below); if that is empty, the text before the
 *   score line; '' if the reply holds only the score.
 */

export type JudgeDimension = 'task_completion' | 'personalization' | 'naturalness' | 'coherence';

type ScoreDimension = Exclude<JudgeDimension, 'task_completion'>;

export const SCORE_RANGES: { personalization: [1, 4]; naturalness: [1, 5]; coherence: [1, 5] } = Object.freeze({
  personalization: [1, 4],
  naturalness: [1, 5],
  coherence: [1, 5],
});

export type ParsedJudgment =
  | { ok: true; dimension: 'task_completion'; verdict: boolean; score: 0 | 1; justification: string }
  | { ok: true; dimension: 'personalization' | 'naturalness' | 'coherence'; score: number; justification: string }
  | { ok: false; dimension: JudgeDimension; error: string };

const DIMENSIONS: readonly string[] = ['task_completion', 'personalization', 'naturalness', 'coherence'];

const LABEL: Record<ScoreDimension, string> = {
  personalization: 'Personalization',
  naturalness: 'Naturalness',
  coherence: 'Coherence',
};

const DIMENSION_PATTERN: Record<ScoreDimension, string> = {
  personalization: 'personali[sz]ation',
  naturalness: 'naturalness',
  coherence: 'coherence',
};
const ANY_DIMENSION_PATTERN = 'personali[sz]ation|naturalness|coherence';

/** Word boundaries before (BS) and after (BE) a word that, unlike `\b`, treat `_` (emphasis) as a non-word character. */
const BS = '(?<![A-Za-z0-9])';
const BE = '(?![A-Za-z0-9])';
/** Emphasis and white space that may sit between the words of a label and around its colon. */
const E = '[*_`\\s]';
/** An optional parenthesis before the colon, e.g. `(1-4)`. */
const PAREN = `(?:\\([^)\\n]{0,40}\\)${E}*)?`;
const QUALIFIER = `(?:${BS}(?:overall|final|user|assistant)(?:'s|’s)?${E}+)?`;

const scoreLabelRe = (dimensionPattern: string): RegExp => new RegExp(`${QUALIFIER}${BS}(${dimensionPattern})${E}+score${BE}${E}*${PAREN}:`, 'gi');
/** Every `Score:` (labelled or not), for the bare-label rule. */
const ANY_SCORE_COLON = new RegExp(`${BS}scores?${BE}${E}*${PAREN}:`, 'gi');
const BARE_SCORE_AT_START = new RegExp(`^score${BE}${E}*${PAREN}:`, 'i');
const VERDICT_LABEL = new RegExp(`(?:${BS}final${E}+)?${BS}verdict${BE}${E}*:`, 'gi');
const VERDICT_AT_START = new RegExp(`^(?:final${E}+)?verdict${BE}${E}*:`, 'i');
const EXPLANATION_LABEL = new RegExp(`${BS}explanation${BE}${E}*:`, 'i');
const JUSTIFICATION_AT_START = new RegExp(`^justifications?${BE}${E}*(?::|$)`, 'i');
const PERSONALIZATION_HEADING = new RegExp(
  `^(?:key${E}+observations?|justifications?|improvement${E}+suggestions?|suggestions${E}+for${E}+improvement|${QUALIFIER}personali[sz]ation${E}+score)${BE}${E}*${PAREN}(?::|$)`,
  'i',
);
const ANY_SCORE_AT_START = new RegExp(`^(?:${QUALIFIER}(?:${ANY_DIMENSION_PATTERN})${E}+)?score${BE}${E}*${PAREN}:`, 'i');

/** One token of a line's markdown prefix: white space, heading, quote, bullet, number, emphasis. */
const PREFIX_TOKEN = /(?:\s+|#{1,6}(?=\s|$)|>|[-+•*](?=\s)|\d{1,2}[.)](?=\s)|[*_`~]+)/y;

function prefixLength(line: string): number {
  let i = 0;
  for (;;) {
    PREFIX_TOKEN.lastIndex = i;
    const m = PREFIX_TOKEN.exec(line);
    if (!m || m[0].length === 0) return i;
    i += m[0].length;
  }
}

const stripped = (line: string): string => line.slice(prefixLength(line));

function normalise(reply: string): string {
  return reply
    .replace(/\r\n?/g, '\n')
    .replace(/[\uFEFF\u200B-\u200D\u2060]/g, '')
    .replace(/[\u00A0\u2000-\u200A\u202F\u205F\u3000\t]/g, ' ')
    .replace(/\uFF1A/g, ':');
}

interface Region {
  text: string;
  tagged: boolean;
}

/** The text the judgment is read from: inside `<response>` blocks when there are any. */
function responseRegion(text: string): Region {
  const open = /<\s*response\s*>/i;
  const close = /<\s*\/\s*response\s*>/i;
  const anyTag = /<\s*\/?\s*response\s*>/gi;
  if (!open.test(text)) return { text: text.replace(anyTag, ''), tagged: false };
  const parts: string[] = [];
  let rest = text;
  for (;;) {
    const o = open.exec(rest);
    if (!o) break;
    rest = rest.slice(o.index + o[0].length);
    const c = close.exec(rest);
    if (!c) {
      parts.push(rest);
      break;
    }
    parts.push(rest.slice(0, c.index));
    rest = rest.slice(c.index + c[0].length);
  }
  return { text: parts.join('\n').replace(anyTag, ''), tagged: true };
}

const snippet = (s: string): string => {
  const t = s.trim().replace(/\s+/g, ' ');
  return JSON.stringify(t.length > 40 ? `${t.slice(0, 40)}...` : t);
};

// ---------------------------------------------------------------------------------------------
// Values

type ValueParse<T> =
  | { kind: 'ok'; value: T; rest: string }
  | { kind: 'error'; error: string; rest: string }
  | { kind: 'empty' }
  | { kind: 'nan'; text: string };

const LEADING_WRAP = /^[\s*_`"'“‘<[(~]+/;
const TRAILING_WRAP = /^[*_`"'”’>\])~]+/;

function parseScoreValue(raw: string, dimension: ScoreDimension): ValueParse<number> {
  const [min, max] = SCORE_RANGES[dimension];
  let s = raw.replace(LEADING_WRAP, '');
  if (s.trim() === '') return { kind: 'empty' };
  const num = /^([+-]?\d+(?:\.\d+)?)(?!\d)/.exec(s);
  if (!num) return { kind: 'nan', text: s };
  const token = num[1]!;
  s = s.slice(num[0].length).replace(TRAILING_WRAP, '');
  let denominator: string | undefined;
  const den = /^\s*\(?\s*(?:\/|out\s+of\b)\s*[*_`[]*\s*(\d+(?:\.\d+)?)(?!\d)[*_`\])]*\)?/i.exec(s);
  if (den) {
    denominator = den[1]!;
    s = s.slice(den[0].length);
  }
  const rest = s;
  if (/^\s*(?:-|–|—|~|to\b|or\b|and\b|,|\/)\s*[*_`[(]*\s*[+-]?\d/i.test(rest)) {
    return { kind: 'error', error: `ambiguous ${LABEL[dimension]} Score value ${snippet(token + rest)}`, rest };
  }
  if (!/^[+-]?\d+(?:\.0+)?$/.test(token)) {
    return { kind: 'error', error: `${LABEL[dimension]} Score ${token} is not a whole number`, rest };
  }
  const value = Number(token);
  if (denominator !== undefined) {
    if (!/^\d+(?:\.0+)?$/.test(denominator) || Number(denominator) !== max) {
      return {
        kind: 'error',
        error: `${LABEL[dimension]} Score given as ${token}/${denominator}, but the denominator must be ${max} (scale ${min}-${max})`,
        rest,
      };
    }
  }
  if (!(value >= min && value <= max)) {
    return { kind: 'error', error: `${LABEL[dimension]} Score ${token} is out of range ${min}-${max}`, rest };
  }
  return { kind: 'ok', value, rest };
}

function parseVerdictValue(raw: string): ValueParse<boolean> {
  const s = raw.replace(LEADING_WRAP, '');
  if (s.trim() === '') return { kind: 'empty' };
  const word = /^([A-Za-z]+)/.exec(s);
  if (!word) return { kind: 'nan', text: s };
  const w = word[1]!;
  const rest = s.slice(word[0].length).replace(TRAILING_WRAP, '');
  const lower = w.toLowerCase();
  if (lower !== 'true' && lower !== 'false') {
    return { kind: 'error', error: `VERDICT value "${w}" is not True or False`, rest };
  }
  if (/^\s*(?:\/|\||or\b|and\b|,)\s*[*_`"'[(]*\s*(?:true|false)\b/i.test(rest)) {
    return { kind: 'error', error: `ambiguous VERDICT value ${snippet(w + rest)}`, rest };
  }
  return { kind: 'ok', value: lower === 'true', rest };
}

/** After the value, only closing marks and the end of the line or of the sentence. */
const isTerminal = (rest: string): boolean => /^[\s*_`"'”’)\]>]*(?:[.!]|$)/.test(rest);

// ---------------------------------------------------------------------------------------------
// Finding labelled values

interface Occurrence<T> {
  /** Index of the line holding the label. */
  line: number;
  /** Index of the line holding the value (the next non-blank line when the label's is empty). */
  valueLine: number;
  lineStart: boolean;
  /** The label text as written, for messages. */
  label: string;
  parse: ValueParse<T>;
}

function findOccurrences<T>(lines: string[], label: RegExp, parseValue: (raw: string) => ValueParse<T>): Occurrence<T>[] {
  const found: Occurrence<T>[] = [];
  lines.forEach((line, i) => {
    const start = prefixLength(line);
    for (const m of line.matchAll(new RegExp(label.source, label.flags))) {
      const lineStart = m.index === start;
      let parse = parseValue(line.slice(m.index + m[0].length));
      let valueLine = i;
      if (parse.kind === 'empty' && lineStart) {
        let j = i + 1;
        while (j < lines.length && lines[j]!.trim() === '') j++;
        if (j < lines.length) {
          parse = parseValue(lines[j]!);
          valueLine = j;
        }
      }
      found.push({ line: i, valueLine, lineStart, label: m[0].replace(/[*_`:\s]+$/, '').replace(/^[*_`\s]+/, ''), parse });
    }
  });
  return found;
}

type Resolved<T> = { ok: true; value: T; at: Occurrence<T> } | { ok: false; error: string } | { ok: 'none'; inlineOnly: boolean };

function describeFailure<T>(o: Occurrence<T>): string {
  switch (o.parse.kind) {
    case 'error':
      return o.parse.error;
    case 'empty':
      return `${o.label} has no value`;
    case 'nan':
      return `${o.label} value ${snippet(o.parse.text)} is not a number`;
    default:
      return '';
  }
}

const show = (v: unknown): string => (typeof v === 'boolean' ? (v ? 'True' : 'False') : String(v));

/**
 * The first line-start occurrence decides and later line-start ones must agree; without any, the
 * in-sentence occurrences that end their sentence decide, and must agree.
 */
function resolve<T>(found: Occurrence<T>[], conflict: string): Resolved<T> {
  const atStart = found.filter((o) => o.lineStart);
  const pool = atStart.length > 0 ? atStart : found.filter((o) => (o.parse.kind === 'ok' || o.parse.kind === 'error') && isTerminal(o.parse.rest));
  const first = pool[0];
  if (!first) return { ok: 'none', inlineOnly: found.length > 0 };
  if (first.parse.kind !== 'ok') return { ok: false, error: describeFailure(first) };
  const value = first.parse.value;
  for (const later of pool.slice(1)) {
    if (later.parse.kind !== 'ok' || later.parse.value !== value) {
      const other = later.parse.kind === 'ok' ? show(later.parse.value) : describeFailure(later);
      return {
        ok: false,
        error: `${conflict}: ${show(value)} (line ${first.line + 1}) and ${other} (line ${later.line + 1})`,
      };
    }
  }
  return { ok: true, value, at: first };
}

// ---------------------------------------------------------------------------------------------
// Justifications

/** Trims, and drops emphasis or a colon left over from the label (`**Justification:** text`). */
const cleanText = (s: string): string => s.replace(/^[\s*_`:]+/, '').trim();

/** Text after the label on line `from` (from column `col`), up to a line that `stop` matches. */
function section(lines: string[], from: number, col: number, stop: (strippedLine: string) => boolean): string {
  const out = [lines[from]!.slice(col)];
  for (let i = from + 1; i < lines.length; i++) {
    if (stop(stripped(lines[i]!))) break;
    out.push(lines[i]!);
  }
  return cleanText(out.join('\n'));
}

function labelledSection(lines: string[], label: RegExp, stop: (strippedLine: string) => boolean): string | undefined {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const start = prefixLength(line);
    const m = label.exec(line.slice(start));
    if (m) return section(lines, i, start + m[0].length, stop);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Dimensions

function parseVerdict(region: Region): ParsedJudgment {
  const dimension = 'task_completion';
  const lines = region.text.split('\n');
  const r = resolve(findOccurrences(lines, VERDICT_LABEL, parseVerdictValue), 'conflicting verdicts');
  if (r.ok === 'none') {
    const where = region.tagged ? ' inside <response>' : '';
    return {
      ok: false,
      dimension,
      error: r.inlineOnly ? `no VERDICT line${where} (VERDICT appears only inside a sentence)` : `no VERDICT line${where}`,
    };
  }
  if (r.ok === false) return { ok: false, dimension, error: r.error };
  let justification = '';
  for (let i = 0; i < lines.length; i++) {
    const m = EXPLANATION_LABEL.exec(lines[i]!);
    if (m) {
      justification = section(lines, i, m.index + m[0].length, (s) => VERDICT_AT_START.test(s));
      break;
    }
  }
  return { ok: true, dimension, verdict: r.value, score: r.value ? 1 : 0, justification };
}

function parseScore(dimension: ScoreDimension, region: Region): ParsedJudgment {
  const lines = region.text.split('\n');
  const parseValue = (raw: string) => parseScoreValue(raw, dimension);
  const where = region.tagged ? ' inside <response>' : '';
  let r = resolve(findOccurrences(lines, scoreLabelRe(DIMENSION_PATTERN[dimension]), parseValue), 'conflicting scores');
  if (r.ok === 'none') {
    const labelled = r.inlineOnly;
    const others = findOccurrences(lines, scoreLabelRe(ANY_DIMENSION_PATTERN), () => ({ kind: 'empty' }) as const)
      .map((o) => o.label)
      .filter((l) => !new RegExp(DIMENSION_PATTERN[dimension], 'i').test(l));
    const colons = region.text.match(ANY_SCORE_COLON)?.length ?? 0;
    const bare = findOccurrences(lines, ANY_SCORE_COLON, parseValue).filter((o) => o.lineStart && BARE_SCORE_AT_START.test(stripped(lines[o.line]!)));
    if (!labelled && others.length === 0 && colons === 1 && bare.length === 1) {
      r = resolve(bare, 'conflicting scores');
    } else {
      let why = `no ${LABEL[dimension]} Score label${where}`;
      if (labelled) why += ' at the start of a line (a labelled score inside a sentence counts only when it ends the sentence)';
      else if (others.length > 0) why += ` (found ${[...new Set(others)].map((o) => JSON.stringify(o)).join(', ')} instead)`;
      else if (bare.length > 0 || colons > 1) why += ` (an unlabelled "Score:" counts only when it is the only one; found ${colons})`;
      return { ok: false, dimension, error: why };
    }
  }
  if (r.ok === 'none') return { ok: false, dimension, error: `no ${LABEL[dimension]} Score label${where}` };
  if (r.ok === false) return { ok: false, dimension, error: r.error };
  return { ok: true, dimension, score: r.value, justification: scoreJustification(dimension, lines, r.at) };
}

function scoreJustification(dimension: ScoreDimension, lines: string[], at: Occurrence<number>): string {
  if (dimension === 'personalization') {
    const text = labelledSection(lines, JUSTIFICATION_AT_START, (s) => PERSONALIZATION_HEADING.test(s));
    return text || cleanText(lines.join('\n'));
  }
  const text = labelledSection(lines, JUSTIFICATION_AT_START, (s) => ANY_SCORE_AT_START.test(s) || JUSTIFICATION_AT_START.test(s));
  if (text) return text;
  const restOfLine = at.parse.kind === 'ok' ? at.parse.rest : '';
  // The rest of the score line loses its joining punctuation: `4 - The user ...`, `4. The user ...`.
  const after = cleanText([restOfLine.replace(/^\s*(?:[.,;:)\]]+|[-–—](?=\s))\s*/, ''), ...lines.slice(at.valueLine + 1)].join('\n'));
  if (after) return after;
  return cleanText(lines.slice(0, at.line).join('\n'));
}

/**
 * Parses one judge reply for one dimension. Never throws; a reply that does not yield exactly
 * one in-range score (or verdict) gives `{ ok: false, error }`.
 */
export function parseJudgment(dimension: JudgeDimension, reply: string): ParsedJudgment {
  try {
    if (typeof dimension !== 'string' || !DIMENSIONS.includes(dimension)) {
      return { ok: false, dimension, error: `unknown judge dimension ${safeString(dimension)}` };
    }
    if (typeof reply !== 'string') return { ok: false, dimension, error: `reply is not a string (${typeof reply})` };
    const text = normalise(reply);
    if (text.trim() === '') return { ok: false, dimension, error: 'empty reply' };
    const region = responseRegion(text);
    if (region.text.trim() === '') return { ok: false, dimension, error: 'empty <response> block' };
    return dimension === 'task_completion' ? parseVerdict(region) : parseScore(dimension, region);
  } catch (e) {
    return { ok: false, dimension, error: `internal parse error: ${safeString(e)}` };
  }
}

function safeString(v: unknown): string {
  try {
    return v instanceof Error ? v.message : (JSON.stringify(v) ?? String(v));
  } catch {
    return '(unprintable)';
  }
}

// ---------------------------------------------------------------------------------------------
// Chain of turn: one reply, one personalization score per assistant turn (paper Figure 5)

export type ParsedChainJudgment =
  | { ok: true; dimension: 'personalization_chain'; scores: number[]; justification: string }
  | { ok: false; dimension: 'personalization_chain'; error: string };

/** `Turn N Personalization Score:` at the start of a line; N is captured. Separators after N (`-`, `:`, `.`, `)`) are allowed. */
const TURN_SCORE_AT_START = new RegExp(`^turn${E}*(\\d+)${E}*(?:[-–—:.,)]${E}*)?${QUALIFIER}personali[sz]ation${E}+score${BE}${E}*${PAREN}:`, 'i');

/**
 * Parses a chain-of-turn personalization reply: inside `<response>` (when present), one line
 * `Turn N Personalization Score: S` per assistant turn, N from 1 to `assistantTurns`, S a whole
 * number 1-4 (values read as for the single score: `3`, `3/4`, `**3**`, ...). Only labels at the
 * start of a line count. The reply parses only when every assistant turn has exactly one score:
 * a missing turn, a turn the dialogue does not have, a bad value, or two different scores for
 * one turn make the whole reply a parse error (never a partial list of scores). Never throws.
 */
export function parseChainJudgment(reply: string, assistantTurns: number): ParsedChainJudgment {
  const dimension = 'personalization_chain';
  try {
    if (!Number.isInteger(assistantTurns) || assistantTurns < 1)
      return { ok: false, dimension, error: `the dialogue has no assistant turn to score (${assistantTurns})` };
    if (typeof reply !== 'string') return { ok: false, dimension, error: `reply is not a string (${typeof reply})` };
    const text = normalise(reply);
    if (text.trim() === '') return { ok: false, dimension, error: 'empty reply' };
    const region = responseRegion(text);
    if (region.text.trim() === '') return { ok: false, dimension, error: 'empty <response> block' };
    const lines = region.text.split('\n');
    const scores = new Map<number, { value: number; line: number }>();
    for (let i = 0; i < lines.length; i++) {
      const s = stripped(lines[i]!);
      const m = TURN_SCORE_AT_START.exec(s);
      if (!m) continue;
      const turn = Number(m[1]);
      let parse = parseScoreValue(s.slice(m[0].length), 'personalization');
      if (parse.kind === 'empty') {
        // A heading with the value on the next non-blank line, as for the single score.
        let j = i + 1;
        while (j < lines.length && lines[j]!.trim() === '') j++;
        if (j < lines.length) parse = parseScoreValue(lines[j]!, 'personalization');
      }
      if (parse.kind === 'error') return { ok: false, dimension, error: `turn ${turn}: ${parse.error}` };
      if (parse.kind === 'empty') return { ok: false, dimension, error: `turn ${turn}: Personalization Score has no value` };
      if (parse.kind === 'nan') return { ok: false, dimension, error: `turn ${turn}: Personalization Score value ${snippet(parse.text)} is not a number` };
      if (turn < 1 || turn > assistantTurns) {
        return { ok: false, dimension, error: `turn ${turn} (line ${i + 1}) is not an assistant turn of this dialogue, which has ${assistantTurns}` };
      }
      const before = scores.get(turn);
      if (before && before.value !== parse.value) {
        return {
          ok: false,
          dimension,
          error: `conflicting scores for turn ${turn}: ${before.value} (line ${before.line + 1}) and ${parse.value} (line ${i + 1})`,
        };
      }
      if (!before) scores.set(turn, { value: parse.value, line: i });
    }
    const where = region.tagged ? ' inside <response>' : '';
    if (scores.size === 0) {
      const single = findOccurrences(lines, scoreLabelRe(DIMENSION_PATTERN.personalization), () => ({ kind: 'empty' }) as const).some((o) => o.lineStart);
      return {
        ok: false,
        dimension,
        error: single
          ? `a Personalization Score without turn numbers${where}; expected one "Turn N Personalization Score:" line for each of the ${assistantTurns} assistant turn(s)`
          : `no "Turn N Personalization Score:" line${where}`,
      };
    }
    const missing = Array.from({ length: assistantTurns }, (_, k) => k + 1).filter((t) => !scores.has(t));
    if (missing.length > 0) {
      return {
        ok: false,
        dimension,
        error: `scores for ${scores.size} of the dialogue's ${assistantTurns} assistant turns; none for turn ${missing.join(', ')}`,
      };
    }
    const justification =
      labelledSection(lines, JUSTIFICATION_AT_START, (s) => PERSONALIZATION_HEADING.test(s) || TURN_SCORE_AT_START.test(s)) ||
      cleanText(lines.filter((l) => !TURN_SCORE_AT_START.test(stripped(l))).join('\n'));
    return { ok: true, dimension, scores: Array.from({ length: assistantTurns }, (_, k) => scores.get(k + 1)!.value), justification };
  } catch (e) {
    return { ok: false, dimension, error: `internal parse error: ${safeString(e)}` };
  }
}
