/**
 * Streams posts out of either PERSONA-bench input format without holding the text:
 * the raw flat list (`Raw_Data_Postized.json`, a JSON array of posts) or the grouped
 * file (`merged_posts_remapped.json`, `{author: [posts]}`). Each post is validated
 * against schemas/persona-post.schema.json; the first bad record stops the read with
 * its file, JSON pointer and what was expected.
 */
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { JSONParser } from '@streamparser/json';
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
    throw new PlensError('E_INPUT_NOT_FOUND', `cannot read file: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { location: { file }, cause: error });
  }
  try {
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const first = buffer.subarray(0, bytesRead).toString('utf8').replace(/^\uFEFF/, '').trimStart()[0];
    if (first === '[') return 'raw';
    if (first === '{') return 'grouped';
    throw new PlensError('E_INPUT_LAYOUT', first === undefined ? 'the file is empty' : 'expected a JSON array of posts or an object {author: [posts]}', { location: { file, line: 1 } });
  } finally {
    await handle.close();
  }
}

/** Yields every post in file order, validated. */
export async function* streamPosts(file: string): AsyncGenerator<StreamedPost, InputFormat> {
  const format = await detectFormat(file);
  const parser = new JSONParser({ paths: ['$.*'], keepStack: false });
  const pending: StreamedPost[] = [];
  let failure: unknown;
  parser.onValue = ({ value, key }) => {
    if (format === 'raw') {
      const pointer = `/${String(key)}`;
      try {
        assertPost(value, file, pointer);
        pending.push({ user: undefined, post: value as RawPost, pointer });
      } catch (error) {
        failure ??= error;
      }
      return;
    }
    // Grouped: each value is one user's list of posts.
    const user = String(key);
    const pointer = `/${escapePointer(user)}`;
    if (!Array.isArray(value)) {
      failure ??= new PlensError('E_INPUT_SCHEMA', `expected an array of posts (got ${value === null ? 'null' : typeof value})`, { location: { file, pointer } });
      return;
    }
    value.forEach((post, index) => {
      try {
        assertPost(post, file, `${pointer}/${index}`);
        pending.push({ user, post: post as RawPost, pointer: `${pointer}/${index}` });
      } catch (error) {
        failure ??= error;
      }
    });
  };
  parser.onError = (error) => {
    failure ??= new PlensError('E_INPUT_JSON', `not valid JSON: ${error.message}`, { location: { file }, cause: error });
  };
  const stream = createReadStream(file);
  try {
    for await (const chunk of stream) {
      parser.write(chunk as Buffer);
      if (failure) throw failure;
      yield* pending.splice(0);
    }
    if (!parser.isEnded) parser.end();
    if (failure) throw failure;
    yield* pending.splice(0);
  } finally {
    stream.destroy();
  }
  return format;
}
