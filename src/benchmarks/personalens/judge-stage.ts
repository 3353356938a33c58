import { PlensError, usageError } from '../../core/errors.js';
import { sqlString } from '../../db/database.js';
import { hashParts, LlmStageKit, partitionName, samplingIdentity, type LlmStageOptions } from '../../engine/llm-stage.js';
import { Partition } from '../../engine/partition.js';
import { runSingleCall, type Answer } from '../../engine/single-call.js';
import type { StageSummary } from '../../engine/stage-runner.js';
import { isSimulator, parseModelSpec } from '../../llm/model-spec.js';
import type { SimulationFacts } from '../../llm/sim.js';
import type { ChatRequest, SamplingParams } from '../../llm/types.js';
import { renderConversation } from './conversation.js';
import { parseChainJudgment, parseJudgment, type JudgeDimension, type ParsedChainJudgment, type ParsedJudgment } from './judge-parse.js';
import { originalScore } from './original-scoring.js';
import { DEFAULT_PROMPTS_DIR, PromptSet, type TemplateName } from './prompt-set.js';
import { datasetInputs } from './dataset-identity.js';
import {
  dialogueCell,
  dialoguesRoot,
  judgmentRecord,
  JUDGMENTS_FORMAT,
  judgmentsRoot,
  DIALOGUES_FORMAT,
  type JudgmentIdentity,
  type JudgmentOutcome,
} from './records.js';
import { ScenarioContextSource, type ScenarioContext, type ScenarioRow } from './scenario-context.js';

export { JUDGMENT_COLUMNS } from './records.js';

import { DEFAULT_DIMENSIONS, JUDGE_DIMENSIONS, type JudgeDimensionName } from './judge-dimensions.js';
import { datasetFile } from './dataset/workspace-files.js';

export { DEFAULT_DIMENSIONS, JUDGE_DIMENSIONS, type JudgeDimensionName };

/** The judge as the original calls it: temperature 0, 4000 output tokens. */
export const JUDGE_SAMPLING: SamplingParams = { temperature: 0, maxTokens: 4000 };

/** The original sends the judge no system prompt: an empty one. */
export const JUDGE_SYSTEM = '';

export interface JudgeOptions extends LlmStageOptions {
  judge: string;
  dimensions?: JudgeDimensionName[];
  /** Re-ask once, restating the format, when a reply does not parse. */
  reask?: boolean;
  /** Judge only these dialogue cells (folders holding dialogues.parquet); default every cell in the workspace. */
  dialogueDirs?: string[];
}

export interface JudgeSummary extends StageSummary {
  judge: string;
  prompt_version: string;
  simulated: boolean;
  /** The judge, when its spec gives no price: the cost estimate leaves it out. */
  price_unknown: string[];
  dir: string;
  rows: number | null;
}

interface DialogueRow extends ScenarioRow {
  dialogue_id: string;
  setting: string;
  assistant_model: string;
  user_model: string;
  prompt_version: string;
  replicate: number;
  end_reason: string;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
}

interface Item {
  dialogue: DialogueRow;
  context: ScenarioContext | undefined;
  dimension: JudgeDimension | 'personalization_chain';
  /** dialogue (task completion), user or assistant. */
  target: 'dialogue' | 'user' | 'assistant';
  /** For turn-level personalization: the assistant turn (1-based) the prefix ends with; else null. */
  turn: number | null;
}

const TEMPLATE: Record<JudgeDimension, TemplateName> = {
  task_completion: 'judge-task-completion',
  personalization: 'judge-personalization',
  naturalness: 'judge-naturalness',
  coherence: 'judge-coherence',
};

