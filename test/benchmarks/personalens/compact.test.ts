import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { compactPartition, DIALOGUE_COLUMNS } from '../../../src/benchmarks/personalens/compact.js';
import { tempDir } from '../../helpers/cli.js';

const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
const call = (key: string, turn: number, at: string) => ({
  run_id: 'r',
  key,
  turn,
  role: 'assistant',
  model: 'm',
  status: 'ok',
  cached: false,
  attempts: 1,
  latency_ms: 1,
  input_tokens: 1,
  output_tokens: 1,
  cost_usd: 0,
  at,
});

let db: Database;
beforeAll(async () => {
  db = await Database.open(':memory:', { threads: 1 });
});
afterAll(() => db.close());

/** The file's rows in file order (a plain scan keeps it). */
const rows = (file: string, columns: string) => db.all(`SELECT ${columns} FROM read_parquet('${file}')`);

describe('compactPartition', () => {
  it('keeps one record per key (a result beats a failure, then the higher try) across shard logs, sorted by key, ignoring a torn tail', async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, 'records.jsonl'),
      jsonl([
        { key: 'e5', try: 1, status: 'failed', error: { kind: 'http', message: 'HTTP 500' }, rounds: 0 },
        { key: '07', try: 1, status: 'ok', rounds: 1, messages: [{ role: 'user', content: 'hi' }] },
        { key: 'e5', try: 2, status: 'ok', rounds: 2 },
        { key: '07', try: 2, status: 'failed', error: { kind: 'timeout', message: 't' }, rounds: 0 },
        { key: 'a0', try: 1, status: 'failed', error: { kind: 'http', message: 'first' }, rounds: 0 },
        { key: 'a0', try: 2, status: 'failed', error: { kind: 'http', message: 'second' }, rounds: 0 },
      ]),
    );
    // Another shard's log, its last write torn (no newline): that record does not exist yet.
    writeFileSync(
      join(dir, 'records.shard-1-of-2.jsonl'),
      jsonl([
        { key: 'ff', try: 1, status: 'ok', rounds: 3 },
        { key: '3c', try: 1, status: 'ok', rounds: 4 },
      ]) + '{"key":"00","try":1,"status":"ok"',
    );
    expect(await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS)).toEqual({ rows: 5 });
    expect(await rows(join(dir, 'dialogues.parquet'), `"key", "try", status, error.message AS error, rounds, len(messages) AS messages`)).toEqual([
      { key: '07', try: 1, status: 'ok', error: null, rounds: 1, messages: 1 },
      { key: '3c', try: 1, status: 'ok', error: null, rounds: 4, messages: null },
      { key: 'a0', try: 2, status: 'failed', error: 'second', rounds: 0, messages: null },
      { key: 'e5', try: 2, status: 'ok', error: null, rounds: 2, messages: null },
      { key: 'ff', try: 1, status: 'ok', error: null, rounds: 3, messages: null },
    ]);
    expect(existsSync(join(dir, 'calls.parquet'))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['dialogues.parquet', 'records.jsonl', 'records.shard-1-of-2.jsonl']);
  });

  it('writes calls in log order (logs in name order, lines as appended), not sorted by time', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'records.jsonl'), jsonl([{ key: 'k1', try: 1, status: 'ok' }]));
    writeFileSync(join(dir, 'events.jsonl'), jsonl([call('k9', 0, '2025-01-01T00:00:05Z'), call('k1', 1, '2025-01-01T00:00:01Z')]));
    writeFileSync(
      join(dir, 'events.shard-1-of-2.jsonl'),
      jsonl([call('k5', 0, '2025-01-01T00:00:00Z'), call('k2', 0, '2025-01-01T00:00:03Z')]) + '{"run_id":"r","key":"k3"',
    );
    await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS);
    expect(await rows(join(dir, 'calls.parquet'), `"key", turn, strftime("at", '%S') AS s`)).toEqual([
      { key: 'k9', turn: 0, s: '05' },
      { key: 'k1', turn: 1, s: '01' },
      { key: 'k5', turn: 0, s: '00' },
      { key: 'k2', turn: 0, s: '03' },
    ]);
  });

  it('keeps key order and log order across many row groups', async () => {
    const dir = tempDir();
    const n = 20_000;
    const ids = Array.from({ length: n }, (_, i) => `k${String(i).padStart(5, '0')}`);
    // Written newest key first, so only sorting puts them in order; calls in the order written.
    writeFileSync(join(dir, 'records.jsonl'), jsonl(ids.toReversed().map((key) => ({ key, try: 1, status: 'ok', rounds: 1 }))));
    writeFileSync(join(dir, 'events.jsonl'), jsonl(ids.toReversed().map((key) => call(key, 0, '2025-01-01T00:00:00Z'))));
    expect(await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS)).toEqual({ rows: n });
    const groups = async (f: string) =>
      (await db.all<{ n: number }>(`SELECT count(DISTINCT row_group_id)::INTEGER AS n FROM parquet_metadata('${join(dir, f)}')`))[0]!.n;
    expect(await groups('dialogues.parquet')).toBeGreaterThan(1);
    expect(await groups('calls.parquet')).toBeGreaterThan(1);
    expect((await rows(join(dir, 'dialogues.parquet'), '"key"')).map((r) => r['key'])).toEqual(ids);
    expect((await rows(join(dir, 'calls.parquet'), '"key"')).map((r) => r['key'])).toEqual(ids.toReversed());
  });

  it('logs of blank lines only compact to empty files, as an empty log would', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'records.jsonl'), '\n');
    writeFileSync(join(dir, 'events.jsonl'), '\n\n');
    expect(await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS)).toEqual({ rows: 0 });
    expect(await rows(join(dir, 'dialogues.parquet'), '"key"')).toEqual([]);
    expect(await rows(join(dir, 'calls.parquet'), '"key"')).toEqual([]);
  });

  it('a complete line that is not JSON is an error naming file and line, and leaves no output or snapshot behind', async () => {
    const dir = tempDir();
    const file = join(dir, 'records.jsonl');
    writeFileSync(file, '{"key":"a","try":1,"status":"ok"}\n{"key":"b","try":1,"status":"ok"]\n');
    await expect(compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS)).rejects.toMatchObject({ code: 'E_INPUT_JSON', location: { file, line: 2 } });
    expect(readdirSync(dir)).toEqual(['records.jsonl']);
  });
});
