/**
 * PrefEval's two LLM stages, on the engine's LLM-stage kit: responses (the assistant under test
 * answers the preference, then the question after the filler turns) and checks (the judge's four
 * checks of each response). Keys, partitions, the call cache, resumption, spend caps and the run
 * record come from the kit.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { failureOf, hashParts, LlmStageKit, llmStageFormat, partitionName, samplingIdentity, type LlmStageOptions } from '../../engine/llm-stage.js';
import { Partition, type ColumnsOf, type PartitionFormat } from '../../engine/partition.js';
import type { StageOutput, StageSummary, WorkCost } from '../../engine/stage-runner.js';
import type { LlmClient } from '../../llm/client.js';
import { bedrockPromptFamily } from '../../llm/bedrock-models.js';
import { usageError } from '../../core/errors.js';
import { LlmCallError } from '../../llm/errors.js';
import { parseModelSpec, type ModelSpec } from '../../llm/model-spec.js';
import type { ChatMessage, ChatRequest, SamplingParams } from '../../llm/types.js';
import { interTurnMessages, readInterTurns, readTopic, type ExplicitTask, type Form } from './data.js';
import { checkText, questionText, revisionText, simulatedCheck, simulatedResponse, type Baseline } from './assembly.js';
import { OriginalTemplates, type TemplateFamily } from './chat-templates.js';
import { RetrievalError, type Retriever } from './rag.js';
import { MarkupRejected, readCheck, verdictOf, type Verdict } from './parse.js';
import { CHECKS, type Check, type PrefEvalPrompts } from './prompts.js';

/** The judge's settings in the original: temperature 0, 100 tokens. */
export const JUDGE_MAX_TOKENS = 100;
/** The self-critic's revision: the original lets it run to 500 tokens. */
export const SELF_CRITIC_REVISION_TOKENS = 500;
/** The version of plens's own PrefEval wording (part of every key made with it). */
export const PROMPT_VERSION = 'prefeval-plens-v1';

export const responsesRoot = (workspace: string) => join(workspace, 'prefeval', 'responses');
export const checksRoot = (workspace: string) => join(workspace, 'prefeval', 'checks');

