import { createHash } from 'node:crypto';
import { LlmCallError } from './errors.js';
import { personaFacts, simulatedPersonaReply } from './sim-persona.js';
import type { ChatRequest, ChatResponse, Provider } from './types.js';

/** What the simulator plays from: the scenario's own facts, carried in a request's opaque `simulation` slot. */
export interface SimulationFacts {
  scenarioId: string;
  /** SD or MD task: the simulator completes fewer multi-domain tasks. */
  kind?: 'SD' | 'MD';
  intent: string;
  /** "type: value" lines the simulated user may bring up. */
  preferences: string[];
  location?: string;
  timeOfDay?: string;
  /** Context blocks the assistant was given in this setting. */
  assistantContext?: { demographics: boolean; interactions: boolean; situation: boolean };
  /** For judge calls: what is judged. */
  judge?: {
    dimension: string;
    target: string;
    terminated: boolean;
    assistantText: string;
    conversation: string;
    assistantTurns?: string[];
    prefixConversations?: string[];
  };
}

/** The simulator's rules; part of its cache key, so replies of older rules are never served. */
export const SIM_VERSION = 'sim-2';

/**
 * `sim:*` — an offline, deterministic SIMULATOR, not a model. It plays the user, the assistant and
 * the judge from the scenario's own facts with fixed rules so the whole pipeline runs with no
 * endpoint (demo, CI). The rules make the setting and the task matter the way a real run would show
 * it — the assistant applies more of the profile when it is given past interactions (+I, +all), it
 * completes fewer multi-domain tasks, the judge's scores vary from dialogue to dialogue — so the
 * demo's tables and charts have differences and intervals to show. Every "random" choice is a hash of
 * ids (scenario, setting, replicate, turn): the same run gives the same numbers. Its numbers say
 * nothing about any assistant.
 */
export class SimProvider implements Provider {
  async complete(request: ChatRequest): Promise<ChatResponse> {
    // A benchmark may compute its simulated reply itself and carry it on the request, and the reply to
    // asking again (the same request going on after the reply it carried, as a stage's re-ask does).
    const carried = request.simulation as { reply?: unknown; reask?: unknown } | null | undefined;
    const given = carried?.reply;
    if (typeof given === 'string') {
      const before = request.messages.at(-2);
      if (typeof carried?.reask === 'string' && before?.role === 'assistant' && before.content === given) return reply(request, carried.reask);
      return reply(request, given);
    }
    const persona = personaFacts(request.simulation);
    if (persona) return reply(request, simulatedPersonaReply(persona));
    const facts = simulationFacts(request.simulation);
    if (!facts) throw new LlmCallError('config', 'the sim provider needs scenario facts; it can only play PersonaLens agents', { retryable: false });
    const prompt = request.messages.at(-1)?.content ?? '';
    const turns = request.messages.length === 0 ? 0 : countAssistantTurns(prompt);
    const text = facts.judge
      ? simulatedJudge(facts)
      : request.purpose === 'user'
        ? simulatedUser(facts, turns, prompt, request.replicate)
        : simulatedAssistant(facts, turns, prompt, request.replicate);
    const input = (request.system?.length ?? 0) + request.messages.reduce((n, m) => n + m.content.length, 0);
    return { text, usage: { inputTokens: Math.ceil(input / 4), outputTokens: Math.ceil(text.length / 4) }, finishReason: 'stop' };
  }

  async close(): Promise<void> {}
}

function reply(request: ChatRequest, text: string): ChatResponse {
  const input = (request.system?.length ?? 0) + request.messages.reduce((n, m) => n + m.content.length, 0);
  return { text, usage: { inputTokens: Math.ceil(input / 4), outputTokens: Math.ceil(text.length / 4) }, finishReason: 'stop' };
}

/** The request's simulator facts, when it carries some (a scenario id and an intent at least). */
function simulationFacts(value: unknown): SimulationFacts | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const f = value as Partial<SimulationFacts>;
  return typeof f.scenarioId === 'string' && typeof f.intent === 'string' ? (f as SimulationFacts) : undefined;
}

/** The simulated assistant's closing lines: the judge reads the outcome from them. */
const DONE = 'It is booked and confirmed.';
const FAILED = 'I could not complete this for you, sorry';

