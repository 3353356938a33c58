import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJsonl } from '../../../src/engine/jsonl-log.js';
import type { MockBatchOptions } from '../../../src/testkit/mock-batch.js';
import { startMockLlm, type MockLlmServer } from '../../../src/testkit/mock-server.js';
import type { JudgeSummary } from '../../../src/benchmarks/personalens/judge-stage.js';
import type { PlensError } from '../../../src/core/errors.js';
import { loadPipeline } from '../../../src/make/pipeline.js';
import { resolveBatch } from '../../../src/platform/run-settings.js';
import { runCli, runCliJson, tempDir } from '../../helpers/cli.js';
import { judgePartition, judgeReply, judgmentRecordLines, keepStagedOnly, logLines, spawnCli, waitFor } from '../../helpers/batch.js';
import { simDialoguesWorkspace } from '../../helpers/workspace.js';

let server: MockLlmServer | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await server?.close();
  server = undefined;
});

const events = (dir: string) => logLines(dir, 'events.jsonl');
const ledger = (dir: string) => logLines(dir, 'batches.jsonl');
const partitionOf = judgePartition;
const recordLines = judgmentRecordLines;
/** Starts the CLI as its own process (a user's run, to be killed); the test's afterEach kills what is left. */
function start(args: string[]): Promise<number | null> {
  const run = spawnCli(args, ENV.env);
  child = run.child;
  return run.exit;
}

const ENV = { env: { OPENAI_API_KEY: 'sk-batch-test', ANTHROPIC_API_KEY: 'sk-ant-batch-test' } };
/** Two of the 49 task-completion prompts are identical (the simulator repeats itself): submitted once, the other key takes its answer. */
const DISTINCT = 48;
const PRICE_IN = 2.5;
const PRICE_OUT = 10;

// What `plens judge --json` prints.
type Summary = JudgeSummary;

/** Dialogues of users 0-1 (49, by the sample's README) judged on task completion: 49 requests. */
async function setup(batch: MockBatchOptions = {}, provider: 'openai' | 'anthropic' = 'openai'): Promise<{ ws: string; args: string[] }> {
  server = await startMockLlm({ reply: judgeReply, batch, requireAuth: true });
  const ws = await simDialoguesWorkspace();
  const judge = `${provider}:judge?base_url=${server.url}${provider === 'openai' ? '/v1' : ''}&price_in=${PRICE_IN}&price_out=${PRICE_OUT}`;
  const args = ['judge', '-w', ws, '--judge', judge, '--dimensions', 'task_completion', '--retry-delay-ms', '5', '--batch', '--poll-interval', '0.01'];
  return { ws, args };
}

const online = () => server!.requests.filter((r) => r.batch === undefined);
const batched = () => server!.requests.filter((r) => r.batch !== undefined);

