import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../core/atomic.js';
import { assertOneImport, recordDataset } from '../../core/dataset-identity.js';
import { PlensError, usageError } from '../../core/errors.js';
import { sqlString } from '../../db/database.js';
import { runStage, type StageSummary, type WorkCost } from '../../engine/stage-runner.js';
import { CallCache } from '../../llm/call-cache.js';
import { LlmClient, type CallOutcome } from '../../llm/client.js';
import { LlmCallError } from '../../llm/errors.js';
import { isSimulator, parseModelSpec, unpriced } from '../../llm/model-spec.js';
import type { ChatMessage, ChatRequest, SamplingParams } from '../../llm/types.js';
import { compactPartition } from './compact.js';
import { renderConversation } from './conversation.js';
import { parseChainJudgment, parseJudgment, type JudgeDimension } from './judge-parse.js';
import { clientOptions, engineOptions, type LlmStageOptions } from './llm-stage-options.js';
import { originalScore } from './original-scoring.js';
import { PromptSet, type TemplateName } from './prompt-set.js';
import { ScenarioContextSource, type ScenarioContext, type ScenarioRow } from './scenario-context.js';

/**
 * What the judge scores. Paper Figure 5 both ways: `personalization_turns` scores each prefix
 * ending with an assistant turn (one call per turn); `personalization_chain` is the original's
 * "chain of turn" judgment (one call per dialogue, one score per assistant turn in one reply).
 */
export const JUDGE_DIMENSIONS = ['task_completion', 'personalization', 'naturalness', 'coherence', 'personalization_turns', 'personalization_chain'] as const;
export type JudgeDimensionName = (typeof JUDGE_DIMENSIONS)[number];
export const DEFAULT_DIMENSIONS: JudgeDimensionName[] = ['task_completion', 'personalization', 'naturalness', 'coherence'];

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

