import pMap from 'p-map';
import { PlensError } from '../../core/errors.js';
import { addSpend, emptySpend } from '../../engine/spend-budget.js';
import type { StepContext } from '../../platform/benchmark.js';
import { planCellStep, reasons, sumWork, type CellResult, type CellWork, type StepResult, type StepStatus } from '../../platform/step-kit.js';
import { runDialogues } from './dialogues-stage.js';
import { runJudge } from './judge-stage.js';
import { stageOptions, type CellPlan } from './make-cells.js';
import { Partition } from '../../engine/partition.js';
import type { PersonaLensPipeline } from './pipeline-section.js';
import { DIALOGUES_FORMAT, dialogueCell, JUDGMENTS_FORMAT } from './records.js';

/** A partition whose logs are newer than its compacted Parquet (e.g. a run was killed before compaction). */
function needsCompaction(dir: string, output: 'dialogues' | 'judgments'): boolean {
  return new Partition(dir, output === 'dialogues' ? DIALOGUES_FORMAT : JUDGMENTS_FORMAT).needsCompaction();
}

/** The plan of the dialogues or the judge over the grid's cells. */
export function planCellsStep(step: 'dialogues' | 'judge', cells: CellPlan[], of: (c: CellPlan) => CellWork): StepResult {
  return planCellStep(
    step,
    cells.map((c) => ({ id: c.id, assistant: c.assistant, setting: c.setting, work: of(c) })),
    { noun: 'cell' },
  );
}

/** Runs the grid's cells that have work left, `limits.cells` at a time, each with its own concurrency. */
export async function runDialogueCells(o: StepContext<PersonaLensPipeline>, cells: CellPlan[]): Promise<StepResult> {
  const { p, ws, budget } = o;
  const base = stageOptions(p, ws, {
    signal: o.signal,
    dryRun: false,
    progress: o.progress && p.limits.cells === 1,
    retryFailed: o.retryFailed,
    concurrency: p.limits.concurrency,
    ...(budget ? { budget } : {}),
    parentRunId: o.runId,
  });
  let stop = false;
  const spend = emptySpend();
  const results = await pMap(
    cells,
    async (c): Promise<CellResult> => {
      const entry = { id: c.id, assistant: c.assistant, setting: c.setting, work: c.dialogues };
      if (c.dialogues.pending === 0 && !needsCompaction(c.dir, 'dialogues')) {
        if (c.dialogues.failed > 0) {
          stop ||= !o.keepGoing;
          return { ...entry, status: 'failed', error: `${c.dialogues.failed} dialogue(s) recorded failed (--retry-failed reruns them)` };
        }
        return { ...entry, status: 'up-to-date' };
      }
      if (stop || o.signal.aborted || budget?.capped) return { ...entry, status: 'not-run' };
      try {
        const s = await runDialogues({
          ...base,
          assistants: [c.assistant],
          settings: [c.setting],
          ...(p.dialogues!.user ? { user: p.dialogues!.user } : {}),
          replicates: p.dialogues!.replicates,
        });
        addSpend(spend, s.spend);
        const failedNow = s.failed + (o.retryFailed ? 0 : s.already_failed);
        const line = {
          ...entry,
          status: (failedNow > 0 ? 'failed' : 'ran') as StepStatus,
          new: { ok: s.ok, failed: s.failed, failure_reasons: s.failure_reasons },
          ...(s.spend_capped ? { spend_capped: true } : {}),
        };
        if (failedNow > 0) stop ||= !o.keepGoing;
        o.log(
          `  dialogues  ${c.setting} | ${c.assistant}: ${s.ok} ok, ${s.failed} failed${s.failed ? ` (${reasons(s.failure_reasons)})` : ''}${s.spend_capped ? ' (stopped at the spend cap)' : ''}`,
        );
        return failedNow > 0 ? { ...line, error: `${failedNow} dialogue(s) failed${s.failed ? `: ${reasons(s.failure_reasons)}` : ''}` } : line;
      } catch (error) {
        stop ||= !o.keepGoing;
        return { ...entry, status: 'failed', error: error instanceof PlensError ? `${error.code}: ${error.message}` : (error as Error).message };
      }
    },
    { concurrency: p.limits.cells },
  );
  const work = results.reduce((n, r) => n + (r.new ? r.new.ok + r.new.failed : 0), 0);
  const bad = results.filter((r) => r.status === 'failed');
  // Capped: a cell the cap stopped, or one it kept from starting.
  const capped = Boolean(budget?.capped) && results.some((r) => r.spend_capped || r.status === 'not-run');
  const ran = results.some((r) => r.status === 'ran');
  return {
    step: 'dialogues',
    status: bad.length ? 'failed' : ran ? 'ran' : capped ? 'not-run' : 'up-to-date',
    work,
    detail:
      (bad.length
        ? `${bad.length} of ${cells.length} cell(s) failed: ${bad.map((b) => `${b.setting} | ${b.assistant}: ${b.error}`).join('; ')}`
        : work === 0 && !capped
          ? `up to date (${cells.length} cells)`
          : `${work} new dialogue(s) in ${results.filter((r) => r.status === 'ran').length} of ${cells.length} cell(s)`) +
      (capped ? `; stopped at the spend cap of $${budget!.maxUsd.toFixed(2)}` : ''),
    cells: results,
    spend,
    ...(capped ? { spend_capped: true } : {}),
  };
}

/** The judge over the pipeline's cells at once: its output is one partition, written by one writer. */
export async function runJudgeStep(o: StepContext<PersonaLensPipeline>, cells: CellPlan[]): Promise<StepResult> {
  const { p, ws, budget } = o;
  const judge = p.judge!;
  const dirs = cells.map((c) => c.dir).filter((d) => dialogueCell(d).isCompacted());
  const total = sumWork(cells.map((c) => c.judge!));
  if (dirs.length === 0) return { step: 'judge', status: 'up-to-date', work: 0, detail: 'no dialogues to judge yet' };
  const options = {
    ...stageOptions(p, ws, {
      signal: o.signal,
      dryRun: false,
      progress: o.progress,
      retryFailed: o.retryFailed,
      concurrency: p.limits.concurrency * p.limits.cells,
      ...(budget ? { budget } : {}),
      parentRunId: o.runId,
    }),
    judge: judge.model,
    dimensions: judge.dimensions,
    reask: judge.reask,
    ...(judge.batch ? { batch: judge.batch } : {}),
    dialogueDirs: dirs,
  };
  const plan = await runJudge({ ...options, dryRun: true, cache: 'off' });
  const judgeDir = plan.dir;
  if (plan.planned === 0 && !needsCompaction(judgeDir, 'judgments')) {
    if (total.failed > 0)
      return { step: 'judge', status: 'failed', work: 0, detail: `${total.failed} judgment(s) recorded failed or unparsed (--retry-failed reruns them)` };
    return { step: 'judge', status: 'up-to-date', work: 0, detail: `up to date (${total.done} judgments)` };
  }
  const s = await runJudge(options);
  const failedNow = s.failed + (o.retryFailed ? 0 : s.already_failed);
  return {
    step: 'judge',
    status: failedNow > 0 ? 'failed' : 'ran',
    work: s.ok + s.failed,
    detail: `${s.ok} new judgment(s), ${s.failed} failed${s.failed ? ` (${reasons(s.failure_reasons)})` : ''}; ${s.already_done} kept${s.spend_capped ? `; stopped at the spend cap of $${s.max_cost_usd!.toFixed(2)}` : ''}`,
    ...(s.spend ? { spend: s.spend } : {}),
    ...(s.spend_capped ? { spend_capped: true } : {}),
  };
}
