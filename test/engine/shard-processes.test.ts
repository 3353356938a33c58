import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultReply, startMockLlm, type MockLlmServer, type MockRequest } from '../../src/testkit/mock-server.js';
import { runCli, runCliJson, type CliResult } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';

/**
 * The done-when of sharded runs: a pipeline run as 4 shards in 4 concurrent processes, each told
 * its shard a different way (flag, PLENS_SHARD, a Kubernetes and a Slurm array index), then merged
 * by the warehouse, gives the same tables as one unsharded run against the same mock endpoint.
 */

let server: MockLlmServer;
beforeAll(async () => {
  server = await startMockLlm({ reply, keepRequests: false });
});
afterAll(async () => {
  await server?.close();
});

/** Deterministic per request, so both runs get the same replies; the judge's vary (and some do not parse) so the tables have something to compare. */
function reply(r: MockRequest): string {
  if (r.model !== 'judge') return defaultReply(r);
  const prompt = r.messages[0]!.content;
  const h = createHash('sha256').update(prompt).digest().readUInt32BE(0);
  if (/VERDICT/.test(prompt)) return `VERDICT: ${h % 3 === 0 ? 'False' : 'True'}\nEXPLANATION: checked against the goal.`;
  if (/Personalization Score/.test(prompt)) {
    if (h % 7 === 0) return 'Reasonably personal, I suppose.';
    return `<response>\nPersonalization Score: ${1 + (h % 4)}\nKey Observations: some.\nJustification: because.\nImprovement Suggestions: none.\n</response>`;
  }
  return `Score: ${1 + (h % 5)}\nJustification: reads fine.`;
}

/** Every variable resolveShard reads, emptied (empty counts as unset), so the test's own environment cannot shard a run. */
const NO_SHARD_ENV: Record<string, string> = Object.fromEntries(
  [
    'PLENS_SHARD',
    'PLENS_SHARD_COUNT',
    'JOB_COMPLETION_INDEX',
    'SLURM_ARRAY_TASK_ID',
    'SLURM_ARRAY_TASK_COUNT',
    'SLURM_ARRAY_TASK_MIN',
    'SLURM_ARRAY_TASK_MAX',
    'SLURM_ARRAY_TASK_STEP',
    'AWS_BATCH_JOB_ARRAY_INDEX',
    'AWS_BATCH_JOB_ARRAY_SIZE',
  ].map((k) => [k, '']),
);

/** The four ways a process learns its shard, one per process. */
const SHARDS: Array<{ args: string[]; env: Record<string, string>; source: string }> = [
  { args: ['--shard', '0/4'], env: {}, source: '--shard' },
  { args: [], env: { PLENS_SHARD: '1/4' }, source: 'PLENS_SHARD' },
  { args: [], env: { JOB_COMPLETION_INDEX: '2', PLENS_SHARD_COUNT: '4' }, source: 'JOB_COMPLETION_INDEX' },
  { args: [], env: { SLURM_ARRAY_TASK_ID: '3', SLURM_ARRAY_TASK_COUNT: '4' }, source: 'SLURM_ARRAY_TASK_ID' },
];

type StageJson = { planned: number; ok: number; failed: number; shard?: { index: number; count: number; source: string } };

function stageArgs(ws: string): { dialogues: string[]; judge: string[] } {
  return {
    // The sim user keeps the test fast; the assistant and the judge are LLM calls to the mock.
    dialogues: ['dialogues', '-w', ws, '--assistant', `openai:a?base_url=${server.url}/v1`, '--user', 'sim:default', '--setting', 'base', '--concurrency', '8'],
    judge: ['judge', '-w', ws, '--judge', `openai:judge?base_url=${server.url}/v1`, '--concurrency', '8'],
  };
}

async function run(args: string[], env: Record<string, string> = {}): Promise<CliResult & { json: StageJson }> {
  const r = await runCli([...args, '--json'], { env: { ...NO_SHARD_ENV, OPENAI_API_KEY: 'sk-shards', ...env } });
  ok(r);
  return { ...r, json: JSON.parse(r.stdout) as StageJson };
}

function ok(r: CliResult): void {
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
}

