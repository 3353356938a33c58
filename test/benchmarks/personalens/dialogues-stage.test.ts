import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { readJsonl } from '../../../src/engine/jsonl-log.js';
import { defaultReply, startMockLlm, type MockFault, type MockLlmServer, type MockRequest } from '../../../src/testkit/mock-server.js';
import { runCli, runCliJson } from '../../helpers/cli.js';
import { containsBytes, filesUnder, sampleWorkspace } from '../../helpers/workspace.js';

const SECRET = 'sk-plens-test-SECRET-0c1f9e';
// users 0 and 1 of the sample: 21 + 3 and 22 + 3 scenarios (data/sample/README.md).
const SCENARIOS = 49;

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A stable number 0-99 per distinct request, so faults hit the same calls on every attempt. */
function bucket(r: MockRequest): number {
  return (
    createHash('sha256')
      .update(r.system + JSON.stringify(r.messages))
      .digest()
      .readUInt32BE(0) % 100
  );
}

/** The mock's replies, made distinct per conversation so no two dialogues send the same request. */
const reply = (r: MockRequest) => `(${bucket(r)}) ${defaultReply(r)}`;

function dialoguesArgs(ws: string, api: 'openai' | 'anthropic', extra: string[] = []): string[] {
  const base = api === 'openai' ? `base_url=${server!.url}/v1` : `base_url=${server!.url}`;
  return [
    'dialogues',
    '-w',
    ws,
    '--assistant',
    `${api}:assistant-mock?${base}&price_in=1&price_out=2`,
    '--user',
    `${api}:user-mock?${base}`,
    '--setting',
    'base',
    '--retries',
    '3',
    '--retry-delay-ms',
    '5',
    '--call-timeout',
    '1',
    '--concurrency',
    '8',
    ...extra,
  ];
}

const env = { OPENAI_API_KEY: SECRET, ANTHROPIC_API_KEY: SECRET };

async function records(ws: string): Promise<Array<{ key: string; status: string; error: { kind: string } | null; messages: unknown[] }>> {
  const out = [];
  for (const cell of readdirSync(join(ws, 'dialogues'))) {
    for (const f of readdirSync(join(ws, 'dialogues', cell)).filter((f) => f.startsWith('records'))) {
      for await (const r of readJsonl<{ key: string; status: string; error: { kind: string } | null; messages: unknown[] }>(join(ws, 'dialogues', cell, f)))
        out.push(r);
    }
  }
  return out;
}

async function compacted(ws: string): Promise<Array<Record<string, unknown>>> {
  const db = await Database.open(':memory:');
  try {
    return await db.all(`SELECT * FROM read_parquet('${ws}/dialogues/*/dialogues.parquet') ORDER BY "key"`);
  } finally {
    db.close();
  }
}

describe.each(['openai', 'anthropic'] as const)('plens dialogues against a faulty %s endpoint', (api) => {
  it('ends every scenario done or recorded as failed, none twice, with bounded retries; --retry-failed finishes the rest', async () => {
    let hardFailures = true;
    const fault = (r: MockRequest): MockFault | undefined => {
      const b = bucket(r);
      if (hardFailures && b < 3) return { kind: 'status', status: 503 };
      if (r.attempt > 0) return undefined;
      if (b < 15) return { kind: 'status', status: 429, retryAfterSeconds: 0 };
      if (b < 22) return { kind: 'status', status: 500 };
      if (b < 27) return { kind: 'reset' };
      if (b < 31) return { kind: 'garbage' };
      if (b < 34) return { kind: 'truncated' };
      if (b < 36) return { kind: 'hang' };
      if (api === 'anthropic' && b < 40) return { kind: 'status', status: 529 };
      return undefined;
    };
    server = await startMockLlm({ fault, reply, requireAuth: true });
    const ws = await sampleWorkspace();

    const first = await runCliJson<{ ok: number; failed: number; planned: number; failure_reasons: Record<string, number> }>(dialoguesArgs(ws, api), { env });
    expect(first.code, first.stdout + first.stderr).toBe(0);
    expect(first.json.planned).toBe(SCENARIOS);
    expect(first.json.ok + first.json.failed).toBe(SCENARIOS);
    expect(first.json.failed).toBeGreaterThan(0);
    expect(Object.keys(first.json.failure_reasons)).toEqual(['http_503']);
    // Bounded: no request body was sent more than 1 + retries times.
    expect(Math.max(...server.requests.map((r) => r.attempt))).toBeLessThanOrEqual(3);
    const stats = server.stats().outcomes;
    for (const outcome of ['status:429', 'status:500', 'reset', 'garbage', 'truncated', 'hang']) expect(stats[outcome], outcome).toBeGreaterThan(0);

    let recs = await records(ws);
    expect(recs).toHaveLength(SCENARIOS);
    expect(new Set(recs.map((r) => r.key)).size).toBe(SCENARIOS);
    for (const r of recs.filter((r) => r.status === 'failed')) expect(r.error?.kind).toBe('http_503');

    // A plain rerun does nothing: failures are rerun only on request.
    const again = await runCliJson<{ planned: number; already_failed: number }>(dialoguesArgs(ws, api), { env });
    expect(again.json).toMatchObject({ planned: 0, already_failed: first.json.failed });

    hardFailures = false;
    const retried = await runCliJson<{ ok: number; failed: number; planned: number }>(dialoguesArgs(ws, api, ['--retry-failed']), { env });
    expect(retried.json).toMatchObject({ planned: first.json.failed, ok: first.json.failed, failed: 0 });
    recs = await records(ws);
    expect(recs).toHaveLength(SCENARIOS + first.json.failed);
    const rows = await compacted(ws);
    expect(rows).toHaveLength(SCENARIOS);
    expect(rows.every((r) => r['status'] === 'ok')).toBe(true);
    expect(rows.every((r) => ['terminated', 'round_limit'].includes(r['end_reason'] as string))).toBe(true);

    // The key is sent, but never written anywhere.
    const db = join(ws, '..', 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db])).code).toBe(0);
    const leaks = [...filesUnder(join(ws, '..'))].filter((f) => containsBytes(f, SECRET));
    expect(leaks).toEqual([]);
  });
});

