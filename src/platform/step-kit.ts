import { PlensError } from '../core/errors.js';
import type { WorkCost } from '../engine/stage-runner.js';
import { addCost, zeroCost } from '../engine/stage-runner.js';
import { formatEstimatedCost } from '../engine/stage-summary.js';
import type { SpendBreakdown } from '../engine/spend-budget.js';

export type StepStatus = 'up-to-date' | 'ran' | 'would-run' | 'failed' | 'not-run';

/** Work of one step in one cell: what is done, what is left, what failed, and the estimate for what is left. */
export interface CellWork {
  done: number;
  pending: number;
  failed: number;
  estimate: WorkCost;
  /** True when part of `pending` is an estimate (judgments of dialogues not made yet). */
  estimated?: boolean;
  /** Models with no price in their spec: the estimate's cost leaves them out. */
  priceUnknown?: string[];
}

/** One cell of an LLM step (an assistant x setting, a model): its plan and, after a run, what it did. */
export interface CellResult {
  id: string;
  assistant: string;
  setting: string;
  status: StepStatus;
  work: CellWork;
  new?: { ok: number; failed: number; failure_reasons: Record<string, number> };
  error?: string;
  /** The spend cap stopped this cell before its work was done. */
  spend_capped?: boolean;
}

export interface StepResult {
  step: string;
  status: StepStatus;
  /** Units of new work: dialogues, judgments, predictions, or 1 for a rebuilt file step. */
  work: number;
  detail: string;
  reason?: string;
  /** Wall time of the step, checks included (a step that was up to date takes milliseconds). */
  elapsed_ms?: number;
  cells?: CellResult[];
  estimate?: WorkCost;
  /** With an estimate: the models whose spec gives no price, left out of its cost. */
  price_unknown?: string[];
  /** What the step's calls cost, by role and by model. */
  spend?: SpendBreakdown;
  /** The spend cap stopped this step before its work was done. */
  spend_capped?: boolean;
}

export function sumWork(cells: CellWork[]): CellWork {
  const t: CellWork = { done: 0, pending: 0, failed: 0, estimate: zeroCost() };
  for (const c of cells) {
    t.done += c.done;
    t.pending += c.pending;
    t.failed += c.failed;
    t.estimated ||= Boolean(c.estimated);
    t.priceUnknown = [...new Set([...(t.priceUnknown ?? []), ...(c.priceUnknown ?? [])])];
    addCost(t.estimate, c.estimate);
  }
  return t;
}

