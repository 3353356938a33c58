import { PlensError } from '../core/errors.js';
import type { LlmClient, CallOutcome } from '../llm/client.js';
import { LlmCallError } from '../llm/errors.js';
import type { ChatRequest, SimulationFacts } from '../llm/types.js';
import type { PromptSet } from './prompt-set.js';
import type { ScenarioContext, ScenarioRow } from './scenario-context.js';
import { PAPER_SAMPLING, ROUND_LIMITS, SETTINGS, TERMINATE, type Setting } from './settings.js';

export interface DialogueMessage {
  role: 'user' | 'assistant';
  content: string;
  input_tokens: number;
  output_tokens: number;
  latency_ms: number;
  finish_reason: string | null;
}

export interface CallEvent {
  turn: number;
  role: 'user' | 'assistant';
  model: string;
  outcome: CallOutcome | undefined;
  error: LlmCallError | undefined;
}

export interface ConversationResult {
  status: 'ok' | 'failed';
  end_reason: 'terminated' | 'round_limit' | null;
  rounds: number;
  messages: DialogueMessage[];
  error: { kind: string; message: string; status: number | null; turn: number } | null;
}

export interface ConversationAgents {
  user: LlmClient;
  assistant: LlmClient;
  prompts: PromptSet;
}

/** `[USER]: ...` / `[ASSISTANT]: ...` lines, as both agents and the judge see the conversation. */
export function renderConversation(messages: Array<{ role: string; content: string }>): string {
  return messages.map((m) => `[${m.role === 'user' ? 'USER' : 'ASSISTANT'}]: ${m.content}`).join('\n');
}

/**
 * Removes the marker wherever the user agent put it (end of message, own line, with punctuation),
 * with any Markdown emphasis, code ticks, quotes or brackets wrapped around it (`**TERMINATE**`).
 */
export function stripTerminate(text: string): { text: string; terminated: boolean } {
  const pattern = new RegExp(`\\s*[*_\`"'([<]*\\b${TERMINATE}\\b[*_\`"')\\]>]*[.!]*`, 'g');
  if (!pattern.test(text)) return { text, terminated: false };
  return { text: text.replace(pattern, '').trim(), terminated: true };
}

/**
 * One PersonaLens dialogue: the user agent opens, then the assistant and the user take turns
 * until the user appends TERMINATE (removed from the text; the assistant answers once more)
 * or the round limit is reached. An LLM failure ends the dialogue as failed, never as a result.
 */
export async function converse(
  scenario: ScenarioRow,
  context: ScenarioContext,
  setting: Setting,
  replicate: number,
  agents: ConversationAgents,
  signal: AbortSignal,
  onCall: (e: CallEvent) => void,
): Promise<ConversationResult> {
  const { prompts } = agents;
  const conf = SETTINGS[setting];
  const userSystem = prompts.render('user-system', {
    demographics: context.demographics,
    preferences: context.preferences,
    interactions: context.interactions,
    situation: context.situation,
    intent: context.intent,
  });
  const assistantSystem = prompts.render(conf.system, {});
  const facts: SimulationFacts = {
    scenarioId: scenario.scenario_id,
    kind: scenario.kind,
    intent: context.intent,
    preferences: context.relevantPreferences,
    location: scenario.location,
    timeOfDay: scenario.time_of_day,
    assistantContext: { demographics: conf.demographics, interactions: conf.interactions, situation: conf.situation },
  };
  const messages: DialogueMessage[] = [];
  const limit = ROUND_LIMITS[scenario.kind];
  let rounds = 0;

  const ask = async (role: 'user' | 'assistant', system: string, prompt: string): Promise<DialogueMessage> => {
    const client = role === 'user' ? agents.user : agents.assistant;
    const request: ChatRequest = {
      system,
      messages: [{ role: 'user', content: prompt }],
      params: client.params(PAPER_SAMPLING[role]),
      purpose: role,
      promptVersion: prompts.dialogueVersion,
      replicate,
      simulation: facts,
    };
    try {
      const outcome = await client.call(request, signal);
      onCall({ turn: messages.length, role, model: client.id, outcome, error: undefined });
      const r = outcome.response;
      return { role, content: r.text.trim(), input_tokens: r.usage.inputTokens, output_tokens: r.usage.outputTokens, latency_ms: outcome.latencyMs, finish_reason: r.finishReason };
    } catch (error) {
      if (error instanceof LlmCallError) onCall({ turn: messages.length, role, model: client.id, outcome: undefined, error });
      throw error;
    }
  };
  const assistantPrompt = () =>
    prompts.render('assistant-turn', {
      demographics: conf.demographics ? context.demographics : undefined,
      interactions: conf.interactions ? context.interactions || undefined : undefined,
      situation: conf.situation ? context.situation : undefined,
      conversation: renderConversation(messages),
    });

  try {
    // The opening message never ends the dialogue, even if the model wrote the marker.
    const first = await ask('user', userSystem, prompts.render('user-first-turn', { intent: context.intent }));
    messages.push({ ...first, content: stripTerminate(first.content).text });
    for (;;) {
      messages.push(await ask('assistant', assistantSystem, assistantPrompt()));
      rounds++;
      if (rounds >= limit) return { status: 'ok', end_reason: 'round_limit', rounds, messages, error: null };
      const reply = await ask('user', userSystem, prompts.render('user-turn', { conversation: renderConversation(messages) }));
      const { text, terminated } = stripTerminate(reply.content);
      // A reply that was only the marker adds no utterance; the assistant still answers once more.
      if (text) messages.push({ ...reply, content: text });
      if (terminated) {
        messages.push(await ask('assistant', assistantSystem, assistantPrompt()));
        rounds++;
        return { status: 'ok', end_reason: 'terminated', rounds, messages, error: null };
      }
    }
  } catch (error) {
    if (!(error instanceof LlmCallError)) throw error;
    // Replay exists to reproduce a finished run exactly: a miss stops the run rather than recording a failure.
    if (error.kind === 'cache_miss') throw new PlensError('E_CACHE_MISS', error.message, { hint: 'run with --cache on to call the endpoint for what is missing' });
    return {
      status: 'failed',
      end_reason: null,
      rounds,
      messages,
      error: { kind: error.kind === 'http' ? `http_${error.status}` : error.kind, message: error.message, status: error.status ?? null, turn: messages.length },
    };
  }
}
