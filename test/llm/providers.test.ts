import { describe, expect, it } from 'vitest';
import { PlensError } from '../../src/core/errors.js';
import { CallCache } from '../../src/llm/call-cache.js';
import { LlmClient } from '../../src/llm/client.js';
import { hasPrice, isSimulator, parseModelSpec, unpriced } from '../../src/llm/model-spec.js';
import { PROVIDER_REGISTRY, PROVIDERS, providerEntry } from '../../src/llm/providers.js';
import type { ChatRequest } from '../../src/llm/types.js';

const errorOf = (f: () => unknown): PlensError => {
  try {
    f();
  } catch (error) {
    return error as PlensError;
  }
  throw new Error('expected an error');
};

const request: ChatRequest = {
  system: 'You are a helpful assistant.',
  messages: [{ role: 'user', content: 'Book me a table for two.' }],
  params: { temperature: 0, maxTokens: 64 },
  purpose: 'assistant',
  promptVersion: 'test-v1',
  replicate: 0,
};

describe('provider registry', () => {
  it('lists one entry per provider, in the order specs and errors name them', () => {
    expect(PROVIDERS).toEqual(['openai', 'anthropic', 'bedrock', 'sim']);
    expect(PROVIDER_REGISTRY.openai.endpoint).toEqual({
      defaultBaseUrl: 'https://api.openai.com/v1',
      baseUrlEnv: 'OPENAI_BASE_URL',
      keyEnv: 'OPENAI_API_KEY',
      vendorHost: 'api.openai.com',
    });
    expect(PROVIDER_REGISTRY.anthropic.endpoint.keyEnv).toBe('ANTHROPIC_API_KEY');
    expect('endpoint' in PROVIDER_REGISTRY.sim).toBe(false);
    // Bedrock: the AWS SDK signs and sends; no plens endpoint, its secrets named for the redactor.
    expect('endpoint' in PROVIDER_REGISTRY.bedrock).toBe(false);
    expect(PROVIDER_REGISTRY.bedrock.sdk.secretEnv).toContain('AWS_SECRET_ACCESS_KEY');
  });

  it('an unknown provider is a usage error naming every known one', () => {
    const e = errorOf(() => providerEntry('vertex', '--assistant'));
    expect(e).toBeInstanceOf(PlensError);
    expect(e.code).toBe('E_USAGE');
    expect(e.message).toBe('--assistant: unknown provider "vertex"; use one of openai, anthropic, bedrock, sim');
    expect(errorOf(() => parseModelSpec('gemini:pro', '--judge')).message).toBe(
      '--judge "gemini:pro": unknown provider "gemini"; use one of openai, anthropic, bedrock, sim',
    );
    // Names on Object.prototype are not providers.
    expect(errorOf(() => providerEntry('constructor')).code).toBe('E_USAGE');
  });

  it('the prices hook: a vendor model needs both prices, the simulator costs nothing without any', () => {
    expect(hasPrice(parseModelSpec('sim:default'))).toBe(true);
    expect(hasPrice(parseModelSpec('openai:m?price_in=1'))).toBe(false);
    expect(hasPrice(parseModelSpec('anthropic:m?price_in=3&price_out=15'))).toBe(true);
    expect(unpriced([parseModelSpec('openai:m'), parseModelSpec('openai:m?temperature=0'), parseModelSpec('sim:default')])).toEqual(['openai:m']);
    expect(isSimulator(parseModelSpec('sim:default'))).toBe(true);
    expect(isSimulator(parseModelSpec('openai:m'))).toBe(false);
  });

  it('each entry loads its code lazily and makes a working provider', async () => {
    const sim = (await providerEntry('sim').load())({ model: 'default' });
    expect(sim.constructor.name).toBe('SimProvider');
    const http = (await providerEntry('anthropic').load())({
      model: 'claude-x',
      http: { baseUrl: 'http://127.0.0.1:9', apiKey: undefined, transport: {} as never },
    });
    expect(http.constructor.name).toBe('AnthropicProvider');
    // An HTTP provider without an endpoint is a programming error, said as such.
    const openai = await providerEntry('openai').load();
    expect(() => openai({ model: 'gpt-x' })).toThrow(/without an endpoint/);
  });
});

describe('a plan-only client', () => {
  const cache = CallCache.open('', 'off');

  it('needs no key, by construction, and has the endpoint identity a real client would have', async () => {
    const plan = LlmClient.create(parseModelSpec('openai:gpt-4o'), { cache, env: {}, planOnly: true });
    expect(plan.endpoint).toBeUndefined();
    await expect(plan.call(request, new AbortController().signal)).rejects.toThrow(/plan-only client/);
    const gateway = LlmClient.create(parseModelSpec('anthropic:claude-x'), { cache, env: { ANTHROPIC_BASE_URL: 'http://127.0.0.1:9/' }, planOnly: true });
    expect(gateway.endpoint).toBe('http://127.0.0.1:9');
    // The real client of the same spec refuses without a key, naming the registry's variable.
    expect(() => LlmClient.create(parseModelSpec('openai:gpt-4o'), { cache, env: {} })).toThrow(/set OPENAI_API_KEY/);
  });

  it('a simulator client needs no key and no endpoint', async () => {
    const sim = LlmClient.create(parseModelSpec('sim:default'), { cache, env: {} });
    expect(sim.id).toBe('sim:default');
    expect(sim.endpoint).toBeUndefined();
    // Nothing was loaded or connected, so closing has nothing to wait for.
    await sim.close();
  });
});