/** What every row of a grid stage holds: the record, the run, RAG's retrieval, the preference's answer; then the stage's own fields, then the cost. */
export interface GridRecord {
  key: string;
  try: number;
  status: 'ok' | 'failed';
  error_kind: string | null;
  error: string | null;
  topic: string;
  form: string;
  task_index: number;
  preference: string;
  question: string;
  baseline: string;
  inter_turns: number;
  model: string;
  prompts: string;
  /** RAG: where the similarities came from (`original`, or the embeddings spec), and the exchanges retrieved (a JSON list); null otherwise. */
  retrieval: string | null;
  retrieved: string | null;
  /** Explicit: the model's answer to the stated preference. */
  response_to_pref: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

type Cost = 'input_tokens' | 'output_tokens' | 'cost_usd';

/** The columns every grid stage's rows start with (and GRID_COST_COLUMNS, which end them). */
export const GRID_COLUMNS: ColumnsOf<Omit<GridRecord, Cost>> = {
  key: 'VARCHAR',
  try: 'INTEGER',
  status: 'VARCHAR',
  error_kind: 'VARCHAR',
  error: 'VARCHAR',
  topic: 'VARCHAR',
  form: 'VARCHAR',
  task_index: 'INTEGER',
  preference: 'VARCHAR',
  question: 'VARCHAR',
  baseline: 'VARCHAR',
  inter_turns: 'INTEGER',
  model: 'VARCHAR',
  prompts: 'VARCHAR',
  retrieval: 'VARCHAR',
  retrieved: 'VARCHAR',
  response_to_pref: 'VARCHAR',
};
export const GRID_COST_COLUMNS: ColumnsOf<Pick<GridRecord, Cost>> = { input_tokens: 'INTEGER', output_tokens: 'INTEGER', cost_usd: 'DOUBLE' };

/** One answered question: a row of responses.parquet. */
export interface ResponseRecord extends GridRecord {
  /** Self-critic: the first (zero-shot) answer, and the model's critique of it; response_to_q is the revision. */
  zero_shot_response_to_q: string | null;
  self_critic: string | null;
  response_to_q: string | null;
}

const RESPONSE_COLUMNS: ColumnsOf<ResponseRecord> = {
  ...GRID_COLUMNS,
  zero_shot_response_to_q: 'VARCHAR',
  self_critic: 'VARCHAR',
  response_to_q: 'VARCHAR',
  ...GRID_COST_COLUMNS,
};

export const RESPONSES_FORMAT: PartitionFormat = llmStageFormat('responses', RESPONSE_COLUMNS, [
  'topic',
  'form',
  'task_index',
  'model',
  'baseline',
  'inter_turns',
]);

/** One judged response: a row of checks.parquet, the four answers and the original's error types. */
export interface CheckRecord extends Verdict {
  key: string;
  try: number;
  status: 'ok' | 'failed';
  error_kind: string | null;
  error: string | null;
  response_key: string;
  topic: string;
  form: string;
  task_index: number;
  baseline: string;
  inter_turns: number;
  model: string;
  judge_model: string;
  prompts: string;
  acknow: string | null;
  extract_pref: string | null;
  violate: string | null;
  violate_explanation: string | null;
  hallucinate: string | null;
  hallucinate_explanation: string | null;
  helpful: string | null;
  helpful_explanation: string | null;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

const VERDICT_COLUMNS = {
  acknowledgement: 'BOOLEAN',
  hallucination: 'BOOLEAN',
  violation: 'BOOLEAN',
  unhelpful: 'BOOLEAN',
  inconsistent: 'BOOLEAN',
  hallucination_of_preference_violation: 'BOOLEAN',
  preference_unaware_violation: 'BOOLEAN',
  follows_preference: 'BOOLEAN',
} as const;

const CHECK_COLUMNS: ColumnsOf<CheckRecord> = {
  key: 'VARCHAR',
  try: 'INTEGER',
  status: 'VARCHAR',
  error_kind: 'VARCHAR',
  error: 'VARCHAR',
  response_key: 'VARCHAR',
  topic: 'VARCHAR',
  form: 'VARCHAR',
  task_index: 'INTEGER',
  baseline: 'VARCHAR',
  inter_turns: 'INTEGER',
  model: 'VARCHAR',
  judge_model: 'VARCHAR',
  prompts: 'VARCHAR',
  acknow: 'VARCHAR',
  extract_pref: 'VARCHAR',
  violate: 'VARCHAR',
  violate_explanation: 'VARCHAR',
  hallucinate: 'VARCHAR',
  hallucinate_explanation: 'VARCHAR',
  helpful: 'VARCHAR',
  helpful_explanation: 'VARCHAR',
  ...VERDICT_COLUMNS,
  input_tokens: 'INTEGER',
  output_tokens: 'INTEGER',
  cost_usd: 'DOUBLE',
};

export const CHECKS_FORMAT: PartitionFormat = llmStageFormat('checks', CHECK_COLUMNS, ['response_key', 'judge_model']);

/** What the responses run over: the data, the grid, the wording. */
export interface GridOptions {
  /** A PrefEval checkout, or its benchmark_dataset folder. */
  data: string;
  topics: readonly string[];
  /** The preference forms: explicit, choice (implicit, choice-based), persona (implicit, persona-driven). */
  forms: readonly Form[];
  /** The first N preferences of each topic (all when absent). Not `limit`: that is the engine's cap on items. */
  perTopic?: number;
  baselines: readonly Baseline[];
  interTurns: readonly number[];
  wording: PrefEvalPrompts;
  /** RAG's similarity source as the pipeline names it (`original` or an embeddings spec): part of a RAG partition's identity. */
  retrieval?: string;
  /** `original`: each model gets the request the original sends its family (modelRequests); default chat. */
  requests?: 'chat' | 'original';
}

export interface ResponsesOptions extends Omit<LlmStageOptions, 'prompts' | 'limit'>, GridOptions {
  model: string;
  /** RAG's retriever (needed when baselines hold rag; a dry run needs none). */
  retriever?: Retriever;
}

export interface ChecksOptions extends Omit<LlmStageOptions, 'prompts' | 'limit'> {
  judge: string;
  /** The responses partitions to judge (their compacted responses.parquet). */
  responseDirs: readonly string[];
  wording: PrefEvalPrompts;
}

export interface PrefEvalSummary extends Omit<StageSummary, 'partitions'> {
  price_unknown: string[];
  partitions: Array<{ dir: string; rows: number | null }>;
}

interface ResponseItem {
  task: ExplicitTask;
  baseline: Baseline;
  interTurns: number;
  partition: Partition;
}

/**
 * How a grid item ended when it threw: a call that failed, a retrieval RAG could not make (the
 * original stops with an exception there), or a reply BeautifulSoup itself refuses (the original
 * stops too). Anything else is a defect and is thrown on.
 */
export function gridFailure(error: unknown): { status: 'failed'; error_kind: string; error: string } {
  if (error instanceof RetrievalError) return { status: 'failed', error_kind: 'retrieval', error: error.message };
  if (error instanceof MarkupRejected) return { status: 'failed', error_kind: 'unreadable', error: error.message };
  if (!(error instanceof LlmCallError)) throw error;
  const f = failureOf(error);
  return { status: 'failed', error_kind: f.kind, error: f.message };
}

/** The wording's version in keys and call events: plens's own, or the original's read from a checkout. */
export const promptVersionOf = (p: PrefEvalPrompts) => (p.source === 'plens' ? PROMPT_VERSION : 'prefeval-original');

/** The original's request families other than Claude's: Llama and Mistral on Bedrock (hand-built prompts), GPT and Gemini. */
type RequestFamily = TemplateFamily | 'gpt' | 'gemini';

/**
 * Under `requests: original`, the family whose requests the original sends this model: a Bedrock
 * Llama or Mistral model its hand-built prompt text (chat-templates.ts); a model on the openai
 * provider its Gemini requests when its name says gemini (the system prompt, no temperature, no
 * token limit), else its GPT requests (no system prompt but RAG's, no temperature, no token
 * limit). Undefined: the chat requests, as every model gets by default (the original's Claude path).
 */
function requestFamily(options: Pick<GridOptions, 'requests'>, spec: ModelSpec): RequestFamily | undefined {
  if (options.requests !== 'original') return undefined;
  if (spec.provider === 'openai') return /gemini/i.test(spec.model) ? 'gemini' : 'gpt';
  return spec.provider === 'bedrock' ? bedrockPromptFamily(spec.model) : undefined;
}

/** The baselines the original has a request for in a GPT or Gemini model's family, explicit preferences only (its run stops on the others). */
const CHAT_FAMILY_BASELINES: Record<'gpt' | 'gemini', readonly Baseline[]> = {
  gpt: ['zero-shot', 'remind', 'cot', 'rag'],
  gemini: ['zero-shot', 'remind', 'cot'],
};

/** How a model's requests are made in one task's stage under the grid's `requests` setting. */
export interface ModelRequests {
  /** Llama or Mistral on Bedrock: the original's hand-built prompt text (chat-templates.ts). */
  templates?: TemplateFamily;
  /** GPT or Gemini: chat requests shaped as the original sends the family (chatFamilyShaped). */
  chat?: 'gpt' | 'gemini';
  /** Part of the cells' partition identity: answers made this way are partitions of their own. */
  tag: string[];
}

/**
 * What a stage sends this model, and what it refuses before any call: a GPT or Gemini model under
 * `requests: original` where the original has no request for it (the implicit forms, the
 * baselines it lacks, the classification task), as its own run stops or never ends there.
 */
export function modelRequests(
  options: Pick<GridOptions, 'requests' | 'forms' | 'baselines'>,
  spec: ModelSpec,
  task: 'generation' | 'classification',
): ModelRequests {
  const family = requestFamily(options, spec);
  const tag = family ? [`requests:${family}`] : [];
  if (family !== 'gpt' && family !== 'gemini') return { ...(family ? { templates: family } : {}), tag };
  const missing =
    task === 'classification'
      ? ['the classification task']
      : [
          ...options.forms.filter((f) => f !== 'explicit').map((f) => `form ${f}`),
          ...options.baselines.filter((b) => !CHAT_FAMILY_BASELINES[family].includes(b)).map((b) => `baseline ${b}`),
        ];
  if (missing.length > 0)
    throw usageError(
      `prefeval.requests: original: the original has no ${family === 'gpt' ? 'GPT' : 'Gemini'} request for ${missing.join(', ')} (its run ${task === 'classification' ? 'retries forever' : 'stops with an error'} there)`,
      `leave those out for this model, or run ${task === 'classification' ? 'the classification task' : 'it'} with requests: chat (the Claude path, docs/prefeval.md)`,
    );
  return { chat: family, tag };
}

/**
 * A chat request as the original sends a GPT or Gemini model: the endpoint's sampling defaults; for
 * GPT the system prompt only where it sends one (RAG), for Gemini always (its system_instruction).
 */
function chatFamilyShaped(family: 'gpt' | 'gemini', request: ChatRequest, rag: boolean): ChatRequest {
  const system = family === 'gemini' || rag ? request.system : null;
  return { ...request, system, params: { ...request.params, providerDefaults: true } };
}

/**
 * A request of the grid's model: the assistant's system prompt, the stage's parameters, the
 * simulator's reply carried along; with `prompt` (requests: original, Llama and Mistral), the text
 * sent in place of the messages.
 */
export function gridRequest(
  p: PrefEvalPrompts,
  params: SamplingParams,
  messages: ChatMessage[],
  purpose: string,
  simulated: string,
  prompt?: string,
): ChatRequest {
  return {
    system: p.system,
    messages,
    ...(prompt !== undefined ? { prompt } : {}),
    params,
    purpose,
    promptVersion: promptVersionOf(p),
    replicate: 0,
    simulation: { reply: simulated },
  };
}

/** A request shaped as the original sends a GPT or Gemini model (`rag`: RAG's question), or as it is. */
export function shapedFor(requests: ModelRequests, request: ChatRequest, rag: boolean): ChatRequest {
  return requests.chat ? chatFamilyShaped(requests.chat, request, rag) : request;
}

/**
 * A stage's partitions over the grid: one per form, baseline and number of filler turns for a
 * model (RAG's also by its retrieval source), each made when first asked for.
 */
export class GridPartitions {
  private readonly partitions = new Map<string, Partition>();