describe('plens judge --batch (the OpenAI Batch API)', () => {
  it('submits one batch, polls it to completion, records every answer at the batch price; a rerun submits nothing', async () => {
    const { args } = await setup({ plan: () => ({ polls: 2 }) });
    const first = await runCliJson<Summary>(args, ENV);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ planned: 49, ok: 49, failed: 0, calls: 49, cached_calls: 1 });
    expect(first.json.batch).toMatchObject({ submitted: 1, collected: 1, pending: 0, items_submitted: DISTINCT, items_answered: 49, fallback_online: 0 });
    expect(server!.batch.submissions).toBe(1);
    expect(server!.batch.uploads).toBe(1);
    // Every request went through the batch, with the judge's call settings: an empty system prompt sent, temperature 0, 4000 tokens.
    expect(online()).toHaveLength(0);
    expect(batched()).toHaveLength(DISTINCT);
    expect(batched().every((r) => r.systemSent && r.system === '' && r.temperature === 0 && r.maxTokens === 4000)).toBe(true);

    // Each call is recorded as a call (not a cache hit), at half the online price of its tokens;
    // the key whose request was identical to another's takes that answer free (as a cache hit).
    const calls = await events(first.json.dir);
    expect(calls).toHaveLength(49);
    let total = 0;
    for (const e of calls) {
      expect(e).toMatchObject({ status: 'ok', latency_ms: null });
      const online = ((e['input_tokens'] as number) * PRICE_IN + (e['output_tokens'] as number) * PRICE_OUT) / 1e6;
      expect(e['cost_usd'] as number).toBeCloseTo(e['cached'] ? 0 : online * 0.5, 12);
      total += e['cost_usd'] as number;
    }
    expect(calls.filter((e) => e['cached'])).toHaveLength(49 - DISTINCT);
    expect(first.json.cost_usd).toBeCloseTo(total, 9);
    expect(first.json.batch!.cost_usd).toBeCloseTo(total, 9);
    // Nothing on stderr but its progress lines (stderr is a pipe here): no warning, no error.
    expect(first.stderr.split('\n').filter((l) => l !== '' && !l.startsWith('progress '))).toEqual([]);

    // The ledger: staged, submitted, status changes, ended, processed.
    const entries = await ledger(first.json.dir);
    expect(entries.map((e) => e['type'])).toEqual(['staged', 'submitted', 'status', 'status', 'ended', 'processed']);
    expect(entries[0]!['keys']).toHaveLength(DISTINCT);
    expect(Object.keys(entries[0]!['aliases'] as object)).toHaveLength(49 - DISTINCT);
    expect(entries[4]).toMatchObject({ status: 'completed', answered: DISTINCT, unanswered: 0 });

    // A rerun: nothing left, nothing submitted.
    const again = await runCliJson<Summary>(args, ENV);
    expect(again.json).toMatchObject({ planned: 0, already_done: 49, calls: 0 });
    expect(server!.batch.submissions).toBe(1);

    // Killed after the records but before the ledger said so: the rerun closes the batch without reading it again.
    const ledgerFile = join(first.json.dir, 'batches.jsonl');
    writeFileSync(ledgerFile, readFileSync(ledgerFile, 'utf8').replace(/.*"type":"processed".*\n$/, ''));
    const requestsBefore = server!.stats().requests;
    const closing = await runCliJson<Summary>(args, ENV);
    expect(closing.json).toMatchObject({ planned: 0, calls: 0 });
    expect(closing.json.batch).toMatchObject({ resumed: 1, pending: 0, submitted: 0 });
    expect(server!.stats().requests).toBe(requestsBefore);
    expect((await ledger(first.json.dir)).at(-1)).toMatchObject({ type: 'processed' });

    // The human summary has the batch lines.
    const text = await runCli(['judge', ...args.slice(1), '--retry-failed'], ENV);
    expect(text.stdout).toContain('batches      0 submitted');
  });

  it('answers the cache holds are recorded at once, never submitted', async () => {
    const { args } = await setup();
    expect((await runCliJson<Summary>(args, ENV)).json.ok).toBe(49);
    // The judgments gone but the call cache kept: every call is a cache hit, and nothing is submitted.
    rmSync(join(args[2]!, 'judgments'), { recursive: true });
    const second = await runCliJson<Summary>(args, ENV);
    expect(second.json).toMatchObject({ planned: 49, ok: 49, cached_calls: 49 });
    expect(second.json.batch).toMatchObject({ submitted: 0, items_submitted: 0 });
    expect(server!.batch.submissions).toBe(1);
  });

  it('--dry-run --batch shows the batch price beside the online price, with no key', async () => {
    const ws = await simDialoguesWorkspace();
    const base = ['judge', '-w', ws, '--dimensions', 'task_completion', '--dry-run', '--batch'];
    const noKey = { env: { OPENAI_API_KEY: '' } };
    const plan = await runCliJson<Summary>([...base, '--judge', `openai:gpt-4o?price_in=${PRICE_IN}&price_out=${PRICE_OUT}`], noKey);
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.json.planned).toBe(49);
    expect(plan.json.estimate!.costUsd).toBeGreaterThan(0);
    expect(plan.json.batch!.estimate_cost_usd).toBeCloseTo(plan.json.estimate!.costUsd * 0.5, 12);
    const custom = await runCliJson<Summary>([...base, '--judge', `openai:gpt-4o?price_in=${PRICE_IN}&price_out=${PRICE_OUT}&batch_discount=0.25`], noKey);
    expect(custom.json.batch!.estimate_cost_usd).toBeCloseTo(custom.json.estimate!.costUsd * 0.75, 12);
    const text = await runCli([...base, '--judge', `openai:gpt-4o?price_in=${PRICE_IN}&price_out=${PRICE_OUT}`], noKey);
    expect(text.stdout).toMatch(/batch +~\$\d+\.\d\d through the batch API, against ~\$\d+\.\d\d online; answers within 24 h/);
    // A model with no price is never shown as free, online or batched.
    const unpriced = await runCli([...base, '--judge', 'openai:gpt-4o'], noKey);
    expect(unpriced.code, unpriced.stderr).toBe(0);
    expect(unpriced.stdout).not.toContain('$0.00');
    expect(unpriced.stdout).toMatch(/batch +through the batch API \(answers within 24 h\); cost: price unknown for openai:gpt-4o/);
    const unpricedJson = await runCliJson<Summary>([...base, '--judge', 'openai:gpt-4o'], noKey);
    expect(unpricedJson.json.batch!.estimate_cost_usd).toBeUndefined();
    // Nothing was written: no judgments folder, no ledger.
    expect(existsSync(join(ws, 'judgments'))).toBe(false);
  });

  it('refuses --batch for a provider without a batch API, saying why (exit 2)', async () => {
    const ws = await simDialoguesWorkspace();
    const sim = await runCli(['judge', '-w', ws, '--judge', 'sim:default', '--batch']);
    expect(sim.code).toBe(2);
    expect(sim.stderr).toContain('--batch is not available for sim:default');
    expect(sim.stderr).toContain('offline simulator');
    const bedrock = await runCli(['judge', '-w', ws, '--judge', 'bedrock:claude-3-sonnet-v1', '--batch', '--dry-run']);
    expect(bedrock.code).toBe(2);
    expect(bedrock.stderr).toContain('S3');
    expect(bedrock.stderr).toContain('add batch_bucket=s3://BUCKET/PREFIX and batch_role_arn=');
    const badFallback = await runCli(['judge', '-w', ws, '--judge', 'openai:gpt-4o', '--batch', '--batch-fallback', 'maybe']);
    expect(badFallback.code).toBe(2);
    // A batch is paid at submission, so a per-call spend cap cannot hold it: refused, a dry run included.
    const capped = await runCli(['judge', '-w', ws, '--judge', 'openai:gpt-4o?price_in=2.5&price_out=10', '--batch', '--max-cost', '5', '--dry-run']);
    expect(capped.code).toBe(2);
    expect(capped.stderr).toContain('--max-cost cannot be combined with --batch');
    expect(existsSync(join(ws, 'judgments'))).toBe(false);
  });

  it('records each batch as soon as it ends, while the others still run (partial results land as they arrive)', async () => {
    // --batch-size 20: batches of 20, 20 and 8 (the 49th request repeats one of the first two
    // batches' and takes its answer); the third is held in progress until released.
    const { ws, args } = await setup({ plan: (n) => (n === 2 ? { hold: true } : { polls: n + 1 }) });
    const exit = start([...args, '--batch-size', '20']);
    await waitFor('the first two batches recorded', () => recordLines(ws) >= 40 && server!.batch.list().filter((b) => b.status === 'completed').length === 2);
    expect(server!.batch.list().map((b) => [b.total, b.status])).toEqual([
      [20, 'completed'],
      [20, 'completed'],
      [8, 'in_progress'],
    ]);
    server!.batch.release();
    expect(await exit).toBe(0);
    child = undefined;
    const keys = new Set<string>();
    for await (const r of readJsonl<{ key: string; status: string }>(join(partitionOf(ws), 'records.jsonl'))) {
      expect(r.status).toBe('ok');
      keys.add(r.key);
    }
    expect(keys.size).toBe(49);
    expect(server!.batch.submissions).toBe(3);
    expect(online()).toHaveLength(0);
  });

  it('an expired batch: its answers are recorded, the requests it never reached are called online (--batch-fallback online)', async () => {
    const { args } = await setup({ plan: () => ({ end: 'expired', answered: (_id, i) => i % 2 === 0 }) });
    const r = await runCliJson<Summary>(args, ENV);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 49, failed: 0, calls: 49 });
    // Half of the batch's 48 lines were answered; the key whose twin was answered takes that answer.
    const b = r.json.batch!;
    expect(b).toMatchObject({ submitted: 1, collected: 1, items_submitted: DISTINCT, fallback_failed: 0 });
    expect(b.items_answered).toBeGreaterThanOrEqual(DISTINCT / 2);
    expect(b.items_answered + b.fallback_online).toBe(49);
    // The calls at the batch price (no latency of their own; a twin's at none), the online ones at the full price (a cache hit at none).
    const calls = await events(r.json.dir);
    const price = (e: Record<string, unknown>) => ((e['input_tokens'] as number) * PRICE_IN + (e['output_tokens'] as number) * PRICE_OUT) / 1e6;
    const viaBatch = calls.filter((e) => e['latency_ms'] === null);
    expect(viaBatch).toHaveLength(b.items_answered);
    for (const e of viaBatch) expect(e['cost_usd'] as number).toBeCloseTo(e['cached'] ? 0 : price(e) * 0.5, 12);
    // What the batch did not answer was called online, or answered by the cache (a twin asked just before).
    const twinsFromBatch = viaBatch.filter((e) => e['cached']).length;
    expect(online().length + r.json.cached_calls - twinsFromBatch).toBe(b.fallback_online);
    for (const e of calls.filter((e) => e['latency_ms'] !== null)) expect(e['cost_usd'] as number).toBeCloseTo(e['cached'] ? 0 : price(e), 12);
  });

  it('an expired batch with --batch-fallback none: unanswered requests are failures (never scores); --retry-failed submits only them', async () => {
    const { ws, args } = await setup({ plan: (n) => (n === 0 ? { end: 'expired', answered: (_id, i) => i % 2 === 0 } : {}) });
    const none = [...args, '--batch-fallback', 'none'];
    const r = await runCliJson<Summary>(none, ENV);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 25, failed: 24, failure_reasons: { batch_expired: 24 } });
    expect(r.json.batch).toMatchObject({ items_answered: 25, fallback_online: 0, fallback_failed: 24 });
    expect(online()).toHaveLength(0);
    const db = join(ws, '..', 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db])).code).toBe(0);
    const rows = (
      await runCliJson<Array<Record<string, unknown>>>([
        'sql',
        'select status, count(*) as n, count(verdict) as scored from judgments group by 1 order by 1',
        '--db',
        db,
      ])
    ).json;
    expect(rows).toEqual([
      { status: 'failed', n: 24, scored: 0 },
      { status: 'ok', n: 25, scored: 25 },
    ]);
    // A rerun leaves the failures alone; --retry-failed submits just them, in a new batch.
    expect((await runCliJson<Summary>(none, ENV)).json).toMatchObject({ planned: 0, calls: 0 });
    const retry = await runCliJson<Summary>([...none, '--retry-failed'], ENV);
    expect(retry.json).toMatchObject({ planned: 24, ok: 24, failed: 0 });
    // What the cache already answers (an identical request answered in the first batch) is not submitted.
    expect(retry.json.batch).toMatchObject({ submitted: 1, items_submitted: 24 - retry.json.cached_calls, items_answered: 24 - retry.json.cached_calls });
    expect(server!.batch.submissions).toBe(2);
  });

  it('a cancelled batch with request errors: what it answered is recorded, the rest (cancelled, HTTP 400) called online', async () => {
    const { args } = await setup({ plan: () => ({ end: 'cancelled', answered: (_id, i) => i < 30, itemStatus: (_id, i) => (i === 3 ? 400 : undefined) }) });
    const r = await runCliJson<Summary>(args, ENV);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 49, failed: 0 });
    // 29 of the batch's 48 lines answered (30 reached, one of them an HTTP 400); the 49th key follows its twin.
    const b = r.json.batch!;
    expect(b.items_answered + b.fallback_online).toBe(49);
    expect([29, 30]).toContain(b.items_answered);
    const entries = await ledger(r.json.dir);
    expect(entries.find((e) => e['type'] === 'ended')).toMatchObject({ status: 'cancelled', answered: 29, unanswered: DISTINCT - 29 });
  });

  it.each(['SIGKILL', 'SIGINT'] as const)('%s while polling, then a rerun: nothing is submitted again, the batch is collected', async (signal) => {
    const { ws, args } = await setup({ plan: () => ({ hold: true }) });
    const exit = start(args);
    await waitFor('a submitted batch polled twice', () => server!.batch.submissions === 1 && (server!.batch.list()[0]?.polls ?? 0) >= 2);
    child!.kill(signal);
    const code = await exit;
    child = undefined;
    // Ctrl-C stops cleanly (exit 130); a kill just ends it.
    expect(code).toBe(signal === 'SIGINT' ? 130 : -1);
    expect(recordLines(ws)).toBe(0);
    server!.batch.release();
    const r = await runCliJson<Summary>(args, ENV);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 49, failed: 0 });
    expect(r.json.batch).toMatchObject({ submitted: 0, resumed: 1, collected: 1, items_answered: 49 });
    expect(server!.batch.submissions).toBe(1);
    expect(server!.batch.uploads).toBe(1);
    expect(online()).toHaveLength(0);
    expect(readdirSync(partitionOf(ws)).filter((f) => f.startsWith('.lock'))).toEqual([]);
  });

  it('a crash between creating the batch and recording it: the rerun finds the batch by its input file and submits nothing', async () => {
    const { ws, args } = await setup({ plan: () => ({ hold: true }) });
    const exit = start(args);
    await waitFor('a submitted batch polled', () => (server!.batch.list()[0]?.polls ?? 0) >= 1);
    child!.kill('SIGKILL');
    await exit;
    child = undefined;
    // As if the kill had come right after the batch was created: the ledger has only the upload.
    keepStagedOnly(ws);
    server!.batch.release();
    const r = await runCliJson<Summary>(args, ENV);
    expect(r.json).toMatchObject({ ok: 49 });
    expect(r.json.batch).toMatchObject({ submitted: 0, resumed: 1, items_answered: 49 });
    expect(server!.batch.submissions).toBe(1);
  });

  it('a pipeline judges through the batch API with judge.batch, resolved by the settings resolver', async () => {
    server = await startMockLlm({ reply: judgeReply, requireAuth: true });
    const dir = tempDir('plens-batch-make-');
    const file = join(dir, 'pipeline.yaml');
    const body = (batch: string) =>
      `name: batch\nworkspace: ${dir}/out\nwarehouse: ${dir}/w.duckdb\ndata:\n  from: sample\nscenarios:\n  kind: md\n  users: "0-1"\ndialogues:\n  user: sim:default\n  assistants: [sim:default]\n  settings: [base]\njudge:\n  model: "openai:judge?base_url=${server!.url}/v1"\n  dimensions: [task_completion]\n${batch}`;
    writeFileSync(file, body('  batch: true\n  batch_fallback: none\n  poll_interval_s: 0.01\n'));
    expect(loadPipeline(file, {}).judge!.batch).toEqual({ fallback: 'none', pollIntervalS: 0.01, maxItems: 50_000 });
    const r = await runCliJson<{ ok: boolean }>(['make', 'judge', '-p', file], ENV);
    expect(r.code, r.stderr).toBe(0);
    expect(server!.batch.submissions).toBe(1);
    expect(online()).toHaveLength(0);
    // users 0-1 have 6 MD scenarios: one judgment each, all from the batch.
    expect(batched()).toHaveLength(6);
    // A bad field is an error at its line; a flag beats the field.
    writeFileSync(file, body('  batch: true\n  poll_interval_s: 0\n'));
    let error: unknown;
    try {
      loadPipeline(file, {});
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'E_INPUT_SCHEMA' });
    expect((error as PlensError).location).toMatchObject({ pointer: '/judge/poll_interval_s', line: 17 });
    expect(resolveBatch({ flags: { 'poll-interval': 5 }, pipeline: { judge: { batch: true, poll_interval_s: 9 }, locate: () => ({ file }) } })).toEqual({
      fallback: 'online',
      pollIntervalS: 5,
      maxItems: 50_000,
    });
    expect(resolveBatch({ pipeline: { judge: { batch_fallback: 'none' }, locate: () => ({ file }) } })).toBeUndefined();
  });

  it('a rerun that plans only part of an open batch records its part and keeps the batch open; the run that plans the rest collects it, nothing resubmitted or called online', async () => {
    const { ws, args } = await setup({ plan: () => ({ hold: true }) });
    const bothArgs = args.flatMap((a) => (a === 'task_completion' ? ['task_completion', 'personalization'] : [a]));
    const exit = start(bothArgs);
    await waitFor('the batch submitted', () => server!.batch.submissions === 1 && (server!.batch.list()[0]?.polls ?? 0) >= 1);
    child!.kill('SIGKILL');
    await exit;
    child = undefined;
    // The work the batch answers: its lines, and the keys whose request repeats one of them.
    const staged = (await ledger(judgePartition(ws))).find((e) => e['type'] === 'staged')!;
    const total = (staged['keys'] as string[]).length + Object.keys((staged['aliases'] as object | undefined) ?? {}).length;
    expect(server!.batch.list()[0]!.total).toBe((staged['keys'] as string[]).length);
    expect(total).toBeGreaterThan(49);
    server!.batch.release();
    // Only task_completion now: its 49 answers come from the batch; the rest stays open, unread.
    const part = await runCliJson<Summary>(args, ENV);
    expect(part.code, part.stderr).toBe(0);
    expect(part.json).toMatchObject({ ok: 49, failed: 0 });
    expect(part.json.batch).toMatchObject({ submitted: 0, collected: 0, pending: 1, items_answered: 49 });
    expect((await ledger(part.json.dir)).some((e) => e['type'] === 'processed')).toBe(false);
    // Both dimensions: the other answers come from the same batch, which is then closed.
    const rest = await runCliJson<Summary>(bothArgs, ENV);
    expect(rest.code, rest.stderr).toBe(0);
    expect(rest.json).toMatchObject({ ok: total - 49, failed: 0, already_done: 49 });
    expect(rest.json.batch).toMatchObject({ submitted: 0, collected: 1, pending: 0, items_answered: total - 49 });
    expect((await ledger(rest.json.dir)).at(-1)).toMatchObject({ type: 'processed' });
    expect(server!.batch.submissions).toBe(1);
    expect(online()).toHaveLength(0);
    expect(recordLines(ws)).toBe(total);
  });

  it("plens status shows a killed pipeline run's open batches; the next make collects them and status shows none", async () => {
    server = await startMockLlm({ reply: judgeReply, batch: { plan: () => ({ hold: true }) }, requireAuth: true });
    const dir = tempDir('plens-batch-status-');
    const file = join(dir, 'pipeline.yaml');
    writeFileSync(
      file,
      `name: batch\nworkspace: ${dir}/out\nwarehouse: ${dir}/w.duckdb\ndata:\n  from: sample\nscenarios:\n  kind: md\n  users: "0-1"\ndialogues:\n  user: sim:default\n  assistants: [sim:default]\n  settings: [base]\njudge:\n  model: "openai:judge?base_url=${server.url}/v1"\n  dimensions: [task_completion]\n  batch: true\n  poll_interval_s: 0.01\n`,
    );
    const exit = start(['make', 'judge', '-p', file]);
    await waitFor('the batch to be submitted and recorded', () => {
      const ledgerFile = join(partitionOf(join(dir, 'out')) || '/nonexistent', 'batches.jsonl');
      return existsSync(ledgerFile) && readFileSync(ledgerFile, 'utf8').includes('"submitted"');
    });
    child!.kill('SIGKILL');
    await exit;
    const held = await runCliJson<{ open_batches: { batches: number; requests: number; batch_ids: string[] } }>(['status', '-p', file], ENV);
    expect(held.code, held.stderr).toBe(0);
    expect(held.json.open_batches).toEqual({ batches: 1, requests: 6, batch_ids: [server.batch.list()[0]!.id] });
    const text = await runCli(['status', '-p', file], ENV);
    expect(text.stdout).toMatch(/batches +1 open \(6 requests; /);

    server.batch.release();
    const r = await runCliJson<{ ok: boolean }>(['make', 'judge', '-p', file], ENV);
    expect(r.code, r.stderr).toBe(0);
    expect(server.batch.submissions).toBe(1);
    const after = await runCliJson<{ open_batches: { batches: number } }>(['status', '-p', file], ENV);
    expect(after.json.open_batches.batches).toBe(0);
  });
});