/** `plens judge`: the judge agent scores every finished dialogue on each dimension. */
export async function runJudge(options: JudgeOptions): Promise<JudgeSummary> {
  const spec = parseModelSpec(options.judge, '--judge');
  const dimensions = options.dimensions ?? DEFAULT_DIMENSIONS;
  const prompts = PromptSet.load(options.prompts);
  const root = dialoguesRoot(options.workspace);
  const cells = options.dialogueDirs?.map(dialogueCell);
  // A cell folder without its Parquet (dialogues stopped before compacting) counts as no dialogues.
  if (cells ? cells.length === 0 || !cells.every((c) => c.isCompacted()) : Partition.list(root, DIALOGUES_FORMAT, true).length === 0) {
    throw new PlensError('E_PREREQUISITE', `no compacted dialogues in ${cells?.find((c) => !c.isCompacted())?.outputFile ?? root}`, {
      hint: 'run `plens dialogues` first (it compacts each cell into dialogues.parquet when it ends)',
    });
  }
  const dialoguesSource = cells ? `[${cells.map((c) => sqlString(c.outputFile)).join(', ')}]` : sqlString(Partition.outputGlob(root, DIALOGUES_FORMAT));
  const runRecord = { benchmark: 'personalens', promptSources: [...(options.prompts ? [options.prompts] : []), DEFAULT_PROMPTS_DIR] };
  return LlmStageKit.with(
    { runRecord, inputs: datasetInputs(options.workspace), ...options },
    'plens judge',
    'run with --cache on to call the judge for what is missing',
    async (kit) => {
      const source = await ScenarioContextSource.open(options.workspace);
      kit.onClose(() => source.close());
      const judge = kit.client(spec, 'judge');
      const params = judge.params(JUDGE_SAMPLING);
      // The endpoint only when it is not the vendor's default, so judgments against it keep their keys.
      const identity = [judge.id, ...samplingIdentity(params), prompts.judgeVersion, ...(judge.endpoint ? [judge.endpoint] : [])];
      const partition = Partition.in(judgmentsRoot(options.workspace), partitionName([judge.id], identity), JUDGMENTS_FORMAT);
      const keyOf = (item: Item) => hashParts(['judgment-v1', item.dialogue.dialogue_id, item.dimension, item.target, item.turn, ...identity]);
      const simulated = isSimulator(spec);
      const rows = (): AsyncIterable<DialogueRow> =>
        source.stream<DialogueRow>(`
        SELECT d."key" AS dialogue_id, d.scenario_id, d.user_id, p.user_index, d.task_id, d.kind, d.setting, d.assistant_model, d.user_model,
               d.prompt_version, d.replicate, d.end_reason, d.messages, p.relevant_domains, p.relevant_preference_types,
               p.location, p.device, p.time_of_day, p.day_of_week, p.environment
        FROM read_parquet(${dialoguesSource}, union_by_name = true) d
        JOIN read_parquet(${sqlString(datasetFile(options.workspace, 'scenario_pool'))}) p USING (scenario_id)
        WHERE d.status = 'ok'`);
      await kit.describe(partition, 'judge.json', {
        judge: judge.id,
        ...(judge.endpoint ? { endpoint: judge.endpoint } : {}),
        params,
        prompt_version: prompts.judgeVersion,
        prompt_sources: prompts.sources,
      });
      const summary = await runSingleCall<Item, Judged>(kit, {
        stage: 'judge',
        items: async function* (forRun) {
          const stream = forRun ? source.withContext(rows()) : withoutContext(rows());
          for await (const { row, context } of stream) yield* expand(row, context, dimensions);
        },
        keyOf: (item) => ({ key: keyOf(item), partition }),
        client: () => judge,
        at: (item) => ({ turn: item.turn, role: `judge:${item.dimension}` }),
        request: async (item) => judgeRequest(prompts, item, item.context ?? (await source.contextFor(item.dialogue)), params),
        parse: (text, item) => {
          const parsed = item.dimension === 'personalization_chain' ? parseChainJudgment(text, assistantTurnCount(item)) : parseJudgment(item.dimension, text);
          return parsed.ok ? { ok: true, value: parsed } : { ok: false, error: parsed.error };
        },
        ...(options.reask
          ? {
              reask: (error: string) =>
                `Your answer could not be read (${error}). Answer again, following the output format given above exactly, with nothing else.`,
            }
          : {}),
        record: (item, answer, cost) =>
          judgmentRecord(
            judgmentIdentity(item, judge.id, params, prompts.judgeVersion, simulated),
            judgmentOutcome(item, answer, { input_tokens: cost.inputTokens, output_tokens: cost.outputTokens, cost_usd: cost.costUsd }),
          ),
        estimate: (item) => {
          const chars = messagesFor(item).reduce((n, m) => n + m.content.length, 0) + 2500;
          // The chain-of-turn reply adds a score line per assistant turn.
          const usage = {
            inputTokens: Math.ceil(chars / 4),
            outputTokens: item.dimension === 'personalization_chain' ? 200 + 15 * assistantTurnCount(item) : 200,
          };
          return { calls: 1, cachedCalls: 0, ...usage, costUsd: judge.costOf(usage) };
        },
      });
      return {
        ...summary,
        judge: judge.id,
        prompt_version: prompts.judgeVersion,
        simulated,
        price_unknown: kit.priceUnknown,
        dir: partition.dir,
        rows: await kit.compact(partition),
      };
    },
  );
}

