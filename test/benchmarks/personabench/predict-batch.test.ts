import { afterEach, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PromptRecord } from '../../../src/benchmarks/personabench/build-prompts.js';
import { startMockLlm, type MockLlmServer } from '../../../src/testkit/mock-server.js';
import { runCliJson, tempDir } from '../../helpers/cli.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const record = (task: '3.1' | '3.3', position: number): PromptRecord => ({
  sampleId: `${task}/P-Conv/${position}`,
  task,
  setting: 'P-Conv',
  position,
  targetPostId: null,
  targetReplyId: `r${position}`,
  trueLabel: task === '3.1' ? 'positive' : 'a reply',
  subreddit: 'books',
  user: 'u1',
  fewShot: null,
  prompt: `${task === '3.1' ? 'SIGN' : 'REPLY'} ${String(position).padStart(3, '0')}`,
  extra: null,
  source: 'plens',
});

interface Summary {
  planned: number;
  ok: number;
  failed: number;
  calls: number;
  already_done: number;
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
  batch?: { submitted: number; items_submitted: number; items_answered: number; fallback_online: number; cost_usd: number };
  partitions: Array<{ task: string; rows: number | null }>;
}

describe('plens persona predict --batch (the OpenAI Batch API)', () => {
  it('sends every prediction (3.3 replicates too) through batches at half price, recorded in each task partition; a rerun submits nothing', async () => {
    server = await startMockLlm({
      reply: (r) => (r.messages[0]!.content.startsWith('SIGN') ? 'positive' : 'a reply of mine'),
      batch: { plan: () => ({ polls: 1 }) },
    });
    const dir = tempDir('plens-persona-batch-');
    const file = join(dir, 'prompts.jsonl');
    // 4 sign prompts (one call each) and 2 reply prompts (3 replicates each): 10 requests.
    const records = [0, 1, 2, 3].map((i) => record('3.1', i)).concat([0, 1].map((i) => record('3.3', i)));
    writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const model = `openai:tiny?base_url=${server.url}/v1&price_in=1000000&price_out=1000000`;
    const args = [
      'persona',
      'predict',
      '-w',
      join(dir, 'out'),
      '--model',
      model,
      '--from',
      file,
      '--samples',
      '3',
      '--batch',
      '--poll-interval',
      '0.01',
      '--no-progress',
    ];
    const env = { env: { OPENAI_API_KEY: 'sk-persona-batch' } };

    const first = await runCliJson<Summary>(args, env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ planned: 10, ok: 10, failed: 0 });
    expect(first.json.batch).toMatchObject({ items_submitted: 10, items_answered: 10, fallback_online: 0 });
    // No online call: every request came in a batch.
    expect(server.requests.filter((r) => r.batch === undefined)).toHaveLength(0);
    expect(server.requests.filter((r) => r.batch !== undefined)).toHaveLength(10);
    const submitted = server.batch.submissions;
    expect(submitted).toBeGreaterThanOrEqual(1);
    // Half the online price: at $1 a token, a call costs (input + output tokens) / 2.
    const tokens = first.json.input_tokens + first.json.output_tokens;
    expect(tokens).toBeGreaterThan(0);
    expect(first.json.cost_usd).toBeCloseTo(tokens / 2, 6);
    expect(first.json.batch!.cost_usd).toBeCloseTo(first.json.cost_usd, 9);
    expect(Object.fromEntries(first.json.partitions.map((p) => [p.task, p.rows]))).toEqual({ '3.1': 4, '3.3': 6 });

    const second = await runCliJson<Summary>(args, env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.json).toMatchObject({ planned: 0, already_done: 10, ok: 0 });
    expect(server.batch.submissions).toBe(submitted);
  });
});
