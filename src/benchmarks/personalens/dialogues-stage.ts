import { usageError } from '../../core/errors.js';
import { LlmStageKit, type LlmStageOptions } from '../../engine/llm-stage.js';
import type { Partition } from '../../engine/partition.js';
import type { StageSummary, WorkCost } from '../../engine/stage-runner.js';
import type { LlmClient } from '../../llm/client.js';
import { isSimulator, parseModelSpec } from '../../llm/model-spec.js';
import { converse, openingRequest } from './conversation.js';
import { cellPartition, dialogueKey, makeCell, type DialogueCell } from './dialogue-cell.js';
import { DEFAULT_PROMPTS_DIR, defaultPromptStyle, parsePromptStyle, PromptSet, type PromptStyle } from './prompt-set.js';
import { dialogueRecord, dialoguesRoot } from './records.js';
import { ScenarioContextSource, type ScenarioContext, type ScenarioHead, type ScenarioRow } from './scenario-context.js';
import { ROUND_LIMITS, type Setting } from './settings.js';
import { datasetInputs } from './dataset-identity.js';

export interface DialoguesOptions extends LlmStageOptions {
  assistants: string[];
  settings: Setting[];
  user?: string;
  replicates?: number;
}

export interface DialoguesSummary extends StageSummary {
  prompt_version: string;
  simulated: boolean;
  /** Models whose spec gives no price: the cost estimate leaves them out. */
  price_unknown: string[];
  cells: Array<{ dir: string; setting: string; assistant: string; user: string; rows: number | null }>;
}

interface Item {
  scenario: ScenarioHead;
  /** The whole row and its context: loaded only for the run pass. */
  full: { scenario: ScenarioRow; context: ScenarioContext } | undefined;
  cell: DialogueCell;
  partition: Partition;
  replicate: number;
}

// For --dry-run: turns per dialogue and tokens per turn as in the paper's Table 13 (Claude 3 Sonnet).
const EXPECTED = { SD: { assistantTurns: 4.74, tokensPerTurn: 150 }, MD: { assistantTurns: 5.64, tokensPerTurn: 150 } } as const;