type Judged = Exclude<ParsedJudgment | ParsedChainJudgment, { ok: false }>;

/** What the judgment record says for how the call ended: a value, an unreadable reply (kept raw, never a score), or a failure. */
function judgmentOutcome(item: Item, answer: Answer<Judged>, usage: Pick<JudgmentOutcome, 'input_tokens' | 'output_tokens' | 'cost_usd'>): JudgmentOutcome {
  const original = (text: string) => (item.dimension === 'personalization_chain' ? null : originalScore(item.dimension, text));
  const none = { verdict: null, score: null, turn_scores: null, justification: null };
  if (answer.status === 'failed')
    return { status: 'failed', error: answer.error, ...none, original_score: null, raw: null, reasked: false, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
  if (answer.status === 'parse_error')
    return { status: 'parse_error', error: answer.error, ...none, original_score: original(answer.text), raw: answer.text, reasked: answer.reasked, ...usage };
  const v = answer.value;
  return {
    status: 'ok',
    error: null,
    verdict: v.dimension === 'task_completion' ? v.verdict : null,
    score: v.dimension === 'personalization_chain' ? null : v.score,
    turn_scores: v.dimension === 'personalization_chain' ? v.scores : null,
    original_score: original(answer.text),
    justification: v.justification,
    raw: null,
    reasked: answer.reasked,
    ...usage,
  };
}

/** The judge's request for an item: the prompt alone, no system prompt; the simulator's facts ride along opaquely. */
function judgeRequest(prompts: PromptSet, item: Item, context: ScenarioContext, params: SamplingParams): ChatRequest {
  const shown = messagesFor(item);
  const assistantTurns = shown.filter((m) => m.role === 'assistant').map((m) => m.content);
  const simulation: SimulationFacts = {
    scenarioId: item.dialogue.scenario_id,
    intent: context.intent,
    preferences: context.relevantPreferences,
    judge: {
      dimension: item.dimension,
      target: item.target,
      terminated: item.dialogue.end_reason === 'terminated',
      assistantText: assistantTurns.join('\n'),
      assistantTurns,
      // The chain's simulated scores equal what the per-prefix judge gives each prefix.
      ...(item.dimension === 'personalization_chain' ? { prefixConversations: assistantPrefixes(item.dialogue.messages).map(renderConversation) } : {}),
      conversation: renderConversation(shown),
    },
  };
  return {
    system: JUDGE_SYSTEM,
    messages: [{ role: 'user', content: judgePrompt(prompts, item, context) }],
    params,
    purpose: `judge:${item.dimension}`,
    promptVersion: prompts.judgeVersion,
    replicate: 0,
    simulation,
  };
}

function assistantTurnCount(item: Item): number {
  return item.dialogue.messages.filter((m) => m.role === 'assistant').length;
}

/** One dialogue becomes one judgment per dimension and target (and per assistant turn for per-prefix personalization; one for the chain of turn). */
function* expand(dialogue: DialogueRow, context: ScenarioContext | undefined, dimensions: JudgeDimensionName[]): Generator<Item> {
  for (const d of dimensions) {
    if (d === 'task_completion') yield { dialogue, context, dimension: d, target: 'dialogue', turn: null };
    else if (d === 'personalization') yield { dialogue, context, dimension: d, target: 'assistant', turn: null };
    else if (d === 'naturalness' || d === 'coherence') {
      yield { dialogue, context, dimension: d, target: 'user', turn: null };
      yield { dialogue, context, dimension: d, target: 'assistant', turn: null };
    } else if (d === 'personalization_chain') {
      yield { dialogue, context, dimension: d, target: 'assistant', turn: null };
    } else {
      let assistantTurn = 0;
      for (const m of dialogue.messages)
        if (m.role === 'assistant') yield { dialogue, context, dimension: 'personalization', target: 'assistant', turn: ++assistantTurn };
    }
  }
}

/** Every prefix of a dialogue that ends with an assistant turn, in order. */
function assistantPrefixes(messages: Array<{ role: string; content: string }>): Array<Array<{ role: string; content: string }>> {
  return messages.flatMap((m, i) => (m.role === 'assistant' ? [messages.slice(0, i + 1)] : []));
}

/** The conversation the judge sees: all of it, or the prefix ending with the given assistant turn. */
function messagesFor(item: Item): Array<{ role: string; content: string }> {
  if (item.turn === null) return item.dialogue.messages;
  let seen = 0;
  const end = item.dialogue.messages.findIndex((m) => m.role === 'assistant' && ++seen === item.turn);
  return item.dialogue.messages.slice(0, end + 1);
}

/** What both personalization prompts show: the judge's copy of the demographics keeps the user_id line, as in the original. */
function personalizationView(c: ScenarioContext, conversation: string): Record<string, string | undefined> {
  return {
    demographics: c.demographicsWithId,
    preferences: c.preferences,
    intent: c.intent,
    interactions: c.interactions,
    situation: c.situation,
    conversation,
  };
}

function judgePrompt(prompts: PromptSet, item: Item, c: ScenarioContext): string {
  const conversation = renderConversation(messagesFor(item));
  switch (item.dimension) {
    case 'task_completion':
      return prompts.render(prompts.judgeTemplate(TEMPLATE.task_completion), { conversation, goal: c.goal });
    case 'personalization':
      return prompts.render(prompts.judgeTemplate(TEMPLATE.personalization), personalizationView(c, conversation));
    case 'personalization_chain':
      return prompts.render(prompts.judgeTemplate('judge-personalization-chain'), {
        ...personalizationView(c, conversation),
        assistant_turns: String(item.dialogue.messages.filter((m) => m.role === 'assistant').length),
      });
    default:
      return prompts.render(prompts.judgeTemplate(TEMPLATE[item.dimension], item.target), { conversation, speaker: item.target, user: item.target === 'user' });
  }
}

function judgmentIdentity(item: Item, judgeModel: string, params: SamplingParams, promptVersion: string, simulated: boolean): JudgmentIdentity {
  const d = item.dialogue;
  return {
    dialogue_id: d.dialogue_id,
    scenario_id: d.scenario_id,
    user_id: d.user_id,
    task_id: d.task_id,
    kind: d.kind,
    setting: d.setting,
    assistant_model: d.assistant_model,
    user_model: d.user_model,
    dialogue_prompt_version: d.prompt_version,
    replicate: d.replicate,
    relevant_domains: d.relevant_domains,
    dimension: item.dimension,
    target: item.target,
    turn: item.turn,
    judge_model: judgeModel,
    judge_temperature: params.temperature,
    judge_max_tokens: params.maxTokens,
    judge_prompt_version: promptVersion,
    simulated,
  };
}

async function* withoutContext<T>(rows: AsyncIterable<T>): AsyncGenerator<{ row: T; context: undefined }> {
  for await (const row of rows) yield { row, context: undefined };
}

export function parseDimensions(list: string[]): JudgeDimensionName[] {
  const out = list
    .flatMap((d) => d.split(','))
    .map((d) => d.trim())
    .filter(Boolean);
  for (const d of out)
    if (!JUDGE_DIMENSIONS.includes(d as JudgeDimensionName)) throw usageError(`--dimensions: unknown "${d}"; use ${JUDGE_DIMENSIONS.join(', ')}`);
  return out as JudgeDimensionName[];
}
