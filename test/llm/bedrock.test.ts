import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bedrockBaseModel, bedrockModelId, bedrockPrice, PERSONALENS_BEDROCK_MODELS } from '../../src/llm/bedrock-models.js';
import { CallCache } from '../../src/llm/call-cache.js';
import { LlmClient } from '../../src/llm/client.js';
import { LlmCallError } from '../../src/llm/errors.js';
import { parseModelSpec } from '../../src/llm/model-spec.js';
import { pricesOf } from '../../src/llm/providers.js';
import type { RetryPolicy } from '../../src/llm/retry-policy.js';
import type { ChatRequest } from '../../src/llm/types.js';
import { tempDir } from '../helpers/cli.js';
import { startMockBedrock, type MockBedrockFault, type MockBedrockRequest, type MockBedrockServer } from '../helpers/mock-bedrock.js';

const FAST_RETRY: RetryPolicy = { retries: 3, minDelayMs: 5, maxDelayMs: 20, factor: 2, maxTotalMs: 20_000, maxRetryAfterMs: 5_000 };
const TIMEOUTS = { connectMs: 2000, headersMs: 2000, bodyMs: 2000, deadlineMs: 5000 };

// Fake, but long enough for the redactor (>= 6 characters) and shaped like the real thing.
const CREDS = {
  accessKeyId: 'AKIAPLENSTEST0000001',
  secretAccessKey: 'plensTestSecret/K7MDENG+bPxRfiCYEXAMPLEKEY',
  sessionToken: 'plensTestSessionToken//////////ZXIvYXdzEJr',
};

// 28 + 24 = 52 prompt characters: the mock counts 13 input tokens.
const request = (text = 'Book me a table for two.'): ChatRequest => ({
  system: 'You are a helpful assistant.',
  messages: [{ role: 'user', content: text }],
  params: { temperature: 0.5, maxTokens: 512 },
  purpose: 'assistant',
  promptVersion: 'test-v1',
  replicate: 0,
});
// 25 characters: 7 output tokens.
const ANSWER = 'A table for two at eight.';

let server: MockBedrockServer | undefined;
const clients: LlmClient[] = [];
// A client leaves its cache to its owner: here, the test's set-up, which closes it after the test.
const caches: CallCache[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(caches.splice(0).map((c) => c.close()));
  await server?.close();
  server = undefined;
  vi.unstubAllEnvs();
});

/** Only what the test sets: no keys, profile or instance metadata from the machine running it (IMDS is not 127.0.0.1). */
function isolateAwsEnv(): string {
  const dir = tempDir('plens-aws-');
  for (const name of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'AWS_DEFAULT_PROFILE',
    'AWS_REGION',
    'AWS_DEFAULT_REGION',
    'AWS_WEB_IDENTITY_TOKEN_FILE',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  ]) {
    vi.stubEnv(name, undefined);
  }
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
  writeFileSync(join(dir, 'config'), '');
  writeFileSync(join(dir, 'credentials'), '');
  vi.stubEnv('AWS_CONFIG_FILE', join(dir, 'config'));
  vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', join(dir, 'credentials'));
  return dir;
}

