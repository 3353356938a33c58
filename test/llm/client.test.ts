import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CallCache } from '../../src/llm/call-cache.js';
import { LlmClient } from '../../src/llm/client.js';
import { LlmCallError } from '../../src/llm/errors.js';
import type { TransportKind } from '../../src/llm/http-transport.js';
import { startMockLlm, type MockFault, type MockLlmServer, type MockRequest } from '../../src/testkit/mock-server.js';
import { parseModelSpec } from '../../src/llm/model-spec.js';
import type { RetryPolicy } from '../../src/llm/retry-policy.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { tempDir } from '../helpers/cli.js';

const FAST_RETRY: RetryPolicy = { retries: 3, minDelayMs: 5, maxDelayMs: 20, factor: 2, maxTotalMs: 20_000, maxRetryAfterMs: 5_000 };
const TIMEOUTS = { connectMs: 2000, headersMs: 2000, bodyMs: 2000, deadlineMs: 400 };

const request = (text = 'Book me a table for two.'): ChatRequest => ({
  system: 'You are a helpful assistant.',
  messages: [{ role: 'user', content: text }],
  params: { temperature: 0, maxTokens: 64 },
  purpose: 'assistant',
  promptVersion: 'test-v1',
  replicate: 0,
});

let server: MockLlmServer | undefined;
const clients: LlmClient[] = [];
// A client leaves its cache to its owner: here, the test's set-up, which closes it after the test.
const caches: CallCache[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(caches.splice(0).map((c) => c.close()));
  await server?.close();
  server = undefined;
});

async function setup(
  api: 'openai' | 'anthropic',
  fault?: (r: MockRequest) => MockFault | undefined,
  cacheMode: 'off' | 'on' | 'read' | 'replay' = 'off',
  dir = tempDir(),
  transport: TransportKind = 'worker',
  port?: number,
) {
  // The same port for a second server of one test: the endpoint is part of every cache key.
  server = await startMockLlm({ ...(fault ? { fault } : {}), requireAuth: true, ...(port ? { port } : {}) });
  const spec = parseModelSpec(
    api === 'openai' ? `openai:gpt-test?base_url=${server.url}/v1&price_in=2&price_out=8` : `anthropic:claude-test?base_url=${server.url}`,
  );
  const client = LlmClient.create(spec, {
    cache: opened(CallCache.open(join(dir, 'cache'), cacheMode)),
    retry: FAST_RETRY,
    timeouts: TIMEOUTS,
    transport,
    env: { OPENAI_API_KEY: 'sk-test-openai', ANTHROPIC_API_KEY: 'sk-ant-test' },
  });
  clients.push(client);
  return client;
}

/** A cache the set-up opened, closed after the test. */
function opened(cache: CallCache): CallCache {
  caches.push(cache);
  return cache;
}

const signal = () => new AbortController().signal;

