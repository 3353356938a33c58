import { describe, expect, it } from 'vitest';
import type { PlensError } from '../../src/core/errors.js';
import { lineColumnOf, parseJsonLines, parseJsonText } from '../../src/core/json-input.js';

function errorOf(fn: () => unknown): PlensError {
  try {
    fn();
  } catch (error) {
    return error as PlensError;
  }
  throw new Error('expected an error');
}

describe('lineColumnOf', () => {
  it('counts lines and columns from 1', () => {
    expect(lineColumnOf('ab\ncd\nef', 0)).toEqual({ line: 1, column: 1 });
    expect(lineColumnOf('ab\ncd\nef', 4)).toEqual({ line: 2, column: 2 });
    expect(lineColumnOf('ab\ncd\nef', 6)).toEqual({ line: 3, column: 1 });
  });
});

describe('parseJsonText', () => {
  it('parses valid JSON', () => {
    expect(parseJsonText('{"a": [1, "x"]}', 'f.json')).toEqual({ a: [1, 'x'] });
  });

  it('locates a syntax error by line and column', () => {
    const e = errorOf(() => parseJsonText('{\n  "a": 1,\n  "b": tru\n}', 'f.json'));
    expect(e.code).toBe('E_INPUT_JSON');
    expect(e.location).toMatchObject({ file: 'f.json', line: 3 });
    expect(e.where).toMatch(/^f\.json:3:\d+$/);
  });

  it('says a truncated file ends early', () => {
    const e = errorOf(() => parseJsonText('{\n "a": {\n  "b": [1, 2', 'cut.json'));
    expect(e.message).toContain('ends early');
    expect(e.location.line).toBe(3);
  });

  it('says an empty file is empty', () => {
    expect(errorOf(() => parseJsonText('  \n', 'e.json')).message).toContain('empty');
  });

  it('rejects what JSON does not allow even if a lenient parser would (comments, trailing commas)', () => {
    expect(errorOf(() => parseJsonText('[1, 2,]', 'f.json')).code).toBe('E_INPUT_JSON');
    expect(errorOf(() => parseJsonText('// c\n{}', 'f.json')).code).toBe('E_INPUT_JSON');
  });
});

describe('parseJsonLines', () => {
  it('skips blank lines and reports the failing line number', () => {
    const text = '{"a":1}\n\n{"a":2}\n{"a":\n';
    const e = errorOf(() => parseJsonLines(text, 't.jsonl'));
    expect(e.location.line).toBe(4);
    expect(parseJsonLines('{"a":1}\n\n{"a":2}\n', 't.jsonl')).toEqual([
      { line: 1, value: { a: 1 } },
      { line: 3, value: { a: 2 } },
    ]);
  });
});
