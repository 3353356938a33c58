import { createHash } from 'node:crypto';
import { LlmCallError } from './errors.js';
import type { ChatRequest, ChatResponse, Provider } from './types.js';

/**
 * `sim:*` — an offline, deterministic SIMULATOR, not a model. It plays the user and the
 * assistant from the scenario's own facts with fixed rules so the whole pipeline runs with
 * no endpoint (demo, CI). Its numbers say nothing about any assistant.
 */
export class SimProvider implements Provider {
  async complete(request: ChatRequest): Promise<ChatResponse> {
    const facts = request.simulation;
    if (!facts) throw new LlmCallError('config', 'the sim provider needs scenario facts; it can only play PersonaLens agents', { retryable: false });
    const turns = request.messages.length === 0 ? 0 : countAssistantTurns(request.messages.at(-1)!.content);
    const text = request.purpose === 'user' ? simulatedUser(facts, turns) : simulatedAssistant(facts, turns, request.messages.at(-1)?.content ?? '');
    const input = request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);
    return { text, usage: { inputTokens: Math.ceil(input / 4), outputTokens: Math.ceil(text.length / 4) }, finishReason: 'stop' };
  }

  async close(): Promise<void> {}
}

function countAssistantTurns(prompt: string): number {
  return prompt.split('[ASSISTANT]:').length - 1;
}

/** "Type: value" -> "value" (values may contain colons, e.g. 7:00 AM). */
function valueOf(preference: string): string {
  const i = preference.indexOf(': ');
  return i >= 0 ? preference.slice(i + 2) : preference;
}

function pick(seed: string, n: number): number {
  return createHash('sha256').update(seed).digest().readUInt32BE(0) % n;
}

function simulatedUser(facts: NonNullable<ChatRequest['simulation']>, assistantTurns: number): string {
  if (assistantTurns === 0) {
    // The intent is written to "you"; the simulated user says it in the first person.
    const first = facts.intent
      .split(/(?<=[.!?])\s/)[0]!
      .replace(/\byours\b/gi, 'mine')
      .replace(/\byour\b/gi, 'my')
      .replace(/\byou\b/gi, 'I')
      .replace(/[.!?]*$/, '');
    return /^I\b/.test(first) ? `Hi! ${first}.` : `Hi, I'd like to ${first.charAt(0).toLowerCase()}${first.slice(1)}.`;
  }
  // Each simulated user wants 2-4 exchanges; a stable choice per scenario.
  const wanted = 2 + pick(facts.scenarioId, 3);
  if (assistantTurns >= wanted) return 'Great, that covers everything I needed, thanks. TERMINATE';
  const preference = facts.preferences[(assistantTurns - 1) % Math.max(1, facts.preferences.length)];
  return preference ? `Sounds good. For what it's worth, my ${preference.replace(/: /, ' is ')}.` : 'Sounds good, what are the options?';
}

function simulatedAssistant(facts: NonNullable<ChatRequest['simulation']>, assistantTurns: number, prompt: string): string {
  const ctx = facts.assistantContext ?? { demographics: false, interactions: false, situation: false };
  const parts = [assistantTurns === 0 ? 'Happy to help with that.' : 'Noted.'];
  if (ctx.situation && facts.location) parts.push(`Since you're in ${facts.location}${facts.timeOfDay ? ` this ${facts.timeOfDay.toLowerCase()}` : ''}, I'll keep that in mind.`);
  if (ctx.interactions) {
    // With past interactions, the simulated assistant applies one known preference unprompted.
    const known = facts.preferences[pick(`${facts.scenarioId}:${assistantTurns}`, Math.max(1, facts.preferences.length))];
    if (known) parts.push(`Based on your past requests I've gone with ${valueOf(known)}.`);
  }
  if (ctx.demographics) parts.push('I have tailored the suggestion to you.');
  const closing = /covers everything I needed/.test(prompt.slice(prompt.lastIndexOf('[USER]:')));
  parts.push(assistantTurns === 0 ? 'Could you confirm the details you want?' : closing ? "You're all set, enjoy!" : 'It is booked and confirmed; anything else?');
  return parts.join(' ');
}
