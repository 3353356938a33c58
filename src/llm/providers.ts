import { PlensError, usageError } from '../core/errors.js';
import { BEDROCK_MIN_RECORDS, bedrockBatchRefusal, bedrockPrice } from './bedrock-models.js';
import type { BatchApi, BatchInit } from './batch.js';
import type { HttpTimeouts, HttpTransport } from './http-transport.js';
import type { Provider } from './types.js';

/**
 * What a provider's code is given to make one: the model and, for an HTTP provider, the endpoint
 * and key the client resolved from the entry's facts, and the client's transport.
 */
export interface ProviderInit {
  model: string;
  http?: { baseUrl: string; apiKey: string | undefined; transport: HttpTransport };
  /** For a provider whose vendor SDK signs and sends: where and how (credentials come from env). */
  sdk?: { region?: string; baseUrl?: string; timeouts: HttpTimeouts; connections: number; env: NodeJS.ProcessEnv };
}

/**
 * A provider whose vendor SDK signs and sends (Bedrock): no plens transport, no key_env (the
 * SDK's credential chain), an optional region in the spec.
 */
export interface ProviderSdk {
  /** Variables holding secrets the SDK may read: cut from every message and record. */
  secretEnv: readonly string[];
  /** Why key_env is refused, for the usage error. */
  credentials: string;
}

/** The HTTP side of a provider: where its vendor lives and which variables configure it. */
export interface ProviderEndpoint {
  /** The vendor's own endpoint; runs against it keep keys without an endpoint part. */
  defaultBaseUrl: string;
  /** The variable that overrides the default endpoint (a gateway, a local server). */
  baseUrlEnv: string;
  /** The variable holding the key when the spec names none with key_env. */
  keyEnv: string;
  /** A key is required only when the endpoint is the vendor's (a local server needs none). */
  vendorHost: string;
}

/**
 * One provider: its facts, known without loading it (planning, key checks and cache identity use
 * only these), and its code, imported the first time a call is made.
 */
export interface ProviderEntry {
  describe: string;
  /** Absent for a provider that calls nothing over the network (the simulator). */
  endpoint?: ProviderEndpoint;
  /** Set for a provider whose vendor SDK signs and sends. */
  sdk?: ProviderSdk;
  /** Offline and deterministic: never cached, no latency recorded, costs nothing without a price. */
  offline?: boolean;
  /** Takes a completion prompt (ChatRequest.prompt, its chat template applied); the others refuse a call that has one. */
  takesPrompt?: boolean;
  /**
   * Prices (USD per 1M tokens) for a spec, or undefined when unknown: an estimate then leaves the
   * model out. The default reads price_in and price_out from the spec.
   */
  prices?: (spec: { model: string; priceIn?: number; priceOut?: number }) => { in: number; out: number } | undefined;
  /** The provider's code, loaded lazily. */
  load: () => Promise<(init: ProviderInit) => Provider>;
  /**
   * Its batch API (independent calls at a discount, answered within 24 h): the discount off the
   * online price (0.5: half price; `batch_discount=` in a spec overrides it) and the code.
   */
  batch?: {
    discount: number;
    load: () => Promise<(init: BatchInit) => BatchApi>;
    /** Why this spec cannot be batched (settings missing, a model the batch API cannot serve), or undefined. */
    check?: (spec: BatchSpec) => { reason: string; hint?: string } | undefined;
    /** The fewest requests a batch may hold, when the provider has a minimum (known without loading the code, for a plan). */
    minItems?: (spec: BatchSpec) => number;
  };
  /** Why --batch is refused for a provider without a batch API. */
  noBatch?: string;
}

/** What a batch check reads of a model spec. */
export interface BatchSpec {
  model: string;
  batchBucket?: string;
  batchRoleArn?: string;
  batchMinRecords?: number;
}

