import { appendFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PlensError } from '../../src/core/errors.js';
import { decodeUtf8, findDuplicateKey, parseJsonLines, parseJsonText, readInputText } from '../../src/core/json-input.js';
import { redact, registerSecret } from '../../src/core/redact.js';
import { parseModelSpec } from '../../src/llm/model-spec.js';
import { compactPartition, DIALOGUE_COLUMNS } from '../../src/benchmarks/personalens/compact.js';
import { runCli, sampleDir, tempDir } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';

function errorOf(fn: () => unknown): PlensError {
  try {
    fn();
  } catch (error) {
    if (error instanceof PlensError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

const noStack = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at .*[(:]\d+/);

describe('JSON input that must be refused', () => {
  it('a duplicate key is an error naming line, column and pointer (JSON.parse would keep the last)', () => {
    const e = errorOf(() => parseJsonText('{\n  "a": 1,\n  "b": {"x": [1, {"k": 1, "k": 2}]}\n}', 'f.json'));
    expect(e.code).toBe('E_INPUT_JSON');
    expect(e.message).toMatch(/duplicate key "k"/);
    expect(e.location).toMatchObject({ file: 'f.json', line: 3, pointer: '/b/x/1/k' });
    expect(errorOf(() => parseJsonText('{"a": 1, "a": 1}', 'f.json')).location.pointer).toBe('/a');
    // Escapes spell the same key differently.
    expect(errorOf(() => parseJsonText('{"a": 1, "\\u0061": 2}', 'f.json')).message).toMatch(/duplicate key "a"/);
  });

  it('the quick key count (which decides whether to scan for the duplicate) misses none', () => {
    // Strings ending in escaped quotes or holding colons, keys after whitespace and newlines, __proto__
    // (an own property once parsed), empty keys, deep arrays of objects.
    for (const text of [
      '{"a\\\\": 1, "a\\\\" : 2}',
      '{"s": "x\\":", "s"\n:\t3}',
      '{"__proto__": 1, "__proto__": 2}',
      '{"": 1, "": 2}',
      '[[[{"a": [{"b": 1}]}, {"c": {"d": {"e": 1, "f": 2, "e": 3}}}]]]',
    ]) {
      expect(() => parseJsonText(text, 'f.json'), text).toThrow(/duplicate key/);
    }
    expect(parseJsonText('{"a\\\\": 1, "a": "\\":", "b": {"__proto__": {"": [":", {"a": 1}]}}}', 'f.json')).toBeTruthy();
  });

  it('equal keys in different objects, and keys inside strings, are fine', () => {
    expect(parseJsonText('[{"a": 1}, {"a": 2}, {"b": {"a": 3}, "a": "\\"a\\": 4"}]', 'f.json')).toHaveLength(3);
    expect(findDuplicateKey('{"s": "{\\"a\\":1,\\"a\\":2}"}')).toBeUndefined();
  });

  it('a duplicate key in a JSON Lines file names its line', () => {
    const e = errorOf(() => parseJsonLines('{"a": 1}\n{"b": 1, "b": 2}\n', 't.jsonl'));
    expect(e.location).toMatchObject({ file: 't.jsonl', line: 2, pointer: '/b' });
  });

  it('a lone surrogate escape is E_INPUT_ENCODING with its pointer; a proper pair is text', () => {
    const e = errorOf(() => parseJsonText('{"name": {"first": "Ann\\ud800"}}', 'p.json'));
    expect(e.code).toBe('E_INPUT_ENCODING');
    expect(e.exitCode).toBe(3);
    expect(e.location).toMatchObject({ file: 'p.json', pointer: '/name/first' });
    expect(errorOf(() => parseJsonText('["\\udc00x"]', 'p.json')).location.pointer).toBe('/0');
    expect(parseJsonText('{"smile": "\\ud83d\\ude00"}', 'p.json')).toEqual({ smile: '😀' });
  });

  it('JSON nested deeper than 1000 levels is an input error, not a stack overflow', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const e = errorOf(() => parseJsonText(deep, 'deep.json'));
    expect(e.code).toBe('E_INPUT_JSON');
    expect(e.message).toMatch(/nested deeper/);
  });

  it('bytes that are not UTF-8 are refused with line and column, never turned into U+FFFD', async () => {
    const e = errorOf(() => decodeUtf8(Buffer.concat([Buffer.from('{"a": "ok",\n "b": "caf'), Buffer.from([0xe9]), Buffer.from('"}')]), 'latin1.json'));
    expect(e.code).toBe('E_INPUT_ENCODING');
    expect(e.location).toMatchObject({ file: 'latin1.json', line: 2, column: 11 });
    expect(e.message).toMatch(/0xe9/);
    // Overlong forms and encoded surrogates are not UTF-8 either.
    expect(errorOf(() => decodeUtf8(Buffer.from([0x41, 0xc0, 0xaf]), 'x')).location.column).toBe(2);
    expect(errorOf(() => decodeUtf8(Buffer.from([0xed, 0xa0, 0x80]), 'x')).code).toBe('E_INPUT_ENCODING');
    expect(decodeUtf8(Buffer.from('naïve ☕ 😀'), 'x')).toBe('naïve ☕ 😀');
    const dir = tempDir();
    await expect(readInputText(dir)).rejects.toMatchObject({ code: 'E_INPUT_NOT_FOUND', message: expect.stringMatching(/directory/) });
  });

  it.each([
    ['a duplicate key in a profile', (f: string) => writeFileSync(f, readFileSync(f, 'utf8').replace(/^\{/, '{"demographics": {},'))],
    [
      'a Latin-1 byte in a profile',
      (f: string) => writeFileSync(f, Buffer.concat([readFileSync(f).subarray(0, 40), Buffer.from([0xff]), readFileSync(f).subarray(40)])),
    ],
    ['a lone surrogate in a profile', (f: string) => writeFileSync(f, readFileSync(f, 'utf8').replace(/"([^"]{3,})"/, '"$1\\udfff"'))],
  ])('plens import refuses %s: exit 3, the file named, nothing written', async (_what, corrupt) => {
    const data = join(tempDir(), 'data');
    cpSync(sampleDir, data, { recursive: true });
    const user = readdirSync(join(data, 'profile')).sort()[0]!;
    const profile = join(data, 'profile', user, 'profile.json');
    corrupt(profile);
    const ws = join(tempDir(), 'ws');
    const r = await runCli(['import', '--from', data, '-w', ws]);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(profile);
    expect(r.stderr).toMatch(/E_INPUT_(JSON|ENCODING)/);
    noStack(r.stderr);
    expect(existsSync(join(ws, 'dataset'))).toBe(false);
  });
});

describe('a junk line in a stage log is an error, never an "ok" row of NULLs', () => {
  const good = { key: 'k1', try: 1, status: 'ok', rounds: 1, messages: [] };
  it.each([
    ['an object with no key', { foo: 1 }],
    ['a bare number', 42],
    ['a string', 'junk'],
    ['null', null],
    ['a record with no status', { key: 'k2', try: 1 }],
    ['a record with an unknown status', { key: 'k2', try: 1, status: 'done' }],
    ['a record with try 0', { key: 'k2', try: 0, status: 'ok' }],
    ['a field of the wrong type', { key: 'k2', try: 1, status: 'ok', rounds: 'three' }],
    ['a list of messages that is not a list', { key: 'k2', try: 1, status: 'ok', messages: 'hi' }],
  ])('records: %s', async (_what, junk) => {
    const dir = tempDir();
    writeFileSync(join(dir, 'records.jsonl'), `${JSON.stringify(good)}\n${JSON.stringify(junk)}\n`);
    const error = await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PlensError);
    expect(error).toMatchObject({ code: 'E_INPUT_SCHEMA', location: { file: join(dir, 'records.jsonl'), line: 2 } });
    expect(existsSync(join(dir, 'dialogues.parquet'))).toBe(false);
  });

  it('events: a junk line names the log (not a snapshot) and its line', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'records.jsonl'), `${JSON.stringify(good)}\n`);
    writeFileSync(join(dir, 'events.jsonl'), `{"run_id":"r","key":"k1","status":"ok","turn":0}\n{"hello":"world"}\n`);
    const error = await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'E_INPUT_SCHEMA', location: { file: join(dir, 'events.jsonl'), line: 2 } });
    expect(existsSync(join(dir, 'calls.parquet'))).toBe(false);
  });

  it('through the CLI: a junk line appended to a dialogue log stops the next run with exit 3 and the line', async () => {
    const ws = await sampleWorkspace(['--users', '0']);
    expect((await runCli(['dialogues', '-w', ws, '--assistant', 'sim:default', '--limit', '3'])).code).toBe(0);
    const cell = readdirSync(join(ws, 'dialogues'))[0]!;
    const log = join(ws, 'dialogues', cell, 'records.jsonl');
    const lines = readFileSync(log, 'utf8').trim().split('\n').length;
    appendFileSync(log, '{"key":"ffff","try":1,"status":"ok","rounds":"many"}\n');
    const r = await runCli(['dialogues', '-w', ws, '--assistant', 'sim:default', '--limit', '1']);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`${log}:${lines + 1}`);
    noStack(r.stderr);
  });
});

