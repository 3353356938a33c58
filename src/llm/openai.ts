import { LlmCallError } from './errors.js';
import { postJson } from './http.js';
import { HttpProvider } from './http-provider.js';
import type { ChatRequest, ChatResponse } from './types.js';

interface OpenAiResponse {
  choices?: Array<{ message?: { content?: string | null }; finish_reason?: string | null }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/** Any OpenAI-compatible /v1/chat/completions endpoint (OpenAI, vLLM, Ollama, llama.cpp, LiteLLM, gateways). */
export class OpenAiProvider extends HttpProvider {
  async complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    const body = {
      model: this.model,
      messages: request.system === null ? request.messages : [{ role: 'system', content: request.system }, ...request.messages],
      temperature: request.params.temperature,
      max_tokens: request.params.maxTokens,
    };
    const headers: Record<string, string> = this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
    const json = (await postJson(this.transport, this.endpoint('/chat/completions'), headers, body, signal)) as OpenAiResponse;
    const choice = json.choices?.[0];
    const text = choice?.message?.content;
    if (typeof text !== 'string') {
      throw new LlmCallError('bad_response', 'OpenAI-compatible response has no choices[0].message.content', { retryable: true });
    }
    return {
      text,
      usage: { inputTokens: json.usage?.prompt_tokens ?? 0, outputTokens: json.usage?.completion_tokens ?? 0 },
      finishReason: choice?.finish_reason ?? null,
    };
  }
}