// Every fault through both transports: the HTTP worker thread (the default) and this thread.
describe.each([
  ['openai', 'worker'],
  ['anthropic', 'worker'],
  ['openai', 'inline'],
  ['anthropic', 'inline'],
] as const)('%s provider over real HTTP (%s transport)', (api, transport) => {
  const setupFor = (fault?: (r: MockRequest) => MockFault | undefined) => setup(api, fault, 'off', tempDir(), transport);

  it('sends the system prompt, an empty one as empty (the PersonaLens judge), and none for null', async () => {
    const client = await setupFor();
    await client.call(request('first'), signal());
    await client.call({ ...request('second'), system: '' }, signal());
    await client.call({ ...request('third'), system: null }, signal());
    expect(server!.requests.map((r) => [r.systemSent, r.system, r.messages.length])).toEqual([
      [true, 'You are a helpful assistant.', 1],
      [true, '', 1],
      [false, '', 1],
    ]);
  });

  it('returns the text and usage, and prices it per 1M tokens', async () => {
    const client = await setupFor();
    const out = await client.call(request(), signal());
    expect(out.response.text.length).toBeGreaterThan(10);
    expect(out.response.usage.inputTokens).toBeGreaterThan(0);
    expect(out).toMatchObject({ cached: false, attempts: 1 });
    if (api === 'openai') {
      const u = out.response.usage;
      expect(out.costUsd).toBeCloseTo((u.inputTokens * 2 + u.outputTokens * 8) / 1e6, 12);
    }
    // The key goes in the header the API expects.
    const headers = server!.requests[0]!.headers;
    if (api === 'openai') expect(headers['authorization']).toBe('Bearer sk-test-openai');
    else expect(headers['x-api-key']).toBe('sk-ant-test');
  });

  it.each([
    ['429 with Retry-After', { kind: 'status', status: 429, retryAfterSeconds: 1 } as MockFault],
    ['500', { kind: 'status', status: 500 } as MockFault],
    ['503', { kind: 'status', status: 503 } as MockFault],
    ['529 overloaded', { kind: 'status', status: 529 } as MockFault],
    ['408', { kind: 'status', status: 408 } as MockFault],
    ['connection reset', { kind: 'reset' } as MockFault],
    ['garbage body', { kind: 'garbage' } as MockFault],
    ['truncated body', { kind: 'truncated' } as MockFault],
    ['empty choices', { kind: 'empty-choices' } as MockFault],
    ['hang (call deadline)', { kind: 'hang' } as MockFault],
  ])('retries after %s and succeeds', async (_name, fault) => {
    const client = await setupFor((r) => (r.attempt < 2 ? fault : undefined));
    const t0 = performance.now();
    const out = await client.call(request(), signal());
    expect(out.attempts).toBe(3);
    expect(server!.stats().requests).toBe(3);
    if (fault.kind === 'status' && fault.retryAfterSeconds) expect(performance.now() - t0).toBeGreaterThanOrEqual(2000);
  });

  it.each([400, 401, 403, 404])('fails fast on %i, with no retry', async (status) => {
    const client = await setupFor(() => ({ kind: 'status', status }));
    const error = await client.call(request(), signal()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ kind: 'http', status, retryable: false });
    expect(server!.stats().requests).toBe(1);
  });

  // An empty or whitespace-only completion is an unusable answer: retried like a broken body, then
  // a failure; never returned as text, never cached.
  it.each([
    ['empty', ''],
    ['whitespace-only', ' \n\t  \n'],
  ])('retries a 200 with an %s completion and succeeds', async (_name, text) => {
    const client = await setupFor((r) => (r.attempt < 2 ? { kind: 'text', text } : undefined));
    const out = await client.call(request(), signal());
    expect(out.attempts).toBe(3);
    expect(out.response.text.trim()).not.toBe('');
    expect(server!.stats().outcomes).toMatchObject({ text: 2, ok: 1 });
    // The two empty answers were billed (their prompt, and what little they said): counted in the call's cost.
    expect(out.billed!.inputTokens).toBe(2 * out.response.usage.inputTokens);
    expect(out.costUsd).toBeCloseTo(client.costOf(out.response.usage) + client.costOf(out.billed!), 12);
  });

  it.each([
    ['empty', ''],
    ['whitespace-only', '   \n '],
  ])('an %s completion that persists is a failure (empty_response), not an answer', async (_name, text) => {
    const client = await setupFor(() => ({ kind: 'text', text }));
    const error = (await client.call(request(), signal()).catch((e: unknown) => e)) as LlmCallError & { billed?: { inputTokens: number } };
    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ kind: 'empty_response', retryable: true });
    expect(server!.stats().requests).toBe(FAST_RETRY.retries + 1);
    // A failure after empty answers still cost them: the error says what was billed.
    expect(error.billed!.inputTokens).toBeGreaterThan(0);
    expect(error.billed!.inputTokens % (FAST_RETRY.retries + 1)).toBe(0);
  });

  it('never caches an empty completion: the next call asks again', async () => {
    const dir = tempDir();
    const client = await setup(api, (r) => (r.attempt === 0 ? { kind: 'text', text: '' } : undefined), 'on', dir, transport);
    const noRetry = { ...request('cache me not'), params: { temperature: 0, maxTokens: 64 } };
    const first = await client.call(noRetry, signal());
    expect(first.attempts).toBe(2);
    const again = await client.call(noRetry, signal());
    expect(again).toMatchObject({ cached: true });
    expect(again.response.text).toBe(first.response.text);
    expect(again.response.text.trim()).not.toBe('');
  });

  it('gives up after the bounded number of retries', async () => {
    const client = await setupFor(() => ({ kind: 'status', status: 500 }));
    const error = (await client.call(request(), signal()).catch((e: unknown) => e)) as LlmCallError;
    expect(error).toMatchObject({ kind: 'http', status: 500 });
    expect(server!.stats().requests).toBe(FAST_RETRY.retries + 1);
  });
});

