import { PlensError } from '../../core/errors.js';

/**
 * A string constant assigned in a Python file: `NAME = "..."` at module level or in a class body,
 * or `self.NAME = "..."` in a method (reported with the method's class, as `Class.NAME`).
 */
export interface PythonConstant {
  name: string;
  /** The enclosing class, if the assignment is in a class body. */
  className: string | null;
  line: number;
  value: string;
}

interface Token {
  kind: 'name' | 'string' | 'op' | 'newline';
  text: string;
  line: number;
  /** Column of the token's first character in its physical line (for indentation). */
  column: number;
  value?: string;
}

/**
 * Reads the string constants of a Python source file without Python: a small tokenizer that knows
 * comments, every string literal form (single, double and triple quotes; r/u/b prefixes; escapes;
 * implicit concatenation, also across lines inside parentheses) and indentation, enough to find
 * `NAME = <string literals>` and `self.NAME = <string literals>` statements and the class they sit in. f-strings and expressions
 * other than string literals (and `+` between them) make the assignment not a constant.
 */
export function pythonStringConstants(source: string, file: string): PythonConstant[] {
  const tokens = tokenize(source, file);
  const out: PythonConstant[] = [];
  // The blocks the current statement sits in: classes and functions, by indentation.
  const scopes: Array<{ kind: 'class' | 'def'; name: string; indent: number }> = [];
  // Constants seen so far: `B = A + "..."` builds on an earlier one.
  const known = new Map<string, string>();
  let i = 0;
  while (i < tokens.length) {
    // One logical line: tokens up to a newline outside brackets.
    const start = i;
    while (i < tokens.length && tokens[i]!.kind !== 'newline') i++;
    const stmt = tokens.slice(start, i);
    i++;
    if (stmt.length === 0) continue;
    const indent = stmt[0]!.column;
    while (scopes.length && scopes.at(-1)!.indent >= indent) scopes.pop();
    const head = stmt[0]!.kind === 'name' && stmt[0]!.text === 'async' ? 1 : 0;
    const keyword = stmt[head]?.kind === 'name' ? stmt[head].text : '';
    if ((keyword === 'class' || keyword === 'def') && stmt[head + 1]?.kind === 'name') {
      scopes.push({ kind: keyword, name: stmt[head + 1]!.text, indent });
      continue;
    }
    if (stmt[0]!.kind !== 'name') continue;
    const inner = scopes.at(-1);
    // `self.NAME = literal` in a method of a class: an instance attribute, reported as Class.NAME.
    const attribute = stmt[0]!.text === 'self' && stmt[1]?.kind === 'op' && stmt[1].text === '.' && stmt[2]?.kind === 'name';
    const owner = attribute ? (inner?.kind === 'def' && scopes.at(-2)?.kind === 'class' ? scopes.at(-2)! : undefined) : inner;
    // A bare name counts at module level or in a class body; inside a function it is a local variable.
    if (attribute ? !owner : inner?.kind === 'def') continue;
    const target = attribute ? stmt[2]! : stmt[0]!;
    // NAME [: annotation] = literal ...
    let j = attribute ? 3 : 1;
    if (stmt[j]?.kind === 'op' && stmt[j]!.text === ':') {
      while (j < stmt.length && !(stmt[j]!.kind === 'op' && stmt[j]!.text === '=')) j++;
    }
    if (!(stmt[j]?.kind === 'op' && stmt[j]!.text === '=')) continue;
    const value = literalValue(stmt.slice(j + 1), known);
    if (value === undefined) continue;
    out.push({ name: target.text, className: owner?.name ?? null, line: target.line, value });
    // Only a bare name can be built on later (`self.A + "..."` is not read as a constant).
    if (!attribute) known.set(target.text, value);
  }
  return out;
}

/** The value of an expression made only of string literals, earlier constants, parentheses and `+`; undefined otherwise. */
function literalValue(rhs: Token[], known: Map<string, string>): string | undefined {
  let value = '';
  let strings = 0;
  for (const t of rhs) {
    if (t.kind === 'name' && known.has(t.text)) {
      value += known.get(t.text)!;
      strings++;
    } else if (t.kind === 'string') {
      if (t.value === undefined) return undefined;
      value += t.value;
      strings++;
    } else if (t.kind === 'op' && ['(', ')', '+'].includes(t.text)) {
      // Parentheses and '+' only join the parts of one literal.
    } else {
      return undefined;
    }
  }
  return strings ? value : undefined;
}

