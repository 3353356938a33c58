import { describe, expect, it } from 'vitest';
import { cellDir, dialogueKey, type DialogueCell } from '../../src/benchmarks/personalens/dialogue-cell.js';
import { samplingIdentity } from '../../src/engine/llm-stage.js';
import { anthropicBody } from '../../src/llm/anthropic.js';
import { bedrockClaudeBody } from '../../src/llm/bedrock-batch.js';
import { callKey } from '../../src/llm/call-cache.js';
import { parseModelSpec } from '../../src/llm/model-spec.js';
import { openAiChatBody } from '../../src/llm/openai.js';
import type { ChatRequest } from '../../src/llm/types.js';

/*
 * top_p: the original PersonaLens sends it for Llama (0.9) and Mistral (1.0); plens sends it only
 * when a spec asks (`?top_p=0.9`), and then in every provider's body and the call cache's key.
 * The Converse body (inferenceConfig.topP) is checked end to end by the differential test.
 */
const request = (topP?: number): ChatRequest => ({
  system: 'S',
  messages: [{ role: 'user', content: 'hi' }],
  params: { temperature: 0, maxTokens: 800, ...(topP !== undefined ? { topP } : {}) },
  purpose: 'assistant',
  promptVersion: 'v',
  replicate: 0,
});

describe('top_p', () => {
  it('is read from a spec, within (0, 1]', () => {
    expect(parseModelSpec('bedrock:llama-3-1-70b-instruct-v1?top_p=0.9')).toMatchObject({ topP: 0.9 });
    expect(() => parseModelSpec('openai:m?top_p=0')).toThrow(/top_p must be above 0 and at most 1/);
    expect(() => parseModelSpec('openai:m?top_p=1.5')).toThrow(/top_p must be above 0 and at most 1/);
  });

  it('is sent only when set, by every body builder', () => {
    expect(openAiChatBody('m', request())).not.toHaveProperty('top_p');
    expect(anthropicBody('m', request())).not.toHaveProperty('top_p');
    expect(bedrockClaudeBody(request())).not.toHaveProperty('top_p');
    expect(openAiChatBody('m', request(0.9))).toMatchObject({ top_p: 0.9 });
    expect(anthropicBody('m', request(0.9))).toMatchObject({ top_p: 0.9 });
    expect(bedrockClaudeBody(request(0.9))).toMatchObject({ top_p: 0.9 });
  });

  it('is part of the cache key when set, and leaves the keys of calls without it as they were', () => {
    // The key of a call without top_p, as plens computed it before top_p existed (taken from 2e58453).
    expect(callKey('openai', 'm', request())).toBe('151f6c4292980dc84ba90530fa4dfbd962ba16e6e665c6905b28cf22186579d0');
    expect(callKey('openai', 'm', request(0.9))).not.toBe(callKey('openai', 'm', request()));
    expect(callKey('openai', 'm', request(0.9))).not.toBe(callKey('openai', 'm', request(1)));
  });
});

describe("top_p in the stages' keys", () => {
  const cell = (topP?: number): DialogueCell => ({
    setting: 'base',
    assistant: { model: 'bedrock:llama-3-1-70b-instruct-v1', params: { temperature: 0, maxTokens: 800, ...(topP !== undefined ? { topP } : {}) } },
    user: { model: 'bedrock:claude-3-sonnet-v1', params: { temperature: 0.5, maxTokens: 800 } },
    promptVersion: 'v',
    promptStyle: 'markdown',
    simulated: false,
  });

  it('a dialogue run with top_p is its own configuration; one without keeps its keys', () => {
    // The key as plens computed it before top_p existed (taken from 2e58453).
    expect(dialogueKey(cell(), 'SD-1', 0)).toBe('26932d0ff1accb21cf38195909fb8611');
    expect(dialogueKey(cell(0.9), 'SD-1', 0)).not.toBe(dialogueKey(cell(), 'SD-1', 0));
    expect(cellDir('/w', cell(0.9))).not.toBe(cellDir('/w', cell()));
    expect(samplingIdentity({ temperature: 0, maxTokens: 800 })).toEqual([0, 800]);
  });
});

describe('provider defaults (no temperature, no token limit)', () => {
  const defaults = (): ChatRequest => ({ ...request(), params: { ...request().params, providerDefaults: true } });

  it('the OpenAI body leaves both out; the key and the sampling identity tell the request apart, and keys without it stay', () => {
    expect(openAiChatBody('m', defaults())).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(openAiChatBody('m', request())).toMatchObject({ temperature: 0, max_tokens: 800 });
    expect(callKey('openai', 'm', request())).toBe('151f6c4292980dc84ba90530fa4dfbd962ba16e6e665c6905b28cf22186579d0');
    expect(callKey('openai', 'm', defaults())).not.toBe(callKey('openai', 'm', request()));
    expect(samplingIdentity(defaults().params)).not.toEqual(samplingIdentity(request().params));
    expect(samplingIdentity(request().params)).toEqual([0, 800]);
  });
});
