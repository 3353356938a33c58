/**
 * PERSONA-bench in `plens make`: the predictions step over the pipeline's models (planned by the
 * stage's own dry run, as the PersonaLens grid is) and the arguments of the select and score
 * stages. make.ts runs the steps; status.ts reads the same plans.
 */
import { join } from 'node:path';
import type { Workspace } from '../../core/workspace.js';
import { zeroCost } from '../../engine/stage-runner.js';
import { parseModelSpec, unpriced } from '../../llm/model-spec.js';
import type { SpendBudget } from '../../engine/spend-budget.js';
import { llmStageOptionsOf } from '../../platform/run-settings.js';
import type { StepContext } from '../../platform/benchmark.js';
import { reasons, runModelsInTurn, type CellWork, type StepResult } from '../../platform/step-kit.js';
import type { PersonaBenchPipeline as Pipeline } from './pipeline-settings.js';
import { predictionPartition, runPersonaPredictions, type PersonaPredictOptions, type PersonaPredictSummary } from './predict.js';
import { personaSelectionDir } from './make-state.js';

/** One model's predictions: the work as the stage's dry run counts it, with recorded failures split into failed calls and unparsed replies. */
export interface PersonaModelPlan {
  model: string;
  /** `failed`: calls recorded failed; unparsed replies are not failures (they are counted and never scored). */
  work: CellWork;
  unparsed: number;
  /** The model's partitions (one per task x setting). */
  dirs: string[];
}

/** The prompt records the pipeline's predictions read: the selection's, or those of a plan's scratch selection. */
export function personaPromptsFile(p: Pipeline, selectionDir?: string): string {
  return join(selectionDir ?? personaSelectionDir(p), 'prompts.jsonl');
}

/** The options of `runPersonaPredictions` for one model of the pipeline. */
export function predictOptions(
  p: Pipeline,
  workspace: Workspace,
  model: string,
  o: { promptRecords: string; signal: AbortSignal; dryRun: boolean; progress: boolean; retryFailed: boolean; parentRunId?: string },
): PersonaPredictOptions {
  const s = p.persona;
  const { prompts: _none, ...stage } = llmStageOptionsOf(
    // A dry run calls nothing, so it need not open the cache.
    { ...p.limits, cache: o.dryRun ? 'off' : p.limits.cache },
    {
      workspace,
      signal: o.signal,
      dryRun: o.dryRun,
      progress: o.progress,
      retryFailed: o.retryFailed,
      ...(o.parentRunId ? { parentRunId: o.parentRunId } : {}),
    },
  );
  return {
    ...stage,
    promptRecords: o.promptRecords,
    model,
    fidelity: s.fidelity,
    tasks: s.tasks,
    settings: s.settings,
    samples: s.samples,
    parsers: s.parsers,
    ...(s.batch ? { batch: s.batch } : {}),
  };
}

/** Per model, what is done, left, failed and unparsed: the stage's dry run plus the partitions' recorded outcomes. */
export async function planPersonaPredictions(
  p: Pipeline,
  workspace: Workspace,
  o: { promptRecords: string; signal: AbortSignal; retryFailed?: boolean },
): Promise<PersonaModelPlan[]> {
  const out: PersonaModelPlan[] = [];
  for (const model of p.persona.models) {
    const d = await runPersonaPredictions(predictOptions(p, workspace, model, { ...o, dryRun: true, progress: false, retryFailed: o.retryFailed ?? false }));
    const dirs = d.partitions.map((x) => x.dir);
    const recorded = await recordedOutcomes(dirs);
    out.push({
      model,
      dirs,
      unparsed: o.retryFailed ? 0 : recorded.unparsed,
      work: {
        done: d.already_done,
        pending: d.planned,
        failed: o.retryFailed ? 0 : recorded.failed,
        estimate: d.estimate ?? zeroCost(),
        priceUnknown: d.price_unknown.length ? d.price_unknown : unpriced([parseModelSpec(model)]),
      },
    });
  }
  return out;
}

/** Recorded outcomes that are not results, by kind: calls that failed, replies that did not parse. */
export async function recordedOutcomes(dirs: readonly string[]): Promise<{ failed: number; unparsed: number }> {
  const n = { failed: 0, unparsed: 0 };
  for (const dir of dirs) {
    const latest = await predictionPartition(dir).latest<{ key: string; status: string }>();
    for (const r of latest.values()) {
      if (r.status === 'failed') n.failed++;
      else if (r.status === 'parse_error') n.unparsed++;
    }
  }
  return n;
}

/** Whether any of a model's partitions has logs newer than its compacted Parquet (a killed run). */
export function needsPersonaCompaction(dirs: readonly string[]): boolean {
  return dirs.some((dir) => predictionPartition(dir).needsCompaction());
}

/** Runs one model's predictions; the outcome split as make reports it. */
export async function runPersonaModel(
  p: Pipeline,
  workspace: Workspace,
  model: string,
  o: { promptRecords: string; signal: AbortSignal; progress: boolean; retryFailed: boolean; budget?: SpendBudget; parentRunId?: string },
): Promise<{ summary: PersonaPredictSummary; ok: number; unparsed: number; failed: number }> {
  const { budget, ...rest } = o;
  // The run's one spend budget (plens make --max-cost) is shared with the PersonaLens steps' rule.
  const summary = await runPersonaPredictions({ ...predictOptions(p, workspace, model, { ...rest, dryRun: false }), ...(budget ? { budget } : {}) });
  const unparsed = summary.failure_reasons['parse_error'] ?? 0;
  return { summary, ok: summary.ok, unparsed, failed: summary.failed - unparsed };
}

/**
 * Each model's predictions that are left, one model at a time. An unparsed reply is an outcome,
 * counted and never scored; a failed call fails the step.
 */
export async function runPredictionStep(o: StepContext<Pipeline>, plans: PersonaModelPlan[], promptRecords: string): Promise<StepResult> {
  const { p, ws, budget } = o;
  return runModelsInTurn(o, 'predictions', plans, {
    setting: `${p.persona.tasks.join('/')} x ${p.persona.settings.join('/')}`,
    noun: 'prediction',
    failure: 'call',
    // A model whose partitions hold logs newer than their Parquet (a killed run) is compacted.
    idle: (m) => m.work.pending === 0 && !needsPersonaCompaction(m.dirs),
    run: async (m) => {
      const r = await runPersonaModel(p, ws, m.model, {
        promptRecords,
        signal: o.signal,
        progress: o.progress,
        retryFailed: o.retryFailed,
        ...(budget ? { budget } : {}),
        parentRunId: o.runId,
      });
      const failedNow = r.failed + (o.retryFailed ? 0 : m.work.failed);
      o.log(`  predictions  ${m.model}: ${r.ok} ok, ${r.unparsed} unparsed, ${r.failed} failed`);
      return {
        new: { ok: r.ok, failed: r.summary.failed, failure_reasons: r.summary.failure_reasons },
        failedNow,
        error: `${failedNow} call(s) failed${r.failed ? `: ${reasons(r.summary.failure_reasons)}` : ''}`,
        ...(r.summary.spend_capped ? { spend_capped: true } : {}),
      };
    },
  });
}
