import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { JudgeSummary } from '../../../src/benchmarks/personalens/judge-stage.js';
import type { MockBatchOptions } from '../../../src/testkit/mock-batch.js';
import { startMockLlm, type MockLlmServer } from '../../../src/testkit/mock-server.js';
import { runCli, runCliJson } from '../../helpers/cli.js';
import { judgePartition, judgeReply } from '../../helpers/batch.js';
import { simDialoguesWorkspace } from '../../helpers/workspace.js';

/*
 * A batch create is paid work: when its answer is lost after the provider made the batch (a 5xx
 * after the side effect, a reset connection, a client timeout), plens must find that batch and
 * never create another for the same requests. Counted on the server: batches created, and how
 * many batches carried each request (custom id): 1 each, whatever fails.
 */
let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ENV = { env: { OPENAI_API_KEY: 'sk-batch-test', ANTHROPIC_API_KEY: 'sk-ant-batch-test' } };

/** `plens judge --batch` on task completion against the mock, judged by `model` of `provider`. */
function judgeArgs(ws: string, provider: 'openai' | 'anthropic', model = 'judge', extra: string[] = []): string[] {
  const judge = `${provider}:${model}?base_url=${server!.url}${provider === 'openai' ? '/v1' : ''}&price_in=2.5&price_out=10`;
  return [
    'judge',
    '-w',
    ws,
    '--judge',
    judge,
    '--dimensions',
    'task_completion',
    '--retry-delay-ms',
    '5',
    '--batch',
    '--poll-interval',
    '0.01',
    '--json',
    ...extra,
  ];
}

/** Dialogues of users 0-1 (49) judged on task completion: 49 requests. */
async function setup(batch: MockBatchOptions, provider: 'openai' | 'anthropic', extra: string[] = []): Promise<{ ws: string; args: string[] }> {
  server = await startMockLlm({ reply: judgeReply, batch, requireAuth: true });
  const ws = await simDialoguesWorkspace();
  return { ws, args: judgeArgs(ws, provider, 'judge', extra) };
}

/** Each request submitted went into exactly one batch (48: two of the 49 judge prompts are identical, sent once). */
function expectEachOnce(): void {
  const counts = server!.batch.submittedPerCustomId();
  expect(counts.size).toBe(48);
  expect([...counts.values()].every((n) => n === 1)).toBe(true);
}

for (const provider of ['openai', 'anthropic'] as const) {
  describe(`plens judge --batch (${provider}): a create whose answer is lost is never repeated`, () => {
    it('a 5xx after the batch was made: the batch is found, none created again, every answer recorded', async () => {
      const { args } = await setup({ createFault: (n) => (n === 0 ? { kind: 'status', status: 500 } : undefined) }, provider);
      const r = await runCliJson<JudgeSummary>(args, ENV);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ planned: 49, ok: 49, failed: 0 });
      expect(r.json.batch).toMatchObject({ submitted: 1, collected: 1, items_answered: 49, fallback_online: 0 });
      expect(server!.batch.submissions).toBe(1);
      expectEachOnce();
      expect(server!.requests.filter((q) => q.batch === undefined)).toHaveLength(0);
    });

    it('the connection reset on three of five creates: five batches, each request in one', async () => {
      // --batch-size 10: five batches; the answers of the 1st, 2nd and 4th creates are lost.
      const lost = new Set([0, 1, 3]);
      const { args } = await setup({ createFault: (n) => (lost.has(n) ? { kind: 'reset' } : undefined) }, provider, ['--batch-size', '10']);
      const r = await runCliJson<JudgeSummary>(args, ENV);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ planned: 49, ok: 49, failed: 0 });
      expect(r.json.batch).toMatchObject({ submitted: 5, collected: 5, items_answered: 49, fallback_online: 0 });
      expect(server!.batch.submissions).toBe(5);
      expectEachOnce();
    });

    it('a create slower than --call-timeout: the batch it made is adopted, not orphaned', async () => {
      const { args } = await setup({ createFault: (n) => (n === 0 ? { kind: 'slow', delayMs: 2500 } : undefined) }, provider, ['--call-timeout', '1']);
      const r = await runCliJson<JudgeSummary>(args, ENV);
      expect(r.code, r.stderr).toBe(0);
      expect(r.json).toMatchObject({ ok: 49 });
      expect(r.json.batch).toMatchObject({ submitted: 1, collected: 1, items_answered: 49 });
      expect(server!.batch.submissions).toBe(1);
      expectEachOnce();
      // No batch is left behind uncollected.
      expect(server!.batch.list().every((b) => b.status === 'completed')).toBe(true);
    });
  });
}

