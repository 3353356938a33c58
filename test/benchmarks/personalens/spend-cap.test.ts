import { afterEach, describe, expect, it } from 'vitest';
import { startMockLlm, type MockLlmServer } from '../../../src/testkit/mock-server.js';
import { runCli, runCliJson } from '../../helpers/cli.js';
import { sampleWorkspace, simDialoguesWorkspace } from '../../helpers/workspace.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Summary {
  ok: number;
  failed: number;
  planned: number;
  already_done: number;
  calls: number;
  cached_calls: number;
  cost_usd: number;
  spend_capped: boolean;
  max_cost_usd: number | null;
  interrupted: boolean;
  spend: { by_role: Record<string, { calls: number; cost_usd: number }>; by_model: Record<string, { calls: number; cost_usd: number }> };
  estimate?: { costUsd: number };
}

// $1 per 1,000 tokens, in and out: a judgment costs about $0.5-1, so a cap of a few dollars is a handful of calls.
const PRICE = 'price_in=1000&price_out=1000';
const TOKEN_USD = 0.001;
const env = { env: { OPENAI_API_KEY: 'sk-spend' } };
const FAST = ['--retry-delay-ms', '1', '--no-progress'];

describe('plens judge --max-cost', () => {
  it('stops within one call of the cap (exit 6), and a rerun with a higher cap finishes without a repeated call', async () => {
    server = await startMockLlm({ reply: () => 'VERDICT: True\nEXPLANATION: the goal was met.' });
    const ws = await simDialoguesWorkspace();
    const judge = `openai:judge?base_url=${server.url}/v1&max_tokens=50&${PRICE}`;
    const args = ['judge', '-w', ws, '--judge', judge, '--dimensions', 'task_completion', ...FAST];
    const cap = 6;

    const first = await runCliJson<Summary>([...args, '--max-cost', String(cap)], env);
    expect(first.code, first.stderr).toBe(6);
    const s1 = first.json;
    expect(s1).toMatchObject({ spend_capped: true, max_cost_usd: cap, interrupted: false, failed: 0 });
    expect(s1.ok).toBeGreaterThan(0);
    expect(s1.ok).toBeLessThan(s1.planned);
    // Every call this run made reached the endpoint once (or was a twin prompt the cache answered),
    // and what it cost stays under the cap.
    expect(s1.calls).toBe(s1.ok);
    expect(server.requests).toHaveLength(s1.calls - s1.cached_calls);
    expect(s1.cost_usd).toBeLessThanOrEqual(cap);
    expect(s1.spend.by_role).toEqual({ judge: { calls: s1.calls, cached_calls: s1.cached_calls, cost_usd: s1.cost_usd } });
    expect(Object.keys(s1.spend.by_model)).toEqual(['openai:judge']);

    const second = await runCliJson<Summary>([...args, '--max-cost', '10000'], env);
    expect(second.code, second.stderr).toBe(0);
    const s2 = second.json;
    expect(s2).toMatchObject({ spend_capped: false, max_cost_usd: 10000, already_done: s1.ok, ok: s1.planned - s1.ok, failed: 0 });
    // Nothing was asked twice: every request went out exactly once over both runs.
    expect(server.requests).toHaveLength(s1.calls - s1.cached_calls + s2.calls - s2.cached_calls);
    expect(server.requests.every((r) => r.attempt === 0)).toBe(true);

    // Within one call of the cap: the unit refused reserved at most one call's worst case, which is
    // its prompt (4 characters a token) plus max_tokens, or the judge's estimate (prompt + 2,500
    // characters of template, 200 tokens out) when that is more.
    const longest = Math.max(...server.requests.map((r) => r.messages[0]!.content.length));
    const oneCall = (Math.ceil((longest + 2500) / 4) + 200) * TOKEN_USD;
    expect(s1.cost_usd).toBeGreaterThan(cap - oneCall);

    // Nothing is left, and nothing is asked again: no cap is needed for a run with nothing to do.
    const third = await runCliJson<Summary>([...args, '--max-cost', '0'], env);
    expect(third.json).toMatchObject({ planned: 0, spend_capped: false, calls: 0 });
    expect(server.requests).toHaveLength(s1.calls - s1.cached_calls + s2.calls - s2.cached_calls);
  });

  it('a judgment the cache answers reserves nothing: a cap of $0 still serves it', async () => {
    server = await startMockLlm({ reply: () => 'VERDICT: False\nEXPLANATION: not met.' });
    const ws = await simDialoguesWorkspace(['--users', '0', '--kind', 'md']);
    const judge = `openai:judge?base_url=${server.url}/v1&${PRICE}`;
    const args = ['judge', '-w', ws, '--dimensions', 'task_completion', ...FAST];
    // Judged once into the call cache, under one model id; the judgments themselves go to another
    // workspace's log, so the second run has every key to do and every answer in the cache.
    const full = await runCliJson<Summary>([...args, '--judge', judge], env);
    expect(full.code, full.stderr).toBe(0);
    const n = server.requests.length;
    expect(n).toBeGreaterThan(0);
    // A fresh judgment log on the same cache: rm the judgments, keep the cache.
    const { rmSync } = await import('node:fs');
    rmSync(`${ws}/judgments`, { recursive: true, force: true });
    const cached = await runCliJson<Summary>([...args, '--judge', judge, '--max-cost', '0'], env);
    expect(cached.code, cached.stderr).toBe(0);
    expect(cached.json).toMatchObject({ planned: n, ok: n, cached_calls: n, cost_usd: 0, spend_capped: false });
    expect(server.requests).toHaveLength(n);
  });

  it('refuses a cap on a model with no price (exit 2, naming it); --dry-run shows the cap and needs no key', async () => {
    const ws = await simDialoguesWorkspace(['--users', '0', '--kind', 'md']);
    const unpriced = await runCliJson(['judge', '-w', ws, '--judge', 'openai:nopriced?base_url=http://127.0.0.1:9/v1', '--max-cost', '5'], env);
    expect(unpriced.code).toBe(2);
    expect(unpriced.json).toMatchObject({ ok: false, error: { code: 'E_USAGE' } });
    expect(JSON.stringify(unpriced.json)).toContain('openai:nopriced');
    expect(JSON.stringify(unpriced.json)).toContain('--max-cost');
    const dryUnpriced = await runCli(['judge', '-w', ws, '--judge', 'openai:nopriced', '--max-cost', '5', '--dry-run']);
    expect(dryUnpriced.code).toBe(2);
    expect(dryUnpriced.stderr).toContain('openai:nopriced');
    // A bad cap is a usage error naming the flag.
    const bad = await runCli(['judge', '-w', ws, '--judge', `openai:judge?${PRICE}`, '--max-cost', '-1', '--dry-run']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-cost');

    // No key at all: the plan still runs, and says what the cap means for it.
    const plan = await runCliJson<Summary>(['judge', '-w', ws, '--judge', `openai:gpt-4o?${PRICE}`, '--max-cost', '0.5', '--dry-run'], {
      env: { OPENAI_API_KEY: '' },
    });
    expect(plan.code, plan.stderr).toBe(0);
    expect(plan.json).toMatchObject({ dry_run: true, max_cost_usd: 0.5, spend_capped: false });
    expect(plan.json.estimate!.costUsd).toBeGreaterThan(0.5);
    const text = await runCli(['judge', '-w', ws, '--judge', `openai:gpt-4o?${PRICE}`, '--max-cost', '0.5', '--dry-run'], { env: { OPENAI_API_KEY: '' } });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/spend cap +\$0\.50: below the estimate/);
  });
});

