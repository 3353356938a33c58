import { decodeHTMLStrict } from 'entities';
import { pythonStrip } from '../../core/python-whitespace.js';
import { pythonLower } from '../../metrics/porter.js';
import type { Check } from './prompts.js';

/*
 * The judge's replies are read as the original reads them: BeautifulSoup 4 (4.11) over Python's
 * html.parser (3.11), whose tree this module rebuilds step by step. html.parser lowercases tag
 * names, turns character references into characters itself (bs4 turns it off in the parser), treats
 * a `<` that starts no tag as text, and makes comments, `<!...>` declarations, `<![CDATA[...]]>`
 * sections and `<?...?>` instructions into nodes of their own. BeautifulSoup closes an end tag's
 * nearest open element of that name (an unmatched end tag is dropped but still splits the text
 * around it), keeps an unclosed element open to the end, and turns a string of ASCII whitespace
 * alone into one space or newline. Tests compare this with bs4 itself on tricky replies.
 */

/**
 * The kinds of string BeautifulSoup keeps apart: plain text, CDATA sections, comments (including
 * `<!x>` and `</1>`), processing instructions, declarations such as `<![if x]>`, doctypes, and the
 * text inside script, style, template, rt and rp elements, which bs4 gives classes of its own.
 */
type StringKind = 'text' | 'cdata' | 'comment' | 'pi' | 'declaration' | 'doctype' | 'script' | 'stylesheet' | 'template' | 'ruby-text' | 'ruby-parenthesis';
type Element = { kind: 'element'; name: string; children: Node[] };
type Node = Element | { kind: StringKind; text: string };

/** Thrown where html.parser itself gives up on the markup (an AssertionError out of BeautifulSoup in the original). */
export class MarkupRejected extends Error {
  override name = 'MarkupRejected';
}

/** Elements html.parser's tree builder closes as soon as it opens them (BeautifulSoup's void elements). */
const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'keygen',
  'link',
  'menuitem',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
  'basefont',
  'bgsound',
  'command',
  'frame',
  'image',
  'isindex',
  'nextid',
  'spacer',
]);
/** Elements whose content html.parser reads as raw text up to their end tag. */
const RAW = new Set(['script', 'style']);
/** Elements inside which BeautifulSoup keeps whitespace-only text as it is. */
const PRESERVE_WHITESPACE = new Set(['pre', 'textarea']);
/** Elements whose text BeautifulSoup stores as a string class of its own. */
const CONTAINERS = new Map<string, StringKind>([
  ['rt', 'ruby-text'],
  ['rp', 'ruby-parenthesis'],
  ['style', 'stylesheet'],
  ['script', 'script'],
  ['template', 'template'],
]);
/** The characters whose runs BeautifulSoup collapses when a string has nothing else. */
const ASCII_SPACES = new Set([' ', '\n', '\t', '\f', '\r']);

/** Python's `\s` on str (the characters `str.isspace()` accepts), as the inside of a character class. */
const WS = '\\t-\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const S = `[${WS}]`;
const at = (source: string) => new RegExp(source, 'yu');
const search = (source: string, flags = 'gu') => new RegExp(source, flags);

// html.parser's and _markupbase's patterns, with Python's whitespace class.
const TAGFIND = at(`([a-zA-Z][^\\t\\n\\r\\f />\\x00]*)(?:${S}|/(?!>))*`);
const ATTR = `(?<=['"${WS}/])[^${WS}/>][^${WS}/=>]*`;
const ATTRFIND = at(`(${ATTR})(${S}*=+${S}*('[^']*'|"[^"]*"|(?!['"])[^>${WS}]*))?(?:${S}|/(?!>))*`);
const LOCATE_STARTTAG_END = at(
  `<[a-zA-Z][^\\t\\n\\r\\f />\\x00]*(?:[${WS}/]*(?:${ATTR}(?:${S}*=+${S}*(?:'[^']*'|"[^"]*"|(?!['"])[^>${WS}]*)${S}*)?(?:${S}|/(?!>))*)*)?${S}*`,
);
const ENDTAGFIND = at(`</${S}*([a-zA-Z][-.a-zA-Z0-9:_]*)${S}*>`);
const COMMENT_CLOSE = search(`--${S}*>`);
const MARKED_SECTION_CLOSE = search(`\\]${S}*\\]${S}*>`);
const MS_MARKED_SECTION_CLOSE = search(`\\]${S}*>`);
const DECLNAME = at(`[a-zA-Z][-_.a-zA-Z0-9]*${S}*`);
// The character after a reference is looked at, not taken, so that a `;` there can be taken alone.
const CHARREF = at('&#(?:[0-9]+|[xX][0-9a-fA-F]+)(?=[^0-9a-fA-F])');
const ENTITYREF = at('&([a-zA-Z][-.a-zA-Z0-9]*)(?=[^a-zA-Z0-9])');
const INCOMPLETE = at('&[a-zA-Z#]');
/** Windows-1252's characters for bytes 0x80-0x9f, where bs4 reads a small numeric reference; its five holes stay as they are. */
const CP1252 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';

