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
  throw new PlensError('E_INPUT_SCHEMA', describeSchemaError(error, post), { location: { file, pointer: pointer + error.instancePath } });
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
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
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
async function* topLevelMembers(file: string): AsyncGenerator<string> {
  const QUOTE = 0x22,
    BACKSLASH = 0x5c,
    COMMA = 0x2c;
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  let pending: Buffer = Buffer.alloc(0);
  let depth = 0;
  let inString = false;
  let escaped = false;
  let started = false;
  let ended = false;
  let memberStart = 0;
  const notJson = (message: string): PlensError => new PlensError('E_INPUT_JSON', `not valid JSON: ${message}`, { location: { file } });
  try {
    for await (const chunk of stream) {
      const buffer = pending.length ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
      let i = pending.length;
      const members: string[] = [];
      for (; i < buffer.length; i++) {
        const byte = buffer[i]!;
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
          if (depth === 1) {
            started = true;
            memberStart = i + 1;
          }
        } else if (byte === 0x5d || byte === 0x7d) {
          depth--;
          if (depth === 0) {
            members.push(buffer.toString('utf8', memberStart, i));
            ended = true;
          }
        } else if (byte === COMMA && depth === 1) {
          members.push(buffer.toString('utf8', memberStart, i));
          memberStart = i + 1;
        }
      }
      // Keep the unfinished member (from its start) for the next chunk.
      const keepFrom = ended ? buffer.length : started ? memberStart : 0;
      pending = buffer.subarray(keepFrom);
      memberStart -= keepFrom;
      for (const member of members) if (member.trim() !== '') yield member;
    }
  } finally {
    stream.destroy();
  }
  if (!ended) throw notJson('unexpected end of the file');
}

/** Yields every post in file order, validated. */
export async function* streamPosts(file: string): AsyncGenerator<StreamedPost, InputFormat> {
  const format = await detectFormat(file);
  let index = 0;
  for await (const member of topLevelMembers(file)) {
    if (format === 'raw') {
      const pointer = `/${index++}`;
      const post = parseMember(member, file, pointer);
      assertPost(post, file, pointer);
      yield { user: undefined, post, pointer };
      continue;
    }
    // Grouped: each member is one user's `"name": [posts]`.
    const entry = parseMember(`{${member}}`, file, `/${index++}`) as Record<string, unknown>;
    for (const [user, value] of Object.entries(entry)) {
      const pointer = `/${escapePointer(user)}`;
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

function parseMember(text: string, file: string, pointer: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new PlensError('E_INPUT_JSON', `not valid JSON: ${(error as Error).message}`, { location: { file, pointer }, cause: error });
  }
}
