/** The provider-neutral shape of one chat call. */

export interface ChatMessage {
  role: 'user' | 'assistant';
  content: string;
}

export interface SamplingParams {
  temperature: number;
  maxTokens: number;
  /** Nucleus sampling; sent only when set (the spec's `top_p`). */
  topP?: number;
  /**
   * Send no temperature and no token limit: the endpoint's own defaults (PrefEval's original GPT
   * requests). Only OpenAI-compatible chat bodies honour it; temperature and maxTokens then still
   * price the call's estimate.
   */
  providerDefaults?: true;
}

export interface ChatRequest {
  /**
   * The system prompt. '' sends an empty one (the PersonaLens judge, as the original does);
   * null sends none at all (PERSONA-bench's scripts: a lone user message).
   */
  system: string | null;
  messages: ChatMessage[];
  /**
   * A completion prompt, the model's chat template already applied by the benchmark (PrefEval's
   * original Llama and Mistral requests): sent as it is in place of `system` and `messages`, which
   * keep the same conversation for logs and the simulator. Only Bedrock (InvokeModel, for Llama and
   * Mistral models) and the simulator take one; any other provider refuses the call.
   */
  prompt?: string;
  params: SamplingParams;
  /** What the call is for (user / assistant / judge:<dimension>): part of the cache key, and how the simulator knows its role. */
  purpose: string;
  /** The prompt templates' version; part of the cache key so edited prompts never hit old entries. */
  promptVersion: string;
  /** 0 for the first sample; replicate k > 0 gets its own cache entries. */
  replicate: number;
  /**
   * Facts for an offline simulator provider, opaque here: a benchmark fills it and its simulator
   * reads it; real providers ignore it, and it is not part of the cache key (the prompt already
   * carries the same facts).
   */
  simulation?: unknown;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface ChatResponse {
  text: string;
  usage: Usage;
  finishReason: string | null;
}

/** A provider turns a request into a response, one HTTP call (or one simulated reply), no retries. */
export interface Provider {
  complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse>;
  close(): Promise<void>;
}
