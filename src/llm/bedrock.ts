/**
 * Amazon Bedrock through the AWS SDK v3 Converse API (the PersonaLens original ran only on
 * Bedrock), and InvokeModel for a completion prompt to a Llama or Mistral model. The SDK signs
 * (SigV4) and sends; plens keeps its own single retry layer and rate limits, so the SDK's retries
 * are off (maxAttempts 1) and its errors become LlmCallErrors with the same retryable kinds as the
 * HTTP providers'. The SDK is loaded on the first call, so a plan
 * (--dry-run) or a run of other providers never loads it.
 */
import type { BedrockRuntimeClient, ConverseCommandOutput, InvokeModelCommandOutput } from '@aws-sdk/client-bedrock-runtime';
import { registerSecret } from '../core/redact.js';
import { bedrockArnRegion, bedrockConverseTakesSystem, bedrockModelId, bedrockPromptFamily } from './bedrock-models.js';
import { isRetryableStatus, LlmCallError, parseRetryAfter } from './errors.js';
import { DEFAULT_TIMEOUTS, type HttpTimeouts } from './http-transport.js';
import type { ChatRequest, ChatResponse, Provider } from './types.js';

/** What the SDK signs with (the shape of its AwsCredentialIdentity). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

export interface BedrockOptions {
  /** A model id, inference-profile id or ARN, or one of the original PersonaLens short names. */
  model: string;
  /** Else the ARN's region, else the SDK's own resolution (AWS_REGION, the profile's region). */
  region?: string;
  /** An endpoint override (a VPC endpoint, a proxy, a local mock); else the SDK's regional endpoint. */
  baseUrl?: string;
  timeouts?: HttpTimeouts;
  /** Upper bound on simultaneous connections. */
  connections?: number;
  /** Credentials to use instead of the SDK's default chain (tests; a caller with its own session). */
  credentials?: () => Promise<AwsCredentials>;
  /**
   * The run's environment (default process.env): its AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY
   * (/ AWS_SESSION_TOKEN) and AWS_REGION come first, as in the SDK's chain, which itself reads
   * process.env for the rest (profiles, SSO, roles).
   */
  env?: NodeJS.ProcessEnv;
}

/**
 * Bedrock's throttling and overload answers. The SDK names the error after the service's error
 * type; the status travels in $metadata. All of these are worth another try.
 */
const RETRYABLE_ERRORS: Readonly<Record<string, number>> = {
  ThrottlingException: 429,
  ServiceUnavailableException: 503,
  ModelNotReadyException: 429,
  InternalServerException: 500,
  ModelTimeoutException: 408,
  ModelErrorException: 424,
};

const NETWORK_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH']);

export class BedrockProvider implements Provider {
  readonly modelId: string;
  private client: Promise<BedrockRuntimeClient> | undefined;
  private ConverseCommand: typeof import('@aws-sdk/client-bedrock-runtime').ConverseCommand | undefined;
  private InvokeModelCommand: typeof import('@aws-sdk/client-bedrock-runtime').InvokeModelCommand | undefined;

  constructor(private readonly options: BedrockOptions) {
    this.modelId = bedrockModelId(options.model);
  }

