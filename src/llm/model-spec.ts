import { usageError } from '../core/errors.js';

export const PROVIDERS = ['openai', 'anthropic', 'sim'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/**
 * A model and how to call it, from a spec string such as
 *   openai:gpt-4o-mini
 *   anthropic:claude-3-5-sonnet-20241022?temperature=0&max_tokens=800
 *   openai:llama3?base_url=http://localhost:8000/v1&key_env=VLLM_KEY&price_in=0&price_out=0&rpm=600
 *   sim:default
 * Keys are never part of a spec: `key_env` names the environment variable that holds one.
 */
export interface ModelSpec {
  provider: ProviderName;
  model: string;
  temperature?: number;
  maxTokens?: number;
  baseUrl?: string;
  keyEnv?: string;
  /** USD per 1M input / output tokens. */
  priceIn?: number;
  priceOut?: number;
  rpm?: number;
  tpm?: number;
  /** PersonaLens assistant prompt layout (`xml` or `markdown`); default from the model name. */
  promptStyle?: string;
}

const NUMERIC = { temperature: 'temperature', max_tokens: 'maxTokens', price_in: 'priceIn', price_out: 'priceOut', rpm: 'rpm', tpm: 'tpm' } as const;
const TEXT = { base_url: 'baseUrl', key_env: 'keyEnv', prompt_style: 'promptStyle' } as const;

export function parseModelSpec(spec: string, what = 'model'): ModelSpec {
  const m = /^([a-z]+):([^?]+)(?:\?(.*))?$/.exec(spec.trim());
  if (!m) throw usageError(`${what} "${spec}": expected provider:model, e.g. openai:gpt-4o-mini, anthropic:claude-3-5-sonnet-20241022 or sim:default`);
  const provider = m[1] as ProviderName;
  if (!PROVIDERS.includes(provider)) throw usageError(`${what} "${spec}": unknown provider "${m[1]}"; use one of ${PROVIDERS.join(', ')}`);
  const out: ModelSpec = { provider, model: m[2]! };
  for (const [key, value] of new URLSearchParams(m[3] ?? '')) {
    if (/key|token|secret/i.test(key) && key !== 'key_env' && key !== 'max_tokens') {
      throw usageError(`${what}: "${key}" looks like a secret; put the key in an environment variable and name it with key_env=VAR`);
    }
    if (key in NUMERIC) {
      const n = Number(value);
      if (value === '' || !Number.isFinite(n) || n < 0) throw usageError(`${what} "${spec}": ${key} must be a non-negative number`);
      (out as unknown as Record<string, number>)[NUMERIC[key as keyof typeof NUMERIC]] = n;
    } else if (key in TEXT) {
      (out as unknown as Record<string, string>)[TEXT[key as keyof typeof TEXT]] = value;
    } else {
      throw usageError(`${what} "${spec}": unknown parameter "${key}"; known: ${[...Object.keys(NUMERIC), ...Object.keys(TEXT)].join(', ')}`);
    }
  }
  if (out.maxTokens !== undefined && !Number.isInteger(out.maxTokens)) throw usageError(`${what}: max_tokens must be a whole number`);
  return out;
}

/** The model's identity in keys and tables: provider:model, without endpoint, key or prices. */
export function modelId(spec: ModelSpec): string {
  return `${spec.provider}:${spec.model}`;
}

export function isSimulator(spec: ModelSpec): boolean {
  return spec.provider === 'sim';
}