/** Failure reasons, most frequent first: `timeout x3, http_500 x1`. */
export function reasons(r: Record<string, number>): string {
  return Object.entries(r)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} x${v}`)
    .join(', ');
}

export function fmtWork(w: CellWork): string {
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const left = `${n(w.pending)}${w.estimated ? ' (estimated)' : ''} left, ${n(w.done)} done, ${n(w.failed)} failed`;
  return w.pending > 0
    ? `${left}; ~${n(w.estimate.calls)} calls, ~${n(w.estimate.inputTokens)} in + ~${n(w.estimate.outputTokens)} out tokens, ${formatEstimatedCost(w.estimate.costUsd, w.priceUnknown ?? []).replace(/ \(prices from the model specs\)$/, '')}`
    : left;
}

/** The status of planned work: left to do, failed and not retried, or done. */
export const planStatus = (w: CellWork): StepStatus => (w.pending > 0 ? 'would-run' : w.failed > 0 ? 'failed' : 'up-to-date');

/**
 * A dry run's result for an LLM step over cells: per cell, what is left and what it would cost.
 * `summary` says what the cells are (`3 cell(s)`, `2 model(s)`); `extra` adds to the line.
 */
export function planCellStep(
  step: string,
  cells: Array<{ id: string; assistant: string; setting: string; work: CellWork }>,
  o: { noun: string; extra?: string },
): StepResult {
  const total = sumWork(cells.map((c) => c.work));
  return {
    step,
    status: planStatus(total),
    work: total.pending,
    detail: `${cells.length} ${o.noun}(s): ${fmtWork(total)}${o.extra ?? ''}`,
    cells: cells.map((c) => ({ id: c.id, assistant: c.assistant, setting: c.setting, status: planStatus(c.work), work: c.work })),
    estimate: total.estimate,
    price_unknown: total.priceUnknown ?? [],
  };
}

/** What one model's run did, as a per-model LLM step reports it. */
export interface ModelRun {
  /** New results and new failed calls: the step's work. */
  new: { ok: number; failed: number; failure_reasons: Record<string, number> };
  /** Failures now: the new ones, and the recorded ones unless they were retried. */
  failedNow: number;
  /** What failed, when `failedNow` > 0. */
  error: string;
  spend_capped?: boolean;
}

/**
 * An LLM step over the pipeline's models, one model at a time (each with the pipeline's
 * concurrency): a model with nothing left is up to date (or failed, by its recorded failures);
 * after a failure the rest do not run unless --keep-going; the spend cap and an interrupt stop it.
 */
export async function runModelsInTurn<M extends { model: string; work: CellWork }>(
  ctx: { keepGoing: boolean; signal: AbortSignal; budget?: { capped: boolean } },
  step: string,
  plans: readonly M[],
  o: {
    /** What each model's cell covers, as the plan lists it. */
    setting: string;
    /** What one result is called: `prediction`, `response`. */
    noun: string;
    /** What a recorded failure is called: `call`, `response`. */
    failure: string;
    /** The model has nothing to do (default: nothing pending). */
    idle?: (m: M) => boolean;
    run: (m: M) => Promise<ModelRun>;
  },
): Promise<StepResult> {
  const results: CellResult[] = [];
  let stop = false;
  for (const m of plans) {
    const entry = { id: m.model, assistant: m.model, setting: o.setting, work: m.work };
    if (o.idle ? o.idle(m) : m.work.pending === 0) {
      results.push(
        m.work.failed > 0
          ? { ...entry, status: 'failed', error: `${m.work.failed} ${o.failure}(s) recorded failed (--retry-failed reruns them)` }
          : { ...entry, status: 'up-to-date' },
      );
      stop ||= m.work.failed > 0 && !ctx.keepGoing;
      continue;
    }
    if (stop || ctx.signal.aborted || ctx.budget?.capped) {
      results.push({ ...entry, status: 'not-run' });
      continue;
    }
    try {
      const r = await o.run(m);
      const line = { ...entry, new: r.new, ...(r.spend_capped ? { spend_capped: true } : {}) };
      if (r.failedNow > 0) {
        stop ||= !ctx.keepGoing;
        results.push({ ...line, status: 'failed', error: r.error });
      } else results.push({ ...line, status: 'ran' });
    } catch (error) {
      stop ||= !ctx.keepGoing;
      results.push({ ...entry, status: 'failed', error: error instanceof PlensError ? `${error.code}: ${error.message}` : (error as Error).message });
    }
  }
  const work = results.reduce((n, r) => n + (r.new ? r.new.ok + r.new.failed : 0), 0);
  const bad = results.filter((r) => r.status === 'failed');
  const capped = Boolean(ctx.budget?.capped) && results.some((r) => r.spend_capped || r.status === 'not-run');
  return {
    step,
    status: bad.length ? 'failed' : results.some((r) => r.status === 'ran') ? 'ran' : capped ? 'not-run' : 'up-to-date',
    ...(capped ? { spend_capped: true } : {}),
    work,
    detail: bad.length
      ? `${bad.length} of ${plans.length} model(s) failed: ${bad.map((b) => `${b.assistant}: ${b.error}`).join('; ')}`
      : work === 0
        ? `up to date (${plans.length} model(s), ${plans.reduce((n, m) => n + m.work.done, 0)} ${o.noun}s)`
        : `${work} new ${o.noun}(s) for ${results.filter((r) => r.status === 'ran').length} of ${plans.length} model(s)`,
    cells: results,
  };
}
