import { LlmCallError } from './errors.js';
import { postJson } from './http.js';
import { HttpProvider } from './http-provider.js';
import type { ChatRequest, ChatResponse } from './types.js';

interface OpenAiResponse {
  choices?: Array<{ message?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/**
 * The /v1/chat/completions body of a request: shared by online calls and batch lines, so both send
 * the same thing. `system === null` sends no system message; '' sends an empty one.
 */
export function openAiChatBody(model: string, request: ChatRequest): Record<string, unknown> {
  return {
    model,
    messages: request.system === null ? request.messages : [{ role: 'system', content: request.system }, ...request.messages],
    ...(request.params.providerDefaults ? {} : { temperature: request.params.temperature, max_tokens: request.params.maxTokens }),
    ...(request.params.topP !== undefined ? { top_p: request.params.topP } : {}),
  };
}

/** Reads a chat completion body (an online answer or a batch result line's body). */
export function readOpenAiReply(json: unknown): ChatResponse {
  const body = json as OpenAiResponse | null;
  const choice = body?.choices?.[0];
  const text = choice?.message?.content;
  if (typeof text !== 'string') {
    throw new LlmCallError('bad_response', 'OpenAI-compatible response has no choices[0].message.content', { retryable: true });
  }
  return {
    text,
    usage: { inputTokens: body?.usage?.prompt_tokens ?? 0, outputTokens: body?.usage?.completion_tokens ?? 0 },
    finishReason: choice?.finish_reason ?? null,
  };
}

/** Any OpenAI-compatible /v1/chat/completions endpoint (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM, gateways). */
export class OpenAiProvider extends HttpProvider {
  async complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    const headers: Record<string, string> = this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
    const json = await postJson(this.transport, this.endpoint('/chat/completions'), headers, openAiChatBody(this.model, request), signal);
    return readOpenAiReply(json);
  }
}