/** `plens dialogues`: every selected scenario x assistant x setting (x replicate) becomes one dialogue record. */
export async function runDialogues(options: DialoguesOptions): Promise<DialoguesSummary> {
  const assistantSpecs = options.assistants.map((a) => parseModelSpec(a, '--assistant'));
  const userSpec = parseModelSpec(options.user ?? defaultUser(assistantSpecs.every(isSimulator)), '--user');
  const prompts = PromptSet.load(options.prompts);
  const runRecord = { benchmark: 'personalens', promptSources: [...(options.prompts ? [options.prompts] : []), DEFAULT_PROMPTS_DIR] };
  return LlmStageKit.with(
    { runRecord, inputs: datasetInputs(options.workspace), ...options },
    'plens dialogues',
    'run with --cache on to call the endpoint for what is missing',
    async (kit) => {
      const source = await ScenarioContextSource.open(options.workspace);
      kit.onClose(() => source.close());
      const user = kit.client(userSpec, 'user');
      const assistants = assistantSpecs.map((s) => kit.client(s, 'assistant'));
      const root = dialoguesRoot(options.workspace);
      const styleOf = (a: LlmClient): PromptStyle =>
        a.spec.promptStyle ? parsePromptStyle(a.spec.promptStyle, `--assistant ${a.id}: prompt_style`) : defaultPromptStyle(a.spec.model);
      const cells = assistants.flatMap((a) =>
        options.settings.map((setting) => {
          const cell = makeCell(setting, a, user, prompts.dialogueVersion, styleOf(a));
          return { cell, client: a, partition: cellPartition(root, cell) };
        }),
      );
      const clientOf = new Map(cells.map((c) => [c.cell, c.client]));
      const replicates = options.replicates ?? 1;

      for (const { cell, partition } of cells) await kit.describe(partition, 'cell.json', { ...cell, prompt_sources: prompts.sources });
      const summary = await kit.run<Item>({
        stage: 'dialogues',
        items: async function* (forRun) {
          for (const { cell, partition } of cells) {
            if (forRun) {
              for await (const full of source.scenariosWithContext()) {
                for (let replicate = 0; replicate < replicates; replicate++) yield { scenario: full.scenario, full, cell, partition, replicate };
              }
            } else {
              for await (const scenario of source.scenarioHeads()) {
                for (let replicate = 0; replicate < replicates; replicate++) yield { scenario, full: undefined, cell, partition, replicate };
              }
            }
          }
        },
        keyOf: (item) => ({ key: dialogueKey(item.cell, item.scenario.scenario_id, item.replicate), partition: item.partition }),
        run: async (item, calls) => {
          // The engine runs only items of its run pass, which carry their row and context.
          const { scenario, context } = item.full!;
          const c = item.cell;
          const assistant = clientOf.get(c)!;
          const result = await converse(scenario, context, c.setting, item.replicate, { user, assistant, prompts, assistantStyle: c.promptStyle }, calls);
          return dialogueRecord(
            {
              scenario_id: scenario.scenario_id,
              user_id: scenario.user_id,
              task_id: scenario.task_id,
              kind: scenario.kind,
              setting: c.setting,
              replicate: item.replicate,
              assistant_model: c.assistant.model,
              assistant_temperature: c.assistant.params.temperature,
              assistant_max_tokens: c.assistant.params.maxTokens,
              user_model: c.user.model,
              user_temperature: c.user.params.temperature,
              user_max_tokens: c.user.params.maxTokens,
              prompt_version: c.promptVersion,
              simulated: c.simulated,
            },
            {
              status: result.status,
              error: result.error,
              end_reason: result.end_reason,
              rounds: result.rounds,
              messages: result.messages,
              input_tokens: result.messages.reduce((n, m) => n + m.input_tokens, 0),
              output_tokens: result.messages.reduce((n, m) => n + m.output_tokens, 0),
              cost_usd: result.messages.reduce(
                (n, m) => n + (m.role === 'user' ? user : assistant).costOf({ inputTokens: m.input_tokens, outputTokens: m.output_tokens }),
                0,
              ),
            },
          );
        },
        estimate: (item) => estimateDialogue(item, clientOf.get(item.cell)!, user),
        // Under a spend cap: the dialogue's expected cost, or its opening call's worst case if that is
        // more. A dialogue is many calls, so the cache answering its opening says nothing of the rest.
        reserve: (item) => {
          const { scenario, context } = item.full!;
          const c = item.cell;
          const assistant = clientOf.get(c)!;
          const opening = openingRequest(scenario, context, c.setting, item.replicate, { user, assistant, prompts, assistantStyle: c.promptStyle });
          return Math.max(user.estimateCostOf(opening), estimateDialogue(item, assistant, user).costUsd);
        },
      });
      const cellRows: DialoguesSummary['cells'] = [];
      for (const { cell, partition } of cells) {
        cellRows.push({
          dir: partition.dir,
          setting: cell.setting,
          assistant: cell.assistant.model,
          user: cell.user.model,
          rows: await kit.compact(partition),
        });
      }
      return {
        ...summary,
        prompt_version: prompts.dialogueVersion,
        simulated: cells.some((c) => c.cell.simulated),
        price_unknown: kit.priceUnknown,
        cells: cellRows,
      };
    },
  );
}

function defaultUser(allSimulated: boolean): string {
  if (allSimulated) return 'sim:default';
  throw usageError("name the user-agent model with --user, e.g. --user anthropic:claude-3-sonnet-20240229 (the paper's user agent)");
}

/** Expected calls and tokens of one dialogue, from the paper's Table 13 averages; prompt size from the history it grows. */
function estimateDialogue(item: Item, assistant: LlmClient, user: LlmClient): WorkCost {
  const e = EXPECTED[item.scenario.kind];
  const turns = Math.min(e.assistantTurns, ROUND_LIMITS[item.scenario.kind]);
  const calls = Math.round(2 * turns + 1);
  const systemTokens = 600;
  // Each call sees the conversation so far: on average half of the final length.
  const avgHistory = turns * 2 * e.tokensPerTurn * 0.5;
  const inputTokens = Math.round(calls * (systemTokens + avgHistory));
  const outputTokens = Math.round(calls * e.tokensPerTurn);
  const half = { inputTokens: inputTokens / 2, outputTokens: outputTokens / 2 };
  return { calls, cachedCalls: 0, inputTokens, outputTokens, costUsd: assistant.costOf(half) + user.costOf(half) };
}