/** A stable number in [0, 1) from a seed string. */
function chance(seed: string): number {
  return createHash('sha256').update(seed).digest().readUInt32BE(0) / 2 ** 32;
}

function pick(seed: string, n: number): number {
  return Math.floor(chance(seed) * n);
}

type Context = NonNullable<SimulationFacts['assistantContext']>;
const NO_CONTEXT: Context = { demographics: false, interactions: false, situation: false };

/** The setting as the simulator sees it: which context blocks the assistant has. */
function settingKey(ctx: Context): string {
  return `${ctx.demographics ? 'd' : ''}${ctx.interactions ? 'i' : ''}${ctx.situation ? 's' : ''}`;
}

/** Each simulated user wants 2-4 exchanges; a stable choice per scenario. */
function exchangesWanted(facts: SimulationFacts): number {
  return 2 + pick(facts.scenarioId, 3);
}

/**
 * Whether the simulated assistant completes the task: about 85% of single-domain and 55% of
 * multi-domain tasks, a little more with the situation or past interactions to go on.
 */
function completes(facts: SimulationFacts, ctx: Context, replicate: number): boolean {
  const p = (facts.kind === 'MD' ? 0.55 : 0.85) + (ctx.situation ? 0.05 : 0) + (ctx.interactions ? 0.05 : 0);
  return chance(`complete:${facts.scenarioId}:${settingKey(ctx)}:${replicate}`) < p;
}

/**
 * Per turn, the chance the assistant applies a preference from the profile unprompted: only with past
 * interactions (+I, +all), where the preferences show; demographics and situation help a little.
 */
function profileUse(ctx: Context): number {
  if (!ctx.interactions) return 0;
  return 0.55 + (ctx.demographics ? 0.1 : 0) + (ctx.situation ? 0.1 : 0);
}

/** "Type: v1, v2" -> its values ("v1", "v2"); values may contain colons, e.g. 7:00 AM. */
function valuesOf(preference: string): string[] {
  const i = preference.indexOf(': ');
  return (i >= 0 ? preference.slice(i + 2) : preference).split(', ').filter((v) => v.length > 2);
}

/** Assistant lines of the history, in either rendering (`[ASSISTANT]:` for the user agent, `Assistant:` for the assistant). */
function countAssistantTurns(prompt: string): number {
  return (prompt.match(/^(?:\[ASSISTANT\]|Assistant):/gm) ?? []).length;
}

function simulatedUser(facts: SimulationFacts, assistantTurns: number, prompt: string, replicate: number): string {
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
  if (assistantTurns >= exchangesWanted(facts)) {
    const last = prompt.slice(prompt.lastIndexOf('[ASSISTANT]:'));
    return last.includes(FAILED) ? "Never mind, I'll sort it out myself. TERMINATE" : 'Great, that covers everything I needed, thanks. TERMINATE';
  }
  // Some users volunteer a preference, others just ask on.
  const preference = facts.preferences[(assistantTurns - 1 + replicate) % Math.max(1, facts.preferences.length)];
  if (preference && chance(`share:${facts.scenarioId}:${assistantTurns}:${replicate}`) < 0.6)
    return `Sounds good. For what it's worth, my ${preference.replace(/: /, ' is ')}.`;
  return 'Sounds good, what are the options?';
}