describe('rate limits', () => {
  it('every retry takes from the RPM bucket: a third attempt waits for a token rather than going out', async () => {
    server = await startMockLlm({ fault: (r) => (r.attempt < 2 ? { kind: 'status', status: 500 } : undefined) });
    // rpm=2: two requests now, the next only after 30 s.
    const client = LlmClient.create(parseModelSpec(`openai:gpt-test?base_url=${server.url}/v1&rpm=2`), {
      cache: CallCache.open(join(tempDir(), 'cache'), 'off'),
      retry: FAST_RETRY,
      timeouts: TIMEOUTS,
      env: { OPENAI_API_KEY: 'sk-test-openai' },
    });
    clients.push(client);
    const stop = new AbortController();
    const pending = client.call(request(), stop.signal).catch((e: unknown) => e);
    // Both tokens spent on the two failed attempts (they may take a while on a loaded machine)...
    for (let waited = 0; server.stats().requests < 2 && waited < 20_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    expect(server.stats().requests).toBe(2);
    // ...the third is held back by the bucket.
    await new Promise((r) => setTimeout(r, 1000));
    expect(server.stats().requests).toBe(2);
    stop.abort(new Error('test over'));
    expect(await pending).toMatchObject({ message: 'test over' });
    expect(server.stats().requests).toBe(2);
  });
});

describe('call cache', () => {
  it('serves a repeated call from the cache with no HTTP, and replay fails clearly on a miss', async () => {
    const dir = tempDir();
    const client = await setup('openai', undefined, 'on', dir);
    const first = await client.call(request('a'), signal());
    const again = await client.call(request('a'), signal());
    expect(server!.stats().requests).toBe(1);
    expect(again).toMatchObject({ cached: true, attempts: 0, latencyMs: first.latencyMs });
    expect(again.response).toEqual(first.response);
    const port = Number(new URL(server!.url).port);
    await client.close();
    clients.length = 0;
    await server!.close();

    const replay = await setup('openai', undefined, 'replay', dir, 'worker', port);
    expect((await replay.call(request('a'), signal())).cached).toBe(true);
    const miss = (await replay.call(request('b'), signal()).catch((e: unknown) => e)) as LlmCallError;
    expect(miss).toMatchObject({ kind: 'cache_miss', retryable: false });
    expect(miss.message).toContain('--cache replay');
    expect(server!.stats().requests).toBe(0);
  });

  it('keys on everything that decides the answer', async () => {
    const { callKey } = await import('../../src/llm/call-cache.js');
    const base = callKey('openai', 'm', request());
    expect(callKey('openai', 'm', request())).toBe(base);
    expect(callKey('openai', 'm2', request())).not.toBe(base);
    expect(callKey('anthropic', 'm', request())).not.toBe(base);
    expect(callKey('openai', 'm', { ...request(), params: { temperature: 0.5, maxTokens: 64 } })).not.toBe(base);
    expect(callKey('openai', 'm', { ...request(), promptVersion: 'v2' })).not.toBe(base);
    expect(callKey('openai', 'm', { ...request(), replicate: 1 })).not.toBe(base);
    expect(callKey('openai', 'm', { ...request(), system: 'other' })).not.toBe(base);
    // No system prompt is not an empty one, nor a prompt that reads like a marker.
    const none = callKey('openai', 'm', { ...request(), system: null });
    expect(none).not.toBe(callKey('openai', 'm', { ...request(), system: '' }));
    expect(none).not.toBe(callKey('openai', 'm', { ...request(), system: '-' }));
  });
});

describe('answers that end as failures', () => {
  it('a rejected answer is not served again by --cache on or read (a retry re-asks), but replay still reproduces it', async () => {
    const dir = tempDir();
    let replies = 0;
    const client = await setup('openai', undefined, 'on', dir);
    const port = Number(new URL(server!.url).port);
    const first = await client.call(request('judge this'), signal());
    replies++;
    client.reject(first);
    const retried = await client.call(request('judge this'), signal());
    expect(retried).toMatchObject({ cached: false, attempts: 1 });
    replies++;
    expect(server!.stats().requests).toBe(replies);
    // The new answer replaced the rejected one: served from the cache from now on.
    expect(await client.call(request('judge this'), signal())).toMatchObject({ cached: true });
    client.reject(retried);
    await client.close();
    clients.length = 0;
    await server!.close();

    const read = await setup('openai', undefined, 'read', dir, 'worker', port);
    expect(await read.call(request('judge this'), signal())).toMatchObject({ cached: false });
    await read.close();
    clients.length = 0;
    await server!.close();
    const replay = await setup('openai', undefined, 'replay', dir, 'worker', port);
    expect(await replay.call(request('judge this'), signal())).toMatchObject({ cached: true });
    expect(server!.stats().requests).toBe(0);
  });

  it('an empty answer recorded by an older version is never served, in any mode', async () => {
    const dir = tempDir();
    const client = await setup('openai', undefined, 'on', dir);
    const port = Number(new URL(server!.url).port);
    const key = (await client.call(request('x'), signal())).cacheKey;
    await client.close();
    clients.length = 0;
    await server!.close();
    const cache = CallCache.open(join(dir, 'cache'), 'write');
    cache.put(key, { response: { text: '  ', usage: { inputTokens: 1, outputTokens: 0 }, finishReason: 'stop' }, latencyMs: 1 });
    await cache.committed();
    await cache.close();
    const again = await setup('openai', undefined, 'on', dir, 'worker', port);
    const out = await again.call(request('x'), signal());
    expect(out).toMatchObject({ cached: false });
    expect(out.response.text.trim()).not.toBe('');
  });
});

describe('the endpoint is part of the identity', () => {
  it('two servers never share cache entries, and credentials or queries in base_url are not part of it', async () => {
    const { callKey } = await import('../../src/llm/call-cache.js');
    const { endpointIdentity } = await import('../../src/llm/model-spec.js');
    expect(callKey('openai', 'm', request(), 'http://127.0.0.1:1/v1')).not.toBe(callKey('openai', 'm', request(), 'http://127.0.0.1:2/v1'));
    expect(callKey('openai', 'm', request(), undefined)).toBe(callKey('openai', 'm', request()));
    expect(endpointIdentity('https://api.openai.com/v1/', 'https://api.openai.com/v1')).toBeUndefined();
    expect(endpointIdentity('http://127.0.0.1:8000/v1/?token=abc', 'https://api.openai.com/v1')).toBe('http://127.0.0.1:8000/v1');
  });

  it("a second server at another address is asked, not served the first one's answers", async () => {
    const dir = tempDir();
    const a = await setup('openai', undefined, 'on', dir);
    await a.call(request('same question'), signal());
    const first = server!;
    server = undefined;
    const b = await setup('openai', undefined, 'on', dir);
    expect(b.endpoint).not.toBe(a.endpoint);
    expect(await b.call(request('same question'), signal())).toMatchObject({ cached: false });
    expect(server!.stats().requests).toBe(1);
    await first.close();
  });
});

describe('API keys', () => {
  it('a missing key for the official endpoint is a usage error naming the variable', () => {
    expect(() => LlmClient.create(parseModelSpec('openai:gpt-4o'), { cache: CallCache.open('', 'off'), env: {} })).toThrow(/OPENAI_API_KEY/);
    expect(() => LlmClient.create(parseModelSpec('anthropic:claude-x'), { cache: CallCache.open('', 'off'), env: {} })).toThrow(/ANTHROPIC_API_KEY/);
  });

  it('a key never appears in an error message', async () => {
    const client = await setup('openai', () => ({ kind: 'status', status: 401, body: '{"error":{"message":"bad key"}}' }));
    const error = (await client.call(request(), signal()).catch((e: unknown) => e)) as Error;
    expect(String(error.message)).not.toContain('sk-test-openai');
  });

  // A server that echoes the request's credentials in its error body or in an answer.
  it.each(['openai', 'anthropic'] as const)('%s: a key echoed in an error body or an answer is redacted', async (api) => {
    const key = api === 'openai' ? 'sk-test-openai' : 'sk-ant-test';
    const echo = (r: MockRequest): MockFault => ({
      kind: 'status',
      status: 400,
      body: JSON.stringify({ error: { message: `bad request; you sent ${JSON.stringify(r.headers)}` } }),
    });
    const client = await setup(api, echo);
    const error = (await client.call(request(), signal()).catch((e: unknown) => e)) as Error;
    expect(error.message).toContain('you sent');
    expect(error.message).not.toContain(key);
    await client.close();
    clients.length = 0;
    await server!.close();
    const answering = await setup(api, (r) => ({ kind: 'text', text: `your key is ${String(r.headers['authorization'] ?? r.headers['x-api-key'])}` }));
    const out = await answering.call(request(), signal());
    expect(out.response.text).toContain('your key is');
    expect(out.response.text).not.toContain(key);
  });
});
