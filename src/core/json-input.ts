import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parse as parseTolerant, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { PlensError } from './errors.js';

/** 1-based line and column of a character offset. */
export function lineColumnOf(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/**
 * Parses JSON text. JSON.parse is fast but its messages carry no reliable position
 * across Node versions, so on failure a second, strict parse locates the error.
 */
export function parseJsonText(text: string, file: string, lineOffset = 0, options: { part?: boolean } = {}): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const errors: ParseError[] = [];
    parseTolerant(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    const offset = first ? first.offset : text.length;
    const { line, column } = lineColumnOf(text, offset);
    const what = first ? describeParseError(printParseErrorCode(first.error)) : 'invalid JSON';
    // A cut-off file usually ends inside a string or an open object: the parser then
    // reports something at the very end, whatever the first error was.
    const end = text.trimEnd().length;
    // A part of a larger text (one member of a streamed file) ends where its member ends, not the file.
    const truncated =
      !options.part &&
      (errors.some((e) => e.offset + e.length >= end) || (first !== undefined && printParseErrorCode(first.error) === 'UnexpectedEndOfString'));
    const description = text.trim().length === 0 ? 'the file is empty' : truncated ? `the JSON ends early (truncated file?): ${what}` : what;
    throw new PlensError('E_INPUT_JSON', `not valid JSON: ${description}`, {
      location: { file, line: line + lineOffset, column },
      cause: error,
    });
  }
  // JSON.parse keeps the last of two equal keys and accepts lone surrogates: both are refused. The
  // exact scan (which names the key and where) runs only when the quick count says something is wrong.
  const duplicate = mayHaveDuplicateKey(text, value) ? findDuplicateKey(text) : undefined;
  if (duplicate?.key === undefined && duplicate) {
    const { line, column } = lineColumnOf(text, duplicate.offset);
    throw new PlensError('E_INPUT_JSON', `nested deeper than ${MAX_DEPTH} levels: no plens input is, and deeper values overflow the stack`, {
      location: { file, line: line + lineOffset, column },
    });
  }
  if (duplicate) {
    const { line, column } = lineColumnOf(text, duplicate.offset);
    throw new PlensError('E_INPUT_JSON', `duplicate key "${duplicate.key}" (JSON.parse would silently keep the last one)`, {
      location: { file, line: line + lineOffset, column, ...(duplicate.pointer ? { pointer: duplicate.pointer } : {}) },
    });
  }
  // includes() first: most texts hold no \u escape at all, and it scans several times faster than the pattern.
  if (text.includes('\\u') && LONE_SURROGATE_ESCAPE.test(text)) {
    const bad = findIllFormedString(value, '');
    if (bad !== undefined) {
      throw new PlensError('E_INPUT_ENCODING', 'a string holds a lone UTF-16 surrogate (\\uD800-\\uDFFF escape without its pair), which is not text', {
        location: { file, ...(text.includes('\n') ? {} : { line: lineOffset + 1 }), pointer: bad },
      });
    }
  }
  return value;
}

/** String.prototype.isWellFormed (Node 20), typed here because the TypeScript lib is ES2023. */
const isWellFormed = (s: string): boolean => (s as unknown as { isWellFormed(): boolean }).isWellFormed();

const LONE_SURROGATE_ESCAPE = /\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/** The JSON pointer of the first string (value or key) that is not well-formed UTF-16. */
function findIllFormedString(value: unknown, pointer: string): string | undefined {
  if (typeof value === 'string') return isWellFormed(value) ? undefined : pointer || '/';
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findIllFormedString(value[i], `${pointer}/${i}`);
      if (bad !== undefined) return bad;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const at = `${pointer}/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`;
      if (!isWellFormed(k)) return at;
      const bad = findIllFormedString(v, at);
      if (bad !== undefined) return bad;
    }
  }
  return undefined;
}

/**
 * The first key that occurs twice in one object of valid JSON text, with its offset and the
 * pointer of that object member. A plain scan: strings are skipped with indexOf, so it costs a
 * fraction of a tolerant parser's visit (which tripled the import time).
 */
/** Deeper than this, JSON is refused: plens inputs are a few levels deep, and validators recurse. */
export const MAX_DEPTH = 1000;

/**
 * Whether the text may hold a duplicate key or nest deeper than MAX_DEPTH: the keys written in the
 * text (strings followed by a colon) outnumber the keys of the parsed objects exactly when some object
 * repeats a key. Counting costs a fraction of findDuplicateKey, which keeps every key of every object.
 * First a cheaper bound: every written key is followed by a colon whose previous non-blank character
 * is a quote, so the colons preceded by a quote number at least the written keys (a colon inside a
 * string may add to them, never take away). As many as the parsed keys: no key is written twice.
 */
function mayHaveDuplicateKey(text: string, value: unknown): boolean {
  const parsed = parsedKeys(value, 0);
  if (parsed < 0) return true;
  if (colonsAfterQuotes(text) === parsed) return false;
  return writtenKeys(text) !== parsed;
}

function colonsAfterQuotes(text: string): number {
  let n = 0;
  for (let i = text.indexOf(':'); i !== -1; i = text.indexOf(':', i + 1)) {
    let k = i - 1;
    let c = text.charCodeAt(k);
    while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(--k);
    if (c === 34) n++;
  }
  return n;
}

/** The keys written in valid JSON text: strings followed by a colon. */
function writtenKeys(text: string): number {
  let written = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    if (text.charCodeAt(i) !== 34) continue;
    const end = stringEnd(text, i);
    let k = end + 1;
    while (k < n && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 10 || text.charCodeAt(k) === 13 || text.charCodeAt(k) === 9)) k++;
    if (text.charCodeAt(k) === 58) written++;
    i = end;
  }
  return written;
}

