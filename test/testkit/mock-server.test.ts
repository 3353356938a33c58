import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTokens, defaultReply, startMockLlm, type MockFault, type MockLlmServer, type MockRequest } from '../../src/testkit/mock-server.js';

const sleep = (ms: number): Promise<'timeout'> => new Promise((resolve) => setTimeout(() => resolve('timeout'), ms));

function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const openai = (s: MockLlmServer): string => `${s.url}/v1/chat/completions`;
const anthropic = (s: MockLlmServer): string => `${s.url}/v1/messages`;

function mockRequest(system: string, messages: MockRequest['messages']): MockRequest {
  return {
    api: 'openai',
    index: 0,
    attempt: 0,
    bodyDigest: '',
    model: 'm',
    system,
    systemSent: system !== '',
    messages,
    temperature: undefined,
    maxTokens: undefined,
    headers: {},
  };
}

describe('mock LLM server: the two APIs', () => {
  let server: MockLlmServer;
  beforeAll(async () => {
    server = await startMockLlm();
  });
  afterAll(() => server.close());

  it('listens on 127.0.0.1 with no trailing slash', () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers OpenAI chat completions in the real shape, with usage', async () => {
    const body = {
      model: 'gpt-test',
      messages: [
        { role: 'system', content: 'You are helpful.' },
        { role: 'user', content: 'Plan a trip to Rome.' },
        { role: 'assistant', content: [{ type: 'text', text: 'Sure.' }] },
        { role: 'user', content: 'Cheaper please.' },
      ],
      temperature: 0.2,
      max_tokens: 64,
    };
    const res = await post(openai(server), body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const json = await res.json();
    const req = server.requests.at(-1)!;
    expect(req).toMatchObject({
      api: 'openai',
      attempt: 0,
      model: 'gpt-test',
      system: 'You are helpful.',
      messages: [
        { role: 'user', content: 'Plan a trip to Rome.' },
        { role: 'assistant', content: 'Sure.' },
        { role: 'user', content: 'Cheaper please.' },
      ],
      temperature: 0.2,
      maxTokens: 64,
    });
    const text = defaultReply(req);
    const p = countTokens('You are helpful.Plan a trip to Rome.Sure.Cheaper please.');
    const c = countTokens(text);
    expect(json).toEqual({
      id: `chatcmpl-mock-${req.index}`,
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'gpt-test',
      choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: { prompt_tokens: p, completion_tokens: c, total_tokens: p + c },
    });
    expect(Math.abs(json.created - Date.now() / 1000)).toBeLessThan(5);
  });

  it('reads max_completion_tokens for OpenAI', async () => {
    await post(openai(server), { model: 'm', messages: [{ role: 'user', content: 'x' }], max_completion_tokens: 9 });
    expect(server.requests.at(-1)!.maxTokens).toBe(9);
    expect(server.requests.at(-1)!.temperature).toBeUndefined();
  });

  it('answers Anthropic messages in the real shape, with usage', async () => {
    const body = {
      model: 'claude-test',
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: 'Be kind.' },
      ],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello there' }] }],
      max_tokens: 100,
    };
    const res = await post(anthropic(server), body, { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' });
    expect(res.status).toBe(200);
    const json = await res.json();
    const req = server.requests.at(-1)!;
    expect(req).toMatchObject({ api: 'anthropic', model: 'claude-test', system: 'Be brief.\nBe kind.', maxTokens: 100, temperature: undefined });
    expect(req.headers['x-api-key']).toBe('k');
    const text = defaultReply(req);
    expect(json).toEqual({
      id: `msg_mock_${req.index}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [{ type: 'text', text }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: countTokens('Be brief.\nBe kind.Hello there'), output_tokens: countTokens(text) },
    });
  });

  it('numbers requests and counts identical bodies in `attempt`', async () => {
    const before = server.requests.length;
    const a = { model: 'm', messages: [{ role: 'user', content: 'same' }] };
    const b = { model: 'm', messages: [{ role: 'user', content: 'different' }] };
    await post(openai(server), a);
    await post(openai(server), a);
    await post(openai(server), b);
    await post(openai(server), a);
    const got = server.requests.slice(before).map((r) => [r.index, r.attempt]);
    expect(got).toEqual([
      [before, 0],
      [before + 1, 1],
      [before + 2, 0],
      [before + 3, 2],
    ]);
  });

  it('keeps no count of bodies with countAttempts off: every attempt is 0', async () => {
    const lean = await startMockLlm({ keepRequests: true, countAttempts: false });
    try {
      const a = { model: 'm', messages: [{ role: 'user', content: 'same' }] };
      for (let i = 0; i < 3; i++) await post(openai(lean), a);
      expect(lean.requests.map((r) => r.attempt)).toEqual([0, 0, 0]);
    } finally {
      await lean.close();
    }
  });

  it('carries the SHA-1 of each raw body, the same for the same bytes', async () => {
    const before = server.requests.length;
    const raw = ['{"model":"m","messages":[{"role":"user","content":"x"}]}', '{"model":"m","messages":[{"role":"user","content":"x"}] }'];
    for (const body of [raw[0]!, raw[1]!, raw[0]!]) await post(openai(server), body);
    const digests = server.requests.slice(before).map((r) => r.bodyDigest);
    expect(digests).toEqual([raw[0], raw[1], raw[0]].map((b) => createHash('sha1').update(b!).digest('base64')));
    expect(digests[0]).not.toBe(digests[1]);
  });

  it('gives 404 for unknown routes and 400 for bad bodies, in each API error format', async () => {
    const notFound = await post(`${server.url}/v1/completions`, {});
    expect(notFound.status).toBe(404);
    expect((await notFound.json()).error.type).toBe('invalid_request_error');
    const get = await fetch(openai(server));
    expect(get.status).toBe(404);
    await get.text();

    const badOpenAi = await post(openai(server), '{"model": "m", "messages": [');
    expect(badOpenAi.status).toBe(400);
    expect(await badOpenAi.json()).toMatchObject({ error: { type: 'invalid_request_error', message: expect.any(String) } });

    const badAnthropic = await post(anthropic(server), { model: 'm', messages: [{ role: 'system', content: 'no' }] });
    expect(badAnthropic.status).toBe(400);
    expect(await badAnthropic.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });

    const noMessages = await post(openai(server), { model: 'm' });
    expect(noMessages.status).toBe(400);
    await noMessages.text();
  });

  it('uses a custom reply function', async () => {
    const custom = await startMockLlm({ reply: (r) => `echo ${r.messages.length} ${r.model}` });
    try {
      const json = await (await post(openai(custom), { model: 'mm', messages: [{ role: 'user', content: 'a' }] })).json();
      expect(json.choices[0].message.content).toBe('echo 1 mm');
    } finally {
      await custom.close();
    }
  });
});

describe('mock LLM server: faults', () => {
  const faults: Record<string, MockFault> = {
    'f-429': { kind: 'status', status: 429, retryAfterSeconds: 7 },
    'f-500': { kind: 'status', status: 500 },
    'f-529': { kind: 'status', status: 529 },
    'f-custom': { kind: 'status', status: 503, body: '{"hello":"world"}' },
    'f-reset': { kind: 'reset' },
    'f-garbage': { kind: 'garbage' },
    'f-truncated': { kind: 'truncated' },
    'f-empty': { kind: 'empty-choices' },
  };
  let server: MockLlmServer;
  beforeAll(async () => {
    server = await startMockLlm({ fault: (r) => faults[r.model] });
  });
  afterAll(() => server.close());

  const call = (api: 'openai' | 'anthropic', model: string): Promise<Response> =>
    post(api === 'openai' ? openai(server) : anthropic(server), { model, messages: [{ role: 'user', content: 'hi' }] });

  it('429 carries retry-after and the API error body', async () => {
    const o = await call('openai', 'f-429');
    expect(o.status).toBe(429);
    expect(o.headers.get('retry-after')).toBe('7');
    expect(await o.json()).toMatchObject({ error: { code: 'rate_limit_exceeded', message: expect.any(String) } });
    const a = await call('anthropic', 'f-429');
    expect(a.status).toBe(429);
    expect(a.headers.get('retry-after')).toBe('7');
    expect(await a.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });

  it('500, 529 and custom bodies', async () => {
    const o = await call('openai', 'f-500');
    expect(o.status).toBe(500);
    expect(o.headers.get('retry-after')).toBeNull();
    expect(await o.json()).toMatchObject({ error: { type: 'server_error' } });
    const a500 = await call('anthropic', 'f-500');
    expect(await a500.json()).toMatchObject({ type: 'error', error: { type: 'api_error' } });
    const a = await call('anthropic', 'f-529');
    expect(a.status).toBe(529);
    expect(await a.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    const c = await call('openai', 'f-custom');
    expect(c.status).toBe(503);
    expect(await c.text()).toBe('{"hello":"world"}');
  });

  it('reset makes fetch reject, and the server keeps serving', async () => {
    await expect(call('openai', 'f-reset')).rejects.toThrow();
    await expect(call('anthropic', 'f-reset')).rejects.toThrow();
    expect((await call('openai', 'ok')).status).toBe(200);
  });

  it('garbage and truncated are 200 application/json bodies that do not parse', async () => {
    for (const api of ['openai', 'anthropic'] as const) {
      for (const model of ['f-garbage', 'f-truncated']) {
        const res = await call(api, model);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('application/json');
        const text = await res.text();
        expect(text.length).toBeGreaterThan(0);
        expect(() => JSON.parse(text)).toThrow();
      }
    }
  });

  it('empty-choices is valid JSON with no choices / no content blocks', async () => {
    const o = await (await call('openai', 'f-empty')).json();
    expect(o.object).toBe('chat.completion');
    expect(o.choices).toEqual([]);
    const a = await (await call('anthropic', 'f-empty')).json();
    expect(a.type).toBe('message');
    expect(a.content).toEqual([]);
  });

  it('hang never answers, and close() ends it', async () => {
    const hanging = await startMockLlm({ fault: () => ({ kind: 'hang' }) });
    const pending = post(openai(hanging), { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    pending.catch(() => undefined);
    expect(await Promise.race([pending, sleep(300)])).toBe('timeout');
    expect(hanging.stats().outcomes).toEqual({ hang: 1 });
    await hanging.close();
    await expect(pending).rejects.toThrow();
  });

  it('stats() counts requests and outcomes', async () => {
    const s = await startMockLlm({ fault: (r) => faults[r.model], keepRequests: false });
    try {
      for (const model of ['ok', 'ok', 'f-429', 'f-500', 'f-garbage', 'f-truncated', 'f-empty']) await (await call2(s, model)).text();
      await expect(call2(s, 'f-reset')).rejects.toThrow();
      await (await post(`${s.url}/nope`, {})).text();
      expect(s.requests).toEqual([]);
      expect(s.stats()).toEqual({
        requests: 9,
        outcomes: { ok: 2, 'status:429': 1, 'status:500': 1, garbage: 1, truncated: 1, 'empty-choices': 1, reset: 1, 'status:404': 1 },
      });
    } finally {
      await s.close();
    }
  });

  const call2 = (s: MockLlmServer, model: string): Promise<Response> => post(openai(s), { model, messages: [{ role: 'user', content: 'hi' }] });
});

describe('mock LLM server: latency and auth', () => {
  it('delays answers and faults by latencyMs, but resets at once', async () => {
    const s = await startMockLlm({
      latencyMs: 400,
      fault: (r) => (r.model === 'reset' ? { kind: 'reset' } : r.model === '429' ? { kind: 'status', status: 429 } : undefined),
    });
    try {
      const body = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });
      let t = performance.now();
      const [ok, limited] = await Promise.all([post(openai(s), body('ok')), post(openai(s), body('429'))]);
      expect(ok.status).toBe(200);
      expect(limited.status).toBe(429);
      expect(performance.now() - t).toBeGreaterThanOrEqual(390);
      t = performance.now();
      await expect(post(openai(s), body('reset'))).rejects.toThrow();
      expect(performance.now() - t).toBeLessThan(300);
    } finally {
      await s.close();
    }
  });

  it('spreads latency over latencyMs ± jitterMs, never below the low end', async () => {
    const s = await startMockLlm({ latencyMs: 200, jitterMs: 150 });
    try {
      const body = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
      const delays = await Promise.all(
        Array.from({ length: 20 }, async () => {
          const t = performance.now();
          expect((await post(openai(s), body)).status).toBe(200);
          return performance.now() - t;
        }),
      );
      // Fixed latency would answer all twenty within a few ms of each other.
      expect(Math.min(...delays)).toBeGreaterThanOrEqual(45);
      expect(Math.max(...delays) - Math.min(...delays)).toBeGreaterThan(100);
    } finally {
      await s.close();
    }
  });

  it('close() also ends requests still waiting out their latency', async () => {
    const s = await startMockLlm({ latencyMs: 10_000 });
    const pending = post(openai(s), { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    pending.catch(() => undefined);
    await sleep(50);
    await s.close();
    await expect(pending).rejects.toThrow();
  });

  it('requireAuth gives 401 without a key', async () => {
    const s = await startMockLlm({ requireAuth: true });
    try {
      const o = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
      const none = await post(openai(s), o);
      expect(none.status).toBe(401);
      expect(await none.json()).toMatchObject({ error: { type: 'invalid_request_error', code: 'invalid_api_key' } });
      expect((await post(openai(s), o, { authorization: 'Bearer ' })).status).toBe(401);
      expect((await post(openai(s), o, { authorization: 'Bearer sk-test' })).status).toBe(200);

      const a = await post(anthropic(s), o);
      expect(a.status).toBe(401);
      expect(await a.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
      expect((await post(anthropic(s), o, { authorization: 'Bearer sk-test' })).status).toBe(401);
      expect((await post(anthropic(s), o, { 'x-api-key': 'sk-test' })).status).toBe(200);
      expect(s.stats().outcomes).toEqual({ 'status:401': 4, ok: 2 });
    } finally {
      await s.close();
    }
  });
});

describe('defaultReply and countTokens', () => {
  const userPrompt = 'You are simulating a user. When your goals are met, say TERMINATE.';
  const convo = (assistantTurns: number): string => {
    const lines: string[] = [];
    for (let i = 0; i < assistantTurns; i++) lines.push(`[USER]: question ${i}`, `[ASSISTANT]: answer ${i}`);
    return `Conversation so far:\n${lines.join('\n')}\nWrite your next message.`;
  };
  const words = (s: string): number => s.split(/\s+/).filter(Boolean).length;

  it('the user agent terminates only after terminateAfter assistant turns', () => {
    for (const n of [0, 1]) {
      const r = defaultReply(mockRequest(userPrompt, [{ role: 'user', content: convo(n) }]));
      expect(r).not.toContain('TERMINATE');
      expect(r).not.toContain('[ASSISTANT]:');
    }
    for (const n of [2, 3]) {
      expect(defaultReply(mockRequest(userPrompt, [{ role: 'user', content: convo(n) }]))).toMatch(/ TERMINATE$/);
    }
    expect(defaultReply(mockRequest(userPrompt, [{ role: 'user', content: convo(2) }]), 3)).not.toContain('TERMINATE');
    expect(defaultReply(mockRequest(userPrompt, [{ role: 'user', content: convo(3) }]), 3)).toMatch(/ TERMINATE$/);
    expect(defaultReply(mockRequest(userPrompt, []), 0)).toMatch(/ TERMINATE$/);
  });

  it('the assistant side never terminates and carries a stable digest', () => {
    const a = mockRequest('You are a helpful assistant.', [{ role: 'user', content: convo(5) }]);
    const b = mockRequest('You are a helpful assistant.', [{ role: 'user', content: 'something else' }]);
    const ra = defaultReply(a);
    expect(ra).not.toContain('TERMINATE');
    expect(ra).toMatch(/\b[0-9a-f]{8}\b/);
    expect(defaultReply({ ...a, messages: [...a.messages] })).toBe(ra);
    expect(defaultReply(b)).not.toBe(ra);
    expect(words(ra)).toBeLessThan(30);
    expect(words(defaultReply(mockRequest(userPrompt, [{ role: 'user', content: convo(4) }])))).toBeLessThan(30);
    // TERMINATE only counts as a word
    expect(defaultReply(mockRequest('Never TERMINATED.', [{ role: 'user', content: convo(5) }]))).not.toContain('TERMINATE');
  });

  it('the server passes terminateAfter to defaultReply', async () => {
    const s = await startMockLlm({ terminateAfter: 1 });
    try {
      const json = await (
        await post(openai(s), {
          model: 'm',
          messages: [
            { role: 'system', content: userPrompt },
            { role: 'user', content: convo(1) },
          ],
        })
      ).json();
      expect(json.choices[0].message.content).toMatch(/ TERMINATE$/);
    } finally {
      await s.close();
    }
  });

  it('countTokens is ceil(length / 4)', () => {
    expect(countTokens('')).toBe(0);
    expect(countTokens('a')).toBe(1);
    expect(countTokens('abcd')).toBe(1);
    expect(countTokens('abcde')).toBe(2);
  });
});

describe('mock server process: --unique-replies', () => {
  it('names the SHA-1 of the raw body in each reply: the same request, the same reply; another, another', async () => {
    // The build's entry point, as the benchmarks start it (npm test builds first).
    const child = spawn(process.execPath, [new URL('../../dist/testkit/mock-server-main.js', import.meta.url).pathname, '--port', '0', '--unique-replies'], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const line = await new Promise<string>((resolve, reject) => {
        child.on('error', reject);
        createInterface({ input: child.stdout! }).once('line', resolve);
      });
      const url = `${line.replace(/^listening /, '').trim()}/v1/chat/completions`;
      const reply = async (body: string) =>
        ((await (await post(url, body)).json()) as { choices: Array<{ message: { content: string } }> }).choices[0]!.message.content;
      const a = JSON.stringify({
        model: 'm',
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'hi' },
        ],
      });
      const b = JSON.stringify({
        model: 'n',
        messages: [
          { role: 'system', content: 's' },
          { role: 'user', content: 'hi' },
        ],
      });
      const [first, again, other] = [await reply(a), await reply(a), await reply(b)];
      expect(first.startsWith(`(${createHash('sha1').update(a).digest('base64').slice(0, 11)}) `)).toBe(true);
      expect(again).toBe(first);
      expect(other).not.toBe(first);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