export const JUDGMENT_COLUMNS: Record<string, string> = {
  key: 'VARCHAR',
  try: 'INTEGER',
  status: 'VARCHAR',
  error: 'STRUCT(kind VARCHAR, message VARCHAR)',
  dialogue_id: 'VARCHAR',
  scenario_id: 'VARCHAR',
  user_id: 'VARCHAR',
  task_id: 'VARCHAR',
  kind: 'VARCHAR',
  setting: 'VARCHAR',
  assistant_model: 'VARCHAR',
  user_model: 'VARCHAR',
  dialogue_prompt_version: 'VARCHAR',
  replicate: 'INTEGER',
  relevant_domains: 'VARCHAR[]',
  dimension: 'VARCHAR',
  target: 'VARCHAR',
  turn: 'INTEGER',
  judge_model: 'VARCHAR',
  judge_temperature: 'DOUBLE',
  judge_max_tokens: 'INTEGER',
  judge_prompt_version: 'VARCHAR',
  simulated: 'BOOLEAN',
  verdict: 'BOOLEAN',
  score: 'INTEGER',
  /** personalization_chain: the score after each assistant turn, in order (score stays NULL). */
  turn_scores: 'INTEGER[]',
  /** The reply as the released gather script reads it (original-scoring.ts); NULL when the call failed. */
  original_score: 'INTEGER',
  justification: 'VARCHAR',
  raw: 'VARCHAR',
  reasked: 'BOOLEAN',
  input_tokens: 'INTEGER',
  output_tokens: 'INTEGER',
  cost_usd: 'DOUBLE',
};

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
  const dialogueFiles = options.dialogueDirs?.map((d) => join(d, 'dialogues.parquet'));
  const dialoguesSource = dialogueFiles ? `[${dialogueFiles.map(sqlString).join(', ')}]` : sqlString(join(options.workspace.root, 'dialogues', '*', 'dialogues.parquet'));
  // A cell folder without its Parquet (dialogues stopped before compacting) counts as no dialogues.
  const dialoguesDir = join(options.workspace.root, 'dialogues');
  const compacted = () => existsSync(dialoguesDir) && readdirSync(dialoguesDir, { withFileTypes: true }).some((e) => e.isDirectory() && existsSync(join(dialoguesDir, e.name, 'dialogues.parquet')));
  if (dialogueFiles ? dialogueFiles.length === 0 || !dialogueFiles.every((f) => existsSync(f)) : !compacted()) {
    throw new PlensError('E_PREREQUISITE', `no compacted dialogues in ${dialogueFiles?.find((f) => !existsSync(f)) ?? dialoguesDir}`, { hint: 'run `plens dialogues` first (it compacts each cell into dialogues.parquet when it ends)' });
  }
  assertOneImport(options.workspace, 'plens judge');
  const source = await ScenarioContextSource.open(options.workspace);
  // A dry run calls nothing: it neither opens nor creates the cache.
  const cache = CallCache.open(join(options.workspace.root, 'cache', 'llm'), options.dryRun ? 'off' : options.cache);
  const judge = LlmClient.create(spec, clientOptions(options, cache));
  const params = judge.params(JUDGE_SAMPLING);
  // The endpoint only when it is not the vendor's default, so judgments against it keep their keys.
  const identity = [judge.id, params.temperature, params.maxTokens, prompts.judgeVersion, ...(judge.endpoint ? [judge.endpoint] : [])];
  const hash = createHash('sha256').update(JSON.stringify(identity)).digest('hex');
  const dir = join(options.workspace.root, 'judgments', `${judge.id.replace(/[^A-Za-z0-9.+-]+/g, '_')}__${hash.slice(0, 8)}`);
  const runId = new Date().toISOString();
  const keyOf = (item: Item) =>
    createHash('sha256').update(JSON.stringify(['judgment-v1', item.dialogue.dialogue_id, item.dimension, item.target, item.turn, ...identity])).digest('hex').slice(0, 32);
  const rows = (): AsyncIterable<DialogueRow> =>
    source.stream<DialogueRow>(`
      SELECT d."key" AS dialogue_id, d.scenario_id, d.user_id, p.user_index, d.task_id, d.kind, d.setting, d.assistant_model, d.user_model,
             d.prompt_version, d.replicate, d.end_reason, d.messages, p.relevant_domains, p.relevant_preference_types,
             p.location, p.device, p.time_of_day, p.day_of_week, p.environment
      FROM read_parquet(${dialoguesSource}, union_by_name = true) d
      JOIN read_parquet(${sqlString(options.workspace.datasetFile('scenario_pool'))}) p USING (scenario_id)
      WHERE d.status = 'ok'`);

  try {
    if (!options.dryRun && !existsSync(join(dir, 'judge.json'))) {
      await writeFileAtomic(join(dir, 'judge.json'), JSON.stringify({ judge: judge.id, ...(judge.endpoint ? { endpoint: judge.endpoint } : {}), params, prompt_version: prompts.judgeVersion, prompt_sources: prompts.sources }, null, 2) + '\n');
      await recordDataset(dir, options.workspace);
    }
    const summary = await runStage<Item>(
      {
        stage: 'judge',
        items: async function* (forRun) {
          const stream = forRun ? source.withContext(rows()) : withoutContext(rows());
          for await (const { row, context } of stream) yield* expand(row, context, dimensions);
        },
        keyOf: (item) => ({ key: keyOf(item), dir }),
        run: async (item, ctx) => {
          const context = item.context ?? (await source.contextFor(item.dialogue));
          const cost: WorkCost = { calls: 0, cachedCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
          const count = (o: CallOutcome) => {
            ctx.event({
              run_id: runId,
              key: keyOf(item),
              turn: item.turn,
              role: `judge:${item.dimension}`,
              model: judge.id,
              status: 'ok',
              error_kind: null,
              cached: o.cached,
              attempts: o.attempts,
              latency_ms: o.latencyMs,
              input_tokens: o.response.usage.inputTokens,
              output_tokens: o.response.usage.outputTokens,
              cost_usd: o.cached ? 0 : o.costUsd,
              at: new Date().toISOString(),
            });
            cost.calls++;
            cost.cachedCalls += o.cached ? 1 : 0;
            if (!o.cached) {
              cost.inputTokens += o.response.usage.inputTokens;
              cost.outputTokens += o.response.usage.outputTokens;
              cost.costUsd += o.costUsd;
            }
          };
          const prompt = judgePrompt(prompts, item, context);
          const request = (messages: ChatMessage[]): ChatRequest => ({
            system: JUDGE_SYSTEM,
            messages,
            params,
            purpose: `judge:${item.dimension}`,
            promptVersion: prompts.judgeVersion,
            replicate: 0,
            simulation: {
              scenarioId: item.dialogue.scenario_id,
              intent: context.intent,
              preferences: context.relevantPreferences,
              judge: {
                dimension: item.dimension,
                target: item.target,
                terminated: item.dialogue.end_reason === 'terminated',
                assistantText: messagesFor(item).filter((m) => m.role === 'assistant').map((m) => m.content).join('\n'),
                assistantTurns: messagesFor(item).filter((m) => m.role === 'assistant').map((m) => m.content),
                // The chain's simulated scores equal what the per-prefix judge gives each prefix.
                ...(item.dimension === 'personalization_chain' ? { prefixConversations: assistantPrefixes(item.dialogue.messages).map(renderConversation) } : {}),
                conversation: renderConversation(messagesFor(item)),
              },
            },
          });
          const base = recordBase(item, judge.id, params, prompts.judgeVersion, isSimulator(spec));
          const assistantTurns = item.dialogue.messages.filter((m) => m.role === 'assistant').length;
          const parse = (text: string) => (item.dimension === 'personalization_chain' ? parseChainJudgment(text, assistantTurns) : parseJudgment(item.dimension, text));
          const original = (text: string) => (item.dimension === 'personalization_chain' ? null : originalScore(item.dimension, text));
          let outcome: CallOutcome;
          const outcomes: CallOutcome[] = [];
          try {
            outcome = await judge.call(request([{ role: 'user', content: prompt }]), ctx.signal);
            outcomes.push(outcome);
            count(outcome);
            let text = outcome.response.text;
            let parsed = parse(text);
            let reasked = false;
            if (!parsed.ok && options.reask) {
              reasked = true;
              const again = await judge.call(
                request([
                  { role: 'user', content: prompt },
                  { role: 'assistant', content: text },
                  { role: 'user', content: `Your answer could not be read (${parsed.error}). Answer again, following the output format given above exactly, with nothing else.` },
                ]),
                ctx.signal,
              );
              count(again);
              outcomes.push(again);
              text = again.response.text;
              parsed = parse(text);
            }
            const usage = { input_tokens: cost.inputTokens, output_tokens: cost.outputTokens, cost_usd: cost.costUsd };
            if (!parsed.ok) {
              // A reply that ends as a parse error is never served from the cache again: a rerun
              // with --retry-failed asks the judge anew.
              for (const o of outcomes) judge.reject(o);
              // Never a score: the raw reply is kept so it can be read, and rerun with --retry-failed.
              return { cost, record: { ...base, status: 'parse_error', error: { kind: 'parse_error', message: parsed.error }, verdict: null, score: null, turn_scores: null, original_score: original(text), justification: null, raw: text, reasked, ...usage } };
            }
            return {
              cost,
              record: {
                ...base,
                status: 'ok',
                error: null,
                verdict: parsed.dimension === 'task_completion' ? (parsed as { verdict: boolean }).verdict : null,
                score: parsed.dimension === 'personalization_chain' ? null : parsed.score,
                turn_scores: parsed.dimension === 'personalization_chain' ? parsed.scores : null,
                original_score: original(text),
                justification: parsed.justification,
                raw: null,
                reasked,
                ...usage,
              },
            };
          } catch (error) {
            if (!(error instanceof LlmCallError)) throw error;
            if (error.kind === 'cache_miss') throw new PlensError('E_CACHE_MISS', error.message, { hint: 'run with --cache on to call the judge for what is missing' });
            const kind = error.kind === 'http' ? `http_${error.status}` : error.kind;
            ctx.event({
              run_id: runId, key: keyOf(item), turn: item.turn, role: `judge:${item.dimension}`, model: judge.id, status: 'failed', error_kind: error.reason,
              cached: false, attempts: (error as { attempts?: number }).attempts ?? 1, latency_ms: null, input_tokens: null, output_tokens: null, cost_usd: null,
              at: new Date().toISOString(),
            });
            return { cost, record: { ...base, status: 'failed', error: { kind, message: error.message }, verdict: null, score: null, turn_scores: null, original_score: null, justification: null, raw: null, reasked: false, input_tokens: 0, output_tokens: 0, cost_usd: 0 } };
          }
        },
        durable: () => cache.committed(),
        estimate: (item) => {
          const chars = messagesFor(item).reduce((n, m) => n + m.content.length, 0) + 2500;
          // The chain-of-turn reply adds a score line per assistant turn.
          const usage = { inputTokens: Math.ceil(chars / 4), outputTokens: item.dimension === 'personalization_chain' ? 200 + 15 * item.dialogue.messages.filter((m) => m.role === 'assistant').length : 200 };
          return { calls: 1, cachedCalls: 0, ...usage, costUsd: judge.costOf(usage) };
        },
      },
      engineOptions(options),
    );
    const rowsWritten = options.dryRun || !existsSync(dir) ? null : (await compactPartition(dir, 'judgments', JUDGMENT_COLUMNS)).rows;
    return { ...summary, judge: judge.id, prompt_version: prompts.judgeVersion, simulated: isSimulator(spec), price_unknown: unpriced([spec]), dir, rows: rowsWritten };
  } finally {
    await judge.close();
    await cache.close();
    await source.close();
  }
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
      for (const m of dialogue.messages) if (m.role === 'assistant') yield { dialogue, context, dimension: 'personalization', target: 'assistant', turn: ++assistantTurn };
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
  return { demographics: c.demographicsWithId, preferences: c.preferences, intent: c.intent, interactions: c.interactions, situation: c.situation, conversation };
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

function recordBase(item: Item, judgeModel: string, params: SamplingParams, promptVersion: string, simulated: boolean) {
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
  const out = list.flatMap((d) => d.split(',')).map((d) => d.trim()).filter(Boolean);
  for (const d of out) if (!JUDGE_DIMENSIONS.includes(d as JudgeDimensionName)) throw usageError(`--dimensions: unknown "${d}"; use ${JUDGE_DIMENSIONS.join(', ')}`);
  return out as JudgeDimensionName[];
}