describe('plens dialogues --max-cost', () => {
  it('lets the dialogues in flight finish, stops starting new ones (exit 6), and a rerun with a higher cap does the rest once', async () => {
    server = await startMockLlm({ terminateAfter: 2 });
    const ws = await sampleWorkspace(['--users', '0']);
    const spec = (m: string) => `openai:${m}?base_url=${server!.url}/v1&${PRICE}`;
    const args = ['dialogues', '-w', ws, '--assistant', spec('asst'), '--user', spec('user'), '--setting', 'base', ...FAST];
    const cap = 40;

    const first = await runCli([...args, '--max-cost', String(cap)], env);
    expect(first.code, first.stderr).toBe(6);
    expect(first.stdout).toMatch(/dialogues: STOPPED at the spend cap of \$40\.00/);
    expect(first.stdout).toMatch(/spend +(user agent|assistant) \$[\d.]+, (user agent|assistant) \$[\d.]+ \| by model: /);
    const calls1 = server.requests.length;
    expect(calls1).toBeGreaterThan(0);

    const status1 = await runCliJson<Summary>([...args, '--max-cost', String(cap), '--dry-run'], env);
    const done1 = status1.json.already_done;
    expect(done1).toBeGreaterThan(0);
    expect(status1.json.planned).toBeGreaterThan(0);

    const second = await runCliJson<Summary>([...args, '--max-cost', '100000'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json).toMatchObject({ spend_capped: false, already_done: done1, failed: 0 });
    expect(second.json.ok).toBe(status1.json.planned);
    // Not one request went out twice, over both runs (the assistant's twin prompts across scenarios
    // are answered by the cache).
    expect(server.requests).toHaveLength(calls1 + second.json.calls - second.json.cached_calls);
    expect(server.requests.every((r) => r.attempt === 0)).toBe(true);
    const roles = second.json.spend.by_role;
    expect(Object.keys(roles).sort()).toEqual(['assistant', 'user agent']);
    expect(roles['assistant']!.cost_usd + roles['user agent']!.cost_usd).toBeCloseTo(second.json.cost_usd, 9);
    expect(Object.keys(second.json.spend.by_model).sort()).toEqual(['openai:asst', 'openai:user']);
  });

  it('spends no more than the cap when the dialogues cost less than they reserve, and within one dialogue of it', async () => {
    server = await startMockLlm({ terminateAfter: 2 });
    const ws = await sampleWorkspace(['--users', '0']);
    const spec = (m: string) => `openai:${m}?base_url=${server!.url}/v1&${PRICE}`;
    const cap = 40;
    const r = await runCliJson<Summary>(
      ['dialogues', '-w', ws, '--assistant', spec('asst'), '--user', spec('user'), '--setting', 'base', ...FAST, '--max-cost', String(cap)],
      env,
    );
    expect(r.code, r.stderr).toBe(6);
    expect(r.json.spend_capped).toBe(true);
    expect(r.json.cost_usd).toBeLessThanOrEqual(cap);
    // A dialogue reserves its expected cost from the paper's Table 13 averages: at most 12 calls,
    // 17,352 input and 1,800 output tokens (MD), here $19.15; the run stops within that of the cap.
    expect(r.json.cost_usd).toBeGreaterThan(cap - (17352 + 1800) * TOKEN_USD);
  });
});
