/**
 * Streams posts out of either PERSONA-bench input format without holding the text:
 * the raw flat list (`Raw_Data_Postized.json`, a JSON array of posts) or the grouped
 * file (`merged_posts_remapped.json`, `{author: [posts]}`). Each post is validated
 * against schemas/persona-post.schema.json; the first bad record stops the read with
 * its file, JSON pointer and what was expected.
 */
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlensError } from '../../core/errors.js';
import { decodeUtf8, MAX_DEPTH, parseJsonText } from '../../core/json-input.js';
import { schemasDir } from '../../core/paths.js';
import { describeSchemaError, escapePointer } from '../../core/validator.js';
import type { RawPost } from './corpus.js';

export type InputFormat = 'raw' | 'grouped';

export interface StreamedPost {
  /** The grouping key in the grouped format, undefined in the raw list. */
  user: string | undefined;
  post: RawPost;
  /** JSON pointer of the post in the file. */
  pointer: string;
}

let validatePost: ValidateFunction | undefined;
function postValidator(): ValidateFunction {
  if (validatePost) return validatePost;
  const ajv = new Ajv2020.default({ allErrors: false, strict: true, allowUnionTypes: true });
  for (const name of ['persona-comment.schema.json', 'persona-post.schema.json']) ajv.addSchema(JSON.parse(readFileSync(join(schemasDir, name), 'utf8')));
  validatePost = ajv.getSchema('plens:persona-post')!;
  return validatePost;
}

export function assertPost(post: unknown, file: string, pointer: string): asserts post is RawPost {
  const validate = postValidator();
  if (validate(post)) return;
  const error = validate.errors![0]!;
  // The makers parse timestamps with str methods: any other value stops them with an exception.
  const hint = /\/(timestamp|created_utc)$/.test(error.instancePath)
    ? 'the original prompt makers stop with an exception on a timestamp that is not text; write it as an ISO 8601 string (e.g. "2023-01-01T00:00:00Z") or null'
    : undefined;
  throw new PlensError('E_INPUT_SCHEMA', describeSchemaError(error, post), {
    location: { file, pointer: pointer + error.instancePath },
    ...(hint ? { hint } : {}),
  });
}

