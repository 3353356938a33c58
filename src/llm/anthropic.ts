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

/** The Anthropic Messages API (POST /v1/messages). */
export class AnthropicProvider extends HttpProvider {
  async complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    const body = {
      model: this.model,
      ...(request.system === null ? {} : { system: request.system }),
      messages: request.messages,
      temperature: request.params.temperature,
      max_tokens: request.params.maxTokens,
    };
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (this.apiKey) headers['x-api-key'] = this.apiKey;
    const json = (await postJson(this.transport, this.endpoint('/v1/messages'), headers, body, signal)) as AnthropicResponse;
    const blocks = (json.content ?? []).filter((b) => b.type === 'text' && typeof b.text === 'string');
    if (blocks.length === 0) throw new LlmCallError('bad_response', 'Anthropic response has no text content block', { retryable: true });
    return {
      text: blocks.map((b) => b.text).join(''),
      usage: { inputTokens: json.usage?.input_tokens ?? 0, outputTokens: json.usage?.output_tokens ?? 0 },
      finishReason: json.stop_reason ?? null,
    };
  }
}