describe("plens judge --batch (anthropic): recovery knows every shard's batches", () => {
  it("a shard killed between create and record adopts its own batch, not the other shard's of the same size", async () => {
    // Two shards of one workspace, batches of 10: the shards' batches have the same sizes.
    const { ws, args } = await setup({}, 'anthropic', ['--batch-size', '10']);
    const a = await runCliJson<JudgeSummary>([...args, '--shard', '0/2'], ENV);
    expect(a.code, a.stderr).toBe(0);
    const b = await runCliJson<JudgeSummary>([...args, '--shard', '1/2'], ENV);
    expect(b.code, b.stderr).toBe(0);
    const created = server!.batch.submissions;
    // Shard 1 as if killed right after creating its batches: its ledger keeps only the stagings,
    // and its records are gone, so the rerun has to find its batches again.
    const dir = judgePartition(ws);
    const ledger = join(dir, 'batches.shard-1-of-2.jsonl');
    const lines = readFileSync(ledger, 'utf8').split('\n').filter(Boolean);
    writeFileSync(ledger, `${lines.filter((l) => l.includes('"type":"staged"') || l.includes('"type":"aliases"')).join('\n')}\n`);
    writeFileSync(join(dir, 'records.shard-1-of-2.jsonl'), '');
    writeFileSync(join(dir, 'events.shard-1-of-2.jsonl'), '');
    const rerun = await runCliJson<JudgeSummary>([...args, '--shard', '1/2'], ENV);
    expect(rerun.code, rerun.stderr).toBe(0);
    expect(server!.batch.submissions).toBe(created);
    expect(rerun.json.batch).toMatchObject({ submitted: 0, fallback_online: 0 });
    expect(rerun.json.batch!.items_answered).toBe(b.json.batch!.items_answered);
    expectEachOnce();
    expect(server!.requests.filter((q) => q.batch === undefined)).toHaveLength(0);
  });
});