function matchAt(pattern: RegExp, input: string, index: number): RegExpExecArray | null {
  pattern.lastIndex = index;
  return pattern.exec(input);
}

function searchFrom(pattern: RegExp, input: string, index: number): RegExpExecArray | null {
  pattern.lastIndex = index;
  return pattern.exec(input);
}

/** BeautifulSoup's side: the tree, the open elements, and the text gathered since the last node. */
class TreeBuilder {
  readonly root: Element = { kind: 'element', name: '[document]', children: [] };
  private readonly open: Element[] = [this.root];
  private readonly openCount = new Map<string, number>();
  private readonly preserving: Element[] = [];
  private readonly containers: Element[] = [];
  private data: string[] = [];

  private get current(): Element {
    return this.open.at(-1)!;
  }

  handleData(text: string): void {
    this.data.push(text);
  }

  /** Ends the text gathered so far as one string node: of `kind`, or else as its container makes it. */
  endData(kind?: StringKind): void {
    if (this.data.length === 0) return;
    let text = this.data.join('');
    this.data = [];
    if (this.preserving.length === 0 && [...text].every((c) => ASCII_SPACES.has(c))) text = text.includes('\n') ? '\n' : ' ';
    const container = this.containers.at(-1);
    this.current.children.push({ kind: kind ?? (container ? CONTAINERS.get(container.name)! : 'text'), text });
  }

  startTag(name: string): void {
    this.endData();
    const element: Element = { kind: 'element', name, children: [] };
    this.current.children.push(element);
    this.open.push(element);
    this.openCount.set(name, (this.openCount.get(name) ?? 0) + 1);
    if (PRESERVE_WHITESPACE.has(name)) this.preserving.push(element);
    if (CONTAINERS.has(name)) this.containers.push(element);
  }

  /** Closes the nearest open element of that name and all inside it; nothing when none is open. */
  endTag(name: string): void {
    this.endData();
    for (let i = this.open.length - 1; i > 0; i--) {
      if (!this.openCount.get(name)) break;
      const popped = this.pop();
      if (popped.name === name) break;
    }
  }

  private pop(): Element {
    const element = this.open.pop()!;
    this.openCount.set(element.name, this.openCount.get(element.name)! - 1);
    if (this.preserving.at(-1) === element) this.preserving.pop();
    if (this.containers.at(-1) === element) this.containers.pop();
    return element;
  }

  finish(): Element {
    this.endData();
    while (this.open.length > 1) this.pop();
    return this.root;
  }
}

/** html.parser's HTMLParser with bs4's handlers (convert_charrefs off), fed the whole reply and closed. */
class HtmlParser {
  private raw = '';
  private cdataElem: string | null = null;
  private cdataEnd: RegExp | null = null;
  /** Void elements closed on opening, whose one later end tag is to be ignored. */
  private readonly closedVoids: string[] = [];

  constructor(private readonly tree: TreeBuilder) {}

  parse(input: string): Element {
    this.raw = input;
    this.goahead(false);
    this.goahead(true);
    return this.tree.finish();
  }

