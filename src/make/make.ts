import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlensError, usageError } from '../core/errors.js';
import { Workspace } from '../core/workspace.js';
import { withProgressSink } from '../engine/stage-progress.js';
import { formatEstimatedCost } from '../engine/stage-summary.js';
import { addSpend, emptySpend, formatSpend, SpendBudget, type SpendBreakdown } from '../engine/spend-budget.js';
import { modelSpecString, newRunId, RunRecorder } from '../engine/run-record.js';
import { parseModelSpec, unpriced } from '../llm/model-spec.js';
import type { StepContext } from '../platform/benchmark.js';
import { readState, writeState } from '../platform/make-state.js';
import type { Pipeline } from '../platform/pipeline.js';
import { fmtWork, type StepResult, type StepStatus } from '../platform/step-kit.js';
import { benchmarkFor } from '../registry/registry.js';
import { buildGraph, type Step } from './graph.js';
import type { MakeProgress } from '../platform/progress-view.js';
import { isCurrent, reportFileOf, STEP_TABLE, stepInputs } from './steps.js';

export type { StepResult, StepStatus };

export interface MakeOptions {
  targets: string[];
  dryRun: boolean;
  keepGoing: boolean;
  retryFailed: boolean;
  progress: boolean;
  signal: AbortSignal;
  /** One line per step as it finishes (the CLI prints them; --json collects them). */
  log: (line: string) => void;
  /**
   * One progress view over every stage the run starts (progress-view.ts): a live block on a
   * terminal, progress lines in a log. A dry run runs nothing and shows none.
   */
  view?: MakeProgress;
}

export interface MakeResult {
  pipeline: string;
  file: string;
  dry_run: boolean;
  workspace: string;
  warehouse: string;
  steps: StepResult[];
  /** Units of work done (or, with --dry-run, left). 0 means every target was up to date. */
  work: number;
  up_to_date: boolean;
  failed: string[];
  report: string | null;
  elapsed_ms: number;
  /** The run stopped at its spend cap (`--max-cost`, `limits.max_cost`): rerun with a higher cap to go on. */
  spend_capped: boolean;
  /** The spend cap of this run, or null for none. */
  max_cost_usd: number | null;
  /** What this run's calls cost, by role (user agent, assistant, judge) and by model. */
  spend: SpendBreakdown;
  spent_usd: number;
}