/** Every provider plens knows. Adding one (Bedrock, Gemini, ...) is adding an entry here. */
export const PROVIDER_REGISTRY = {
  openai: {
    describe: 'any OpenAI-compatible /v1/chat/completions endpoint (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM, gateways)',
    endpoint: { defaultBaseUrl: 'https://api.openai.com/v1', baseUrlEnv: 'OPENAI_BASE_URL', keyEnv: 'OPENAI_API_KEY', vendorHost: 'api.openai.com' },
    load: async () => {
      const { OpenAiProvider } = await import('./openai.js');
      return (i) => new OpenAiProvider(i.model, ...httpOf(i));
    },
    batch: {
      discount: 0.5,
      load: async () => {
        const { OpenAiBatchApi } = await import('./openai-batch.js');
        return (i) => new OpenAiBatchApi(i);
      },
    },
  },
  anthropic: {
    describe: 'the Anthropic Messages API',
    endpoint: { defaultBaseUrl: 'https://api.anthropic.com', baseUrlEnv: 'ANTHROPIC_BASE_URL', keyEnv: 'ANTHROPIC_API_KEY', vendorHost: 'api.anthropic.com' },
    load: async () => {
      const { AnthropicProvider } = await import('./anthropic.js');
      return (i) => new AnthropicProvider(i.model, ...httpOf(i));
    },
    batch: {
      discount: 0.5,
      load: async () => {
        const { AnthropicBatchApi } = await import('./anthropic-batch.js');
        return (i) => new AnthropicBatchApi(i);
      },
    },
  },
  bedrock: {
    describe: 'Amazon Bedrock (Converse API) through the AWS SDK: region=..., the AWS credential chain; the PersonaLens short names',
    // Llama and Mistral models through InvokeModel (bedrock.ts); Converse for every chat request.
    takesPrompt: true,
    sdk: {
      secretEnv: ['AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN'],
      credentials: 'it uses the AWS credential chain (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO)',
    },
    // Listed models have their on-demand price unless the spec gives one (issue 17).
    prices: (spec) => (spec.priceIn !== undefined && spec.priceOut !== undefined ? { in: spec.priceIn, out: spec.priceOut } : bedrockPrice(spec.model)),
    load: async () => {
      const { BedrockProvider } = await import('./bedrock.js');
      return (i) => {
        if (!i.sdk) throw new PlensError('E_INTERNAL', `a Bedrock provider for ${i.model} was made without its settings`);
        return new BedrockProvider({ model: i.model, ...i.sdk });
      };
    },
    // Batch inference (model invocation jobs): JSONL in and out through S3, run as an IAM service role.
    batch: {
      discount: 0.5,
      check: bedrockBatchRefusal,
      minItems: (spec) => spec.batchMinRecords ?? BEDROCK_MIN_RECORDS,
      load: async () => {
        const { BedrockBatchApi } = await import('./bedrock-batch.js');
        return (i) => new BedrockBatchApi(i);
      },
    },
  },
  sim: {
    describe: 'the offline simulator: deterministic, no network, no key',
    noBatch: 'the offline simulator answers at once and costs nothing; batch mode is for paid endpoints',
    offline: true,
    takesPrompt: true,
    // It costs nothing unless the spec gives it a price (tests and demos estimate with one).
    prices: (spec) => ({ in: spec.priceIn ?? 0, out: spec.priceOut ?? 0 }),
    load: async () => {
      const { SimProvider } = await import('./sim.js');
      return () => new SimProvider();
    },
  },
} as const satisfies Record<string, ProviderEntry>;

function httpOf(init: ProviderInit): [string, string | undefined, HttpTransport] {
  if (!init.http) throw new PlensError('E_INTERNAL', `an HTTP provider for ${init.model} was made without an endpoint`);
  return [init.http.baseUrl, init.http.apiKey, init.http.transport];
}

export type ProviderName = keyof typeof PROVIDER_REGISTRY;
export const PROVIDERS = Object.keys(PROVIDER_REGISTRY) as ProviderName[];

export function isProviderName(name: string): name is ProviderName {
  return Object.hasOwn(PROVIDER_REGISTRY, name);
}

/** The registry entry of a provider; an unknown name is a usage error naming the known ones. */
export function providerEntry(name: string, what = 'model'): ProviderEntry {
  if (!isProviderName(name)) throw usageError(`${what}: unknown provider "${name}"; use one of ${PROVIDERS.join(', ')}`);
  return PROVIDER_REGISTRY[name];
}

/** The prices of a spec through its provider's hook: undefined when unknown. */
export function pricesOf(spec: { provider: string; model: string; priceIn?: number; priceOut?: number }): { in: number; out: number } | undefined {
  const entry = providerEntry(spec.provider);
  if (entry.prices) return entry.prices(spec);
  return spec.priceIn !== undefined && spec.priceOut !== undefined ? { in: spec.priceIn, out: spec.priceOut } : undefined;
}
