/**
 * PrefEval's classification (MCQ) task on the engine's LLM-stage kit: after the preference (stated
 * and answered, or revealed in a conversation) and the filler turns, the question with four
 * options, shuffled as the original shuffles them; the model's answer is read for its letter and
 * compared with where the option that follows the preference landed. No judge: the letter is the
 * score. Keys, partitions, the call cache, resumption, spend caps and the run record come from the
 * kit.
 */
import { join } from 'node:path';
import { hashParts, LlmStageKit, llmStageFormat, type LlmStageOptions } from '../../engine/llm-stage.js';
import { Partition, type ColumnsOf, type PartitionFormat } from '../../engine/partition.js';
import type { StageOutput, WorkCost } from '../../engine/stage-runner.js';
import type { LlmClient } from '../../llm/client.js';
import { parseModelSpec } from '../../llm/model-spec.js';
import type { ChatMessage, ChatRequest } from '../../llm/types.js';
import { mcqBlock, mcqQuestionText, simulatedChoice, type Baseline } from './assembly.js';
import { interTurnMessages, readInterTurns, readMcqTopic, type McqTask } from './data.js';
import { extractChoice } from './parse.js';
import { PythonRandom } from '../../stats/python-random.js';
import { shuffleOptions } from './shuffle.js';
import { RetrievalError, type Retriever } from './rag.js';
import { OriginalTemplates } from './chat-templates.js';
import {
  GRID_COLUMNS,
  GRID_COST_COLUMNS,
  GridPartitions,
  costOf,
  gridFailure,
  type GridOptions,
  type GridRecord,
  gridRequest,
  type PrefEvalSummary,
  modelRequests,
} from './stages.js';

/** The original's self-critic critique may run to 300 tokens (its answers to config's max_mcq_tokens). */
export const MCQ_CRITIQUE_TOKENS = 300;
/** The seed the original's classification script sets once per run before shuffling each record's options in file order. */
export const MCQ_SEED = 41;
/** The answer's opening the request ends with (the assistant's turn begun): the reply continues it. */
export const CHOICE_PREFILL = '<choice>';
const LETTERS = ['A', 'B', 'C', 'D'] as const;

export const mcqRoot = (workspace: string) => join(workspace, 'prefeval', 'mcq');

/** One answered MCQ: a row of mcq.parquet. */
export interface McqRecord extends GridRecord {
  /** The options as shown (shuffled), a JSON list; `correct` is the letter of the one that follows the preference. */
  options: string;
  correct: string;
  /** Self-critic: the first (zero-shot) answer and the critique; response_to_q is the revision. */
  first_choice: string | null;
  self_critic: string | null;
  /** The answer as the original keeps it: `<choice>` followed by the reply (a Llama model under requests: original: the reply as it came, its own `<choice>` in it). */
  response_to_q: string | null;
  /** The letter read from it (null: none), and whether it is the correct one. */
  choice: string | null;
  is_correct: boolean | null;
}

const MCQ_COLUMNS: ColumnsOf<McqRecord> = {
  ...GRID_COLUMNS,
  options: 'VARCHAR',
  correct: 'VARCHAR',
  first_choice: 'VARCHAR',
  self_critic: 'VARCHAR',
  response_to_q: 'VARCHAR',
  choice: 'VARCHAR',
  is_correct: 'BOOLEAN',
  ...GRID_COST_COLUMNS,
};

export const MCQ_FORMAT: PartitionFormat = llmStageFormat('mcq', MCQ_COLUMNS, ['topic', 'form', 'task_index', 'model', 'baseline', 'inter_turns']);

export interface McqOptions extends Omit<LlmStageOptions, 'prompts' | 'limit'>, GridOptions {
  model: string;
  /** RAG's retriever (needed when baselines hold rag; a dry run needs none). */
  retriever?: Retriever;
}

/** A record with its options as the original shows them. */
export interface ShuffledMcq extends McqTask {
  shown: string[];
  correct: (typeof LETTERS)[number];
}

/**
 * The grid's MCQ records, each topic's options shuffled as the original does: random.seed(41)
 * once, then random.sample per record in file order (every run of the original starts afresh,
 * so each record's shuffle is the same in every form, baseline and turn count).
 */
export function mcqTasks(o: Pick<GridOptions, 'data' | 'topics' | 'forms' | 'perTopic'>): ShuffledMcq[] {
  return o.forms.flatMap((form) =>
    o.topics.flatMap((topic) => {
      const rng = new PythonRandom(MCQ_SEED);
      const all = readMcqTopic(o.data, topic, form).map((task): ShuffledMcq => {
        const { shuffled, correctIndex } = shuffleOptions(task.options, rng);
        return { ...task, shown: shuffled, correct: LETTERS[correctIndex]! };
      });
      return o.perTopic === undefined ? all : all.slice(0, o.perTopic);
    }),
  );
}

