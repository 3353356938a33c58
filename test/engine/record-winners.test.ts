import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlChunks } from '../../src/engine/jsonl-chunks.js';
import { writeRecordWinners } from '../../src/engine/record-winners.js';
import { tempDir } from '../helpers/cli.js';

/** Writes logs (name -> text) into a fresh folder; returns them whole, in the order given. */
function logs(files: Record<string, string>): { dir: string; logs: { path: string; length: number }[] } {
  const dir = tempDir();
  const out = Object.entries(files).map(([name, text]) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return { path, length: statSync(path).size };
  });
  return { dir, logs: out };
}

/** Where the winners go: one file (no size makes a second), and its text once written. */
const sink = (dir: string, name = 'out') => new JsonlChunks(join(dir, name), Number.POSITIVE_INFINITY);
const textOf = (to: JsonlChunks) => to.files.map((f) => readFileSync(f, 'utf8')).join('');

async function winners(files: Record<string, string>): Promise<{ rows: number; text: string }> {
  const { dir, logs: l } = logs(files);
  const to = sink(dir);
  const rows = await writeRecordWinners(l, to);
  return { rows, text: textOf(to) };
}

describe('writeRecordWinners', () => {
  it('a result beats a failure whichever came first; between failures the higher try wins', async () => {
    const r = await winners({
      'records.jsonl': [
        '{"key":"a","try":1,"status":"failed","n":1}',
        '{"key":"b","try":1,"status":"ok","n":2}',
        '{"key":"c","try":1,"status":"failed","n":3}',
        '{"key":"a","try":2,"status":"ok","n":4}',
        '{"key":"b","try":2,"status":"failed","n":5}',
        '{"key":"c","try":2,"status":"parse_error","n":6}',
        '',
      ].join('\n'),
    });
    expect(r.rows).toBe(3);
    expect(r.text).toBe('{"key":"a","try":2,"status":"ok","n":4}\n{"key":"b","try":1,"status":"ok","n":2}\n{"key":"c","try":2,"status":"parse_error","n":6}\n');
  });

  it('field order does not matter, and a higher try read earlier still wins', async () => {
    const r = await winners({ 'records.jsonl': '{"status":"failed","try":3,"key":"k","n":1}\n{"key":"k","status":"failed","try":2,"n":2}\n' });
    expect(r.text).toBe('{"status":"failed","try":3,"key":"k","n":1}\n');
  });

  it('on a full tie the record read later wins: the later log, then the later line', async () => {
    const r = await winners({
      'records.jsonl': '{"key":"k","try":1,"status":"ok","n":1}\n{"key":"j","try":1,"status":"ok","n":2}\n{"key":"j","try":1,"status":"ok","n":3}\n',
      'records.shard-1-of-2.jsonl': '{"key":"k","try":1,"status":"ok","n":4}\n',
    });
    expect(r.text).toBe('{"key":"j","try":1,"status":"ok","n":3}\n{"key":"k","try":1,"status":"ok","n":4}\n');
  });

  it('merges shard logs holding different keys, sorted by key whatever the write order', async () => {
    const r = await winners({
      'records.shard-0-of-2.jsonl': '{"key":"f3","try":1,"status":"ok"}\n{"key":"0a","try":1,"status":"ok"}\n',
      'records.shard-1-of-2.jsonl': '{"key":"9b","try":1,"status":"ok"}\n{"key":"00","try":1,"status":"failed"}\n{"key":"c1","try":1,"status":"ok"}\n',
    });
    expect(r.rows).toBe(5);
    expect(
      r.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).key),
    ).toEqual(['00', '0a', '9b', 'c1', 'f3']);
  });

  it('reads only up to the given length: a torn tail or a later append is not read', async () => {
    const { dir, logs: l } = logs({ 'records.jsonl': '{"key":"a","try":1,"status":"ok"}\n{"key":"b","try":1,"status":"ok"}\n{"key":"c","try":1,"sta' });
    // The whole file: the torn last line is no record yet.
    const whole = sink(dir);
    expect(await writeRecordWinners(l, whole)).toBe(2);
    expect(textOf(whole)).toBe('{"key":"a","try":1,"status":"ok"}\n{"key":"b","try":1,"status":"ok"}\n');
    // A captured length of the first line only (34 bytes with its newline).
    const first = sink(dir, 'first');
    expect(await writeRecordWinners([{ path: l[0]!.path, length: 34 }], first)).toBe(1);
    expect(textOf(first)).toBe('{"key":"a","try":1,"status":"ok"}\n');
  });

  it('reads multi-byte text back whole (offsets are in bytes) and skips blank lines', async () => {
    const r = await winners({ 'records.jsonl': '{"key":"b","try":1,"status":"ok","t":"héllo ✓ 😀"}\n\n{"key":"a","try":1,"status":"ok","t":"日本語"}\n' });
    expect(r.text).toBe('{"key":"a","try":1,"status":"ok","t":"日本語"}\n{"key":"b","try":1,"status":"ok","t":"héllo ✓ 😀"}\n');
  });

  it('no records gives an empty file', async () => {
    const r = await winners({ 'records.jsonl': '' });
    expect(r).toEqual({ rows: 0, text: '' });
  });

  it('a complete line that is not JSON is an error naming file and line; a record with no key too', async () => {
    const bad = logs({ 'records.jsonl': '{"key":"a","try":1,"status":"ok"}\n{"key":"b",\n' });
    await expect(writeRecordWinners(bad.logs, sink(bad.dir))).rejects.toMatchObject({
      code: 'E_INPUT_JSON',
      location: { file: bad.logs[0]!.path, line: 2 },
    });
    const keyless = logs({ 'records.jsonl': '\n{"try":1,"status":"ok"}\n' });
    await expect(writeRecordWinners(keyless.logs, sink(keyless.dir))).rejects.toMatchObject({
      code: 'E_INPUT_SCHEMA',
      location: { file: keyless.logs[0]!.path, line: 2 },
    });
  });

  it('writes lines longer than its output buffer whole', async () => {
    const big = 'x'.repeat(1_500_000);
    const r = await winners({
      'records.jsonl': `{"key":"b","try":1,"status":"ok"}\n{"key":"a","try":1,"status":"ok","t":"${big}"}\n{"key":"c","try":1,"status":"ok"}\n`,
    });
    expect(r.text).toBe(`{"key":"a","try":1,"status":"ok","t":"${big}"}\n{"key":"b","try":1,"status":"ok"}\n{"key":"c","try":1,"status":"ok"}\n`);
  });
});