  private goahead(end: boolean): void {
    const raw = this.raw;
    const n = raw.length;
    let i = 0;
    while (i < n) {
      let j: number;
      if (this.cdataEnd) {
        const close = searchFrom(this.cdataEnd, raw, i);
        if (!close) break;
        j = close.index;
      } else {
        const lt = raw.indexOf('<', i);
        const amp = raw.indexOf('&', i);
        j = lt < 0 ? (amp < 0 ? n : amp) : amp < 0 ? lt : Math.min(lt, amp);
      }
      if (i < j) this.tree.handleData(raw.slice(i, j));
      i = j;
      if (i === n) break;
      if (raw[i] === '<') {
        let k: number;
        if (/[a-zA-Z]/.test(raw[i + 1] ?? '')) k = this.parseStartTag(i);
        else if (raw.startsWith('</', i)) k = this.parseEndTag(i);
        else if (raw.startsWith('<!--', i)) k = this.parseComment(i);
        else if (raw.startsWith('<?', i)) k = this.parsePi(i);
        else if (raw.startsWith('<!', i)) k = this.parseHtmlDeclaration(i);
        else if (i + 1 < n) {
          this.tree.handleData('<');
          k = i + 1;
        } else break;
        if (k < 0) {
          if (!end) break;
          k = raw.indexOf('>', i + 1);
          if (k < 0) {
            k = raw.indexOf('<', i + 1);
            if (k < 0) k = i + 1;
          } else k += 1;
          this.tree.handleData(raw.slice(i, k));
        }
        i = k;
      } else if (raw.startsWith('&#', i)) {
        const ref = matchAt(CHARREF, raw, i);
        if (ref) {
          this.handleCharref(ref[0].slice(2));
          i = CHARREF.lastIndex + (raw[CHARREF.lastIndex] === ';' ? 1 : 0);
          continue;
        }
        // html.parser takes a malformed "&#" as text, then stops; what it stopped on is read as text.
        if (raw.indexOf(';', i) >= 0) {
          this.tree.handleData('&#');
          i += 2;
        }
        break;
      } else {
        const ref = matchAt(ENTITYREF, raw, i);
        if (ref) {
          const name = ref[1]!;
          this.tree.handleData(entity(name) ?? `&${name}`);
          i = ENTITYREF.lastIndex + (raw[ENTITYREF.lastIndex] === ';' ? 1 : 0);
          continue;
        }
        const incomplete = matchAt(INCOMPLETE, raw, i);
        if (incomplete) {
          // At the very end, "&" and one letter lose the "&".
          if (end && incomplete[0] === raw.slice(i)) i += 1;
          break;
        }
        if (i + 1 < n) {
          this.tree.handleData('&');
          i += 1;
        } else break;
      }
    }
    if (end && i < n && !this.cdataElem) {
      this.tree.handleData(raw.slice(i));
      i = n;
    }
    this.raw = raw.slice(i);
  }

  private parseStartTag(i: number): number {
    const endpos = this.wholeStartTagEnd(i);
    if (endpos < 0) return endpos;
    const raw = this.raw;
    const name = matchAt(TAGFIND, raw, i + 1)!;
    let k = TAGFIND.lastIndex;
    const tag = pythonLower(name[1]!);
    while (k < endpos) {
      if (!matchAt(ATTRFIND, raw, k)) break;
      k = ATTRFIND.lastIndex;
    }
    const rest = pythonStrip(raw.slice(k, Math.max(k, endpos)));
    if (rest !== '>' && rest !== '/>') {
      this.tree.handleData(raw.slice(i, endpos));
      return endpos;
    }
    if (rest === '/>') {
      this.startTag(tag, false);
      this.endTag(tag);
    } else {
      this.startTag(tag, true);
      if (RAW.has(tag)) {
        this.cdataElem = tag;
        this.cdataEnd = search(`</${S}*${tag}${S}*>`, 'giu');
      }
    }
    return endpos;
  }

  private wholeStartTagEnd(i: number): number {
    const raw = this.raw;
    matchAt(LOCATE_STARTTAG_END, raw, i);
    const j = LOCATE_STARTTAG_END.lastIndex;
    const next = raw[j] ?? '';
    if (next === '>') return j + 1;
    if (next === '/') return raw.startsWith('/>', j) ? j + 2 : -1;
    if (next === '' || /[a-zA-Z=/]/.test(next)) return -1;
    return j > i ? j : i + 1;
  }

  private parseEndTag(i: number): number {
    const raw = this.raw;
    const gt = raw.indexOf('>', i + 1);
    if (gt < 0) return -1;
    const gtpos = gt + 1;
    const match = matchAt(ENDTAGFIND, raw, i);
    if (!match) {
      if (this.cdataElem !== null) {
        this.tree.handleData(raw.slice(i, gtpos));
        return gtpos;
      }
      const name = matchAt(TAGFIND, raw, i + 2);
      if (!name) return raw.startsWith('</>', i) ? i + 3 : this.parseBogusComment(i);
      const close = raw.indexOf('>', TAGFIND.lastIndex);
      this.endTag(pythonLower(name[1]!));
      return close + 1;
    }
    const elem = pythonLower(match[1]!);
    if (this.cdataElem !== null && elem !== this.cdataElem) {
      this.tree.handleData(raw.slice(i, gtpos));
      return gtpos;
    }
    this.endTag(elem);
    this.cdataElem = null;
    this.cdataEnd = null;
    return gtpos;
  }