function tokenize(src: string, file: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  let lineStart = 0;
  let depth = 0;
  const fail = (message: string): never => {
    throw new PlensError('E_INPUT_SCHEMA', message, { location: { file, line } });
  };
  while (i < src.length) {
    const ch = src[i]!;
    if (ch === '\n') {
      if (depth === 0 && tokens.length && tokens.at(-1)!.kind !== 'newline') tokens.push({ kind: 'newline', text: '\n', line, column: 0 });
      i++;
      line++;
      lineStart = i;
      continue;
    }
    if (ch === '\\' && src[i + 1] === '\n') {
      i += 2;
      line++;
      lineStart = i;
      continue;
    }
    if (ch === ' ' || ch === '\t' || ch === '\r' || ch === '\f') {
      i++;
      continue;
    }
    if (ch === '#') {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    const column = i - lineStart;
    const prefix = /^([rRuUbBfF]{0,2})(['"])/.exec(src.slice(i, i + 4));
    if (prefix && (prefix[1] === '' || /^[A-Za-z]+$/.test(prefix[1]!))) {
      const flags = prefix[1]!.toLowerCase();
      const quote = prefix[2]!;
      const startLine = line;
      let j = i + prefix[1]!.length;
      const triple = src.startsWith(quote.repeat(3), j);
      const delim = triple ? quote.repeat(3) : quote;
      j += delim.length;
      let raw = '';
      for (;;) {
        if (j >= src.length) fail(`unterminated string literal starting on line ${startLine}`);
        const c = src[j]!;
        if (c === '\\') {
          raw += c + (src[j + 1] ?? '');
          if (src[j + 1] === '\n') {
            line++;
          }
          j += 2;
          continue;
        }
        if (src.startsWith(delim, j)) {
          j += delim.length;
          break;
        }
        if (c === '\n') {
          if (!triple) fail('newline in a single-quoted string literal');
          line++;
        }
        raw += c;
        j++;
      }
      const value = flags.includes('f') || flags.includes('b') ? undefined : flags.includes('r') ? raw : unescapePython(raw, fail);
      tokens.push({ kind: 'string', text: src.slice(i, j), line: startLine, column, ...(value !== undefined ? { value } : {}) });
      i = j;
      // Keep the physical line start right for indentation after a multi-line string.
      const lastNl = src.lastIndexOf('\n', j - 1);
      if (lastNl >= lineStart) lineStart = lastNl + 1;
      continue;
    }
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(src.slice(i, i + 200));
    if (name) {
      tokens.push({ kind: 'name', text: name[0], line, column });
      i += name[0].length;
      continue;
    }
    if ('([{'.includes(ch)) depth++;
    if (')]}'.includes(ch)) depth = Math.max(0, depth - 1);
    tokens.push({ kind: 'op', text: ch, line, column });
    i++;
  }
  if (tokens.length && tokens.at(-1)!.kind !== 'newline') tokens.push({ kind: 'newline', text: '\n', line, column: 0 });
  return tokens;
}

const SIMPLE: Record<string, string> = { '\\': '\\', "'": "'", '"': '"', n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', f: '\f', v: '\v', '\n': '' };

/** Python's escape sequences in a non-raw string; an unknown escape keeps its backslash, as Python does. */
function unescapePython(raw: string, fail: (m: string) => never): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c !== '\\') {
      out += c;
      continue;
    }
    const n = raw[i + 1] ?? '';
    if (n in SIMPLE) {
      out += SIMPLE[n];
      i++;
    } else if (/[0-7]/.test(n)) {
      const m = /^[0-7]{1,3}/.exec(raw.slice(i + 1))![0];
      out += String.fromCodePoint(parseInt(m, 8));
      i += m.length;
    } else if (n === 'x' || n === 'u' || n === 'U') {
      const len = n === 'x' ? 2 : n === 'u' ? 4 : 8;
      const hex = raw.slice(i + 2, i + 2 + len);
      if (!new RegExp(`^[0-9a-fA-F]{${len}}$`).test(hex)) fail(`bad \\${n} escape in a string literal`);
      // Python refuses \U escapes past U+10FFFF ("illegal Unicode character"), and so does the import.
      if (parseInt(hex, 16) > 0x10ffff) fail(`\\${n}${hex} is past U+10FFFF, an illegal Unicode character (Python refuses it too)`);
      out += String.fromCodePoint(parseInt(hex, 16));
      i += 1 + len;
    } else if (n === 'N') {
      fail('\\N{...} escapes are not supported');
    } else {
      out += c;
    }
  }
  return out;
}