describe('plens dialogues and the call cache', () => {
  it('a finished run reruns with zero HTTP calls and byte-identical dialogues; --cache replay fails clearly on a miss', async () => {
    // The mock's default replies repeat across dialogues, so identical calls are in flight at once.
    server = await startMockLlm({ requireAuth: true });
    const ws = await sampleWorkspace();
    expect((await runCli(dialoguesArgs(ws, 'openai'), { env })).code).toBe(0);
    const calls = server.stats().requests;
    expect(calls).toBeGreaterThan(SCENARIOS * 3);
    const cell = readdirSync(join(ws, 'dialogues'))[0]!;
    const before = readFileSync(join(ws, 'dialogues', cell, 'records.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .sort();
    const parquetBefore = readFileSync(join(ws, 'dialogues', cell, 'dialogues.parquet'));

    rmSync(join(ws, 'dialogues'), { recursive: true });
    const rerun = await runCliJson<{ ok: number; calls: number; cached_calls: number }>(dialoguesArgs(ws, 'openai', ['--cache', 'replay']), { env });
    expect(rerun.code, rerun.stdout).toBe(0);
    expect(server.stats().requests).toBe(calls);
    expect(rerun.json.ok).toBe(SCENARIOS);
    expect(rerun.json.cached_calls).toBe(rerun.json.calls);
    const after = readFileSync(join(ws, 'dialogues', cell, 'records.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .sort();
    expect(after).toEqual(before);
    expect(readFileSync(join(ws, 'dialogues', cell, 'dialogues.parquet')).equals(parquetBefore)).toBe(true);

    const miss = await runCli(dialoguesArgs(ws, 'openai', ['--cache', 'replay', '--setting', 'base+all']), { env });
    expect(miss.code, miss.stderr).toBe(4);
    expect(miss.stderr).toContain('E_CACHE_MISS');
    expect(miss.stderr).toContain('--cache replay: no recorded answer');
    expect(server.stats().requests).toBe(calls);
  });

  it('--dry-run plans and estimates without calling or writing', async () => {
    server = await startMockLlm();
    const ws = await sampleWorkspace();
    const r = await runCliJson<{ planned: number; estimate: { calls: number; costUsd: number } }>(dialoguesArgs(ws, 'openai', ['--dry-run']), { env });
    expect(r.code).toBe(0);
    expect(r.json.planned).toBe(SCENARIOS);
    expect(r.json.estimate.calls).toBeGreaterThan(SCENARIOS * 5);
    expect(r.json.estimate.costUsd).toBeGreaterThan(0);
    expect(server.stats().requests).toBe(0);
    expect(readdirSync(ws)).not.toContain('dialogues');
  });
});

describe('plens dialogues with the offline simulator', () => {
  it('runs on the sample with no endpoint, and the warehouse counts dialogues per setting', async () => {
    const ws = await sampleWorkspace(['--kind', 'all']);
    const r = await runCli(['dialogues', '-w', ws, '--assistant', 'sim:default', '--setting', 'base+all']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('offline simulator, not a model');
    const db = join(ws, '..', 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db])).code).toBe(0);
    const rows = (await runCliJson<unknown[]>(['sql', 'select setting, count(*) as n, bool_and(simulated) as simulated from dialogues group by 1', '--db', db]))
      .json;
    expect(rows).toEqual([{ setting: 'base+all', n: 180, simulated: true }]);
    // turns: every dialogue opens with the user and alternates.
    const turns = (
      await runCliJson<Array<{ bad: number }>>(['sql', "select count(*) as bad from turns where (turn % 2 = 0) <> (speaker = 'user')", '--db', db])
    ).json;
    expect(turns).toEqual([{ bad: 0 }]);
  });
});
