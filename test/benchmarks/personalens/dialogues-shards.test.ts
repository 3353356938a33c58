import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { readJsonl } from '../../../src/engine/jsonl-log.js';
import { startMockLlm, type MockLlmServer } from '../../../src/testkit/mock-server.js';
import { runCliJson } from '../../helpers/cli.js';
import { sampleWorkspace } from '../../helpers/workspace.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('plens dialogues --shard i/n', () => {
  it('two shards run at the same time, each writing its own log; together they cover every key once', async () => {
    server = await startMockLlm({ latencyMs: 10 });
    const ws = await sampleWorkspace();
    const args = (shard: string) => [
      'dialogues',
      '-w',
      ws,
      '--assistant',
      `openai:a?base_url=${server!.url}/v1`,
      '--user',
      `openai:u?base_url=${server!.url}/v1`,
      '--setting',
      'base',
      '--concurrency',
      '4',
      '--shard',
      shard,
    ];
    const env = { env: { OPENAI_API_KEY: 'sk-shard' } };
    type S = { ok: number; failed: number; planned: number };
    const [a, b] = await Promise.all([runCliJson<S>(args('0/2'), env), runCliJson<S>(args('1/2'), env)]);
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    expect(a.json.planned + b.json.planned).toBe(49);
    expect(a.json.planned).toBeGreaterThan(10);
    expect(b.json.planned).toBeGreaterThan(10);

    const cell = join(ws, 'dialogues', readdirSync(join(ws, 'dialogues'))[0]!);
    const logs = readdirSync(cell).filter((f) => f.startsWith('records'));
    expect(logs.sort()).toEqual(['records.shard-0-of-2.jsonl', 'records.shard-1-of-2.jsonl']);
    const keys: string[][] = [];
    for (const f of logs) {
      const k: string[] = [];
      for await (const r of readJsonl<{ key: string }>(join(cell, f))) k.push(r.key);
      keys.push(k);
    }
    expect(keys[0]!.filter((k) => keys[1]!.includes(k))).toEqual([]);
    expect(new Set([...keys[0]!, ...keys[1]!]).size).toBe(49);

    // A rerun of both finds everything done; the compacted table holds every key once.
    const again = await runCliJson<S & { already_done: number }>(args('0/2'), env);
    expect(again.json).toMatchObject({ planned: 0, already_done: a.json.planned });
    const db = await Database.open(':memory:');
    try {
      const [row] = await db.all<{ n: number; keys: number }>(
        `SELECT count(*)::INTEGER AS n, count(DISTINCT "key")::INTEGER AS keys FROM read_parquet('${cell}/dialogues.parquet')`,
      );
      expect(row).toEqual({ n: 49, keys: 49 });
    } finally {
      db.close();
    }
  });
});

describe('plens dialogues with a cell given twice', () => {
  it('does each key once (`--setting base base` plans 49 dialogues, not 98)', async () => {
    const ws = await sampleWorkspace();
    const r = await runCliJson<{ planned: number; ok: number }>([
      'dialogues',
      '-w',
      ws,
      '--assistant',
      'sim:default',
      'sim:default',
      '--setting',
      'base',
      'base',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 49 });
  });
});