/** `plens make`: the steps the targets need, each only when it is missing or out of date, in dependency order. */
export async function make(p: Pipeline, o: MakeOptions): Promise<MakeResult> {
  const started = performance.now();
  const graph = buildGraph(o.targets, p);
  const ws = new Workspace(p.workspace);
  const state = readState(p);
  const steps: StepResult[] = [];
  const failed: string[] = [];
  const outcome = new Map<Step, StepStatus>();
  const shared = new Map<string, unknown>();
  // The run's record (runs/make-<id>.json): each stage run it starts names it as its parent.
  const runId = `make-${newRunId()}`;
  let scratch: string | undefined;
  // One budget for the whole run: every cell and the judge draw from the same cap.
  const maxCost = p.limits.maxCost;
  if (maxCost !== undefined) assertPriced(p);
  const budget = maxCost !== undefined && !o.dryRun ? new SpendBudget(maxCost) : undefined;

  const recorder = o.dryRun ? undefined : await startRecord(p, runId);
  const view = o.dryRun ? undefined : o.view;
  let stepStarted = performance.now();
  let viewStep: Step | undefined;
  const finish = (r: StepResult) => {
    // Floored, so the steps' times never add up to more than the run's.
    r.elapsed_ms = Math.floor(performance.now() - stepStarted);
    steps.push(r);
    outcome.set(r.step, r.status);
    if (r.status === 'failed') failed.push(r.step);
    if (viewStep === r.step) view?.stepEnded(r.step, o.signal.aborted && r.status === 'ran' ? 'stopped' : LABEL[r.status]);
    viewStep = undefined;
    o.log(formatStep(r));
  };
  // A step runs when what it depends on did not fail; --keep-going runs it on whatever is there.
  const blocked = (s: Step) => !o.keepGoing && !o.dryRun && graph.dependsOn[s]!.some((d) => outcome.get(d) === 'failed' || outcome.get(d) === 'not-run');
  const upstreamChanged = (s: Step) => graph.dependsOn[s]!.some((d) => outcome.get(d) === 'ran' || outcome.get(d) === 'would-run');

  view?.start();
  try {
    for (const step of graph.steps) {
      if (o.signal.aborted) break;
      stepStarted = performance.now();
      if (budget?.capped) {
        finish({
          step,
          status: 'not-run',
          work: 0,
          detail: `not run: the spend cap of $${budget.maxUsd.toFixed(2)} was reached (rerun with a higher --max-cost)`,
        });
        continue;
      }
      if (blocked(step)) {
        finish({ step, status: 'not-run', work: 0, detail: 'not run: a step it depends on failed (--keep-going runs it anyway)' });
        continue;
      }
      const def = STEP_TABLE[step]!;
      const ctx: StepContext = {
        p,
        ws,
        state,
        step,
        dryRun: o.dryRun,
        keepGoing: o.keepGoing,
        retryFailed: o.retryFailed,
        progress: o.progress,
        signal: o.signal,
        log: o.log,
        ...(budget ? { budget } : {}),
        upstreamChanged: upstreamChanged(step),
        tables: graph.tables,
        inputs: () => stepInputs(step, p),
        isCurrent: (inputs) => isCurrent(step, p, state, { ...(inputs !== undefined ? { inputs } : {}), tables: graph.tables }),
        save: async (inputs, output) => {
          state[step] = { inputs, ...(output ? { output } : {}) };
          await writeState(p, state);
        },
        writeState: () => writeState(p, state),
        scratch: () => (scratch ??= mkdtempSync(join(tmpdir(), 'plens-plan-'))),
        shared,
        runId,
      };
      try {
        view?.stepStarted(step);
        viewStep = step;
        finish(await (view ? withProgressSink(view, () => def.run(ctx)) : def.run(ctx)));
      } catch (error) {
        // Without --keep-going a thrown error stops make with its own code (usage, prerequisite, ...).
        if (!o.keepGoing) throw error;
        finish({
          step,
          status: 'failed',
          work: 0,
          detail: `failed: ${error instanceof PlensError ? `${error.code}: ${error.message}` : (error as Error).message}`,
        });
      }
    }
  } catch (error) {
    await recorder?.finish({
      status: o.signal.aborted ? 'interrupted' : 'failed',
      counts: stepCounts(steps),
      error: error instanceof PlensError ? `${error.code}: ${error.message}` : (error as Error).message,
    });
    throw error;
  } finally {
    if (viewStep) view?.stepEnded(viewStep, o.signal.aborted ? 'stopped' : 'FAILED');
    view?.stop();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
  const work = steps.reduce((n, s) => n + s.work, 0);
  const spend = emptySpend();
  for (const s of steps) addSpend(spend, s.spend);
  const spendCapped = Boolean(budget?.capped) && steps.some((s) => s.spend_capped || s.status === 'not-run');
  // A make that found everything up to date leaves no record: it produced nothing.
  if (work === 0 && failed.length === 0 && !o.signal.aborted) await recorder?.discard();
  else
    await recorder?.finish({
      status: o.signal.aborted ? 'interrupted' : failed.length ? 'failed' : spendCapped ? 'spend-capped' : 'ok',
      counts: stepCounts(steps),
      spend,
      ...(failed.length ? { error: `failed: ${failed.join(', ')}` } : {}),
    });
  return {
    pipeline: p.name,
    file: p.file,
    dry_run: o.dryRun,
    workspace: p.workspace,
    warehouse: p.warehouse,
    steps,
    work,
    up_to_date: work === 0 && failed.length === 0,
    failed,
    report: reportFileOf(state),
    elapsed_ms: Math.round(performance.now() - started),
    spend_capped: spendCapped,
    max_cost_usd: maxCost ?? null,
    spend,
    spent_usd: Object.values(spend.by_model).reduce((n, l) => n + l.cost_usd, 0),
  };
}

/** A make run's record: the pipeline (its file's hash), its benchmark's models and settings, the limits. */
async function startRecord(p: Pipeline, runId: string): Promise<RunRecorder> {
  const benchmark = benchmarkFor(p);
  return RunRecorder.start(p.workspace, {
    run_id: runId,
    kind: 'make',
    name: p.name,
    spec: {
      benchmark: benchmark.id,
      models: benchmark.models(p).map((spec) => ({ role: 'model', spec: modelSpecString(parseModelSpec(spec)) })),
      prompts: null,
      pipeline: { name: p.name, file: p.file, sha256: createHash('sha256').update(readFileSync(p.file)).digest('hex') },
      dataset_fingerprint: null,
      limits: { ...p.limits },
      settings: benchmark.reportMetadata(p),
    },
  });
}

/** Per step, its status and work: `import:ran` 1, `dialogues:work` 1080, ... */
function stepCounts(steps: readonly StepResult[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const s of steps) {
    counts[`${s.step}:${s.status}`] = 1;
    counts[`${s.step}:work`] = s.work;
  }
  return counts;
}

/** A cap cannot be kept on a model whose calls cannot be priced: refused before anything runs (also by a dry run). */
function assertPriced(p: Pipeline): void {
  const specs = benchmarkFor(p)
    .models(p)
    .map((s) => parseModelSpec(s));
  const missing = unpriced(specs);
  if (missing.length)
    throw usageError(
      `--max-cost / limits.max_cost: no price is known for ${missing.join(', ')}, so a spend cap cannot be kept`,
      `add price_in=...&price_out=... (USD per 1M tokens) to ${missing.length === 1 ? 'its model spec' : 'their model specs'} in ${p.file}, or run without a cap`,
    );
}

const LABEL: Record<StepStatus, string> = { 'up-to-date': 'up to date', ran: 'done', 'would-run': 'to do', failed: 'FAILED', 'not-run': 'not run' };

export function formatStep(r: StepResult): string {
  // Steps that ran (or failed) say how long they took; up-to-date checks take milliseconds.
  const took = (r.status === 'ran' || r.status === 'failed') && r.elapsed_ms !== undefined ? ` [${(r.elapsed_ms / 1000).toFixed(1)} s]` : '';
  const lines = [`${r.step.padEnd(10)} ${r.detail}${r.reason ? ` (${r.reason})` : ''}${took}`];
  for (const c of r.cells ?? []) {
    // A run lists only the cells that need attention; the ones that ran were logged as they finished.
    if (r.status !== 'would-run' && (c.status === 'ran' || c.status === 'up-to-date')) continue;
    lines.push(`  ${LABEL[c.status].padEnd(10)} ${c.setting} | ${c.assistant}: ${c.error ?? fmtWork(c.work)}`);
  }
  return lines.join('\n');
}

export function formatMake(r: MakeResult): string {
  const lines: string[] = [];
  if (r.dry_run) {
    const est = r.steps.flatMap((s) => (s.estimate ? [s.estimate] : []));
    const cost = est.reduce((n, e) => n + e.costUsd, 0);
    const calls = est.reduce((n, e) => n + e.calls, 0);
    const unknown = [...new Set(r.steps.filter((s) => s.status === 'would-run').flatMap((s) => s.price_unknown ?? []))];
    lines.push(
      r.work === 0
        ? 'plan: nothing to do: every target is up to date'
        : `plan: ${r.steps
            .filter((s) => s.status === 'would-run')
            .map((s) => s.step)
            .join(
              ', ',
            )} to run; ~${Math.round(calls).toLocaleString('en-US')} calls, ${formatEstimatedCost(cost, unknown).replace('model specs', "pipeline's model specs")}. Nothing was run.`,
    );
    if (r.max_cost_usd !== null && r.work > 0)
      lines.push(
        `spend cap: $${r.max_cost_usd.toFixed(2)}${cost > r.max_cost_usd ? ', below the estimate: the run would stop at the cap (a rerun with a higher cap goes on)' : ''}`,
      );
  } else if (r.failed.length) {
    lines.push(`make: FAILED: ${r.failed.join(', ')} (${(r.elapsed_ms / 1000).toFixed(1)} s)`);
  } else if (r.spend_capped) {
    lines.push(
      `make: STOPPED at the spend cap of $${r.max_cost_usd!.toFixed(2)} after $${r.spent_usd.toFixed(4)} (${(r.elapsed_ms / 1000).toFixed(1)} s); finished work is kept: rerun with a higher --max-cost to go on`,
    );
  } else if (r.up_to_date) {
    lines.push('nothing to do: every target is up to date');
  } else {
    lines.push(`make: done in ${(r.elapsed_ms / 1000).toFixed(1)} s`);
  }
  const spend = formatSpend(r.spend);
  if (spend) lines.push(`spend: ${spend}`);
  lines.push(`workspace ${r.workspace} | warehouse ${r.warehouse}`);
  if (r.report) lines.push(`report: ${r.report}`);
  return lines.join('\n');
}