/** The index of the quote that closes the string opening at `start` (quotes after an odd run of backslashes are escaped). */
function stringEnd(text: string, start: number): number {
  let end = text.indexOf('"', start + 1);
  for (;;) {
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === 92) slashes++;
    if (slashes % 2 === 0) return end;
    end = text.indexOf('"', end + 1);
  }
}

/** The keys of a parsed value's objects, at every depth; -1 when containers nest deeper than MAX_DEPTH. */
function parsedKeys(value: unknown, depth: number): number {
  if (value === null || typeof value !== 'object') return 0;
  if (depth >= MAX_DEPTH) return -1;
  let n = 0;
  if (Array.isArray(value)) {
    for (const v of value) {
      const inner = parsedKeys(v, depth + 1);
      if (inner < 0) return -1;
      n += inner;
    }
    return n;
  }
  for (const key in value) {
    const inner = parsedKeys((value as Record<string, unknown>)[key], depth + 1);
    if (inner < 0) return -1;
    n += 1 + inner;
  }
  return n;
}

/** Also reports (with no key) the offset where nesting first goes deeper than MAX_DEPTH. */
export function findDuplicateKey(text: string): { key?: string; offset: number; pointer?: string } | undefined {
  // One frame per open container: an object's keys so far and its current key, or an array's index.
  const frames: Array<{ keys: Set<string> | null; key: string; index: number }> = [];
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      const end = stringEnd(text, i);
      const top = frames[frames.length - 1];
      if (top?.keys) {
        let k = end + 1;
        while (k < n && (text.charCodeAt(k) === 32 || text.charCodeAt(k) === 10 || text.charCodeAt(k) === 13 || text.charCodeAt(k) === 9)) k++;
        if (text.charCodeAt(k) === 58) {
          const raw = text.slice(i + 1, end);
          const key = raw.includes('\\') ? (JSON.parse(`"${raw}"`) as string) : raw;
          if (top.keys.has(key)) {
            const segments = [...frames.slice(0, -1).map((f) => (f.keys ? f.key : String(f.index))), key];
            return { key, offset: i, pointer: '/' + segments.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/') };
          }
          top.keys.add(key);
          top.key = key;
        }
      }
      i = end;
    } else if (c === 123 || c === 91) {
      if (frames.length >= MAX_DEPTH) return { offset: i };
      frames.push({ keys: c === 123 ? new Set() : null, key: '', index: 0 });
    } else if (c === 125 || c === 93) {
      frames.pop();
    } else if (c === 44) {
      const top = frames[frames.length - 1];
      if (top && !top.keys) top.index++;
    }
  }
  return undefined;
}
function describeParseError(code: string): string {
  // jsonc-parser codes are PascalCase identifiers; make them read as words.
  return code.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

export async function readJsonFile(file: string): Promise<unknown> {
  return parseJsonText(await readInputText(file), file);
}

/**
 * Reads an input file as UTF-8, refusing bytes that are not UTF-8 (Node would silently turn them
 * into U+FFFD) with the line and byte where they are; a directory or a missing file is a typed error.
 */
export async function readInputText(file: string): Promise<string> {
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (error) {
    throw unreadable(file, error);
  }
  return decodeUtf8(bytes, file);
}

export function readInputTextSync(file: string): string {
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch (error) {
    throw unreadable(file, error);
  }
  return decodeUtf8(bytes, file);
}

function unreadable(file: string, error: unknown): PlensError {
  const code = (error as NodeJS.ErrnoException).code;
  const why =
    code === 'EISDIR'
      ? 'a directory, where a file was expected'
      : code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : `cannot read file (${code ?? String(error)})`;
  return new PlensError('E_INPUT_NOT_FOUND', why, { location: { file }, cause: error });
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

export function decodeUtf8(bytes: Uint8Array, file: string): string {
  try {
    return strictUtf8.decode(bytes);
  } catch (error) {
    const offset = firstInvalidUtf8(bytes);
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < offset; i++) {
      if (bytes[i] !== 10) continue;
      line++;
      lineStart = i + 1;
    }
    throw new PlensError(
      'E_INPUT_ENCODING',
      `not valid UTF-8: byte 0x${(bytes[offset] ?? 0).toString(16).padStart(2, '0')} at offset ${offset} (save the file as UTF-8)`,
      {
        location: { file, line, column: offset - lineStart + 1 },
        cause: error,
      },
    );
  }
}

/** The offset of the first byte that does not begin or continue a well-formed UTF-8 sequence. */
function firstInvalidUtf8(b: Uint8Array): number {
  for (let i = 0; i < b.length; ) {
    const c = b[i]!;
    const need = c < 0x80 ? 0 : c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : -1;
    if (need < 0) return i;
    for (let k = 1; k <= need; k++) if (((b[i + k] ?? 0) & 0xc0) !== 0x80) return i;
    // Overlong forms, UTF-16 surrogates and code points past U+10FFFF are not UTF-8 either.
    if ((c === 0xe0 && b[i + 1]! < 0xa0) || (c === 0xed && b[i + 1]! >= 0xa0) || (c === 0xf0 && b[i + 1]! < 0x90) || (c === 0xf4 && b[i + 1]! >= 0x90))
      return i;
    i += need + 1;
  }
  return b.length;
}

/** Parses JSON Lines: one value per non-blank line; errors name the line. */
export function parseJsonLines(text: string, file: string): Array<{ line: number; value: unknown }> {
  const out: Array<{ line: number; value: unknown }> = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.replace(/\r$/, '');
    if (raw.trim() === '') continue;
    out.push({ line: i + 1, value: parseJsonText(raw, file, i) });
  }
  return out;
}