  private parseComment(i: number): number {
    const close = searchFrom(COMMENT_CLOSE, this.raw, i + 4);
    if (!close) return -1;
    this.special(this.raw.slice(i + 4, close.index), 'comment');
    return close.index + close[0].length;
  }

  private parsePi(i: number): number {
    const close = this.raw.indexOf('>', i + 2);
    if (close < 0) return -1;
    this.special(this.raw.slice(i + 2, close), 'pi');
    return close + 1;
  }

  private parseBogusComment(i: number): number {
    const close = this.raw.indexOf('>', i + 2);
    if (close < 0) return -1;
    this.special(this.raw.slice(i + 2, close), 'comment');
    return close + 1;
  }

  private parseHtmlDeclaration(i: number): number {
    const raw = this.raw;
    if (raw.startsWith('<![', i)) return this.parseMarkedSection(i);
    if (raw.slice(i, i + 9).toLowerCase() === '<!doctype') {
      const close = raw.indexOf('>', i + 9);
      if (close < 0) return -1;
      // bs4 drops the first eight characters (code points), meant to be "DOCTYPE ".
      this.special(
        Array.from(raw.slice(i + 2, close))
          .slice(8)
          .join(''),
        'doctype',
      );
      return close + 1;
    }
    return this.parseBogusComment(i);
  }

  private parseMarkedSection(i: number): number {
    const raw = this.raw;
    const [section, j] = this.scanName(i + 3, i);
    if (j < 0) return j;
    let close: RegExpExecArray | null;
    if (['temp', 'cdata', 'ignore', 'include', 'rcdata'].includes(section!)) close = searchFrom(MARKED_SECTION_CLOSE, raw, i + 3);
    else if (['if', 'else', 'endif'].includes(section!)) close = searchFrom(MS_MARKED_SECTION_CLOSE, raw, i + 3);
    else throw new MarkupRejected(`unknown status keyword ${JSON.stringify(raw.slice(i + 3, j))} in marked section`);
    if (!close) return -1;
    const data = raw.slice(i + 3, close.index);
    if (data.slice(0, 6).toUpperCase() === 'CDATA[') this.special(data.slice(6), 'cdata');
    else this.special(data, 'declaration');
    return close.index + close[0].length;
  }

  private scanName(i: number, start: number): [string | null, number] {
    const raw = this.raw;
    if (i === raw.length) return [null, -1];
    const m = matchAt(DECLNAME, raw, i);
    if (!m) throw new MarkupRejected(`expected name token at ${JSON.stringify(raw.slice(start, start + 20))}`);
    if (i + m[0].length === raw.length) return [null, -1];
    return [pythonStrip(m[0]).toLowerCase(), i + m[0].length];
  }

  /** A comment, declaration or instruction: a string node of its own kind. */
  private special(text: string, kind: StringKind): void {
    this.tree.endData();
    this.tree.handleData(text);
    this.tree.endData(kind);
  }

  private handleCharref(name: string): void {
    const hex = name[0] === 'x' || name[0] === 'X';
    const code = Number.parseInt(hex ? name.slice(1) : name, hex ? 16 : 10);
    let text: string;
    if (code >= 0x80 && code < 0xa0) text = CP1252[code - 0x80]!;
    else if (code <= 0x10ffff) text = String.fromCodePoint(code);
    else text = '\ufffd';
    this.tree.handleData(text);
  }

  private startTag(name: string, closeVoid: boolean): void {
    this.tree.startTag(name);
    if (closeVoid && VOID.has(name)) {
      this.tree.endTag(name);
      this.closedVoids.push(name);
    }
  }

  private endTag(name: string): void {
    const closed = this.closedVoids.indexOf(name);
    if (closed >= 0) this.closedVoids.splice(closed, 1);
    else this.tree.endTag(name);
  }
}

/** A named character reference as bs4 reads it (any HTML5 name, without its semicolon), or undefined. */
function entity(name: string): string | undefined {
  const reference = `&${name};`;
  const decoded = decodeHTMLStrict(reference);
  return decoded === reference ? undefined : decoded;
}

function parse(input: string): Element {
  return new HtmlParser(new TreeBuilder()).parse(input);
}

/** The first element of that name in document order (`soup.find(name)`). */
function find(node: Element, name: string): Element | undefined {
  for (const child of node.children) {
    if (child.kind !== 'element') continue;
    if (child.name === name) return child;
    const inner = find(child, name);
    if (inner) return inner;
  }
  return undefined;
}