describe('plens judge --batch: identical requests under different keys', () => {
  it('are submitted once and paid once; every key gets the answer, and a rerun submits nothing', async () => {
    server = await startMockLlm({ reply: judgeReply, batch: {}, requireAuth: true });
    // The offline simulator's dialogues repeat themselves across settings: many judge prompts are identical.
    const ws = await simDialoguesWorkspace(['--users', '0-1'], ['--setting', 'base', 'vanilla']);
    const args = [
      'judge',
      '-w',
      ws,
      '--judge',
      `openai:judge?base_url=${server.url}/v1&price_in=2.5&price_out=10`,
      '--dimensions',
      'naturalness',
      '--batch',
      '--poll-interval',
      '0.01',
      '--json',
    ];
    const r = await runCliJson<JudgeSummary>(args, ENV);
    expect(r.code, r.stderr).toBe(0);
    const bodies = server.requests.filter((q) => q.batch !== undefined).map((q) => JSON.stringify(q.messages));
    const distinct = new Set(bodies).size;
    expect(distinct).toBeLessThan(r.json.planned);
    expect(bodies).toHaveLength(distinct);
    expect(r.json).toMatchObject({ ok: r.json.planned, failed: 0 });
    expect(r.json.batch).toMatchObject({ submitted: 1, items_submitted: distinct, items_answered: r.json.planned, fallback_online: 0 });
    // Each answer was paid once: the calls that took a twin's answer cost nothing.
    const events = (await import('node:fs'))
      .readFileSync(join(judgePartition(ws), 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { cost_usd: number; cached: boolean });
    expect(events.filter((e) => e.cost_usd > 0)).toHaveLength(distinct);
    expect(events.filter((e) => e.cached && e.cost_usd === 0)).toHaveLength(r.json.planned - distinct);
    expect(r.json.cost_usd).toBeCloseTo(r.json.batch!.cost_usd, 9);
    const again = await runCliJson<JudgeSummary>(args, ENV);
    expect(again.json).toMatchObject({ planned: 0 });
    expect(server.batch.submissions).toBe(1);
  });
});

describe('plens judge --batch: a ledger line plens did not write', () => {
  it.each([
    ['keys that are not a list', (l: string) => l.replace(/"keys":\[[^\]]*\]/, '"keys":"all"')],
    ['an unknown entry type', () => '{"type":"resubmit","id":"b-x","at":"2026-01-01T00:00:00Z"}'],
    ['another model', (l: string) => l.replace(/"model":"[^"]+"/, '"model":"openai:other"')],
  ])('%s: refused with the file (and line), nothing submitted, nothing appended', async (_what, forge) => {
    const { ws, args } = await setup({ plan: () => ({ hold: true }) }, 'openai');
    // A batch held open; the run is stopped by Ctrl-C while it waits (the ledger keeps it open).
    const { spawnCli } = await import('../../helpers/batch.js');
    const run = spawnCli(args, ENV.env);
    const { waitFor } = await import('../../helpers/batch.js');
    await waitFor('the batch polled', () => (server!.batch.list()[0]?.polls ?? 0) >= 1);
    run.child.kill('SIGINT');
    await run.exit;
    const file = join(judgePartition(ws), 'batches.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    const forged = forge(lines[0]!);
    writeFileSync(file, `${[forged, ...lines.slice(1)].join('\n')}\n`);
    const before = readFileSync(file, 'utf8');
    const submissions = server!.batch.submissions;
    const r = await runCliJson<JudgeSummary>(args, ENV);
    expect(r.code).toBe(3);
    // --json puts the error on stdout.
    expect(r.stdout + r.stderr).toContain(file);
    expect(r.stdout + r.stderr).not.toContain('E_INTERNAL');
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(server!.batch.submissions).toBe(submissions);
  });
});

describe('plens batches drop: a batch the provider does not know', () => {
  it('the rerun says what to do; after the drop the next run plans its requests again and finishes', async () => {
    const { ws, args } = await setup({ plan: () => ({ hold: true }) }, 'openai');
    const { spawnCli, waitFor } = await import('../../helpers/batch.js');
    const run = spawnCli(args, ENV.env);
    await waitFor('the batch polled', () => (server!.batch.list()[0]?.polls ?? 0) >= 1);
    run.child.kill('SIGINT');
    await run.exit;
    const id = server!.batch.list()[0]!.id;
    server!.batch.forget(id);
    const stuck = await runCli(
      args.filter((a) => a !== '--json'),
      ENV,
    );
    expect(stuck.code).toBe(4);
    expect(stuck.stderr).toContain(`the provider does not know batch ${id}`);
    expect(stuck.stderr).toContain(`plens batches drop ${id} -w ${ws}`);
    // A dry run says what it would do and changes nothing; then the drop.
    const dry = await runCli(['batches', 'drop', id, '-w', ws, '--dry-run'], ENV);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(new RegExp(`would drop batch ${id} \\(openai:judge, \\w+\\) from .*batches\\.jsonl: its 49 request\\(s\\) are planned again`));
    expect((await runCli(['batches', 'drop', id, '-w', ws], ENV)).code).toBe(0);
    expect((await runCli(['batches', 'drop', id, '-w', ws], ENV)).stderr).toContain('closed already (dropped)');
    expect((await runCli(['batches', 'drop', 'batch_nope', '-w', ws], ENV)).code).toBe(3);
    server!.batch.release();
    const after = await runCliJson<JudgeSummary>(args, ENV);
    expect(after.code, after.stdout + after.stderr).toBe(0);
    expect(after.json).toMatchObject({ ok: 49, failed: 0 });
    expect(after.json.batch).toMatchObject({ submitted: 1, resumed: 0 });
  });
});

describe('plens judge --batch (anthropic): a refused create is not a lost answer', () => {
  it("after a 429 (nothing made) the retry creates its own batch; it never adopts another run's batch of the same size", async () => {
    server = await startMockLlm({
      reply: judgeReply,
      batch: { plan: (n) => (n === 0 ? { hold: true } : {}), createReject: (n) => (n === 1 ? 429 : undefined) },
      requireAuth: true,
    });
    // Another run (its own workspace, another judge model) has a batch of the same size still running.
    const other = await simDialoguesWorkspace();
    const { spawnCli, waitFor } = await import('../../helpers/batch.js');
    const run = spawnCli(judgeArgs(other, 'anthropic', 'judge-other'), ENV.env);
    await waitFor('the other batch created', () => server!.batch.submissions === 1);
    run.child.kill('SIGKILL');
    await run.exit;
    // This run's first create is refused with a 429; its retry must create, not recover.
    const ws = await simDialoguesWorkspace();
    const r = await runCliJson<JudgeSummary>(judgeArgs(ws, 'anthropic'), ENV);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(server.batch.submissions).toBe(2);
    expect(r.json).toMatchObject({ ok: 49, failed: 0 });
    expect(r.json.batch).toMatchObject({ submitted: 1, fallback_online: 0, items_answered: 49 });
    expect(server.requests.filter((q) => q.batch === undefined)).toHaveLength(0);
  });
});
