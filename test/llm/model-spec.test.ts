import { describe, expect, it } from 'vitest';
import { modelId, parseModelSpec } from '../../src/llm/model-spec.js';

describe('parseModelSpec', () => {
  it('reads provider, model and parameters', () => {
    expect(parseModelSpec('openai:gpt-4o-mini')).toEqual({ provider: 'openai', model: 'gpt-4o-mini' });
    expect(parseModelSpec('anthropic:claude-3-5-sonnet-20241022?temperature=0.2&max_tokens=500&price_in=3&price_out=15&rpm=50&tpm=40000')).toEqual({
      provider: 'anthropic',
      model: 'claude-3-5-sonnet-20241022',
      temperature: 0.2,
      maxTokens: 500,
      priceIn: 3,
      priceOut: 15,
      rpm: 50,
      tpm: 40000,
    });
    expect(parseModelSpec('openai:llama3?base_url=http://127.0.0.1:8000/v1&key_env=VLLM_KEY')).toMatchObject({
      baseUrl: 'http://127.0.0.1:8000/v1',
      keyEnv: 'VLLM_KEY',
    });
  });

  it('model ids carry no endpoint, key or price', () => {
    expect(modelId(parseModelSpec('openai:m?base_url=http://x/v1&price_in=1'))).toBe('openai:m');
  });

  it('rejects secrets, unknown providers and parameters, and bad numbers', () => {
    expect(() => parseModelSpec('openai:m?api_key=sk-123')).toThrow(/secret/);
    expect(() => parseModelSpec('gemini:m')).toThrow(/unknown provider/);
    expect(() => parseModelSpec('openai:m?top_k=3')).toThrow(/unknown parameter "top_k"/);
    expect(() => parseModelSpec('openai:m?temperature=hot')).toThrow(/non-negative number/);
    expect(() => parseModelSpec('openai:m?max_tokens=1.5')).toThrow(/whole number/);
    expect(() => parseModelSpec('gpt-4o')).toThrow(/provider:model/);
  });
});