/** The warehouse's view of a workspace: the paper's tables as JSON, and row counts. */
async function merged(ws: string) {
  const db = join(ws, '..', 'plens.duckdb');
  ok(await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none']));
  const tables = await runCliJson<{ tables: Array<{ name: string; rows: unknown[] }> }>([
    'tables',
    '--db',
    db,
    '--only',
    'table3,table4,table13',
    '--format',
    'json',
  ]);
  ok(tables);
  const sql = async (q: string) => {
    const r = await runCliJson<Array<Record<string, unknown>>>(['sql', q, '--db', db]);
    ok(r);
    return r.json;
  };
  return {
    tables: tables.json.tables,
    judgment_status: await sql('select * from judgment_status order by all'),
    counts: await sql(
      `select 'dialogues' as t, count(*) as n, count(distinct dialogue_id) as ids, count(*) filter (status = 'ok') as ok from dialogues
       union all select 'judgments', count(*), count(distinct judgment_id), count(*) filter (status = 'ok') from judgments order by t`,
    ),
  };
}

describe('a pipeline run as 4 shards in separate processes', () => {
  it('merges into the same tables as one unsharded run, with nothing lost or doubled', async () => {
    const [sharded, whole] = await Promise.all([sampleWorkspace(), sampleWorkspace()]);
    const timings: Record<string, number> = {};
    const timed = async <T>(name: string, f: () => Promise<T>): Promise<T> => {
      const t = performance.now();
      try {
        return await f();
      } finally {
        timings[name] = Math.round(performance.now() - t);
      }
    };

    const shardedArgs = stageArgs(sharded);
    const results: Record<'dialogues' | 'judge', StageJson[]> = { dialogues: [], judge: [] };
    for (const stage of ['dialogues', 'judge'] as const) {
      const rs = await timed(`sharded ${stage} (4 processes)`, () => Promise.all(SHARDS.map((s) => run([...shardedArgs[stage], ...s.args], s.env))));
      rs.forEach((r, i) => {
        ok(r);
        // Each process says which shard it ran and why.
        expect(r.json.shard).toMatchObject({ index: i, count: 4, source: SHARDS[i]!.source });
        expect(r.json.planned).toBeGreaterThan(0);
      });
      results[stage] = rs.map((r) => r.json);
    }

    const wholeArgs = stageArgs(whole);
    const single: Record<'dialogues' | 'judge', StageJson> = {
      dialogues: (await timed('unsharded dialogues', () => run(wholeArgs.dialogues))).json,
      judge: (await timed('unsharded judge', () => run(wholeArgs.judge))).json,
    };
    for (const stage of ['dialogues', 'judge'] as const) {
      expect(single[stage].shard).toBeUndefined();
      // The shards' work adds up to the whole: nothing lost, nothing done twice.
      const sum = (k: 'planned' | 'ok' | 'failed') => results[stage].reduce((n, r) => n + r[k], 0);
      expect({ planned: sum('planned'), ok: sum('ok'), failed: sum('failed') }, stage).toEqual({
        planned: single[stage].planned,
        ok: single[stage].ok,
        failed: single[stage].failed,
      });
    }
    // users 0-1: 49 scenarios; six judgments each (task, personalization, naturalness and coherence of both sides).
    expect(single.dialogues.planned).toBe(49);
    expect(single.judge.planned).toBe(49 * 6);

    const [a, b] = await timed('warehouse + tables, both', () => Promise.all([merged(sharded), merged(whole)]));
    expect(a.counts).toEqual([
      { t: 'dialogues', n: 49, ids: 49, ok: 49 },
      { t: 'judgments', n: 294, ids: 294, ok: single.judge.ok },
    ]);
    expect(a.tables.map((t) => t.name)).toEqual(['table3', 'table4', 'table13']);
    expect(a.tables.every((t) => t.rows.length > 0)).toBe(true);
    // Some judge replies do not parse, so judgment_status has more than one status to compare.
    expect(single.judge.failed).toBeGreaterThan(0);
    expect(a).toEqual(b);
    console.info(`shard-processes timings (ms): ${JSON.stringify(timings)}`);
  });
});
