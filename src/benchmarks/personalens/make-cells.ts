import { basename } from 'node:path';
import type { Workspace } from '../../core/workspace.js';
import { addCost, zeroCost } from '../../engine/stage-runner.js';
import type { SpendBudget } from '../../engine/spend-budget.js';
import { batchMinItems, batchPriceFactor, costOfTokens, parseModelSpec, unpriced } from '../../llm/model-spec.js';
import { llmStageOptionsOf } from '../../platform/run-settings.js';
import type { CellWork } from '../../platform/step-kit.js';
import { runDialogues } from './dialogues-stage.js';
import { runJudge } from './judge-stage.js';
import type { LlmStageOptions } from './llm-stage-options.js';
import type { PersonaLensPipeline } from './pipeline-section.js';
import { dialogueCell } from './records.js';
import type { Setting } from './settings.js';

export interface CellPlan {
  /** The cell's folder name: setting__assistant__hash, unique per configuration. */
  id: string;
  dir: string;
  assistant: string;
  setting: Setting;
  dialogues: CellWork;
  judge?: CellWork;
}

/** The stage options a pipeline implies (limits, prompts, retries), for a real run or a dry run. */
export function stageOptions(
  p: PersonaLensPipeline,
  workspace: Workspace,
  o: { signal: AbortSignal; dryRun: boolean; progress: boolean; retryFailed: boolean; concurrency: number; budget?: SpendBudget; parentRunId?: string },
): LlmStageOptions {
  return llmStageOptionsOf(
    // A dry run calls nothing, so it need not open the cache.
    { ...p.limits, cache: o.dryRun ? 'off' : p.limits.cache, concurrency: o.concurrency },
    {
      workspace,
      ...(p.dialogues?.prompts ? { prompts: p.dialogues.prompts } : {}),
      signal: o.signal,
      dryRun: o.dryRun,
      progress: o.progress,
      retryFailed: o.retryFailed,
      // The run's one budget: every cell and the judge draw from the same cap.
      ...(o.budget ? { budget: o.budget } : {}),
      ...(o.parentRunId ? { parentRunId: o.parentRunId } : {}),
    },
  );
}

export function gridOf(p: PersonaLensPipeline): Array<{ assistant: string; setting: Setting }> {
  if (!p.dialogues) return [];
  return p.dialogues.assistants.flatMap((assistant) => p.dialogues!.settings.map((setting) => ({ assistant, setting })));
}

/**
 * The grid's cells and the work left in each, from the stages' own dry runs: a key that is
 * done is done, whatever changed elsewhere, so this is exactly what a run would do.
 */
export async function planCells(p: PersonaLensPipeline, workspace: Workspace, signal: AbortSignal, retryFailed = false): Promise<CellPlan[]> {
  const out: CellPlan[] = [];
  const base = stageOptions(p, workspace, { signal, dryRun: true, progress: false, retryFailed, concurrency: 1 });
  for (const { assistant, setting } of gridOf(p)) {
    const d = await runDialogues({
      ...base,
      assistants: [assistant],
      settings: [setting],
      ...(p.dialogues!.user ? { user: p.dialogues!.user } : {}),
      replicates: p.dialogues!.replicates,
    });
    const dir = d.cells[0]!.dir;
    const cell: CellPlan = {
      id: basename(dir),
      dir,
      assistant,
      setting,
      dialogues: {
        done: d.already_done,
        pending: d.planned,
        failed: retryFailed ? 0 : d.already_failed,
        estimate: d.estimate ?? zeroCost(),
        priceUnknown: d.price_unknown,
      },
    };
    if (p.judge) cell.judge = await planJudgeCell(p, cell, base);
    out.push(cell);
  }
  return out;
}

/** Judgments left in a cell: those of dialogues already made (the judge's dry run), plus an estimate for the dialogues still to come. */
async function planJudgeCell(p: PersonaLensPipeline, cell: CellPlan, base: LlmStageOptions): Promise<CellWork> {
  const judge = p.judge!;
  const work: CellWork = { done: 0, pending: 0, failed: 0, estimate: zeroCost(), priceUnknown: unpriced([parseModelSpec(judge.model)]) };
  if (dialogueCell(cell.dir).isCompacted()) {
    const j = await runJudge({ ...base, judge: judge.model, dimensions: judge.dimensions, dialogueDirs: [cell.dir] });
    work.done = j.already_done;
    work.pending = j.planned;
    work.failed = j.already_failed;
    work.estimate = j.estimate ?? zeroCost();
  }
  const coming = cell.dialogues.pending;
  if (coming > 0) {
    // Paper Table 13: about 5 assistant turns per dialogue, 150 tokens per utterance.
    const turns = 5;
    const perDialogue = judge.dimensions.reduce((n, d) => n + (d === 'naturalness' || d === 'coherence' ? 2 : d === 'personalization_turns' ? turns : 1), 0);
    // personalization_chain is one call per dialogue, whose reply adds a score line per assistant turn.
    const chainLines = judge.dimensions.includes('personalization_chain') ? turns * 15 : 0;
    const spec = parseModelSpec(judge.model);
    const inputTokens = coming * perDialogue * (turns * 2 * 150 + 625);
    const outputTokens = coming * (perDialogue * 200 + chainLines);
    work.pending += coming * perDialogue;
    work.estimated = true;
    addCost(work.estimate, {
      calls: coming * perDialogue,
      cachedCalls: 0,
      inputTokens,
      outputTokens,
      costUsd: costOfTokens(spec, { inputTokens, outputTokens }),
    });
  }
  // A judge through the provider's batch API pays the batch price (a batch below the provider's
  // minimum size is called online, at the full price).
  if (judge.batch && work.pending > 0) {
    const spec = parseModelSpec(judge.model);
    const min = batchMinItems(spec);
    if (min === undefined || work.pending >= min) work.estimate.costUsd *= batchPriceFactor(spec) ?? 1;
  }
  return work;
}
