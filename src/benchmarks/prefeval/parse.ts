import { decodeHTML } from 'entities';
import { pythonStrip } from '../../core/python-whitespace.js';
import { pythonLower } from '../../metrics/porter.js';
import type { Check } from './prompts.js';

/**
 * The judge's reply read as the original reads it: BeautifulSoup with Python's html.parser,
 * `soup.find(tag).text.strip()` ("" when there is no such tag). html.parser lowercases tag names,
 * decodes character references in text, treats `<` that starts no tag as text, and leaves comments,
 * declarations and processing instructions out of `.text`; BeautifulSoup closes an end tag's
 * nearest open element of that name (an unmatched end tag is dropped) and keeps an unclosed element
 * open to the end. A test compares this with bs4 itself on tricky replies.
 */
type Node = { kind: 'element'; name: string; children: Node[] } | { kind: 'text'; text: string };

/** Elements html.parser's tree builder never opens (BeautifulSoup's void elements). */
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

const START = /^<([a-zA-Z][^\t\n\r\f />\x00]*)(?:[\s/][^>]*)?>/;
const END = /^<\/([a-zA-Z][^\t\n\r\f />\x00]*)[^>]*>/;

function parse(input: string): Node {
  const root: Node & { kind: 'element' } = { kind: 'element', name: '[document]', children: [] };
  const open: Array<Node & { kind: 'element' }> = [root];
  let text = '';
  const flush = () => {
    if (text) open.at(-1)!.children.push({ kind: 'text', text: decodeHTML(text) });
    text = '';
  };
  let i = 0;
  while (i < input.length) {
    const lt = input.indexOf('<', i);
    if (lt < 0) {
      text += input.slice(i);
      break;
    }
    text += input.slice(i, lt);
    const rest = input.slice(lt);
    if (rest.startsWith('<!--')) {
      const close = rest.indexOf('-->', 4);
      flush();
      i = close < 0 ? input.length : lt + close + 3;
      continue;
    }
    if (rest.startsWith('<!') || rest.startsWith('<?')) {
      const close = rest.indexOf('>');
      flush();
      i = close < 0 ? input.length : lt + close + 1;
      continue;
    }
    const end = END.exec(rest);
    if (end) {
      flush();
      const name = end[1]!.toLowerCase();
      const at = open.map((e) => e.name).lastIndexOf(name);
      if (at > 0) open.length = at;
      i = lt + end[0].length;
      continue;
    }
    const start = START.exec(rest);
    if (start) {
      flush();
      const name = start[1]!.toLowerCase();
      const element: Node & { kind: 'element' } = { kind: 'element', name, children: [] };
      open.at(-1)!.children.push(element);
      i = lt + start[0].length;
      if (RAW.has(name)) {
        const close = new RegExp(`</${name}\\s*>`, 'i').exec(input.slice(i));
        const body = close ? input.slice(i, i + close.index) : input.slice(i);
        if (body) element.children.push({ kind: 'text', text: body });
        i = close ? i + close.index + close[0].length : input.length;
      } else if (!VOID.has(name) && !start[0].endsWith('/>')) open.push(element);
      continue;
    }
    // A '<' that starts no tag is text.
    text += '<';
    i = lt + 1;
  }
  flush();
  return root;
}

function find(node: Node, name: string): (Node & { kind: 'element' }) | undefined {
  if (node.kind !== 'element') return undefined;
  for (const child of node.children) {
    if (child.kind === 'element' && child.name === name) return child;
    const inner = find(child, name);
    if (inner) return inner;
  }
  return undefined;
}

function textOf(node: Node): string {
  return node.kind === 'text' ? node.text : node.children.map(textOf).join('');
}

/** `soup.find(tag).text.strip()` of BeautifulSoup over html.parser, or "" when the reply has no such tag. */
export function tagText(reply: string, tag: string): string {
  const element = find(parse(reply), tag.toLowerCase());
  return element ? pythonStrip(textOf(element)) : '';
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
