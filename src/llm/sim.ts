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
    const text = facts.judge
      ? simulatedJudge(facts)
      : request.purpose === 'user'
        ? simulatedUser(facts, turns)
        : simulatedAssistant(facts, turns, request.messages.at(-1)?.content ?? '');
    const input = request.system.length + request.messages.reduce((n, m) => n + m.content.length, 0);
    return { text, usage: { inputTokens: Math.ceil(input / 4), outputTokens: Math.ceil(text.length / 4) }, finishReason: 'stop' };
  }

  async close(): Promise<void> {}
}

/**
 * The simulated judge, in the output formats the judge prompts ask for: task completed when the
 * user ended the dialogue; personalization 1 + the number (up to 3) of the user's relevant
 * preference values the assistant brought up; naturalness and coherence 3-5 by a stable hash.
 */
function simulatedJudge(facts: NonNullable<ChatRequest['simulation']>): string {
  const j = facts.judge!;
  if (j.dimension === 'task_completion') {
    return `VERDICT: ${j.terminated ? 'True' : 'False'}\nEXPLANATION: (simulated judge) The user ${j.terminated ? 'ended the conversation satisfied' : 'never confirmed the task was done'}.`;
  }
  if (j.dimension === 'personalization_chain') {
    // The same rule after each assistant turn, over the assistant's text up to that turn.
    const turns = j.assistantTurns ?? [j.assistantText];
    const lines = turns.map((_, i) => `Turn ${i + 1} Personalization Score: ${personalizationScore(facts, turns.slice(0, i + 1).join('\n'))}`);
    return `<response>\n${lines.join('\n')}\nJustification: (simulated judge) after each turn, 1 + preferences applied so far, capped at 4.\n</response>`;
  }
  if (j.dimension === 'personalization') {
    const used = preferencesUsed(facts, j.assistantText);
    const score = personalizationScore(facts, j.assistantText);
    return `<response>\nPersonalization Score: ${score}\nKey Observations: (simulated judge) the assistant used ${used} known preference value(s).\nJustification: (simulated judge) score = 1 + preferences applied, capped at 4.\nImprovement Suggestions: apply more of what is known.\n</response>`;
  }
  const label = j.dimension === 'naturalness' ? 'Naturalness' : 'Coherence';
  const score = 3 + pick(`${j.dimension}:${j.target}:${j.conversation}`, 3);
  return `${label} Score: ${score}\nJustification: (simulated judge) a fixed rule, not an assessment.`;
}

/** How many of the user's relevant preference values the assistant's text brings up. */
function preferencesUsed(facts: NonNullable<ChatRequest['simulation']>, assistantText: string): number {
  const text = assistantText.toLowerCase();
  const values = facts.preferences.flatMap((p) => valueOf(p).split(', ')).filter((v) => v.length > 2);
  return new Set(values.filter((v) => text.includes(v.toLowerCase()))).size;
}

const personalizationScore = (facts: NonNullable<ChatRequest['simulation']>, assistantText: string): number => 1 + Math.min(3, preferencesUsed(facts, assistantText));

/** Assistant lines of the history, in either rendering (`[ASSISTANT]:` for the user agent, `Assistant:` for the assistant). */
function countAssistantTurns(prompt: string): number {
  return (prompt.match(/^(?:\[ASSISTANT\]|Assistant):/gm) ?? []).length;
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
  const lastUser = Math.max(prompt.lastIndexOf('[USER]:'), prompt.lastIndexOf('\nUser:'));
  const closing = /covers everything I needed/.test(prompt.slice(lastUser));
  parts.push(assistantTurns === 0 ? 'Could you confirm the details you want?' : closing ? "You're all set, enjoy!" : 'It is booked and confirmed; anything else?');
  return parts.join(' ');
}