async function detectFormat(file: string): Promise<InputFormat> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw new PlensError('E_INPUT_NOT_FOUND', `cannot read file: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      location: { file },
      cause: error,
    });
  }
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0).catch((error: unknown) => {
      // A directory opens, and fails only when read: say which path it was.
      const code = (error as NodeJS.ErrnoException).code;
      throw new PlensError('E_INPUT_NOT_FOUND', code === 'EISDIR' ? 'a directory, where a file was expected' : `cannot read file: ${code ?? String(error)}`, {
        location: { file },
        cause: error,
      });
    });
    const first = buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/^\uFEFF/, '')
      .trimStart()[0];
    if (first === '[') return 'raw';
    if (first === '{') return 'grouped';
    throw new PlensError('E_INPUT_LAYOUT', first === undefined ? 'the file is empty' : 'expected a JSON array of posts or an object {author: [posts]}', {
      location: { file, line: 1 },
    });
  } finally {
    await handle.close();
  }
}

/**
 * Splits the top-level array or object of a JSON file into its members as they stream in:
 * yields the source text of each member (an element, or a `"key": value` pair). Only depth,
 * strings and escapes are tracked; JSON.parse does the parsing. A streaming tokenizer costs
 * several seconds on the release's 70 MB, this a fraction of one.
 */
async function* topLevelMembers(file: string): AsyncGenerator<Member> {
  const QUOTE = 0x22,
    BACKSLASH = 0x5c,
    COMMA = 0x2c,
    NEWLINE = 0x0a;
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  let pending: Buffer = Buffer.alloc(0);
  let depth = 0;
  let inString = false;
  let escaped = false;
  let started = false;
  let ended = false;
  let memberStart = 0;
  // Lines before the current buffer, and the line where the member being read starts (1-based).
  let line = 1;
  let memberLine = 1;
  // File offsets: where the current line starts, and the column the member starts at.
  let lineStart = 0;
  let memberColumn = 1;
  let first = true;
  // The file offset of the current buffer's first byte.
  let consumed = 0;
  /** A member's bytes as text; bytes that are not UTF-8 are refused with their place in the file. */
  const decode = (buffer: Buffer, from: number, to: number, startLine: number): string => {
    try {
      return decodeUtf8(buffer.subarray(from, to), file);
    } catch (error) {
      if (!(error instanceof PlensError)) throw error;
      throw new PlensError(
        error.code,
        error.message.replace(/at offset (\d+)/, (_m, o: string) => `at offset ${consumed + from + Number(o)}`),
        {
          location: { file, line: startLine + (error.location?.line ?? 1) - 1 },
        },
      );
    }
  };
  const notJson = (message: string): PlensError => new PlensError('E_INPUT_JSON', `not valid JSON: ${message}`, { location: { file, line } });
  try {
    for await (const chunk of stream) {
      let buffer = pending.length ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
      // A leading byte-order mark is read past, as every plens reader does (TextDecoder drops it).
      if (first) {
        first = false;
        if (buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf) {
          buffer = buffer.subarray(3);
          consumed = 3;
        }
      }
      let i = pending.length;
      const members: Member[] = [];
      for (; i < buffer.length; i++) {
        const byte = buffer[i]!;
        if (byte === NEWLINE) {
          line++;
          lineStart = consumed + i + 1;
        }
        if (inString) {
          if (escaped) escaped = false;
          else if (byte === BACKSLASH) escaped = true;
          else if (byte === QUOTE) inString = false;
          continue;
        }
        if (ended) {
          if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) throw notJson('unexpected data after the top-level value');
          continue;
        }
        if (byte === QUOTE) inString = true;
        else if (byte === 0x5b || byte === 0x7b) {
          depth++;
          // Deeper than any plens input, and than the original's Python recursion allows: refused before anything recurses.
          if (depth > MAX_DEPTH)
            throw new PlensError(
              'E_INPUT_JSON',
              `nested deeper than ${MAX_DEPTH} levels (a comment tree hundreds of replies deep): no plens input is, and deeper values overflow the stack`,
              {
                location: { file, line },
              },
            );
          if (depth === 1) {
            started = true;
            memberStart = i + 1;
            memberLine = line;
            memberColumn = consumed + memberStart - lineStart + 1;
          }
        } else if (byte === 0x5d || byte === 0x7d) {
          depth--;
          if (depth === 0) {
            members.push({ text: decode(buffer, memberStart, i, memberLine), line: memberLine, column: memberColumn });
            ended = true;
          }
        } else if (byte === COMMA && depth === 1) {
          members.push({ text: decode(buffer, memberStart, i, memberLine), line: memberLine, column: memberColumn });
          memberStart = i + 1;
          memberLine = line;
          memberColumn = consumed + memberStart - lineStart + 1;
        }
      }
      // Keep the unfinished member (from its start) for the next chunk: scanned already, its newlines counted.
      const keepFrom = ended ? buffer.length : started ? memberStart : 0;
      consumed += keepFrom;
      pending = buffer.subarray(keepFrom);
      memberStart -= keepFrom;
      for (const member of members) if (member.text.trim() !== '') yield member;
    }
  } finally {
    stream.destroy();
  }
  if (!ended) throw notJson('unexpected end of the file');
}

/** One member of the top-level value: its text and the line and column it starts at. */
interface Member {
  text: string;
  line: number;
  column: number;
}

/** Yields every post in file order, validated. */
export async function* streamPosts(file: string): AsyncGenerator<StreamedPost, InputFormat> {
  const format = await detectFormat(file);
  let index = 0;
  const authors = new Set<string>();
  for await (const member of topLevelMembers(file)) {
    if (format === 'raw') {
      const pointer = `/${index++}`;
      const post = parseMember(member, file, pointer);
      assertPost(post, file, pointer);
      yield { user: undefined, post, pointer };
      continue;
    }
    // Grouped: each member is one user's `"name": [posts]`.
    index++;
    const entry = parseMember({ ...member, text: `{${member.text}}`, column: member.column - 1 }, file) as Record<string, unknown>;
    for (const [user, value] of Object.entries(entry)) {
      const pointer = `/${escapePointer(user)}`;
      // JSON.parse of the whole file would keep the last of two equal keys: a user's posts would vanish.
      if (authors.has(user))
        throw new PlensError('E_INPUT_JSON', `duplicate key "${user}": this author's posts appear twice (JSON.parse would silently keep the last)`, {
          // The member's text starts after the comma: its key is on the line of its first character.
          location: { file, line: member.line + (/^\s*/.exec(member.text)![0].match(/\n/g)?.length ?? 0), pointer },
        });
      authors.add(user);
      if (!Array.isArray(value))
        throw new PlensError('E_INPUT_SCHEMA', `expected an array of posts (got ${value === null ? 'null' : typeof value})`, { location: { file, pointer } });
      for (const [i, post] of value.entries()) {
        assertPost(post, file, `${pointer}/${i}`);
        yield { user, post, pointer: `${pointer}/${i}` };
      }
    }
  }
  return format;
}

/**
 * A member's value under the input policy every plens reader applies (parseJsonText): duplicate
 * keys, lone surrogates and too deep nesting refused, placed in the file (line, and column on the
 * member's first line) and, where known, by the member's JSON pointer.
 */
function parseMember(member: Member, file: string, pointer?: string): unknown {
  try {
    return parseJsonText(member.text, file, member.line - 1, { part: true });
  } catch (error) {
    if (!(error instanceof PlensError)) throw error;
    const at = error.location;
    const column = at.column !== undefined && at.line === member.line ? at.column + member.column - 1 : at.column;
    throw new PlensError(error.code, error.message, {
      location: { ...at, ...(column !== undefined ? { column } : {}), ...(pointer && !at.pointer ? { pointer } : {}) },
      ...(error.hint ? { hint: error.hint } : {}),
      cause: error,
    });
  }
}
