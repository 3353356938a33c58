import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../core/atomic.js';
import { assertOneImport, recordDataset } from '../../core/dataset-identity.js';
import { usageError } from '../../core/errors.js';
import { runStage, type StageSummary, type WorkCost } from '../../engine/stage-runner.js';
import { CallCache } from '../../llm/call-cache.js';
import { LlmClient } from '../../llm/client.js';
import { isSimulator, parseModelSpec, unpriced } from '../../llm/model-spec.js';
import { compactPartition, DIALOGUE_COLUMNS } from './compact.js';
import { converse } from './conversation.js';
import { cellDir, dialogueKey, makeCell, type DialogueCell } from './dialogue-cell.js';
import { clientOptions, engineOptions, type LlmStageOptions } from './llm-stage-options.js';
import { defaultPromptStyle, parsePromptStyle, PromptSet, type PromptStyle } from './prompt-set.js';
import { ScenarioContextSource, type ScenarioContext, type ScenarioHead, type ScenarioRow } from './scenario-context.js';
import { ROUND_LIMITS, type Setting } from './settings.js';

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
  dir: string;
  replicate: number;
}

// For --dry-run: turns per dialogue and tokens per turn as in the paper's Table 13 (Claude 3 Sonnet).
const EXPECTED = { SD: { assistantTurns: 4.74, tokensPerTurn: 150 }, MD: { assistantTurns: 5.64, tokensPerTurn: 150 } } as const;

