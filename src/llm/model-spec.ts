import { usageError } from '../core/errors.js';
import { isProviderName, pricesOf, PROVIDER_REGISTRY, PROVIDERS, type ProviderEntry, type ProviderName } from './providers.js';

export { PROVIDERS, type ProviderName };

/**
 * A model and how to call it, from a spec string such as
 *   openai:gpt-4o-mini
 *   anthropic:claude-3-5-sonnet-20241022?temperature=0&max_tokens=800
 *   openai:llama3?base_url=http://localhost:8000/v1&key_env=VLLM_KEY&price_in=0&price_out=0&rpm=600
 *   bedrock:claude-3-sonnet-v1?region=us-west-2
 *   sim:default
 * Keys are never part of a spec: `key_env` names the environment variable that holds one.
 */
export interface ModelSpec {
  provider: ProviderName;
  model: string;
  temperature?: number;
  maxTokens?: number;
  /** Nucleus sampling (0-1], sent only when given (the original sends 0.9 for Llama, 1.0 for Mistral). */
  topP?: number;
  baseUrl?: string;
  keyEnv?: string;
  /** USD per 1M input / output tokens. */
  priceIn?: number;
  priceOut?: number;
  rpm?: number;
  tpm?: number;
  /** PersonaLens assistant prompt layout (`xml` or `markdown`); default from the model name. */
  promptStyle?: string;
  /** Bedrock only: the AWS region (else AWS_REGION or the profile's). */
  region?: string;
  /** The batch API's discount off the online price (0.5: half price); default the provider's. */
  batchDiscount?: number;
  /** Bedrock batch: where inputs and outputs go (s3://bucket/prefix) and the service role Bedrock reads and writes them as. */
  batchBucket?: string;
  batchRoleArn?: string;
  /** Bedrock batch: an S3-compatible endpoint (path-style), and the Bedrock control-plane endpoint override. */
  s3Endpoint?: string;
  bedrockEndpoint?: string;
  /** Bedrock batch: the fewest records a job may have (the service's minimum, 100); fewer are called online. */
  batchMinRecords?: number;
}

const NUMERIC = {
  temperature: 'temperature',
  max_tokens: 'maxTokens',
  top_p: 'topP',
  price_in: 'priceIn',
  price_out: 'priceOut',
  rpm: 'rpm',
  tpm: 'tpm',
  batch_discount: 'batchDiscount',
  batch_min_records: 'batchMinRecords',
} as const;
const TEXT = {
  base_url: 'baseUrl',
  key_env: 'keyEnv',
  prompt_style: 'promptStyle',
  region: 'region',
  batch_bucket: 'batchBucket',
  batch_role_arn: 'batchRoleArn',
  s3_endpoint: 's3Endpoint',
  bedrock_endpoint: 'bedrockEndpoint',
} as const;
const TEXT_OR_NUMERIC: Record<string, keyof ModelSpec> = { ...NUMERIC, ...TEXT };
/** Parameters only a provider whose SDK signs and sends (Bedrock) takes. */
const SDK_ONLY = ['region', 'batch_bucket', 'batch_role_arn', 's3_endpoint', 'bedrock_endpoint', 'batch_min_records'] as const;

export function parseModelSpec(spec: string, what = 'model'): ModelSpec {
  const m = /^([a-z]+):([^?]+)(?:\?(.*))?$/.exec(spec.trim());
  if (!m) throw usageError(`${what} "${spec}": expected provider:model, e.g. openai:gpt-4o-mini, anthropic:claude-3-5-sonnet-20241022 or sim:default`);
  const provider = m[1]!;
  if (!isProviderName(provider)) throw usageError(`${what} "${spec}": unknown provider "${m[1]}"; use one of ${PROVIDERS.join(', ')}`);
  const out: ModelSpec = { provider, model: m[2]! };
  const seen = new Set<string>();
  for (const [key, value] of new URLSearchParams(m[3] ?? '')) {
    // The last of two values silently winning is how a typo goes unnoticed.
    if (seen.has(key)) throw usageError(`${what} "${redactSpec(spec)}": parameter "${key}" is given twice`);
    seen.add(key);
    if (/key|token|secret/i.test(key) && key !== 'key_env' && key !== 'max_tokens') {
      throw usageError(`${what}: "${key}" looks like a secret; put the key in an environment variable and name it with key_env=VAR`);
    }
    if (key in NUMERIC) {
      const n = Number(value);
      if (value === '' || !Number.isFinite(n) || n < 0) throw usageError(`${what} "${spec}": ${key} must be a non-negative number`);
      (out as unknown as Record<string, number>)[NUMERIC[key as keyof typeof NUMERIC]] = n;
    } else if (key in TEXT) {
      if (key === 'base_url' || key === 's3_endpoint' || key === 'bedrock_endpoint') checkBaseUrl(value, `${what} ${key}`);
      if (key === 'batch_bucket' && !/^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/.test(value))
        throw usageError(`${what}: batch_bucket must be an S3 location such as s3://my-bucket/plens-batches, got "${value}"`);
      if (key === 'batch_role_arn' && !/^arn:aws[\w-]*:iam::\d{12}:role\/.+$/.test(value))
        throw usageError(`${what}: batch_role_arn must be an IAM role ARN such as arn:aws:iam::123456789012:role/BedrockBatch, got "${value}"`);
      if (key === 'key_env' && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(value))
        throw usageError(`${what}: key_env must name an environment variable (letters, digits, _), got "${value}"`);
      (out as unknown as Record<string, string>)[TEXT[key as keyof typeof TEXT]] = value;
    } else {
      throw usageError(`${what} "${spec}": unknown parameter "${key}"; known: ${[...Object.keys(NUMERIC), ...Object.keys(TEXT)].join(', ')}`);
    }
  }
  if (out.maxTokens !== undefined && !Number.isInteger(out.maxTokens)) throw usageError(`${what}: max_tokens must be a whole number`);
  if (out.topP !== undefined && !(out.topP > 0 && out.topP <= 1)) throw usageError(`${what}: top_p must be above 0 and at most 1`);
  if (out.batchMinRecords !== undefined && !Number.isInteger(out.batchMinRecords)) throw usageError(`${what}: batch_min_records must be a whole number`);
  if (out.batchDiscount !== undefined && out.batchDiscount > 1)
    throw usageError(`${what}: batch_discount is the fraction off the online price, from 0 to 1 (0.5: half price)`);
  const sdk = (PROVIDER_REGISTRY[provider] as ProviderEntry).sdk;
  if (sdk) {
    if (out.keyEnv !== undefined) throw usageError(`${what}: ${provider} takes no key_env; ${sdk.credentials}`);
    if (out.region !== undefined && !/^[a-z]{2}(-[a-z]+)+-\d+$/.test(out.region))
      throw usageError(`${what}: region "${out.region}" is not an AWS region name such as us-west-2`);
  } else {
    const given = SDK_ONLY.find((k) => out[TEXT_OR_NUMERIC[k]!] !== undefined);
    if (given)
      throw usageError(
        `${what} "${redactSpec(spec)}": ${given} is a ${PROVIDERS.filter((n) => (PROVIDER_REGISTRY[n] as ProviderEntry).sdk).join(' or ')} parameter`,
      );
  }
  return out;
}