  constructor(
    private readonly root: string,
    private readonly format: PartitionFormat,
    private readonly tag: readonly string[],
    private readonly clientId: string,
    private readonly wording: PrefEvalPrompts,
    private readonly retrieval: string | null,
    private readonly params: SamplingParams,
  ) {}

  of(form: Form, baseline: Baseline, interTurns: number): Partition {
    const name = this.nameOf(form, baseline, interTurns);
    let partition = this.partitions.get(name);
    if (!partition) {
      partition = Partition.in(this.root, name, this.format);
      this.partitions.set(name, partition);
    }
    return partition;
  }

  /** A cell's partition folder name: its labels, then a hash of everything that decides its records. */
  private nameOf(form: Form, baseline: Baseline, interTurns: number): string {
    const identity = [
      ...this.tag,
      this.clientId,
      form,
      baseline,
      interTurns,
      this.wording.source === 'plens' ? PROMPT_VERSION : 'original',
      ...(baseline === 'rag' ? [this.retrieval] : []),
      ...samplingIdentity(this.params),
    ];
    return partitionName([form, baseline, `${interTurns}turns`, this.clientId], identity);
  }

  /**
   * Refuses a run whose cells already hold this model's answers made with other settings (another
   * wording, requests or retrieval: the same labels, another identity). The warehouse
   * pools every partition of the workspace, so the two would be counted as one cell.
   */
  refuseOtherSettings(o: Pick<GridOptions, 'forms' | 'baselines' | 'interTurns'>): void {
    const present = existsSync(this.root) ? readdirSync(this.root) : [];
    const prefix = (name: string) => name.slice(0, name.lastIndexOf('__'));
    const clashes: string[] = [];
    for (const form of o.forms)
      for (const baseline of o.baselines)
        for (const turns of o.interTurns) {
          const name = this.nameOf(form, baseline, turns);
          clashes.push(...present.filter((other) => other !== name && prefix(other) === prefix(name)).map((other) => join(this.root, other)));
        }
    if (clashes.length > 0)
      throw usageError(
        `prefeval: ${clashes.length === 1 ? 'this folder holds' : `${clashes.length} folders hold`} ${this.clientId}'s answers for cells of this run made with other settings (prompts, requests or retrieval): ${clashes.slice(0, 3).join(', ')}${clashes.length > 3 ? ', ...' : ''}; the warehouse pools every folder there, so the two would count as one`,
        'move those folders out of the workspace to keep them, or run this pipeline in another workspace (-w)',
      );
  }

