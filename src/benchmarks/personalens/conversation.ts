import { failureOf, type CallRecorder } from '../../engine/llm-stage.js';
import type { LlmClient } from '../../llm/client.js';
import { bedrockConverseTakesSystem } from '../../llm/bedrock-models.js';
import { LlmCallError } from '../../llm/errors.js';
import type { SimulationFacts } from '../../llm/sim.js';
import type { ChatRequest } from '../../llm/types.js';
import { pythonLstrip, pythonStrip } from '../../core/python-whitespace.js';
import { defaultPromptStyle, type PromptSet, type PromptStyle } from './prompt-set.js';
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
  /** The assistant's prompt style (default: from its model name, as the original chooses). */
  assistantStyle?: PromptStyle;
}

/** `[USER]: ...` / `[ASSISTANT]: ...` lines: how the user agent and the judge see the conversation. */
export function renderConversation(messages: Array<{ role: string; content: string }>): string {
  return messages.map((m) => `[${m.role === 'user' ? 'USER' : 'ASSISTANT'}]: ${m.content}`).join('\n');
}

/** `User: ...` / `Assistant: ...` lines: how the assistant under test sees it. */
export function renderAssistantHistory(messages: Array<{ role: string; content: string }>): string {
  return messages.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${m.content}`).join('\n');
}

/**
 * The original's check: a reply holding the marker anywhere (even inside a longer word) ends the
 * dialogue; every occurrence is removed, the text around it left as it was, and the ends stripped.
 * A reply that was only the marker becomes an empty message.
 */
export function stripTerminate(text: string): { text: string; terminated: boolean } {
  if (!text.includes(TERMINATE)) return { text, terminated: false };
  return { text: pythonStrip(text.split(TERMINATE).join('')), terminated: true };
}

/**
 * How a reply is stored, as the original does per model family: Claude replies (the XML prompt
 * style) as returned, Llama and Mistral replies (the Markdown style) without leading whitespace.
 */
export function storedReply(text: string, style: PromptStyle): string {
  return style === 'xml' ? text : pythonLstrip(text);
}

/** What the user agent's templates are filled with: the whole profile in every prompt (its system prompt carries no data). */
export function userAgentView(context: ScenarioContext, conversation: string): Record<string, string> {
  return {
    demographics: context.demographics,
    preferences: context.preferences,
    interactions: context.interactions,
    situation: context.situation,
    intent: context.intent,
    conversation,
  };
}

/** What the assistant's turn template is filled with: the context blocks its setting enables, and the history in its own form. */
export function assistantTurnView(
  setting: Setting,
  context: ScenarioContext,
  messages: Array<{ role: string; content: string }>,
): Record<string, string | boolean | undefined> {
  const conf = SETTINGS[setting];
  return {
    // A block the setting enables is always filled (Python-format templates need the value, even empty).
    demographics: conf.demographics ? context.demographics : undefined,
    interactions: conf.interactions ? context.interactions : undefined,
    situation: conf.situation ? context.situation : undefined,
    conversation: renderAssistantHistory(messages),
    guidelines: setting !== 'vanilla',
    // The original's Base turn prompt has an empty instruction section.
    instruction: setting !== 'base',
  };
}

/**
 * One PersonaLens dialogue as the original runs it: the user agent opens (the opening is never
 * checked for the marker), then up to the round limit the assistant answers and the user replies.
 * A reply with TERMINATE gets one final assistant answer and ends the dialogue; a dialogue that
 * runs out of rounds ends on the user's message (41 messages for SD, 61 for MD). An LLM failure
 * ends the dialogue as failed, never as a result.
 */
export async function converse(
  scenario: ScenarioRow,
  context: ScenarioContext,
  setting: Setting,
  replicate: number,
  agents: ConversationAgents,
  calls: CallRecorder,
): Promise<ConversationResult> {
  const { prompts } = agents;
  const style = agents.assistantStyle ?? defaultPromptStyle(agents.assistant.spec.model);
  const userStyle = defaultPromptStyle(agents.user.spec.model);
  const { userView, userSystem, requestOf } = conversationSetup(scenario, context, setting, replicate, agents);
  const assistantSystem = prompts.render(prompts.assistantSystemTemplate(setting, style), {});
  const assistantTurn = prompts.assistantTurnTemplate(setting, style);
  const messages: DialogueMessage[] = [];
  const limit = ROUND_LIMITS[scenario.kind];
  let rounds = 0;

  const ask = async (role: 'user' | 'assistant', system: string, prompt: string): Promise<DialogueMessage> => {
    const request = requestOf(role, system, prompt);
    // The recorder writes the call's event and counts its cost; a replay miss stops the run.
    const outcome = await calls.call(role === 'user' ? agents.user : agents.assistant, request, { turn: messages.length, role });
    const r = outcome.response;
    return {
      role,
      content: storedReply(r.text, role === 'user' ? userStyle : style),
      input_tokens: r.usage.inputTokens,
      output_tokens: r.usage.outputTokens,
      latency_ms: outcome.latencyMs,
      finish_reason: r.finishReason,
    };
  };
  // Each turn's prompts differ only in the conversation: the rest is rendered once per dialogue
  // (at its first use, so a template that cannot render fails where it always did).
  let assistantTurnPrompt: ((conversation: string) => string) | undefined;
  let userTurnPrompt: ((conversation: string) => string) | undefined;
  const assistantPrompt = () =>
    (assistantTurnPrompt ??= prompts.renderer(assistantTurn, assistantTurnView(setting, context, []), 'conversation'))(renderAssistantHistory(messages));
  const userPrompt = () =>
    (userTurnPrompt ??= prompts.renderer(prompts.userTemplate('user-turn', scenario.kind), userView(''), 'conversation'))(renderConversation(messages));

  try {
    // The opening message is stored as written: the original never checks it for the marker.
    messages.push(await ask('user', userSystem, prompts.render(prompts.userTemplate('user-first-turn', scenario.kind), userView(''))));
    for (;;) {
      messages.push(await ask('assistant', assistantSystem, assistantPrompt()));
      rounds++;
      const reply = await ask('user', userSystem, userPrompt());
      const { text, terminated } = stripTerminate(reply.content);
      // A reply that was only the marker stays as an empty user message, as in the original.
      messages.push({ ...reply, content: text });
      if (terminated) {
        messages.push(await ask('assistant', assistantSystem, assistantPrompt()));
        rounds++;
        return { status: 'ok', end_reason: 'terminated', rounds, messages, error: null };
      }
      if (rounds >= limit) return { status: 'ok', end_reason: 'round_limit', rounds, messages, error: null };
    }
  } catch (error) {
    if (!(error instanceof LlmCallError)) throw error;
    return { status: 'failed', end_reason: null, rounds, messages, error: { ...failureOf(error), status: error.status ?? null, turn: messages.length } };
  }
}

/** What every request of one dialogue shares: the user agent's view and system prompt, and how a request is built. */
function conversationSetup(scenario: ScenarioRow, context: ScenarioContext, setting: Setting, replicate: number, agents: ConversationAgents) {
  const { prompts } = agents;
  const conf = SETTINGS[setting];
  const userView = (conversation: string) => userAgentView(context, conversation);
  const userSystem = prompts.render(prompts.userTemplate('user-system', scenario.kind), userView(''));
  const facts: SimulationFacts = {
    scenarioId: scenario.scenario_id,
    kind: scenario.kind,
    intent: context.intent,
    preferences: context.relevantPreferences,
    location: scenario.location,
    timeOfDay: scenario.time_of_day,
    assistantContext: { demographics: conf.demographics, interactions: conf.interactions, situation: conf.situation },
  };
  const completion = mistralCompletion(agents.assistant);
  const requestOf = (role: 'user' | 'assistant', system: string, prompt: string): ChatRequest => ({
    system,
    messages: [{ role: 'user', content: prompt }],
    ...(role === 'assistant' && completion ? { prompt: completion(system, prompt) } : {}),
    params: (role === 'user' ? agents.user : agents.assistant).params(PAPER_SAMPLING[role]),
    purpose: role,
    promptVersion: prompts.dialogueVersion,
    replicate,
    simulation: facts,
  });
  return { userView, userSystem, requestOf };
}

/**
 * The completion prompt an assistant is sent instead of a chat request, when it has one: a Bedrock
 * Mistral model whose Converse API takes no system prompt (Mistral 7B and Mixtral 8x7B Instruct,
 * two of the paper's assistants) gets the original's own layout, its system prompt and turn prompt
 * inside one instruction, through InvokeModel, as the original sends it.
 */
function mistralCompletion(assistant: LlmClient): ((system: string, prompt: string) => string) | undefined {
  const { provider, model } = assistant.spec;
  // Only Mistral models lack a system prompt through Converse (bedrock-models.ts).
  if (provider !== 'bedrock' || bedrockConverseTakesSystem(model)) return undefined;
  return (system, prompt) => `<s>[INST]${system}${prompt}[/INST]`;
}

/** The dialogue's first request (the user agent's opening), exactly as converse() sends it: what a spend cap prices before the dialogue starts. */
export function openingRequest(scenario: ScenarioRow, context: ScenarioContext, setting: Setting, replicate: number, agents: ConversationAgents): ChatRequest {
  const { userView, userSystem, requestOf } = conversationSetup(scenario, context, setting, replicate, agents);
  return requestOf('user', userSystem, agents.prompts.render(agents.prompts.userTemplate('user-first-turn', scenario.kind), userView('')));
}
