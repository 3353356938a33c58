/**
 * Amazon Bedrock model names and prices, without the AWS SDK (a plan and a price estimate need
 * neither credentials nor the SDK; the provider in bedrock.ts loads it on the first call).
 */

/**
 * The original PersonaLens code's short model names and the Bedrock model ids (or cross-region
 * inference profiles, `us.` prefix) it called for each, as its evaluation script maps them
 * (amazon-science/PersonaLens, `model_id_reverse_dict`, plus the two names only its forward map
 * has). Runs named after the original keep its names in tables; the call goes to this id.
 */
export const PERSONALENS_BEDROCK_MODELS: Readonly<Record<string, string>> = {
  'claude-3-sonnet-v1': 'anthropic.claude-3-sonnet-20240229-v1:0',
  'claude-3-5-sonnet-v1': 'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'claude-3-5-sonnet-v2': 'us.anthropic.claude-3-5-sonnet-20241022-v2:0',
  'claude-3-5-haiku-v1': 'us.anthropic.claude-3-5-haiku-20241022-v1:0',
  'claude-3-7-sonnet-v1': 'us.anthropic.claude-3-7-sonnet-20250219-v1:0',
  'claude-3-opus-v1': 'us.anthropic.claude-3-opus-20240229-v1:0',
  'llama-3-70b-instruct-v1': 'meta.llama3-70b-instruct-v1:0',
  'llama-3-1-8b-instruct-v1': 'us.meta.llama3-1-8b-instruct-v1:0',
  'llama-3-1-70b-instruct-v1': 'us.meta.llama3-1-70b-instruct-v1:0',
  'llama-3-2-90b-instruct-v1': 'us.meta.llama3-2-90b-instruct-v1:0',
  'llama-3-3-70b-instruct-v1': 'us.meta.llama3-3-70b-instruct-v1:0',
  'mistral-7b-instruct-v2': 'mistral.mistral-7b-instruct-v0:2',
  'mixtral-8x7b-instruct-v1': 'mistral.mixtral-8x7b-instruct-v0:1',
};

/** The region the original's scripts default to (`--bedrock_region us-west-2`). */
export const PERSONALENS_BEDROCK_REGION = 'us-west-2';

/**
 * On-demand prices in USD per 1M input / output tokens (Bedrock price list, US regions, as of
 * 2025). Keyed by the base model id; a cross-region inference profile (`us.`, `eu.`, `apac.`
 * prefix) costs what its model costs. `price_in=` / `price_out=` in a model spec override these,
 * and a model not listed here has no price until the spec gives one.
 */
export const BEDROCK_PRICES: Readonly<Record<string, { in: number; out: number }>> = {
  'anthropic.claude-3-sonnet-20240229-v1:0': { in: 3, out: 15 },
  'anthropic.claude-3-5-sonnet-20240620-v1:0': { in: 3, out: 15 },
  'anthropic.claude-3-5-sonnet-20241022-v2:0': { in: 3, out: 15 },
  'anthropic.claude-3-7-sonnet-20250219-v1:0': { in: 3, out: 15 },
  'anthropic.claude-3-5-haiku-20241022-v1:0': { in: 0.8, out: 4 },
  'anthropic.claude-3-haiku-20240307-v1:0': { in: 0.25, out: 1.25 },
  'anthropic.claude-3-opus-20240229-v1:0': { in: 15, out: 75 },
  'meta.llama3-8b-instruct-v1:0': { in: 0.3, out: 0.6 },
  'meta.llama3-70b-instruct-v1:0': { in: 2.65, out: 3.5 },
  'meta.llama3-1-8b-instruct-v1:0': { in: 0.22, out: 0.22 },
  'meta.llama3-1-70b-instruct-v1:0': { in: 0.72, out: 0.72 },
  'meta.llama3-2-90b-instruct-v1:0': { in: 0.72, out: 0.72 },
  'meta.llama3-3-70b-instruct-v1:0': { in: 0.72, out: 0.72 },
  'mistral.mistral-7b-instruct-v0:2': { in: 0.15, out: 0.2 },
  'mistral.mixtral-8x7b-instruct-v0:1': { in: 0.45, out: 0.7 },
};