  async complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    if (request.prompt !== undefined) return this.completePrompt(request.prompt, request, signal);
    // Refused here, not sent: Bedrock would answer every such call with a ValidationException.
    if (request.system && !bedrockConverseTakesSystem(this.modelId))
      throw new LlmCallError(
        'config',
        `Bedrock ${this.modelId}: the Converse API takes no system prompt for this model; a benchmark that lays out Mistral's prompt itself sends it as a completion prompt (InvokeModel)`,
        { retryable: false },
      );
    const client = await (this.client ??= this.connect());
    const command = new this.ConverseCommand!({
      modelId: this.modelId,
      // Converse refuses an empty text block; an empty system prompt is no system prompt.
      ...(request.system ? { system: [{ text: request.system }] } : {}),
      messages: request.messages.map((m) => ({ role: m.role, content: [{ text: m.content }] })),
      inferenceConfig: {
        temperature: request.params.temperature,
        maxTokens: request.params.maxTokens,
        ...(request.params.topP !== undefined ? { topP: request.params.topP } : {}),
      },
    });
    let out: ConverseCommandOutput;
    try {
      out = await client.send(command, { abortSignal: signal });
    } catch (error) {
      throw bedrockError(error, this.modelId, signal);
    }
    const blocks = (out.output?.message?.content ?? []).filter((b): b is { text: string } => typeof (b as { text?: unknown }).text === 'string');
    if (blocks.length === 0)
      throw new LlmCallError('bad_response', `Bedrock ${this.modelId}: the Converse response has no text content block`, { retryable: true });
    return {
      text: blocks.map((b) => b.text).join(''),
      usage: { inputTokens: out.usage?.inputTokens ?? 0, outputTokens: out.usage?.outputTokens ?? 0 },
      finishReason: out.stopReason ?? null,
    };
  }

  /**
   * A completion prompt (its chat template applied by the caller) in the model's native InvokeModel
   * body: Llama's `{prompt, max_gen_len, temperature}`, Mistral's `{prompt, max_tokens,
   * temperature}` (`top_p` when set). Llama's answer counts its tokens; Mistral's body does not, so
   * its tokens are estimated at 4 characters each.
   */
  private async completePrompt(prompt: string, request: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    const family = bedrockPromptFamily(this.modelId);
    if (!family)
      throw new LlmCallError('config', `Bedrock ${this.modelId}: a completion prompt is sent to Llama and Mistral models only, not this one`, {
        retryable: false,
      });
    const client = await (this.client ??= this.connect());
    const { temperature, maxTokens, topP } = request.params;
    const body = {
      prompt,
      ...(family === 'llama' ? { max_gen_len: maxTokens } : { max_tokens: maxTokens }),
      temperature,
      ...(topP !== undefined ? { top_p: topP } : {}),
    };
    const command = new this.InvokeModelCommand!({
      modelId: this.modelId,
      contentType: 'application/json',
      accept: 'application/json',
      body: JSON.stringify(body),
    });
    let out: InvokeModelCommandOutput;
    try {
      out = await client.send(command, { abortSignal: signal });
    } catch (error) {
      throw bedrockError(error, this.modelId, signal);
    }
    return promptAnswer(family, out.body, this.modelId, prompt);
  }

  private async connect(): Promise<BedrockRuntimeClient> {
    const sdk = await import('@aws-sdk/client-bedrock-runtime');
    this.ConverseCommand = sdk.ConverseCommand;
    this.InvokeModelCommand = sdk.InvokeModelCommand;
    return new sdk.BedrockRuntimeClient({
      ...(await awsClientSettings(this.options)),
      ...(this.options.baseUrl ? { endpoint: this.options.baseUrl } : {}),
    });
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) (await client.catch(() => undefined))?.destroy();
  }
}

/** A native InvokeModel answer of a Llama or Mistral model as a response; an answer without text is a bad response (retryable). */
function promptAnswer(family: 'llama' | 'mistral', body: Uint8Array | undefined, modelId: string, prompt: string): ChatResponse {
  let parsed: {
    generation?: unknown;
    prompt_token_count?: unknown;
    generation_token_count?: unknown;
    stop_reason?: unknown;
    outputs?: Array<{ text?: unknown; stop_reason?: unknown }>;
  };
  try {
    parsed = JSON.parse(Buffer.from(body ?? new Uint8Array()).toString('utf8')) as typeof parsed;
  } catch (error) {
    throw new LlmCallError('bad_response', `Bedrock ${modelId}: the InvokeModel answer is not JSON`, { retryable: true, cause: error });
  }
  // Llama's answer counts its tokens; where an answer does not (Mistral's), 4 characters a token.
  const count = (n: unknown, text: string) => (typeof n === 'number' && Number.isFinite(n) ? n : Math.ceil(text.length / 4));
  const text = family === 'llama' ? parsed.generation : parsed.outputs?.[0]?.text;
  if (typeof text !== 'string')
    throw new LlmCallError('bad_response', `Bedrock ${modelId}: the InvokeModel answer has no ${family === 'llama' ? 'generation' : 'outputs[0].text'}`, {
      retryable: true,
    });
  const stop = family === 'llama' ? parsed.stop_reason : parsed.outputs?.[0]?.stop_reason;
  return {
    text,
    usage: {
      inputTokens: count(parsed.prompt_token_count, prompt),
      outputTokens: count(parsed.generation_token_count, text),
    },
    finishReason: typeof stop === 'string' ? stop : null,
  };
}

/**
 * What every AWS SDK client plens makes shares (Converse, and the S3 and Bedrock control-plane
 * clients of batch mode): region, no SDK retries, plain keep-alive HTTP/1.1, the credential chain
 * with whatever it resolves registered with the redactor.
 */