  /** The grid's items: every task at every baseline and turn count, in that order. */
  items<T extends { form: Form }>(
    o: Pick<GridOptions, 'baselines' | 'interTurns'>,
    tasks: readonly T[],
  ): Array<{ task: T; baseline: Baseline; interTurns: number; partition: Partition }> {
    return o.baselines.flatMap((baseline) =>
      o.interTurns.flatMap((interTurns) => tasks.map((task) => ({ task, baseline, interTurns, partition: this.of(task.form, baseline, interTurns) }))),
    );
  }

  /** Compacts every partition the run made; their row counts. */
  async compactAll(kit: LlmStageKit): Promise<PrefEvalSummary['partitions']> {
    const rows: PrefEvalSummary['partitions'] = [];
    for (const partition of this.partitions.values()) rows.push({ dir: partition.dir, rows: await kit.compact(partition) });
    return rows;
  }
}

/** The tasks of the grid's topics, each topic's first `limit`. */
export function gridTasks(o: Pick<GridOptions, 'data' | 'topics' | 'forms' | 'perTopic'>): ExplicitTask[] {
  return o.forms.flatMap((form) =>
    o.topics.flatMap((topic) => {
      const tasks = readTopic(o.data, topic, form);
      return o.perTopic === undefined ? tasks : tasks.slice(0, o.perTopic);
    }),
  );
}

/** Expected tokens of a call: about 4 characters a token. */
const tokens = (chars: number) => Math.ceil(chars / 4);

/** `plens prefeval responses` / make's responses step: per task, the preference's answer, then the question's. */
export async function runPrefEvalResponses(options: ResponsesOptions): Promise<PrefEvalSummary> {
  const spec = parseModelSpec(options.model, 'prefeval.models');
  const tasks = gridTasks(options);
  const filler = readInterTurns(options.data);
  const fillers = new Map(options.interTurns.map((n) => [n, interTurnMessages(filler, n)]));
  const p = options.wording;
  const runRecord = { benchmark: 'prefeval', promptSources: [options.data] };
  return LlmStageKit.with({ runRecord, ...options }, 'plens prefeval responses', 'run with --cache on to call the model for what is missing', async (kit) => {
    const client = kit.client(spec, 'assistant');
    const params = client.params({ temperature: 0, maxTokens: p.maxGenTokens });
    // The original's self-critic revision may run to 500 tokens.
    const revisionParams = client.params({ temperature: 0, maxTokens: SELF_CRITIC_REVISION_TOKENS });
    const retrieval = options.retrieval ?? null;
    // The original's requests for this model's family (its answers are another partition's).
    const requests = modelRequests(options, spec, 'generation');
    const family = requests.templates;
    const grid = new GridPartitions(responsesRoot(options.workspace.root), RESPONSES_FORMAT, requests.tag, client.id, p, retrieval, params);
    grid.refuseOtherSettings(options);
    const items = (): ResponseItem[] => grid.items(options, tasks);
    const request = (messages: ChatMessage[], purpose: string, simulated: string, prompt?: string): ChatRequest =>
      gridRequest(p, params, messages, purpose, simulated, prompt);
    const shaped = (r: ChatRequest, rag: boolean): ChatRequest => shapedFor(requests, r, rag);
    const summary = await kit.run<ResponseItem>({
      stage: 'prefeval-responses',
      items: async function* () {
        yield* items();
      },
      keyOf: (item) => ({
        key: hashParts([
          'prefeval-response-v1',
          item.task.topic,
          item.task.form,
          item.task.index,
          item.task.preference,
          item.task.question,
          item.partition.dir,
        ]),
        partition: item.partition,
      }),
      estimate: (item) => estimateResponse(item, fillers.get(item.interTurns)!, p, client),
      run: async (item, calls) => {
        const base = { ...responseBase(item, client.id, p.source), retrieval: item.baseline === 'rag' ? retrieval : null };
        try {
          // Explicit: the preference is said, and answered, first. Implicit: the conversation that reveals it.
          let opening: ChatMessage[];
          let responseToPref: string | null = null;
          if (item.task.conversation === null) {
            const first: ChatMessage[] = [{ role: 'user', content: item.task.preference }];
            const prefPrompt = family ? OriginalTemplates.preference(family, p.system, item.task.preference) : undefined;
            const pref = await calls.call(
              client,
              shaped(request(first, 'prefeval:preference', simulatedResponse(item.task, 'preference', null), prefPrompt), false),
              {
                turn: 0,
                role: 'assistant',
              },
            );
            responseToPref = pref.response.text;
            opening = [...first, { role: 'assistant', content: responseToPref }];
          } else opening = item.task.conversation;
          const selfCritic = item.baseline === 'selfcritic';
          const first = responseToPref === null ? 0 : 1;
          let retrieved: string[] = [];
          if (item.baseline === 'rag') {
            if (!options.retriever) throw new RetrievalError('no retriever for the rag baseline');
            const t = item.task;
            retrieved =
              t.conversation === null
                ? await options.retriever.explicit(t, responseToPref!, item.interTurns, filler, calls.signal)
                : await options.retriever.implicit({ ...t, conversation: t.conversation }, item.interTurns, filler, calls.signal);
            base.retrieved = JSON.stringify(retrieved);
          }
          // Self-critic answers first as zero-shot does (the same request: the cache shares it).
          const question = questionText(item.task.question, selfCritic ? 'zero-shot' : item.baseline, p, retrieved);
          const context: ChatMessage[] = [...opening, ...fillers.get(item.interTurns)!];
          const templates = family
            ? new OriginalTemplates(family, {
                system: p.system,
                opening: responseToPref === null ? { conversation: opening } : { preference: item.task.preference, responseToPref },
                filler: fillers.get(item.interTurns)!,
              })
            : undefined;
          const answer = await calls.call(
            client,
            shaped(
              request(
                [...context, { role: 'user', content: question }],
                'prefeval:question',
                simulatedResponse(item.task, selfCritic ? 'zero-shot' : item.baseline, item.interTurns),
                templates?.question(question, item.baseline === 'rag'),
              ),
              item.baseline === 'rag',
            ),
            { turn: first, role: 'assistant' },
          );
          if (!selfCritic)
            return { ...base, status: 'ok', response_to_pref: responseToPref, response_to_q: answer.response.text, ...costOf(calls.cost) } as StageOutput;
          // The critique and the revision see the question as asked (no word-limit cue), then the answer.
          const critiqued: ChatMessage[] = [
            ...context,
            { role: 'user', content: item.task.question },
            { role: 'assistant', content: answer.response.text },
            { role: 'user', content: p.critique },
          ];
          const critic = await calls.call(
            client,
            request(
              critiqued,
              'prefeval:critique',
              'Critic: the answer could use my stated preference more.',
              templates?.critique(item.task.question, answer.response.text, p.critique),
            ),
            { turn: first + 1, role: 'assistant' },
          );
          const revisionRequest = revisionText(p, item.task.question);
          const revision = await calls.call(
            client,
            {
              ...request(
                [...critiqued, { role: 'assistant', content: critic.response.text }, { role: 'user', content: revisionRequest }],
                'prefeval:revision',
                simulatedResponse(item.task, 'selfcritic', item.interTurns),
                templates?.revision(item.task.question, answer.response.text, p.critique, critic.response.text, revisionRequest),
              ),
              params: revisionParams,
            },
            { turn: first + 2, role: 'assistant' },
          );
          return {
            ...base,
            status: 'ok',
            response_to_pref: responseToPref,
            zero_shot_response_to_q: answer.response.text,
            self_critic: critic.response.text,
            response_to_q: revision.response.text,
            ...costOf(calls.cost),
          } as StageOutput;
        } catch (error) {
          return { ...base, ...gridFailure(error), ...costOf(calls.cost) } as unknown as StageOutput;
        }
      },
    });
    return { ...summary, price_unknown: kit.priceUnknown, partitions: await grid.compactAll(kit) };
  });
}

function responseBase(item: ResponseItem, model: string, prompts: string) {
  return {
    status: 'ok',
    error_kind: null,
    error: null,
    topic: item.task.topic,
    form: item.task.form,
    task_index: item.task.index,
    preference: item.task.preference,
    question: item.task.question,
    baseline: item.baseline,
    inter_turns: item.interTurns,
    model,
    prompts,
    retrieval: null as string | null,
    retrieved: null as string | null,
    response_to_pref: null,
    zero_shot_response_to_q: null,
    self_critic: null,
    response_to_q: null,
  };
}

export const costOf = (c: WorkCost) => ({ input_tokens: c.inputTokens, output_tokens: c.outputTokens, cost_usd: c.costUsd });

/** Explicit: two calls, the preference alone, then the whole conversation; implicit: the whole conversation once. Most of it is the filler at 300 turns. */
function estimateResponse(item: ResponseItem, filler: readonly ChatMessage[], p: PrefEvalPrompts, client: LlmClient): WorkCost {
  const chars = (ms: readonly ChatMessage[]) => ms.reduce((n, m) => n + m.content.length, 0);
  // RAG: about 200 tokens for each of the 5 exchanges put before the question.
  const question =
    questionText(item.task.question, item.baseline === 'rag' ? 'zero-shot' : item.baseline, p) + (item.baseline === 'rag' ? ' '.repeat(4 * 1000) : '');
  const explicit = item.task.conversation === null;
  const opening = explicit ? tokens(item.task.preference.length) + p.maxGenTokens : tokens(chars(item.task.conversation!));
  const last = { inputTokens: tokens(p.system.length + chars(filler) + question.length) + opening, outputTokens: p.maxGenTokens };
  const first = explicit
    ? { inputTokens: tokens(p.system.length + item.task.preference.length), outputTokens: p.maxGenTokens }
    : { inputTokens: 0, outputTokens: 0 };
  // Self-critic: the critique and the revision each see the conversation again, with the answer and what follows.
  const extra =
    item.baseline === 'selfcritic'
      ? { calls: 2, inputTokens: 2 * last.inputTokens + 3 * p.maxGenTokens, outputTokens: p.maxGenTokens + SELF_CRITIC_REVISION_TOKENS }
      : { calls: 0, inputTokens: 0, outputTokens: 0 };
  const usage = {
    inputTokens: first.inputTokens + last.inputTokens + extra.inputTokens,
    outputTokens: first.outputTokens + last.outputTokens + extra.outputTokens,
  };
  return { calls: (explicit ? 2 : 1) + extra.calls, cachedCalls: 0, ...usage, costUsd: client.costOf(usage) };
}

interface CheckItem {
  response: ResponseRecord;
  partition: Partition;
}

/** `plens prefeval checks` / make's checks step: the judge's four checks of each answered question, in the original's order. */
export async function runPrefEvalChecks(options: ChecksOptions, responses: readonly ResponseRecord[]): Promise<PrefEvalSummary> {
  const spec = parseModelSpec(options.judge, 'prefeval.judge');
  const p = options.wording;
  const runRecord = { benchmark: 'prefeval', promptSources: [] };
  return LlmStageKit.with({ runRecord, ...options }, 'plens prefeval checks', 'run with --cache on to call the judge for what is missing', async (kit) => {
    const client = kit.client(spec, 'judge');
    const params = client.params({ temperature: 0, maxTokens: JUDGE_MAX_TOKENS });
    const identity = [client.id, p.source === 'plens' ? PROMPT_VERSION : 'original', ...samplingIdentity(params)];
    const partition = Partition.in(checksRoot(options.workspace.root), partitionName([client.id], identity), CHECKS_FORMAT);
    const items = (): CheckItem[] => responses.filter((r) => r.status === 'ok' && r.response_to_q !== null).map((response) => ({ response, partition }));
    const summary = await kit.run<CheckItem>({
      stage: 'prefeval-checks',
      items: async function* () {
        yield* items();
      },
      keyOf: (item) => ({ key: hashParts(['prefeval-check-v1', item.response.key, item.response.response_to_q, partition.dir]), partition }),
      estimate: (item) => {
        const chars = CHECKS.reduce((n, c) => n + p.checks[c].length, 0) + 3 * (item.response.response_to_q?.length ?? 0) + 4 * p.judgeSystem.length;
        const usage = { inputTokens: tokens(chars), outputTokens: 4 * JUDGE_MAX_TOKENS };
        return { calls: 4, cachedCalls: 0, ...usage, costUsd: client.costOf(usage) };
      },
      run: async (item, calls) => {
        const r = item.response;
        const base = {
          status: 'ok' as const,
          error_kind: null,
          error: null,
          response_key: r.key,
          topic: r.topic,
          form: r.form,
          task_index: r.task_index,
          baseline: r.baseline,
          inter_turns: r.inter_turns,
          model: r.model,
          judge_model: client.id,
          prompts: p.source,
        };
        const answers: Partial<Record<Check, ReturnType<typeof readCheck>>> = {};
        try {
          for (const [turn, check] of CHECKS.entries()) {
            const text = checkText(check, p, {
              preference: r.preference,
              question: r.question,
              end_generation: r.response_to_q!,
              assistant_restatement: answers.acknow?.extract_pref ?? '',
            });
            const outcome = await calls.call(
              client,
              {
                system: p.judgeSystem,
                messages: [{ role: 'user', content: text }],
                params,
                purpose: `prefeval:${check}`,
                promptVersion: promptVersionOf(p),
                replicate: 0,
                simulation: { reply: simulatedCheck(check, r) },
              },
              { turn, role: `judge:${check}` },
            );
            answers[check] = readCheck(check, outcome.response.text);
          }
        } catch (error) {
          return { ...base, ...emptyChecks(), ...gridFailure(error), ...costOf(calls.cost) } as unknown as StageOutput;
        }
        const verdict = verdictOf(Object.fromEntries(CHECKS.map((c) => [c, answers[c]!.answer])));
        return {
          ...base,
          acknow: answers.acknow!.answer,
          extract_pref: answers.acknow!.extract_pref,
          violate: answers.violate!.answer,
          violate_explanation: answers.violate!.explanation,
          hallucinate: answers.hallucinate!.answer,
          hallucinate_explanation: answers.hallucinate!.explanation,
          helpful: answers.helpful!.answer,
          helpful_explanation: answers.helpful!.explanation,
          ...verdict,
          ...costOf(calls.cost),
        } as unknown as StageOutput;
      },
    });
    return { ...summary, price_unknown: kit.priceUnknown, partitions: [{ dir: partition.dir, rows: await kit.compact(partition) }] };
  });
}

function emptyChecks() {
  return {
    acknow: null,
    extract_pref: null,
    violate: null,
    violate_explanation: null,
    hallucinate: null,
    hallucinate_explanation: null,
    helpful: null,
    helpful_explanation: null,
    ...Object.fromEntries(Object.keys(VERDICT_COLUMNS).map((k) => [k, null])),
  };
}

/** The answered questions of the responses partitions, as compacted (the latest try of each key). */
export async function readResponses(dirs: readonly string[]): Promise<ResponseRecord[]> {
  const out: ResponseRecord[] = [];
  for (const dir of dirs) {
    const latest = await new Partition(dir, RESPONSES_FORMAT).latest<ResponseRecord>();
    out.push(...latest.values());
  }
  return out;
}