function simulatedAssistant(facts: SimulationFacts, assistantTurns: number, prompt: string, replicate: number): string {
  const ctx = facts.assistantContext ?? NO_CONTEXT;
  const seed = `${facts.scenarioId}:${settingKey(ctx)}:${replicate}:${assistantTurns}`;
  // The assistant sees the history as `User:` lines (the user agent as `[USER]:`).
  const lastUser = prompt.slice(Math.max(prompt.lastIndexOf('[USER]:'), prompt.lastIndexOf('\nUser:')));
  if (/covers everything I needed|sort it out myself/.test(lastUser))
    return lastUser.includes('covers everything') ? "You're all set, enjoy!" : 'Understood, sorry I could not help more.';
  const parts = [assistantTurns === 0 ? 'Happy to help with that.' : 'Noted.'];
  if (ctx.situation && facts.location && chance(`situation:${seed}`) < 0.7)
    parts.push(`Since you're in ${facts.location}${facts.timeOfDay ? ` this ${facts.timeOfDay.toLowerCase()}` : ''}, I'll keep that in mind.`);
  // With past interactions, the assistant applies a known preference unprompted, some turns.
  const known = facts.preferences.flatMap(valuesOf);
  if (known.length && chance(`profile:${seed}`) < profileUse(ctx))
    parts.push(`Based on your past requests I've gone with ${known[pick(`value:${seed}`, known.length)]}.`);
  // Any assistant may take up what the user just said, about half the time.
  const stated = /my .+? is (.+)\.$/.exec(lastUser.trim())?.[1];
  if (stated && chance(`echo:${seed}`) < 0.5) parts.push(`I'll go with ${valuesOf(`x: ${stated}`)[0] ?? stated}.`);
  if (ctx.demographics) parts.push('I have tailored the suggestion to you.');
  const last = assistantTurns >= exchangesWanted(facts) - 1;
  if (assistantTurns === 0) parts.push('Could you confirm the details you want?');
  else if (!last) parts.push('I am checking the options now.');
  else parts.push(completes(facts, ctx, replicate) ? `${DONE} Anything else?` : `${FAILED}: the booking did not go through.`);
  return parts.join(' ');
}

/**
 * The simulated judge, in the output formats the judge prompts ask for. Task completed: the user ended
 * the dialogue after the assistant confirmed it done. Personalization: 1 + the distinct relevant
 * preference values the assistant brought up (up to 3), moved by one now and then (a judge is a noisy
 * rater). Naturalness and coherence: 1-5 around 4, a little lower for a dialogue that failed its task.
 */
function simulatedJudge(facts: SimulationFacts): string {
  const j = facts.judge!;
  const noise = (what: string) => [-1, 0, 0, 0, 1][pick(`${what}:${j.target}:${j.conversation}`, 5)]!;
  const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
  if (j.dimension === 'task_completion') {
    const done = j.terminated && j.conversation.includes(DONE) && !j.conversation.includes(FAILED);
    return `VERDICT: ${done ? 'True' : 'False'}\nEXPLANATION: (simulated judge) The assistant ${done ? 'confirmed the task done and the user ended the conversation satisfied' : 'never confirmed the task was done'}.`;
  }
  const preferencesUsed = (assistantText: string): number => {
    const text = assistantText.toLowerCase();
    return new Set(facts.preferences.flatMap(valuesOf).filter((v) => text.includes(v.toLowerCase()))).size;
  };
  if (j.dimension === 'personalization_chain') {
    // The same rule after each assistant turn, over the assistant's text up to that turn.
    const turns = j.assistantTurns ?? [j.assistantText];
    // Each turn's noise is keyed as the per-prefix judgment of that prefix is, so both methods agree.
    const prefixNoise = (i: number) => [-1, 0, 0, 0, 1][pick(`p:${j.target}:${j.prefixConversations?.[i] ?? j.conversation}`, 5)]!;
    const lines = turns.map(
      (_, i) => `Turn ${i + 1} Personalization Score: ${clamp(1 + Math.min(3, preferencesUsed(turns.slice(0, i + 1).join('\n'))) + prefixNoise(i), 1, 4)}`,
    );
    return `<response>\n${lines.join('\n')}\nJustification: (simulated judge) after each turn, 1 + preferences applied so far, capped at 4, give or take one.\n</response>`;
  }
  if (j.dimension === 'personalization') {
    const used = preferencesUsed(j.assistantText);
    const score = clamp(1 + Math.min(3, used) + noise('p'), 1, 4);
    return `<response>\nPersonalization Score: ${score}\nKey Observations: (simulated judge) the assistant used ${used} known preference value(s).\nJustification: (simulated judge) score = 1 + preferences applied, capped at 4, give or take one.\nImprovement Suggestions: apply more of what is known.\n</response>`;
  }
  const label = j.dimension === 'naturalness' ? 'Naturalness' : 'Coherence';
  const score = clamp(4 - (j.conversation.includes(FAILED) ? 1 : 0) + noise(j.dimension), 1, 5);
  return `${label} Score: ${score}\nJustification: (simulated judge) a fixed rule, not an assessment.`;
}