describe('plens judge --batch (Anthropic Message Batches)', () => {
  it('creates one message batch, polls it until it has ended, records every answer at the batch price; a rerun submits nothing', async () => {
    const { args } = await setup({ plan: () => ({ polls: 2 }) }, 'anthropic');
    const first = await runCliJson<Summary>(args, ENV);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ planned: 49, ok: 49, failed: 0, calls: 49, cached_calls: 49 - DISTINCT });
    expect(first.json.batch).toMatchObject({ submitted: 1, collected: 1, items_submitted: DISTINCT, items_answered: 49 });
    expect(server!.batch.submissions).toBe(1);
    expect(server!.batch.uploads).toBe(0);
    expect(online()).toHaveLength(0);
    expect(batched().every((r) => r.api === 'anthropic' && r.systemSent && r.system === '' && r.temperature === 0 && r.maxTokens === 4000)).toBe(true);
    for (const e of await events(first.json.dir)) {
      const price = ((e['input_tokens'] as number) * PRICE_IN + (e['output_tokens'] as number) * PRICE_OUT) / 1e6;
      expect(e).toMatchObject({ latency_ms: null });
      expect(e['cost_usd'] as number).toBeCloseTo(e['cached'] ? 0 : price * 0.5, 12);
    }
    expect((await ledger(first.json.dir)).find((e) => e['type'] === 'ended')).toMatchObject({ status: 'completed', answered: DISTINCT });
    expect((await runCliJson<Summary>(args, ENV)).json).toMatchObject({ planned: 0, calls: 0 });
    expect(server!.batch.submissions).toBe(1);
  });

  it('expired requests are recorded as failures (fallback none), then retried through a new batch whose unanswered part is called online', async () => {
    const { args } = await setup({ plan: (n) => ({ end: 'expired', answered: (_id, i) => i % 2 === n % 2 }) }, 'anthropic');
    const r = await runCliJson<Summary>([...args, '--batch-fallback', 'none'], ENV);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 25, failed: 24, failure_reasons: { batch_expired: 24 } });
    expect(online()).toHaveLength(0);
    const retry = await runCliJson<Summary>([...args, '--retry-failed'], ENV);
    expect(retry.json).toMatchObject({ planned: 24, ok: 24, failed: 0 });
    const b = retry.json.batch!;
    expect(b.submitted).toBe(1);
    expect(b.items_answered).toBeGreaterThan(0);
    expect(b.fallback_online).toBeGreaterThan(0);
    expect(b.items_answered + b.fallback_online).toBe(b.items_submitted);
    expect(online().length).toBeGreaterThan(0);
    expect(online().length).toBeLessThanOrEqual(b.fallback_online);
    expect(online().every((q) => q.api === 'anthropic')).toBe(true);
  });

  it('SIGKILL while polling, then a rerun: nothing is submitted again, the batch is collected', async () => {
    const { ws, args } = await setup({ plan: () => ({ hold: true }) }, 'anthropic');
    const exit = start(args);
    await waitFor('a submitted batch polled twice', () => server!.batch.submissions === 1 && (server!.batch.list()[0]?.polls ?? 0) >= 2);
    child!.kill('SIGKILL');
    await exit;
    child = undefined;
    expect(recordLines(ws)).toBe(0);
    server!.batch.release();
    const r = await runCliJson<Summary>(args, ENV);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 49 });
    expect(r.json.batch).toMatchObject({ submitted: 0, resumed: 1, collected: 1, items_answered: 49 });
    expect(server!.batch.submissions).toBe(1);
    expect(online()).toHaveLength(0);
  });

  it('a crash between creating the batch and recording it: the rerun finds it (made after the staging, as many requests) and submits nothing', async () => {
    const { ws, args } = await setup({ plan: () => ({ hold: true }) }, 'anthropic');
    const exit = start(args);
    await waitFor('a submitted batch polled', () => (server!.batch.list()[0]?.polls ?? 0) >= 1);
    child!.kill('SIGKILL');
    await exit;
    child = undefined;
    keepStagedOnly(ws);
    server!.batch.release();
    const r = await runCliJson<Summary>(args, ENV);
    expect(r.json).toMatchObject({ ok: 49 });
    expect(r.json.batch).toMatchObject({ submitted: 0, resumed: 1, items_answered: 49 });
    expect(server!.batch.submissions).toBe(1);
  });

  it('a crash after staging and before any batch was made: the requests are not in any batch, so the fallback calls them online', async () => {
    const { ws, args } = await setup({ plan: () => ({ hold: true }) }, 'anthropic');
    const exit = start(args);
    await waitFor('a submitted batch polled', () => (server!.batch.list()[0]?.polls ?? 0) >= 1);
    child!.kill('SIGKILL');
    await exit;
    child = undefined;
    // As if no batch had been created: the staging names a request count no batch on the server has.
    keepStagedOnly(ws, (l) => l.replace(/"staged":"local:(\d+):48:/, '"staged":"local:$1:47:'));
    const r = await runCliJson<Summary>(args, ENV);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ planned: 49, ok: 49, failed: 0 });
    expect(r.json.batch).toMatchObject({ submitted: 0, resumed: 1, collected: 1, items_answered: 0, fallback_online: 49 });
    expect(server!.batch.submissions).toBe(1);
    expect(online().length + r.json.cached_calls).toBe(49);
    expect((await ledger(r.json.dir)).find((e) => e['type'] === 'ended')).toMatchObject({ status: 'failed', answered: 0, unanswered: DISTINCT });
  });
});