function envKeys(withToken = true): void {
  isolateAwsEnv();
  vi.stubEnv('AWS_ACCESS_KEY_ID', CREDS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', CREDS.secretAccessKey);
  if (withToken) vi.stubEnv('AWS_SESSION_TOKEN', CREDS.sessionToken);
  vi.stubEnv('AWS_REGION', 'us-east-1');
}

async function setup(
  model: string,
  options: {
    fault?: (r: MockBedrockRequest) => MockBedrockFault | undefined;
    reply?: (r: MockBedrockRequest) => string;
    withToken?: boolean;
    params?: string;
    cache?: 'off' | 'on';
    retry?: RetryPolicy;
  } = {},
) {
  server = await startMockBedrock({
    credentials: options.withToken === false ? { accessKeyId: CREDS.accessKeyId, secretAccessKey: CREDS.secretAccessKey } : CREDS,
    reply: options.reply ?? (() => ANSWER),
    ...(options.fault ? { fault: options.fault } : {}),
  });
  const client = LlmClient.create(parseModelSpec(`bedrock:${model}?base_url=${server.url}${options.params ?? ''}`), {
    cache: opened(CallCache.open(join(tempDir(), 'cache'), options.cache ?? 'off')),
    retry: options.retry ?? FAST_RETRY,
    timeouts: TIMEOUTS,
    env: process.env,
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

describe('Bedrock model names and prices', () => {
  it('maps the original PersonaLens short names to their Bedrock ids', () => {
    expect(bedrockModelId('claude-3-sonnet-v1')).toBe('anthropic.claude-3-sonnet-20240229-v1:0');
    expect(bedrockModelId('claude-3-5-sonnet-v2')).toBe('us.anthropic.claude-3-5-sonnet-20241022-v2:0');
    expect(bedrockModelId('llama-3-1-70b-instruct-v1')).toBe('us.meta.llama3-1-70b-instruct-v1:0');
    expect(bedrockModelId('mistral-7b-instruct-v2')).toBe('mistral.mistral-7b-instruct-v0:2');
    // Anything else is sent as given: a model id, a profile id, an ARN.
    expect(bedrockModelId('amazon.nova-pro-v1:0')).toBe('amazon.nova-pro-v1:0');
    expect(Object.keys(PERSONALENS_BEDROCK_MODELS)).toHaveLength(13);
  });

  it('prices aliases, cross-region profiles and inference-profile ARNs as their base model', () => {
    expect(bedrockBaseModel('arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.meta.llama3-1-70b-instruct-v1:0')).toBe(
      'meta.llama3-1-70b-instruct-v1:0',
    );
    expect(bedrockPrice('claude-3-5-sonnet-v2')).toEqual({ in: 3, out: 15 });
    expect(bedrockPrice('mistral-7b-instruct-v2')).toEqual({ in: 0.15, out: 0.2 });
    expect(bedrockPrice('some.unknown-model-v1:0')).toBeUndefined();
    // A spec is priced at the listed price (the provider's prices hook) unless it names its own.
    expect(pricesOf(parseModelSpec('bedrock:claude-3-sonnet-v1'))).toEqual({ in: 3, out: 15 });
    expect(pricesOf(parseModelSpec('bedrock:claude-3-sonnet-v1?price_in=1&price_out=2'))).toEqual({ in: 1, out: 2 });
    expect(pricesOf(parseModelSpec('bedrock:some.unknown-model-v1:0'))).toBeUndefined();
  });

  it('a plan (--dry-run) of a bedrock model needs no credentials or region, and knows the price', async () => {
    isolateAwsEnv();
    const client = LlmClient.create(parseModelSpec('bedrock:llama-3-1-70b-instruct-v1'), {
      cache: CallCache.open(join(tempDir(), 'cache'), 'off'),
      planOnly: true,
      env: process.env,
    });
    clients.push(client);
    expect(client.id).toBe('bedrock:llama-3-1-70b-instruct-v1');
    expect(client.endpoint).toBeUndefined();
    // 1,000 input and 500 output tokens at $0.72 / $0.72 per 1M.
    expect(client.costOf({ inputTokens: 1000, outputTokens: 500 })).toBeCloseTo(0.00108, 12);
    await expect(client.call(request(), signal())).rejects.toThrow(/plan-only/);
  });

  it('refuses key_env, a malformed region, and region on other providers', () => {
    expect(() => parseModelSpec('bedrock:claude-3-sonnet-v1?key_env=AWS_SECRET_ACCESS_KEY')).toThrow(/credential chain/);
    expect(() => parseModelSpec('bedrock:claude-3-sonnet-v1?region=mars')).toThrow(/not an AWS region/);
    expect(() => parseModelSpec('openai:gpt-4o?region=us-east-1')).toThrow(/bedrock parameter/);
    expect(parseModelSpec('bedrock:claude-3-sonnet-v1?region=eu-central-1').region).toBe('eu-central-1');
  });
});

describe('bedrock provider against a mock Converse endpoint (real HTTP, SigV4 checked)', () => {
  it('sends a SigV4-signed Converse request for the alias id, and returns text, usage and cost', async () => {
    envKeys();
    const client = await setup('claude-3-sonnet-v1');
    const out = await client.call(request(), signal());
    expect(out.response).toEqual({ text: ANSWER, usage: { inputTokens: 13, outputTokens: 7 }, finishReason: 'end_turn' });
    expect(out).toMatchObject({ cached: false, attempts: 1 });
    // Claude 3 Sonnet at $3 / $15 per 1M tokens: 13 * 3 + 7 * 15 = 144 micro-dollars.
    expect(out.costUsd).toBeCloseTo(0.000144, 12);
    expect(client.id).toBe('bedrock:claude-3-sonnet-v1');

    const [seen] = server!.requests;
    expect(seen!.modelId).toBe('anthropic.claude-3-sonnet-20240229-v1:0');
    expect(seen!.signatureValid).toBe(true);
    expect(seen!.authorization).toMatchObject({ accessKeyId: CREDS.accessKeyId, region: 'us-east-1', service: 'bedrock' });
    expect(seen!.authorization!.signedHeaders).toEqual(expect.arrayContaining(['host', 'x-amz-date', 'x-amz-security-token']));
    expect(seen!.headers['authorization']).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIAPLENSTEST0000001\/\d{8}\/us-east-1\/bedrock\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/,
    );
    expect(seen!.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    // The system prompt, messages and sampling parameters as Converse fields; the SDK's own retries are off.
    expect(seen!.body).toEqual({
      system: [{ text: 'You are a helpful assistant.' }],
      messages: [{ role: 'user', content: [{ text: 'Book me a table for two.' }] }],
      inferenceConfig: { temperature: 0.5, maxTokens: 512 },
    });
    expect(seen!.headers['amz-sdk-request']).toMatch(/max=1\b/);
  });

  it('takes the region from the spec and credentials from an AWS_PROFILE in a shared config file', async () => {
    const dir = isolateAwsEnv();
    writeFileSync(join(dir, 'credentials'), `[plens-test]\naws_access_key_id = ${CREDS.accessKeyId}\naws_secret_access_key = ${CREDS.secretAccessKey}\n`);
    writeFileSync(join(dir, 'config'), '[profile plens-test]\nregion = ap-southeast-2\n');
    vi.stubEnv('AWS_PROFILE', 'plens-test');
    let client = await setup('llama-3-1-70b-instruct-v1', { withToken: false });
    await client.call(request(), signal());
    expect(server!.requests[0]).toMatchObject({
      modelId: 'us.meta.llama3-1-70b-instruct-v1:0',
      signatureValid: true,
      authorization: { region: 'ap-southeast-2' },
    });
    await server!.close();
    // region= in the spec beats the profile's.
    client = await setup('llama-3-1-70b-instruct-v1', { withToken: false, params: '&region=eu-west-3' });
    await client.call(request(), signal());
    expect(server!.requests[0]).toMatchObject({ signatureValid: true, authorization: { region: 'eu-west-3' } });
  });

  it('refuses a system prompt to a model whose Converse takes none (Mistral 7B, Mixtral) before sending it', async () => {
    envKeys(false);
    for (const model of ['mistral-7b-instruct-v2', 'mixtral-8x7b-instruct-v1']) {
      const client = await setup(model, { withToken: false });
      await expect(client.call(request(), signal())).rejects.toMatchObject({
        kind: 'config',
        retryable: false,
        message: expect.stringMatching(/takes no system prompt/),
      });
      expect(server!.requests).toHaveLength(0);
      // Without one, Converse carries the call.
      await client.call({ ...request(), system: null }, signal());
      expect(server!.requests).toMatchObject([{ operation: 'converse' }]);
      await server!.close();
    }
  });

  it('a request signed with the wrong secret is refused by the mock (the check can fail)', async () => {
    envKeys(false);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'notTheRightSecretKeyAtAll0000000000000000');
    const client = await setup('claude-3-sonnet-v1', { withToken: false });
    const error = await client.call(request(), signal()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmCallError);
    expect(error).toMatchObject({ kind: 'http', status: 403, retryable: false });
    expect(server!.requests).toHaveLength(1);
    expect(server!.requests[0]).toMatchObject({ signatureValid: false, signatureProblem: 'signature mismatch' });
  });

  it.each([
    ['ThrottlingException', 429],
    ['ServiceUnavailableException', 503],
    ['ModelNotReadyException', 429],
    ['InternalServerException', 500],
  ])('%s (%i) is retried by the client retry layer, one SDK attempt each', async (type, status) => {
    envKeys();
    const client = await setup('llama-3-1-70b-instruct-v1', {
      fault: (r) => (r.index < 2 ? { status, type, message: 'Too many requests, please wait before trying again.' } : undefined),
    });
    const out = await client.call(request(), signal());
    expect(out.response.text).toBe(ANSWER);
    expect(out.attempts).toBe(3);
    expect(server!.requests).toHaveLength(3);
    expect(server!.requests.every((r) => r.signatureValid && r.modelId === 'us.meta.llama3-1-70b-instruct-v1:0')).toBe(true);
    // Each HTTP request is a fresh first attempt of the SDK's: our layer retried, not the SDK's.
    expect(server!.requests.map((r) => r.headers['amz-sdk-request'])).toEqual(['attempt=1; max=1', 'attempt=1; max=1', 'attempt=1; max=1']);
  });

  it("a throttle that never ends fails as http 429 after the policy's attempts; nothing is cached", async () => {
    envKeys();
    const client = await setup('claude-3-sonnet-v1', {
      fault: () => ({ status: 429, type: 'ThrottlingException', message: 'Too many tokens, please wait before trying again.' }),
      cache: 'on',
    });
    const error = await client.call(request(), signal()).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'http', status: 429, retryable: true, attempts: 4 });
    expect((error as LlmCallError).reason).toBe('http 429');
    expect((error as Error).message).toMatch(/ThrottlingException: Too many tokens/);
    expect(server!.requests).toHaveLength(4);
  });

  it('a ValidationException (400) fails at once', async () => {
    envKeys();
    const client = await setup('claude-3-sonnet-v1', {
      fault: () => ({ status: 400, type: 'ValidationException', message: 'The provided model identifier is invalid.' }),
    });
    const error = await client.call(request(), signal()).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'http', status: 400, retryable: false, attempts: 1 });
    expect(server!.requests).toHaveLength(1);
  });

  it("carries a throttle's Retry-After to the retry layer", async () => {
    envKeys();
    const client = await setup('claude-3-sonnet-v1', {
      fault: () => ({ status: 429, type: 'ThrottlingException', retryAfterSeconds: 7 }),
      retry: { ...FAST_RETRY, retries: 0 },
    });
    const error = await client.call(request(), signal()).catch((e: unknown) => e);
    // withRetry waits max(its back-off, Retry-After) before the next attempt; the error says how long.
    expect(error).toMatchObject({ kind: 'http', status: 429, retryAfterMs: 7000 });
  });

  it('no credentials anywhere is a config error naming what to set, without a single request', async () => {
    isolateAwsEnv();
    vi.stubEnv('AWS_REGION', 'us-east-1');
    const client = await setup('claude-3-sonnet-v1');
    const error = await client.call(request(), signal()).catch((e: unknown) => e);
    expect(error).toMatchObject({ kind: 'config', retryable: false, attempts: 1 });
    expect((error as Error).message).toMatch(/AWS_PROFILE.*AWS_ACCESS_KEY_ID/);
    expect(server!.requests).toHaveLength(0);
  });

  it('an aborted call stops waiting and is not retried', async () => {
    envKeys();
    server = await startMockBedrock({ credentials: CREDS, latencyMs: 3000 });
    const client = LlmClient.create(parseModelSpec(`bedrock:claude-3-sonnet-v1?base_url=${server.url}`), {
      cache: CallCache.open(join(tempDir(), 'cache'), 'off'),
      retry: FAST_RETRY,
      timeouts: TIMEOUTS,
      env: process.env,
    });
    clients.push(client);
    const controller = new AbortController();
    const pending = client.call(request(), controller.signal);
    // Aborted once the request is at the server (loading the SDK may take a while on a busy machine).
    while (server.requests.length === 0) await new Promise((r) => setTimeout(r, 10));
    controller.abort(new Error('stop'));
    // The mock answers after 3 s; only the abort can make the call fail.
    await expect(pending).rejects.toThrow(/stop|abort/i);
    expect(server.requests).toHaveLength(1);
  });

  it('the secret key and session token never reach an answer or an error message', async () => {
    envKeys();
    const echo = `key ${CREDS.secretAccessKey} token ${CREDS.sessionToken}`;
    const client = await setup('claude-3-sonnet-v1', {
      reply: () => `Your ${echo}.`,
      fault: (r) => (r.index === 0 ? { status: 400, type: 'ValidationException', message: `bad request signed with ${echo}` } : undefined),
    });
    const error = (await client.call(request('first'), signal()).catch((e: unknown) => e)) as Error;
    expect(error.message).toMatch(/ValidationException/);
    const out = await client.call(request('second'), signal());
    for (const text of [error.message, String(error.stack), out.response.text]) {
      expect(text).not.toContain(CREDS.secretAccessKey);
      expect(text).not.toContain(CREDS.sessionToken);
    }
    expect(out.response.text).toContain('[REDACTED]');
  });
});

