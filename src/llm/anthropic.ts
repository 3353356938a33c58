import { LlmCallError } from './errors.js';
import { postJson } from './http.js';
import { HttpProvider } from './http-provider.js';
import type { ChatRequest, ChatResponse } from './types.js';

interface AnthropicResponse {
  content?: Array<{ type: string; text?: string }>;
  stop_reason?: string | null;
  usage?: { input_tokens?: number; output_tokens?: number };
}

export const ANTHROPIC_VERSION = '2023-06-01';

/**
 * The Messages API body of a request: shared by online calls and batch requests, so both send the
 * same thing. `system === null` sends no system prompt; '' sends an empty one.
 */
export function anthropicBody(model: string, request: ChatRequest): Record<string, unknown> {
  return {
    model,
    ...(request.system === null ? {} : { system: request.system }),
    messages: request.messages,
    temperature: request.params.temperature,
    max_tokens: request.params.maxTokens,
    ...(request.params.topP !== undefined ? { top_p: request.params.topP } : {}),
  };
}

/** Reads a Messages API reply (an online answer or a batch result's message). */
export function readAnthropicReply(json: unknown): ChatResponse {
  const body = json as AnthropicResponse | null;
  const blocks = (body?.content ?? []).filter((b) => b.type === 'text' && typeof b.text === 'string');
  if (blocks.length === 0) throw new LlmCallError('bad_response', 'Anthropic response has no text content block', { retryable: true });
  return {
    text: blocks.map((b) => b.text).join(''),
    usage: { inputTokens: body?.usage?.input_tokens ?? 0, outputTokens: body?.usage?.output_tokens ?? 0 },
    finishReason: body?.stop_reason ?? null,
  };
}

/** The Anthropic Messages API (POST /v1/messages). */
export class AnthropicProvider extends HttpProvider {
  async complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    return readAnthropicReply(await postJson(this.transport, this.endpoint('/v1/messages'), headers, anthropicBody(this.model, request), signal));
  }
}
