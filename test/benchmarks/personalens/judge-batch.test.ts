import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readJsonl } from '../../../src/engine/jsonl-log.js';
import type { MockBatchOptions } from '../../../src/testkit/mock-batch.js';
import { startMockLlm, type MockLlmServer, type MockRequest } from '../../../src/testkit/mock-server.js';
import { cliPath, repoRoot, runCli, runCliJson } from '../../helpers/cli.js';
import { sampleWorkspace } from '../../helpers/workspace.js';

let server: MockLlmServer | undefined;
let child: ChildProcess | undefined;
afterEach(async () => {
  child?.kill('SIGKILL');
  child = undefined;
  await server?.close();
  server = undefined;
});

const ENV = { env: { OPENAI_API_KEY: 'sk-batch-test' } };
const PRICE_IN = 2.5;
const PRICE_OUT = 10;

function judgeReply(r: MockRequest): string {
  if (/VERDICT/.test(r.messages[0]!.content)) return 'VERDICT: True\nEXPLANATION: Everything the goal asks for was done.';
  return 'Score: 4\nJustification: reads naturally.';
}

interface BatchPart {
  submitted: number;
  resumed: number;
  collected: number;
  pending: number;
  items_submitted: number;
  items_answered: number;
  fallback_online: number;
  fallback_failed: number;
  cost_usd: number;
  estimate_cost_usd?: number;
}
interface Summary {
  planned: number;
  ok: number;
  failed: number;
  already_done: number;
  failure_reasons: Record<string, number>;
  calls: number;
  cached_calls: number;
  cost_usd: number;
  interrupted: boolean;
  dir: string;
  batch?: BatchPart;
  estimate?: { costUsd: number };
}

/** Dialogues of users 0-1 (49, by the sample's README) judged on task completion: 49 requests. */
async function setup(batch: MockBatchOptions = {}): Promise<{ ws: string; args: string[] }> {
  server = await startMockLlm({ reply: judgeReply, batch, requireAuth: true });
  const ws = await sampleWorkspace();
  expect((await runCli(['dialogues', '-w', ws, '--assistant', 'sim:default', '--setting', 'base'])).code).toBe(0);
  const judge = `openai:judge?base_url=${server.url}/v1&price_in=${PRICE_IN}&price_out=${PRICE_OUT}`;
  const args = ['judge', '-w', ws, '--judge', judge, '--dimensions', 'task_completion', '--retry-delay-ms', '5', '--batch', '--poll-interval', '0.01'];
  return { ws, args };
}

const online = () => server!.requests.filter((r) => r.batch === undefined);
const batched = () => server!.requests.filter((r) => r.batch !== undefined);

async function events(dir: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for await (const e of readJsonl<Record<string, unknown>>(join(dir, 'events.jsonl'))) out.push(e);
  return out;
}

async function ledger(dir: string): Promise<Array<Record<string, unknown>>> {
  const out: Array<Record<string, unknown>> = [];
  for await (const e of readJsonl<Record<string, unknown>>(join(dir, 'batches.jsonl'))) out.push(e);
  return out;
}

describe('plens judge --batch (the OpenAI Batch API)', () => {
  it('submits one batch, polls it to completion, records every answer at the batch price; a rerun submits nothing', async () => {
    const { args } = await setup({ plan: () => ({ polls: 2 }) });
    const first = await runCliJson<Summary>(args, ENV);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ planned: 49, ok: 49, failed: 0, calls: 49, cached_calls: 0 });
    expect(first.json.batch).toMatchObject({ submitted: 1, collected: 1, pending: 0, items_submitted: 49, items_answered: 49, fallback_online: 0 });
    expect(server!.batch.submissions).toBe(1);
    expect(server!.batch.uploads).toBe(1);
    // Every request went through the batch, with the judge's call settings: an empty system prompt sent, temperature 0, 4000 tokens.
    expect(online()).toHaveLength(0);
    expect(batched()).toHaveLength(49);
    expect(batched().every((r) => r.systemSent && r.system === '' && r.temperature === 0 && r.maxTokens === 4000)).toBe(true);

    // Each call is recorded as a call (not a cache hit), at half the online price of its tokens.
    const calls = await events(first.json.dir);
    expect(calls).toHaveLength(49);
    let total = 0;
    for (const e of calls) {
      expect(e).toMatchObject({ status: 'ok', cached: false, latency_ms: null });
      const online = ((e['input_tokens'] as number) * PRICE_IN + (e['output_tokens'] as number) * PRICE_OUT) / 1e6;
      expect(e['cost_usd'] as number).toBeCloseTo(online * 0.5, 12);
      total += e['cost_usd'] as number;
    }
    expect(first.json.cost_usd).toBeCloseTo(total, 9);
    expect(first.json.batch!.cost_usd).toBeCloseTo(total, 9);
    expect(first.stderr).toBe('');

    // The ledger: staged, submitted, status changes, ended, processed.
    const entries = await ledger(first.json.dir);
    expect(entries.map((e) => e['type'])).toEqual(['staged', 'submitted', 'status', 'status', 'ended', 'processed']);
    expect(entries[0]!['keys']).toHaveLength(49);
    expect(entries[4]).toMatchObject({ status: 'completed', answered: 49, unanswered: 0 });

    // A rerun: nothing left, nothing submitted.
    const again = await runCliJson<Summary>(args, ENV);
    expect(again.json).toMatchObject({ planned: 0, already_done: 49, calls: 0 });
    expect(server!.batch.submissions).toBe(1);

    // The human summary has the batch lines.
    const text = await runCli(['judge', ...args.slice(1), '--retry-failed'], ENV);
    expect(text.stdout).toContain('batches      0 submitted');
  });

  it('answers from the cache are not submitted again: another judge partition reuses them', async () => {
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
    const ws = await sampleWorkspace();
    expect((await runCli(['dialogues', '-w', ws, '--assistant', 'sim:default', '--setting', 'base'])).code).toBe(0);
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
    // Nothing was written: no judgments folder, no ledger.
    expect(existsSync(join(ws, 'judgments'))).toBe(false);
  });

  it('refuses --batch for a provider without a batch API, saying why (exit 2)', async () => {
    const ws = await sampleWorkspace();
    expect((await runCli(['dialogues', '-w', ws, '--assistant', 'sim:default', '--setting', 'base'])).code).toBe(0);
    const sim = await runCli(['judge', '-w', ws, '--judge', 'sim:default', '--batch']);
    expect(sim.code).toBe(2);
    expect(sim.stderr).toContain('--batch is not available for sim:default');
    expect(sim.stderr).toContain('offline simulator');
    const bedrock = await runCli(['judge', '-w', ws, '--judge', 'bedrock:claude-3-sonnet-v1', '--batch', '--dry-run']);
    expect(bedrock.code).toBe(2);
    expect(bedrock.stderr).toContain('S3');
    expect(bedrock.stderr).toContain('batch mode works with: openai');
    const badFallback = await runCli(['judge', '-w', ws, '--judge', 'openai:gpt-4o', '--batch', '--batch-fallback', 'maybe']);
    expect(badFallback.code).toBe(2);
  });
});