/** Refuses a base URL that is not http(s): file:, ftp:, unix: ... would fail once per scenario instead of once. */
export function checkBaseUrl(value: string, what: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw usageError(`${what}: "${redactUrlText(value)}" is not a URL; expected http://host:port/path or https://...`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw usageError(`${what}: scheme "${url.protocol}" is not supported; expected http:// or https://`);
  }
  if (url.username || url.password)
    throw usageError(`${what}: credentials in the URL are not allowed; put the key in an environment variable and name it with key_env=VAR`);
}

/**
 * The endpoint as part of a run's identity: scheme, host, port and path, never credentials or a
 * query string. Undefined for the vendor's default endpoint (and the simulator), so runs against
 * it keep the keys they always had; two different servers never share keys or cached answers.
 */
export function endpointIdentity(baseUrl: string | undefined, officialUrl: string): string | undefined {
  if (baseUrl === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return undefined;
  }
  const id = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
  return id === officialUrl.replace(/\/+$/, '') ? undefined : id;
}

function redactUrlText(value: string): string {
  return value.replace(/\/\/[^/@]*@/, '//');
}

function redactSpec(spec: string): string {
  return spec.replace(/\/\/[^/@?&]*@/g, '//');
}

/** The model's identity in keys and tables: provider:model, without endpoint, key or prices. */
export function modelId(spec: ModelSpec): string {
  return `${spec.provider}:${spec.model}`;
}

/** True for an offline provider (the simulator): no network, no key, nothing cached. */
export function isSimulator(spec: ModelSpec): boolean {
  return Boolean((PROVIDER_REGISTRY[spec.provider] as ProviderEntry).offline);
}

/** The cost in USD of a call's tokens at the spec's prices (nothing when no price is known). */
export function costOfTokens(spec: ModelSpec, usage: { inputTokens: number; outputTokens: number }): number {
  const prices = pricesOf(spec);
  return prices ? (usage.inputTokens * prices.in + usage.outputTokens * prices.out) / 1e6 : 0;
}

/**
 * The share of the online price a batch call costs (0.5 for a 50% discount), or undefined when the
 * provider has no batch API.
 */
export function batchPriceFactor(spec: ModelSpec): number | undefined {
  const batch = (PROVIDER_REGISTRY[spec.provider] as ProviderEntry).batch;
  if (!batch) return undefined;
  return 1 - (spec.batchDiscount ?? batch.discount);
}

/** The fewest requests a batch of this model may hold (Bedrock: 100), or undefined without a minimum. */
export function batchMinItems(spec: ModelSpec): number | undefined {
  return (PROVIDER_REGISTRY[spec.provider] as ProviderEntry).batch?.minItems?.(spec);
}

/** Refuses batch mode for a provider without a batch API, or a spec its batch API cannot serve, saying why. */
export function checkBatchSupport(spec: ModelSpec, what: string): void {
  const entry = PROVIDER_REGISTRY[spec.provider] as ProviderEntry;
  if (entry.batch) {
    const refusal = entry.batch.check?.(spec);
    if (refusal) throw usageError(`${what}: --batch is not available for ${modelId(spec)}: ${refusal.reason}`, refusal.hint);
    return;
  }
  const withBatch = PROVIDERS.filter((n) => (PROVIDER_REGISTRY[n] as ProviderEntry).batch).join(', ');
  throw usageError(
    `${what}: --batch is not available for ${modelId(spec)}: ${entry.noBatch ?? `${spec.provider} has no batch API`}`,
    `batch mode works with: ${withBatch}`,
  );
}

/** Whether a cost can be estimated: the provider's prices hook knows a price (the simulator costs nothing). */
export function hasPrice(spec: ModelSpec): boolean {
  return pricesOf(spec) !== undefined;
}

/** The models of these specs whose price is unknown, once each: a cost estimate leaves them out. */
export function unpriced(specs: ModelSpec[]): string[] {
  return [...new Set(specs.filter((s) => !hasPrice(s)).map(modelId))];
}