interface McqItem {
  task: ShuffledMcq;
  baseline: Baseline;
  interTurns: number;
  partition: Partition;
}

const tokens = (chars: number) => Math.ceil(chars / 4);

/** `plens make`'s prefeval-mcq step: per record, the preference's answer (explicit), then the question with its options. */
export async function runPrefEvalMcq(options: McqOptions): Promise<PrefEvalSummary> {
  const spec = parseModelSpec(options.model, 'prefeval.models');
  const tasks = mcqTasks(options);
  const filler = readInterTurns(options.data);
  const fillers = new Map(options.interTurns.map((n) => [n, interTurnMessages(filler, n)]));
  const p = options.wording;
  const runRecord = { benchmark: 'prefeval', promptSources: [options.data] };
  return LlmStageKit.with({ runRecord, ...options }, 'plens make prefeval-mcq', 'run with --cache on to call the model for what is missing', async (kit) => {
    const client = kit.client(spec, 'assistant');
    const params = client.params({ temperature: 0, maxTokens: p.mcq.maxTokens });
    const critiqueParams = client.params({ temperature: 0, maxTokens: MCQ_CRITIQUE_TOKENS });
    const retrieval = options.retrieval ?? null;
    // The original's own prompt text for this model (Llama, Mistral; their answers are another partition's), or chat messages.
    const requests = modelRequests(options, spec, 'classification');
    const family = requests.templates;
    const grid = new GridPartitions(mcqRoot(options.workspace.root), MCQ_FORMAT, ['mcq', ...requests.tag], client.id, p, retrieval, params);
    grid.refuseOtherSettings(options);
    const items = (): McqItem[] => grid.items(options, tasks);
    const request = (messages: ChatMessage[], purpose: string, simulated: string, callParams = params, prompt?: string): ChatRequest =>
      gridRequest(p, callParams, messages, purpose, simulated, prompt);
    // The original begins the answer with `<choice>` for Claude and Mistral and keeps it before the reply; Llama answers on its own.
    const prefill = family === 'llama' ? '' : CHOICE_PREFILL;
    const summary = await kit.run<McqItem>({
      stage: 'prefeval-mcq',
      items: async function* () {
        yield* items();
      },
      keyOf: (item) => ({
        key: hashParts([
          'prefeval-mcq-v1',
          item.task.topic,
          item.task.form,
          item.task.index,
          item.task.preference,
          item.task.question,
          item.task.shown,
          item.partition.dir,
        ]),
        partition: item.partition,
      }),
      estimate: (item) => estimateMcq(item, fillers.get(item.interTurns)!, p, client),
      run: async (item, calls) => {
        const t = item.task;
        // The original's implicit RAG reads its records from the implicit file (its loader is the generation task's), the options from the MCQ
        // file: it asks the implicit file's question, and keeps it in the record.
        const question = item.baseline === 'rag' && t.implicitQuestion !== null ? t.implicitQuestion : t.question;
        const base = {
          status: 'ok',
          error_kind: null,
          error: null,
          topic: t.topic,
          form: t.form,
          task_index: t.index,
          preference: t.preference,
          question,
          baseline: item.baseline,
          inter_turns: item.interTurns,
          model: client.id,
          prompts: p.source,
          retrieval: item.baseline === 'rag' ? retrieval : null,
          options: JSON.stringify(t.shown),
          correct: t.correct,
          response_to_pref: null as string | null,
          retrieved: null as string | null,
          first_choice: null as string | null,
          self_critic: null as string | null,
          response_to_q: null as string | null,
          choice: null as string | null,
          is_correct: null as boolean | null,
        };
        const correctAt = LETTERS.indexOf(t.correct);
        const simulated = (stage: string) => simulatedChoice(t, item.baseline, item.interTurns, correctAt, stage);
        try {
          let opening: ChatMessage[];
          if (t.conversation === null) {
            const first: ChatMessage[] = [{ role: 'user', content: t.preference }];
            const prefPrompt = family ? OriginalTemplates.preference(family, p.system, t.preference) : undefined;
            const pref = await calls.call(client, request(first, 'prefeval:mcq-preference', 'Understood, noted.', params, prefPrompt), {
              turn: 0,
              role: 'assistant',
            });
            base.response_to_pref = pref.response.text;
            opening = [...first, { role: 'assistant', content: pref.response.text }];
          } else opening = t.conversation;
          const turn0 = t.conversation === null ? 1 : 0;
          const context: ChatMessage[] = [...opening, ...fillers.get(item.interTurns)!];
          let retrieved: string[] = [];
          if (item.baseline === 'rag') {
            if (!options.retriever) throw new RetrievalError('no retriever for the rag baseline');
            retrieved =
              t.conversation === null
                ? await options.retriever.explicit(t, base.response_to_pref!, item.interTurns, filler, calls.signal)
                : await options.retriever.implicit({ ...t, conversation: t.conversation }, item.interTurns, filler, calls.signal);
            base.retrieved = JSON.stringify(retrieved);
          }
          const selfCritic = item.baseline === 'selfcritic';
          const asked = mcqQuestionText(question, selfCritic ? 'zero-shot' : item.baseline, p, t.shown, retrieved);
          const templates = family
            ? new OriginalTemplates(family, {
                system: p.system,
                opening: base.response_to_pref === null ? { conversation: opening } : { preference: t.preference, responseToPref: base.response_to_pref },
                filler: fillers.get(item.interTurns)!,
                choice: true,
              })
            : undefined;
          const answer = await calls.call(
            client,
            request(
              [...context, { role: 'user', content: asked }, { role: 'assistant', content: CHOICE_PREFILL }],
              'prefeval:mcq-question',
              simulated('question'),
              params,
              templates?.question(asked, item.baseline === 'rag'),
            ),
            { turn: turn0, role: 'assistant' },
          );
          let final = prefill + answer.response.text;
          if (selfCritic) {
            // The critique sees the question with its options (no reminder) and the first answer as kept.
            const shownQuestion = t.question + mcqBlock(p, t.shown);
            const critique = t.conversation === null ? p.mcq.critique.explicit : p.mcq.critique.implicit;
            const critiqued: ChatMessage[] = [
              ...context,
              { role: 'user', content: shownQuestion },
              { role: 'assistant', content: final },
              { role: 'user', content: critique },
            ];
            const critic = await calls.call(
              client,
              request(
                critiqued,
                'prefeval:mcq-critique',
                'Critic: the choice could fit my stated preference better.',
                critiqueParams,
                templates?.critique(shownQuestion, final, critique),
              ),
              { turn: turn0 + 1, role: 'assistant' },
            );
            const revisionRequest = p.mcq.revision + mcqBlock(p, t.shown);
            const revision = await calls.call(
              client,
              request(
                [
                  ...critiqued,
                  { role: 'assistant', content: critic.response.text },
                  { role: 'user', content: revisionRequest },
                  { role: 'assistant', content: CHOICE_PREFILL },
                ],
                'prefeval:mcq-revision',
                simulated('revision'),
                params,
                templates?.revision(shownQuestion, final, critique, critic.response.text, revisionRequest),
              ),
              { turn: turn0 + 2, role: 'assistant' },
            );
            base.first_choice = final;
            base.self_critic = critic.response.text;
            final = prefill + revision.response.text;
          }
          const choice = extractChoice(final);
          return { ...base, response_to_q: final, choice, is_correct: choice === t.correct, ...costOf(calls.cost) } as unknown as StageOutput;
        } catch (error) {
          return { ...base, ...gridFailure(error), ...costOf(calls.cost) } as unknown as StageOutput;
        }
      },
    });
    return { ...summary, price_unknown: kit.priceUnknown, partitions: await grid.compactAll(kit) };
  });
}