describe('model specs that must be refused', () => {
  it.each([
    ['file:', 'openai:m?base_url=file:///etc/passwd'],
    ['ftp:', 'openai:m?base_url=ftp://127.0.0.1/v1'],
    ['unix:', 'anthropic:m?base_url=unix:/var/run/llm.sock'],
    ['no scheme', 'openai:m?base_url=127.0.0.1:8000/v1'],
    ['not a URL', 'openai:m?base_url=not a url'],
  ])('a base_url with %s', (_what, spec) => {
    const e = errorOf(() => parseModelSpec(spec, '--assistant'));
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toMatch(/base_url/);
  });

  it('credentials inside base_url are refused, and the message does not repeat them', () => {
    const e = errorOf(() => parseModelSpec('openai:m?base_url=http://user:hunter22@127.0.0.1:8000/v1'));
    expect(e.message).toMatch(/credentials/);
    expect(e.message).not.toContain('hunter22');
  });

  it.each(['temperature=0&temperature=1', 'base_url=http://a/v1&base_url=http://b/v1', 'key_env=A&key_env=B', 'max_tokens=10&max_tokens=10'])(
    'a parameter given twice: %s',
    (params) => {
      expect(errorOf(() => parseModelSpec(`openai:m?${params}`)).message).toMatch(/given twice/);
    },
  );

  it('key_env must name a variable', () => {
    expect(errorOf(() => parseModelSpec('openai:m?key_env=sk-abc123')).message).toMatch(/key_env/);
  });

  it('the CLI refuses a bad base_url at once (exit 2), before any record is written', async () => {
    const ws = await sampleWorkspace(['--users', '0']);
    const r = await runCli(['dialogues', '-w', ws, '--assistant', 'openai:m?base_url=file:///etc/passwd', '--user', 'sim:default'], {
      env: { OPENAI_API_KEY: 'sk-x' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/E_USAGE.*scheme "file:"/);
    expect(existsSync(join(ws, 'dialogues'))).toBe(false);
  });

  it('OPENAI_BASE_URL with another scheme is refused too', async () => {
    const ws = await sampleWorkspace(['--users', '0']);
    const r = await runCli(['dialogues', '-w', ws, '--assistant', 'openai:m', '--user', 'sim:default'], {
      env: { OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'ftp://127.0.0.1/v1' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/OPENAI_BASE_URL/);
  });
});

describe('pipelines (YAML) that must be refused without a crash', () => {
  const pipeline = (text: string) => {
    const file = join(tempDir(), 'p.yaml');
    writeFileSync(file, text);
    return file;
  };

  it('an alias bomb is E_INPUT_JSON, quickly, with no stack', async () => {
    const lines = ['name: bomb', 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 12; i++)
      lines.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    const r = await runCli(['make', 'all', '-p', pipeline(lines.join('\n') + '\n'), '--dry-run']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/E_INPUT_JSON.*alias/);
    noStack(r.stderr);
  });

  it('200k-deep nesting is E_INPUT_JSON, not a stack overflow trace', async () => {
    const r = await runCli(['make', 'all', '-p', pipeline(`name: deep\nx: ${'['.repeat(200_000)}${']'.repeat(200_000)}\n`), '--dry-run']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/E_INPUT_JSON.*nested too deeply/);
    noStack(r.stderr);
  });

  it('a directory where the pipeline file should be is a typed error', async () => {
    const r = await runCli(['make', 'all', '-p', tempDir(), '--dry-run']);
    expect(r.code).toBe(3);
    noStack(r.stderr);
  });

  it('a key put into a spec field through ${VAR} is never printed by a plan', async () => {
    const key = 'pipeline-secret-3b9d2e71';
    const file = pipeline(
      [
        'name: leaky',
        `description: "uses \${MY_API_KEY}"`,
        `data: { from: ${sampleDir} }`,
        'scenarios: { kind: sd, users: "0" }',
        'dialogues:',
        '  assistants: ["openai:m?base_url=http://127.0.0.1:9/v1&price_in=${MY_API_KEY}"]',
        '  settings: [base]',
        '  user: sim:default',
      ].join('\n') + '\n',
    );
    const r = await runCli(['make', 'all', '-p', file, '--dry-run', '-w', join(tempDir(), 'ws')], { env: { MY_API_KEY: key } });
    expect(r.stdout + r.stderr).not.toContain(key);
    const json = await runCli(['make', 'all', '-p', file, '--dry-run', '--json', '-w', join(tempDir(), 'ws')], { env: { MY_API_KEY: key } });
    expect(json.stdout + json.stderr).not.toContain(key);
  });
});

describe('stack traces reach the user only under --debug', () => {
  it('a directory given as a file is a typed error', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'q.sql'));
    const r = await runCli(['sql', '-f', join(dir, 'q.sql'), '--db', join(dir, 'none.duckdb')]);
    expect(r.code).toBeGreaterThan(0);
    expect(r.stderr).toMatch(/^plens: error E_/);
    noStack(r.stderr);
  });

  it('judge before any dialogue was compacted is E_PREREQUISITE, not a raw DuckDB "No files found"', async () => {
    const ws = await sampleWorkspace(['--users', '0']);
    mkdirSync(join(ws, 'dialogues', 'base__sim_default__00000000'), { recursive: true });
    writeFileSync(join(ws, 'dialogues', 'base__sim_default__00000000', 'records.jsonl'), '');
    const r = await runCli(['judge', '-w', ws, '--judge', 'sim:default']);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/E_PREREQUISITE/);
    expect(r.stderr).not.toMatch(/No files found/);
    noStack(r.stderr);
  });

  it('--debug prints the stack of what went wrong', async () => {
    const r = await runCli(['make', 'all', '-p', join(tempDir(), 'missing.yaml'), '--debug']);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/\n\s+at /);
  });
});

describe('the redactor', () => {
  it('cuts known values and credential shapes, and leaves prose alone', () => {
    registerSecret('my-very-own-value-123');
    expect(redact('x my-very-own-value-123 y')).toBe('x [REDACTED] y');
    expect(redact('Authorization: Bearer abc123def456ghi')).toBe('Authorization: Bearer [REDACTED]');
    expect(redact('{"x-api-key":"zz9988776655"}')).toBe('{"x-api-key":"[REDACTED]"}');
    expect(redact('key sk-proj-AbC123xyz789')).toBe('key [REDACTED]');
    expect(redact('api_key=abcd1234&model=m')).toBe('api_key=[REDACTED]&model=m');
    expect(redact('The bearer of this letter; max_tokens: 800; tokens: 12')).toBe('The bearer of this letter; max_tokens: 800; tokens: 12');
  });
});