/** What `bedrock:<model>` calls: an original short name's id, else the model id, profile id or ARN as given. */
export function bedrockModelId(model: string): string {
  return PERSONALENS_BEDROCK_MODELS[model] ?? model;
}

/** The foundation model behind an id, a cross-region profile id or an inference-profile ARN (for its price). */
export function bedrockBaseModel(model: string): string {
  const id = bedrockModelId(model);
  // arn:aws:bedrock:<region>:<account>:(inference-profile|foundation-model)/<id>
  const fromArn = /^arn:aws[\w-]*:bedrock:[^:]*:[^:]*:(?:inference-profile|foundation-model)\/(.+)$/.exec(id)?.[1] ?? id;
  return fromArn.replace(/^(?:us|eu|apac|us-gov|global)\./, '');
}

/** The listed price of a Bedrock model, if any. */
export function bedrockPrice(model: string): { in: number; out: number } | undefined {
  return BEDROCK_PRICES[bedrockBaseModel(model)];
}

/**
 * The native-body family of a model that takes a completion prompt through InvokeModel: Meta's
 * Llama (`meta.llama…`) or Mistral AI's (`mistral.…`, Mixtral included); undefined for others.
 */
export function bedrockPromptFamily(model: string): 'llama' | 'mistral' | undefined {
  const base = bedrockBaseModel(model);
  if (base.startsWith('meta.llama')) return 'llama';
  if (base.startsWith('mistral.')) return 'mistral';
  return undefined;
}

/**
 * Whether Bedrock's Converse API takes a system prompt for this model. Mistral AI's 7B and 8x7B
 * Instruct models take none (AWS's table of Converse model features; Bedrock answers a
 * ValidationException): a system prompt reaches them only inside a completion prompt.
 */
export function bedrockConverseTakesSystem(model: string): boolean {
  return !/^mistral\.(?:mistral-7b-instruct|mixtral-8x7b-instruct)/.test(bedrockBaseModel(model));
}

/** The region an inference-profile or model ARN names, if the model is one. */
export function bedrockArnRegion(model: string): string | undefined {
  return /^arn:aws[\w-]*:bedrock:([a-z0-9-]+):/.exec(bedrockModelId(model))?.[1];
}

/** Bedrock's minimum records per batch job (a service quota); fewer are called online (`batch_min_records=` changes it). */
export const BEDROCK_MIN_RECORDS = 100;

/** Whether batch inference can serve this model: plens builds the native (InvokeModel) body for Anthropic Claude models only. */
export function isBedrockClaude(model: string): boolean {
  return /^anthropic\.claude/.test(bedrockBaseModel(model));
}

/**
 * Why --batch cannot run for a Bedrock spec: its S3 location and service role are missing, or the
 * model is not one whose native body plens builds (Claude). Undefined when it can.
 */
export function bedrockBatchRefusal(spec: { model: string; batchBucket?: string; batchRoleArn?: string }): { reason: string; hint: string } | undefined {
  const missing = [
    spec.batchBucket ? undefined : 'batch_bucket=s3://BUCKET/PREFIX',
    spec.batchRoleArn ? undefined : 'batch_role_arn=arn:aws:iam::ACCOUNT:role/ROLE',
  ].filter((x): x is string => x !== undefined);
  if (missing.length)
    return {
      reason: `Bedrock batch inference reads its input from and writes its output to S3, as an IAM service role; the model spec names no ${missing.length === 2 ? 'bucket and no role' : spec.batchBucket ? 'role' : 'bucket'}`,
      hint: `add ${missing.join(' and ')} to the model spec (and s3_endpoint=http://HOST:PORT for an S3-compatible store), or judge online without --batch`,
    };
  if (!isBedrockClaude(spec.model))
    return {
      reason: `plens builds Bedrock batch records (the model's native InvokeModel body) for Anthropic Claude models only, and ${bedrockModelId(spec.model)} is not one`,
      hint: 'judge this model online (without --batch), or batch with a Claude model',
    };
  return undefined;
}