/** About 200 tokens an exchange RAG puts before the question. */
const RAG_CONTEXT_TOKENS = 5 * 200;

/** Explicit: the preference alone, then the conversation; self-critic adds the critique (300 tokens) and the revision, each seeing it all again. */
function estimateMcq(item: McqItem, filler: readonly ChatMessage[], p: McqOptions['wording'], client: LlmClient): WorkCost {
  const chars = (ms: readonly ChatMessage[]) => ms.reduce((n, m) => n + m.content.length, 0);
  const t = item.task;
  const explicit = t.conversation === null;
  const out = p.mcq.maxTokens;
  const opening = explicit ? tokens(t.preference.length) + out : tokens(chars(t.conversation!));
  const question =
    tokens(mcqQuestionText(t.question, item.baseline === 'rag' ? 'zero-shot' : item.baseline, p, t.shown).length) +
    (item.baseline === 'rag' ? RAG_CONTEXT_TOKENS : 0);
  const last = tokens(p.system.length + chars(filler)) + opening + question + 2;
  const first = explicit ? { inputTokens: tokens(p.system.length + t.preference.length), outputTokens: out } : { inputTokens: 0, outputTokens: 0 };
  const critic = item.baseline === 'selfcritic';
  const usage = {
    inputTokens: first.inputTokens + last + (critic ? 2 * last + MCQ_CRITIQUE_TOKENS + 2 * question : 0),
    outputTokens: first.outputTokens + out + (critic ? MCQ_CRITIQUE_TOKENS + out : 0),
  };
  return { calls: (explicit ? 2 : 1) + (critic ? 2 : 0), cachedCalls: 0, ...usage, costUsd: client.costOf(usage) };
}

/** The answered MCQs of the partitions, as compacted (the latest try of each key). */
export async function readMcq(dirs: readonly string[]): Promise<McqRecord[]> {
  const out: McqRecord[] = [];
  for (const dir of dirs) out.push(...(await new Partition(dir, MCQ_FORMAT).latest<McqRecord>()).values());
  return out;
}