/** `plens dialogues`: every selected scenario x assistant x setting (x replicate) becomes one dialogue record. */
export async function runDialogues(options: DialoguesOptions): Promise<DialoguesSummary> {
  const assistantSpecs = options.assistants.map((a) => parseModelSpec(a, '--assistant'));
  const userSpec = parseModelSpec(options.user ?? defaultUser(assistantSpecs.every(isSimulator)), '--user');
  const prompts = PromptSet.load(options.prompts);
  assertOneImport(options.workspace, 'plens dialogues');
  const source = await ScenarioContextSource.open(options.workspace);
  // A dry run calls nothing: it neither opens nor creates the cache.
  const cache = CallCache.open(join(options.workspace.root, 'cache', 'llm'), options.dryRun ? 'off' : options.cache);
  const user = LlmClient.create(userSpec, clientOptions(options, cache));
  const assistants = assistantSpecs.map((s) => LlmClient.create(s, clientOptions(options, cache)));
  const root = join(options.workspace.root, 'dialogues');
  const styleOf = (a: LlmClient): PromptStyle => (a.spec.promptStyle ? parsePromptStyle(a.spec.promptStyle, `--assistant ${a.id}: prompt_style`) : defaultPromptStyle(a.spec.model));
  const cells = assistants.flatMap((a) => options.settings.map((setting) => ({ cell: makeCell(setting, a, user, prompts.dialogueVersion, styleOf(a)), client: a })));
  const clientOf = new Map(cells.map((c) => [c.cell, c.client]));
  const replicates = options.replicates ?? 1;
  const runId = new Date().toISOString();

  try {
    if (!options.dryRun) {
      for (const { cell } of cells) {
        const file = join(cellDir(root, cell), 'cell.json');
        if (!existsSync(file)) {
          await writeFileAtomic(file, JSON.stringify({ ...cell, prompt_sources: prompts.sources }, null, 2) + '\n');
          await recordDataset(cellDir(root, cell), options.workspace);
        }
      }
    }
    const summary = await runStage<Item>(
      {
        stage: 'dialogues',
        items: async function* (forRun) {
          for (const { cell } of cells) {
            const dir = cellDir(root, cell);
            if (forRun) {
              for await (const full of source.scenariosWithContext()) {
                for (let replicate = 0; replicate < replicates; replicate++) yield { scenario: full.scenario, full, cell, dir, replicate };
              }
            } else {
              for await (const scenario of source.scenarioHeads()) {
                for (let replicate = 0; replicate < replicates; replicate++) yield { scenario, full: undefined, cell, dir, replicate };
              }
            }
          }
        },
        keyOf: (item) => ({ key: dialogueKey(item.cell, item.scenario.scenario_id, item.replicate), dir: item.dir }),
        run: async (item, ctx) => {
          // The engine runs only items of its run pass, which carry their row and context.
          const { scenario, context } = item.full!;
          const cost: WorkCost = { calls: 0, cachedCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
          const key = dialogueKey(item.cell, scenario.scenario_id, item.replicate);
          const result = await converse(
            scenario,
            context,
            item.cell.setting,
            item.replicate,
            { user, assistant: clientOf.get(item.cell)!, prompts, assistantStyle: item.cell.promptStyle },
            ctx.signal,
            (e) => {
              const o = e.outcome;
              cost.calls++;
              if (o) {
                cost.cachedCalls += o.cached ? 1 : 0;
                cost.inputTokens += o.cached ? 0 : o.response.usage.inputTokens;
                cost.outputTokens += o.cached ? 0 : o.response.usage.outputTokens;
                cost.costUsd += o.cached ? 0 : o.costUsd;
              }
              ctx.event({
                run_id: runId,
                key,
                turn: e.turn,
                role: e.role,
                model: e.model,
                status: o ? 'ok' : 'failed',
                error_kind: e.error ? e.error.reason : null,
                cached: o?.cached ?? false,
                attempts: o?.attempts ?? ((e.error as { attempts?: number } | undefined)?.attempts ?? 1),
                latency_ms: o?.latencyMs ?? null,
                input_tokens: o?.response.usage.inputTokens ?? null,
                output_tokens: o?.response.usage.outputTokens ?? null,
                // What this call cost now: nothing when the cache (or a shared identical call) answered it.
                cost_usd: o ? (o.cached ? 0 : o.costUsd) : null,
                at: new Date().toISOString(),
              });
            },
          );
          const c = item.cell;
          const assistantClient = clientOf.get(c)!;
          const inputTokens = result.messages.reduce((n, m) => n + m.input_tokens, 0);
          const outputTokens = result.messages.reduce((n, m) => n + m.output_tokens, 0);
          const dialogueCost = result.messages.reduce((n, m) => n + (m.role === 'user' ? user : assistantClient).costOf({ inputTokens: m.input_tokens, outputTokens: m.output_tokens }), 0);
          return {
            cost,
            record: {
              status: result.status,
              error: result.error,
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
              end_reason: result.end_reason,
              rounds: result.rounds,
              messages: result.messages,
              input_tokens: inputTokens,
              output_tokens: outputTokens,
              cost_usd: dialogueCost,
            },
          };
        },
        durable: () => cache.committed(),
        estimate: (item) => estimateDialogue(item, clientOf.get(item.cell)!, user),
      },
      engineOptions(options),
    );
    const cellRows: DialoguesSummary['cells'] = [];
    for (const { cell } of cells) {
      const dir = cellDir(root, cell);
      const rows = options.dryRun || !existsSync(dir) ? null : (await compactPartition(dir, 'dialogues', DIALOGUE_COLUMNS)).rows;
      cellRows.push({ dir, setting: cell.setting, assistant: cell.assistant.model, user: cell.user.model, rows });
    }
    return { ...summary, prompt_version: prompts.dialogueVersion, simulated: cells.some((c) => c.cell.simulated), price_unknown: unpriced([userSpec, ...assistantSpecs]), cells: cellRows };
  } finally {
    await Promise.all([user, ...assistants].map((c) => c.close()));
    await cache.close();
    await source.close();
  }
}

function defaultUser(allSimulated: boolean): string {
  if (allSimulated) return 'sim:default';
  throw usageError('name the user-agent model with --user, e.g. --user anthropic:claude-3-sonnet-20240229 (the paper\'s user agent)');
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