describe('bedrock provider: completion prompts through InvokeModel (Llama and Mistral native bodies)', () => {
  const prompted = (prompt: string): ChatRequest => ({ ...request('the same conversation'), prompt });

  it("sends Llama's and Mistral's native bodies, reads each family's answer, and keys a prompt apart from the chat request", async () => {
    envKeys();
    const llama = await setup('meta.llama3-8b-instruct-v1:0', { cache: 'on' });
    const out = await llama.call(prompted('<|begin_of_text|>Hi<|eot_id|>'), signal());
    expect(out.response).toEqual({ text: ANSWER, usage: { inputTokens: 10, outputTokens: 7 }, finishReason: 'stop' });
    const [sent] = server!.requests;
    expect(sent).toMatchObject({ operation: 'invoke', modelId: 'meta.llama3-8b-instruct-v1:0', signatureValid: true });
    expect(sent!.invoke).toEqual({ prompt: '<|begin_of_text|>Hi<|eot_id|>', max_gen_len: 512, temperature: 0.5 });
    // The same conversation as a chat request goes through Converse, under another key.
    await llama.call(request('the same conversation'), signal());
    expect(server!.requests.map((r) => r.operation)).toEqual(['invoke', 'converse']);
    expect(llama.callKeyOf(prompted('<|begin_of_text|>Hi<|eot_id|>'))).not.toBe(llama.callKeyOf(request('the same conversation')));
    expect(llama.callKeyOf(prompted('a'))).not.toBe(llama.callKeyOf(prompted('b')));
    await server!.close();

    const mistral = await setup('mistral.mistral-7b-instruct-v0:2');
    const m = await mistral.call({ ...prompted('<s>[INST] Hi [/INST]'), params: { temperature: 0.5, maxTokens: 512, topP: 0.9 } }, signal());
    // Mistral's answer counts no tokens: 4 characters a token.
    expect(m.response).toEqual({ text: ANSWER, usage: { inputTokens: 5, outputTokens: 7 }, finishReason: 'stop' });
    expect(server!.requests[0]!.invoke).toEqual({ prompt: '<s>[INST] Hi [/INST]', max_tokens: 512, temperature: 0.5, top_p: 0.9 });
  });

  it('refuses a prompt for a model without a native prompt body, and on a provider without one, sending nothing', async () => {
    envKeys();
    const claude = await setup('claude-3-haiku-v1');
    await expect(claude.call(prompted('Human: hi'), signal())).rejects.toMatchObject({ kind: 'config', message: expect.stringMatching(/Llama and Mistral/) });
    expect(server!.requests).toHaveLength(0);
    const openai = LlmClient.create(parseModelSpec(`openai:gpt-4o?base_url=${server!.url}/v1`), {
      cache: opened(CallCache.open(join(tempDir(), 'cache'), 'off')),
      env: { OPENAI_API_KEY: 'sk-plens-test-key' },
    });
    clients.push(openai);
    await expect(openai.call(prompted('hi'), signal())).rejects.toMatchObject({ kind: 'config', message: expect.stringMatching(/no completion prompt/) });
    expect(server!.requests).toHaveLength(0);
  });
});