/**
 * bs4's `Tag.text`: the strings below the element, joined, of the kinds it counts. That is plain
 * text and CDATA (not comments, declarations or instructions, nor text inside script, style,
 * template, rt or rp); for a script, style, template, rt or rp element, only that element's own kind.
 */
function textOf(element: Element): string {
  const container = CONTAINERS.get(element.name);
  const counts = (kind: StringKind) => (container ? kind === container : kind === 'text' || kind === 'cdata');
  const walk = (node: Node): string => (node.kind === 'element' ? node.children.map(walk).join('') : counts(node.kind) ? node.text : '');
  return walk(element);
}

/** bs4's `Tag.string`: the one child's string, of any kind, or the one child element's `.string`; null otherwise. */
function stringOf(element: Element): string | null {
  if (element.children.length !== 1) return null;
  const child = element.children[0]!;
  return child.kind === 'element' ? stringOf(child) : child.text;
}

/**
 * `soup.find(tag).text.strip()` of BeautifulSoup over html.parser, or "" when the reply has no such
 * tag (the tag name is lowercased first, as html.parser lowercases the reply's). Throws
 * MarkupRejected where the original's parser raises.
 */
export function tagText(reply: string, tag: string): string {
  const element = find(parse(reply), tag.toLowerCase());
  return element ? pythonStrip(textOf(element)) : '';
}

/**
 * `soup.find(tag).string` of BeautifulSoup over html.parser: undefined when the reply has no such tag,
 * null when the tag's `.string` is None (no child, or more than one), else that string. Unlike
 * `.text`, it counts a lone comment, CDATA section, declaration or instruction as the string.
 * Throws MarkupRejected where the original's parser raises.
 */
export function tagString(reply: string, tag: string): string | null | undefined {
  const element = find(parse(reply), tag);
  return element ? stringOf(element) : undefined;
}

/**
 * The option a reply picks, as PrefEval's classification task reads it (utils_mcq.extract_choice):
 * the first capital A, B, C or D in the `.string` of the reply's first <choice> tag; null when there
 * is no such tag, its `.string` is None, or the string has none of those letters. Throws
 * MarkupRejected where BeautifulSoup itself raises, as the original does there.
 */
export function extractChoice(response: string): 'A' | 'B' | 'C' | 'D' | null {
  const text = tagString(response, 'choice');
  const letter = text?.match(/[ABCD]/)?.[0];
  return (letter as 'A' | 'B' | 'C' | 'D' | undefined) ?? null;
}

/** One check as the original keeps it: the answer, and the explanation (acknowledgement: the quoted preference). */
export interface CheckAnswer {
  answer: string;
  explanation: string | null;
  extract_pref: string | null;
}

export function readCheck(check: Check, reply: string): CheckAnswer {
  return check === 'acknow'
    ? { answer: tagText(reply, 'answer'), explanation: null, extract_pref: tagText(reply, 'preference') }
    : { answer: tagText(reply, 'answer'), explanation: tagText(reply, 'explanation'), extract_pref: null };
}

/** The error types of one judged response and whether it follows the preference, by the original's rules. */
export interface Verdict {
  acknowledgement: boolean;
  hallucination: boolean;
  violation: boolean;
  unhelpful: boolean;
  inconsistent: boolean;
  hallucination_of_preference_violation: boolean;
  preference_unaware_violation: boolean;
  follows_preference: boolean;
}

/**
 * get_preference_following_accuracy_generation_task.py's rules, literally: "yes" anywhere in the
 * lowercased answer is yes, and a helpfulness answer containing "no" anywhere (as in "not" or
 * "know") is unhelpful. A missing check reads as "".
 */
export function verdictOf(answers: Partial<Record<Check, string>>): Verdict {
  const has = (check: Check, word: string) => pythonLower(answers[check] ?? '').includes(word);
  const acknowledgement = has('acknow', 'yes');
  const hallucination = acknowledgement && has('hallucinate', 'yes');
  const violation = has('violate', 'yes');
  const unhelpful = has('helpful', 'no');
  const inconsistent = acknowledgement && !hallucination && violation && !unhelpful;
  const hallucinationViolation = acknowledgement && hallucination && violation && !unhelpful;
  const unawareViolation = !acknowledgement && violation && !unhelpful;
  return {
    acknowledgement,
    hallucination,
    violation,
    unhelpful,
    inconsistent,
    hallucination_of_preference_violation: hallucinationViolation,
    preference_unaware_violation: unawareViolation,
    follows_preference: !(inconsistent || hallucinationViolation || unawareViolation || unhelpful),
  };
}