export async function awsClientSettings(options: Omit<BedrockOptions, 'baseUrl'>): Promise<{
  region?: string;
  maxAttempts: number;
  requestHandler: import('@smithy/node-http-handler').NodeHttpHandler;
  credentials: () => Promise<AwsCredentials>;
}> {
  const timeouts = options.timeouts ?? DEFAULT_TIMEOUTS;
  const connections = options.connections ?? 64;
  const env = options.env ?? process.env;
  const region = options.region ?? bedrockArnRegion(options.model) ?? (env['AWS_REGION'] || env['AWS_DEFAULT_REGION'] || undefined);
  const { NodeHttpHandler } = await import('@smithy/node-http-handler');
  const chain = options.credentials ?? envCredentials(env) ?? (await import('@aws-sdk/credential-provider-node')).defaultProvider();
  return {
    ...(region ? { region } : {}),
    // One retry layer: ours (it sees every attempt, takes from the RPM/TPM buckets, and feeds the concurrency controller).
    maxAttempts: 1,
    // HTTP/1.1 keep-alive (the SDK's default for the runtime client is HTTP/2 with one stream per
    // session, which buys nothing here and cannot reach a plain-http endpoint override).
    requestHandler: new NodeHttpHandler({
      connectionTimeout: timeouts.connectMs,
      requestTimeout: timeouts.deadlineMs,
      httpAgent: { keepAlive: true, maxSockets: connections },
      httpsAgent: { keepAlive: true, maxSockets: connections },
    }),
    // The standard chain (env keys, AWS_PROFILE, SSO, web identity, container and instance roles);
    // whatever it resolves is registered with the redactor before any request is signed with it.
    credentials: async () => {
      const c = await chain();
      registerSecret(c.secretAccessKey);
      registerSecret(c.sessionToken);
      return c;
    },
  };
}

/** Static keys from the run's environment, the first link of the standard chain. */
function envCredentials(env: NodeJS.ProcessEnv): (() => Promise<AwsCredentials>) | undefined {
  const accessKeyId = env['AWS_ACCESS_KEY_ID'];
  const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
  if (!accessKeyId || !secretAccessKey) return undefined;
  const sessionToken = env['AWS_SESSION_TOKEN'] || undefined;
  const credentials: AwsCredentials = { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
  return () => Promise.resolve(credentials);
}

interface SdkError {
  name?: string;
  message?: string;
  code?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { headers?: Record<string, string | undefined> };
}

/** An SDK failure as the retry layer's kind: throttling and overload retryable, client errors not, credentials a config error. */
export function bedrockError(error: unknown, modelId: string, signal?: AbortSignal): LlmCallError {
  if (error instanceof LlmCallError) return error;
  const e = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as SdkError;
  const name = e.name ?? 'Error';
  const message = e.message ?? '';
  const where = `Bedrock ${modelId}`;
  if (signal?.aborted || name === 'AbortError') return new LlmCallError('aborted', `${where}: the call was aborted`, { retryable: false, cause: error });
  if (name === 'CredentialsProviderError' || /could not load credentials/i.test(message)) {
    return new LlmCallError(
      'config',
      `${where}: no AWS credentials: set AWS_PROFILE (run \`aws sso login\` for an SSO profile), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (${message})`,
      { retryable: false, cause: error },
    );
  }
  if (/region is missing/i.test(message)) {
    return new LlmCallError('config', `${where}: no AWS region: set AWS_REGION, a region in the AWS profile, or region=... in the model spec`, {
      retryable: false,
      cause: error,
    });
  }
  const status = e.$metadata?.httpStatusCode ?? RETRYABLE_ERRORS[name];
  if (status !== undefined && status >= 400) {
    const retryable = name in RETRYABLE_ERRORS || isRetryableStatus(status);
    const retryAfterMs = parseRetryAfter(e.$response?.headers?.['retry-after']);
    return new LlmCallError('http', `${where}: HTTP ${status} ${name}: ${message}`.slice(0, 600), {
      status,
      retryable,
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
      cause: error,
    });
  }
  if (name === 'TimeoutError' || e.code === 'ETIMEDOUT' || /timed? ?out/i.test(message)) {
    return new LlmCallError('timeout', `${where}: timed out (${message})`, { retryable: true, cause: error });
  }
  if ((e.code && NETWORK_CODES.has(e.code)) || /socket hang up|ECONN/i.test(message)) {
    return new LlmCallError('network', `${where}: ${e.code ?? 'network error'}: ${message}`, { retryable: true, cause: error });
  }
  // A 200 whose body the SDK could not read, or anything else the SDK threw: an unusable answer, worth another try.
  return new LlmCallError('bad_response', `${where}: ${name}: ${message}`.slice(0, 600), { retryable: true, cause: error });
}
