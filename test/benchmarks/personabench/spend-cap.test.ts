import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PromptRecord } from '../../../src/benchmarks/personabench/build-prompts.js';
import { startMockLlm, type MockLlmServer } from '../../../src/testkit/mock-server.js';
import { runCliJson, tempDir } from '../../helpers/cli.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const record = (position: number): PromptRecord => ({
  sampleId: `3.1/P-Conv/${position}`,
  task: '3.1',
  setting: 'P-Conv',
  position,
  targetPostId: null,
  targetReplyId: `r${position}`,
  trueLabel: 'positive',
  subreddit: 'books',
  user: 'u1',
  fewShot: null,
  prompt: `SIGN ${String(position).padStart(3, '0')}`,
  extra: null,
  source: 'plens',
});

interface Summary {
  planned: number;
  ok: number;
  calls: number;
  cached_calls: number;
  cost_usd: number;
  already_done: number;
  spend_capped: boolean;
  max_cost_usd: number | null;
  spend: { by_role: Record<string, { calls: number; cost_usd: number }> };
}

describe('plens persona predict --max-cost', () => {
  it('stops within one call of the cap (exit 6) and a rerun with a higher cap does the rest, each prompt sent once', async () => {
    server = await startMockLlm({ reply: () => 'positive' });
    const dir = tempDir('plens-persona-cap-');
    const file = join(dir, 'prompts.jsonl');
    const n = 30;
    writeFileSync(file, Array.from({ length: n }, (_, i) => JSON.stringify(record(i))).join('\n') + '\n');
    // $1 a token: a call reserves its prompt (2 tokens) and 3.1's 10 output tokens, $12, and costs about $4.
    const model = `openai:tiny?base_url=${server.url}/v1&price_in=1000000&price_out=1000000`;
    const args = ['persona', 'predict', '-w', join(dir, 'out'), '--model', model, '--from', file, '--concurrency', '4', '--no-progress'];
    const env = { env: { OPENAI_API_KEY: 'sk-persona' } };
    const cap = 50;

    const first = await runCliJson<Summary>([...args, '--max-cost', String(cap)], env);
    expect(first.code, first.stderr).toBe(6);
    expect(first.json).toMatchObject({ planned: n, spend_capped: true, max_cost_usd: cap, cached_calls: 0 });
    expect(first.json.cost_usd).toBeLessThanOrEqual(cap);
    expect(first.json.cost_usd).toBeGreaterThan(cap - 12);
    expect(first.json.spend.by_role['predictor']!.cost_usd).toBe(first.json.cost_usd);
    expect(server.requests).toHaveLength(first.json.calls);

    const second = await runCliJson<Summary>([...args, '--max-cost', '100000'], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json).toMatchObject({ already_done: first.json.ok, ok: n - first.json.ok, spend_capped: false });
    expect(server.requests).toHaveLength(n);
    expect(new Set(server.requests.map((r) => r.messages[0]!.content)).size).toBe(n);
  });
});
