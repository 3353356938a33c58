import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CallCache } from '../../src/llm/call-cache.js';
import { LlmClient } from '../../src/llm/client.js';
import { startMockLlm, type MockLlmServer } from '../../src/testkit/mock-server.js';
import { parseModelSpec } from '../../src/llm/model-spec.js';
import type { RetryPolicy } from '../../src/llm/retry-policy.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { tempDir } from '../helpers/cli.js';

// Quick back-off, and enough attempts that no call runs out during the storm.
const RETRY: RetryPolicy = { retries: 30, minDelayMs: 2, maxDelayMs: 10, factor: 1.5, maxTotalMs: 60_000, maxRetryAfterMs: 1000 };
const CONCURRENCY = 16;
const STORM = 60;

const request = (i: number): ChatRequest => ({
  system: 'You are a helpful assistant.',
  messages: [{ role: 'user', content: `Question number ${i}` }],
  params: { temperature: 0, maxTokens: 32 },
  purpose: 'assistant',
  promptVersion: 'test-v1',
  replicate: 0,
});

let server: MockLlmServer | undefined;
let client: LlmClient | undefined;
afterEach(async () => {
  await client?.close();
  await server?.close();
  client = undefined;
  server = undefined;
});

/** `calls` calls, CONCURRENCY at a time (as a stage runs them), sampling the controller at each start. */
async function run(c: LlmClient, calls: number): Promise<{ failures: number; limits: number[] }> {
  let next = 0;
  let failures = 0;
  const limits: number[] = [];
  const signal = new AbortController().signal;
  // As the stage runner does for its run's signal: one listener per call in flight is the design.
  setMaxListeners(CONCURRENCY * 4 + 10, signal);
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < calls) {
        const i = next++;
        limits.push(c.concurrency!.limit);
        await c.call(request(i), signal).catch(() => failures++);
      }
    }),
  );
  return { failures, limits };
}

describe('adaptive concurrency against the mock LLM server (real HTTP)', () => {
  it('backs off under a 429 storm and recovers once it passes', async () => {
    // The first STORM requests the server sees are answered 429, whenever they come: the storm is
    // counted in requests, not seconds, so the test does not depend on the machine's speed.
    server = await startMockLlm({ latencyMs: 2, fault: (r) => (r.index < STORM ? { kind: 'status', status: 429 } : undefined) });
    client = LlmClient.create(parseModelSpec(`openai:gpt-test?base_url=${server.url}/v1`), {
      cache: CallCache.open(join(tempDir(), 'cache'), 'off'),
      retry: RETRY,
      connections: CONCURRENCY,
      transport: 'inline',
      env: { OPENAI_API_KEY: 'sk-test-aimd' },
    });
    const { failures, limits } = await run(client, 300);
    expect(failures).toBe(0);
    // As new calls saw it when they started: full before the storm, below full while the
    // callers came back from it, full again at the end.
    expect(limits[0]).toBe(CONCURRENCY);
    expect(Math.min(...limits)).toBeLessThan(CONCURRENCY);
    expect(limits.at(-1)).toBe(CONCURRENCY);
    const stats = client.concurrency!;
    // Backed off: one cut per round trip, from 16 down to a single call in flight
    // (16 -> 8 -> 4 -> 2 -> 1 needs 16 + 8 + 4 + 2 = 30 of the 60 throttled requests).
    expect(stats.lowest).toBe(1);
    expect(stats.cuts).toBeGreaterThanOrEqual(4);
    expect(stats.overloads).toBe(STORM);
    // Recovered: 300 successes after the storm regain every slot (from 1 to 16 takes about
    // 1 + 2 + ... + 15 = 120 of them).
    expect(stats.limit).toBe(CONCURRENCY);
    expect(server.stats().requests).toBe(300 + STORM);
  });
});

describe('per-model limits with shards', () => {
  it('each of n shards takes 1/n of the spec rpm', async () => {
    server = await startMockLlm({});
    // rpm=4 over 2 shards: this shard's bucket holds 2 requests and refills one every 30 s.
    client = LlmClient.create(parseModelSpec(`openai:gpt-test?base_url=${server.url}/v1&rpm=4`), {
      cache: CallCache.open(join(tempDir(), 'cache'), 'off'),
      retry: RETRY,
      transport: 'inline',
      shards: 2,
      env: { OPENAI_API_KEY: 'sk-test-aimd' },
    });
    const controller = new AbortController();
    const calls = [0, 1, 2].map((i) => client!.call(request(i), controller.signal));
    await Promise.all(calls.slice(0, 2));
    // The third waits for its token (30 s away); a tenth of a second later it still has not been sent.
    await new Promise((r) => setTimeout(r, 100));
    expect(server.stats().requests).toBe(2);
    controller.abort(new Error('done'));
    await expect(calls[2]).rejects.toThrow('done');
    expect(server.stats().requests).toBe(2);
  });
});
