import { Workspace } from '../core/workspace.js';
import type { Partition } from '../engine/partition.js';
import { readLedgers } from '../engine/batch-ledger.js';
import { addCallSpend, emptySpend, formatSpend, type SpendBreakdown } from '../engine/spend-budget.js';
import { dialogueCell, judgeFolder } from '../benchmarks/personalens/records.js';
import { runJudge } from '../benchmarks/personalens/judge-stage.js';
import { planCells, stageOptions } from './cells.js';
import { personaPromptsFile, planPersonaPredictions } from './persona.js';
import { predictionPartition } from '../benchmarks/personabench/predict.js';
import type { Pipeline } from './pipeline.js';
import { readManifest, readState } from './state.js';
import { doneSteps, outputExists, reportFileOf, STEPS, stepAvailable, type FileStep } from './steps.js';

export interface Spent {
  calls: number;
  cached_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export interface WorkStatus {
  done: number;
  /** null when it cannot be known yet (the scenarios are not selected, or out of date). */
  pending: number | null;
  failed: number;
  /** The most common failure reasons of what is failed now, most frequent first. */
  failure_reasons: Array<{ reason: string; count: number }>;
  spent: Spent;
  /** Part of `pending` is estimated: judgments of dialogues not made yet. */
  pending_estimated?: boolean;
  /** PERSONA-bench predictions: replies that did not parse (kept, counted, never scored; not in `failed`). */
  unparsed?: number;
}

type StageState = 'done' | 'out-of-date' | 'pending' | 'off';

export interface StatusResult {
  pipeline: string;
  file: string;
  workspace: string;
  warehouse: string;
  benchmark: string;
  /** The pipeline's file steps (its benchmark's), in order. */
  stages: Partial<Record<FileStep, StageState>>;
  scenarios: number | null;
  /** PERSONA-bench: per model, the predictions done, pending, failed and unparsed, and what they cost. */
  predictions: Array<{ model: string; work: WorkStatus }>;
  cells: Array<{ id: string; assistant: string; setting: string; dialogues: WorkStatus; judge: WorkStatus | null }>;
  totals: { dialogues: WorkStatus; judge: WorkStatus | null };
  /** What the pipeline's calls have cost so far, by role (user agent, assistant, judge) and by model, from the call events. */
  spend: SpendBreakdown;
  /** Judge batches submitted and not yet collected (batch mode): rerun the judge with --batch to collect them. */
  open_batches: { batches: number; requests: number; batch_ids: string[] };
  report: string | null;
}

interface LogRecord {
  key: string;
  status: string;
  error?: { kind?: string } | null;
  dialogue_id?: string;
}

interface LogEvent {
  key: string;
  role?: string;
  model?: string;
  status?: string;
  cached?: boolean;
  input_tokens?: number | null;
  output_tokens?: number | null;
  cost_usd?: number | null;
}

/** `plens status`: per stage and cell, what is done, left and failed, and what it has cost so far. Runs nothing. */
export async function pipelineStatus(p: Pipeline, signal: AbortSignal): Promise<StatusResult> {
  const ws = new Workspace(p.workspace);
  const state = readState(p);
  // Done: current by the step table's fingerprint, and so is every file step before it.
  const done = doneSteps(p, state);
  const scenariosDone = done.scenarios;
  const stage = (known: boolean, current: boolean) => (current ? 'done' : known ? 'out-of-date' : 'pending') as 'done' | 'out-of-date' | 'pending';

  const cells: StatusResult['cells'] = [];
  const spend = emptySpend();
  let judgeDirForBatches: string | null = null;
  const predictions: StatusResult['predictions'] = [];
  if (p.persona && done.select) {
    const plans = await planPersonaPredictions(p, ws, { promptRecords: personaPromptsFile(p), signal });
    for (const m of plans) {
      const parts = await Promise.all(m.dirs.map((d) => readPartition(predictionPartition(d))));
      // A model's partitions (one per task x setting) summed as the cells' are.
      const sum = sumStatus(parts.map((part) => ({ ...emptyWork(), failure_reasons: part.reasons(), spent: part.spent(undefined, spend) })));
      predictions.push({
        model: m.model,
        work: {
          done: m.work.done,
          pending: m.work.pending,
          failed: m.work.failed,
          unparsed: m.unparsed,
          failure_reasons: sum.failure_reasons,
          spent: sum.spent,
        },
      });
    }
  } else if (p.persona) {
    for (const model of p.persona.models) predictions.push({ model, work: { ...emptyWork(), unparsed: 0 } });
  }
  if (scenariosDone && p.dialogues) {
    const plans = await planCells(p, ws, signal);
    const judgeDir = p.judge
      ? await judgeDirOf(
          p,
          ws,
          signal,
          plans.map((c) => c.dir),
        )
      : null;
    const judgeLogs = judgeDir ? await readPartition(judgeFolder(judgeDir)) : null;
    judgeDirForBatches = judgeDir;
    for (const c of plans) {
      const d = await readPartition(dialogueCell(c.dir));
      const dialogues: WorkStatus = {
        done: c.dialogues.done,
        pending: c.dialogues.pending,
        failed: c.dialogues.failed,
        failure_reasons: d.reasons(),
        spent: d.spent(undefined, spend),
      };
      let judge: WorkStatus | null = null;
      if (judgeLogs && c.judge) {
        // Judgments belong to a cell through the dialogue they judge.
        const mine = (r: LogRecord) => r.dialogue_id !== undefined && d.okKeys.has(r.dialogue_id);
        judge = {
          done: c.judge.done,
          pending: c.judge.pending,
          failed: c.judge.failed,
          failure_reasons: judgeLogs.reasons(mine),
          spent: judgeLogs.spent(mine, spend),
        };
      } else if (c.judge) {
        judge = { ...emptyWork(), pending: c.judge.pending };
      }
      if (judge && c.judge?.estimated) judge.pending_estimated = true;
      cells.push({ id: c.id, assistant: c.assistant, setting: c.setting, dialogues, judge });
    }
  } else if (p.dialogues) {
    for (const a of p.dialogues.assistants)
      for (const s of p.dialogues.settings) {
        cells.push({ id: '', assistant: a, setting: s, dialogues: emptyWork(), judge: p.judge ? emptyWork() : null });
      }
  }

  const report = reportFileOf(state);
  const of = (step: FileStep) => stage(outputExists(step, p, state), done[step] === true);
  const stages: StatusResult['stages'] = {};
  for (const step of STEPS) {
    if (step === 'dialogues' || step === 'judge' || step === 'predictions') continue;
    // The report is listed as off when the pipeline has none; other steps of another benchmark are absent.
    if (step === 'report') stages.report = p.report ? of('report') : 'off';
    else if (stepAvailable(step, p)) stages[step] = of(step);
  }
  return {
    pipeline: p.name,
    file: p.file,
    workspace: p.workspace,
    warehouse: p.warehouse,
    benchmark: p.benchmark,
    stages,
    scenarios: scenariosDone ? scenarioCount(ws) : null,
    predictions,
    cells,
    totals: { dialogues: sumStatus(cells.map((c) => c.dialogues)), judge: p.judge ? sumStatus(cells.map((c) => c.judge ?? emptyWork())) : null },
    spend,
    open_batches: await openBatches(judgeDirForBatches),
    report,
  };
}

/** The judge's batches not yet collected, from its partition's ledgers. */
async function openBatches(dir: string | null): Promise<StatusResult['open_batches']> {
  const open = dir ? (await readLedgers(dir)).filter((b) => !b.processed) : [];
  return { batches: open.length, requests: open.reduce((n, b) => n + b.keys.length, 0), batch_ids: open.map((b) => b.batchId ?? `${b.id} (not yet created)`) };
}

async function judgeDirOf(p: Pipeline, ws: Workspace, signal: AbortSignal, dirs: string[]): Promise<string | null> {
  const withDialogues = dirs.filter((d) => dialogueCell(d).isCompacted());
  if (withDialogues.length === 0) return null;
  const base = stageOptions(p, ws, { signal, dryRun: true, progress: false, retryFailed: false, concurrency: 1 });
  const j = await runJudge({ ...base, judge: p.judge!.model, dimensions: p.judge!.dimensions, dialogueDirs: withDialogues });
  return j.dir;
}

/** A partition's logs, read once: the latest state of every key and the calls' spend. */
async function readPartition(partition: Partition) {
  // A result beats any failure; among failures the latest try counts.
  const latest = await partition.latest<LogRecord>();
  const events: LogEvent[] = [];
  for await (const e of partition.read<LogEvent>('events')) events.push(e);
  const okKeys = new Set([...latest.values()].filter((r) => r.status === 'ok').map((r) => r.key));
  return {
    okKeys,
    reasons(filter: (r: LogRecord) => boolean = () => true) {
      const counts = new Map<string, number>();
      for (const r of latest.values())
        if (r.status !== 'ok' && filter(r)) counts.set(r.error?.kind ?? r.status, (counts.get(r.error?.kind ?? r.status) ?? 0) + 1);
      return [...counts]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([reason, count]) => ({ reason, count }));
    },
    /** What the calls of the filtered keys cost; each answered call is also added, by role and model, to `split`. */
    spent(filter: (r: LogRecord) => boolean = () => true, split?: SpendBreakdown): Spent {
      const keys = new Set([...latest.values()].filter(filter).map((r) => r.key));
      const s: Spent = { calls: 0, cached_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
      for (const e of events) {
        if (!keys.has(e.key)) continue;
        if (split && e.status !== 'failed' && e.role && e.model)
          addCallSpend(split, { role: e.role, model: e.model, cached: Boolean(e.cached), cost_usd: e.cost_usd ?? 0 });
        s.calls++;
        // What was spent: a call the cache answered cost nothing this time.
        if (e.cached) s.cached_calls++;
        else {
          s.input_tokens += e.input_tokens ?? 0;
          s.output_tokens += e.output_tokens ?? 0;
          s.cost_usd += e.cost_usd ?? 0;
        }
      }
      return s;
    },
  };
}

function scenarioCount(ws: Workspace): number | null {
  return readManifest<{ tables?: { scenarios?: { rows?: number } } }>(ws.scenariosDir)?.tables?.scenarios?.rows ?? null;
}

function emptyWork(): WorkStatus {
  return { done: 0, pending: null, failed: 0, failure_reasons: [], spent: { calls: 0, cached_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 } };
}

function sumStatus(list: WorkStatus[]): WorkStatus {
  const t = emptyWork();
  t.pending = list.length && list.every((w) => w.pending !== null) ? 0 : null;
  const reasons = new Map<string, number>();
  for (const w of list) {
    t.done += w.done;
    t.failed += w.failed;
    if (t.pending !== null) t.pending += w.pending!;
    t.pending_estimated ||= Boolean(w.pending_estimated);
    for (const r of w.failure_reasons) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + r.count);
    for (const k of Object.keys(t.spent) as Array<keyof Spent>) t.spent[k] += w.spent[k];
  }
  t.failure_reasons = [...reasons]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([reason, count]) => ({ reason, count }));
  return t;
}

export function formatStatus(s: StatusResult): string {
  const n = (x: number | null) => (x === null ? '?' : Math.round(x).toLocaleString('en-US'));
  const work = (w: WorkStatus) =>
    `${n(w.done)} done, ${w.pending_estimated ? '~' : ''}${n(w.pending)} pending, ${n(w.failed)} failed${w.failure_reasons.length ? ` (${w.failure_reasons.map((r) => `${r.reason} x${r.count}`).join(', ')})` : ''}` +
    ` | ${n(w.spent.calls)} calls (${n(w.spent.cached_calls)} cached), ${n(w.spent.input_tokens)} in + ${n(w.spent.output_tokens)} out tokens, $${w.spent.cost_usd.toFixed(4)}`;
  const lines = [`pipeline ${s.pipeline} (${s.file})`, `  workspace ${s.workspace} | warehouse ${s.warehouse}`];
  if (s.stages.import) lines.push(`import     ${s.stages.import}`);
  if (s.stages.scenarios) lines.push(`scenarios  ${s.stages.scenarios}${s.scenarios !== null ? ` (${s.scenarios} selected)` : ''}`);
  if (s.stages.select) {
    const unparsed = (w: WorkStatus) => (w.unparsed !== undefined ? `, ${n(w.unparsed)} unparsed` : '');
    lines.push(`select     ${s.stages.select}`);
    const total = sumStatus(s.predictions.map((m) => m.work));
    total.unparsed = s.predictions.reduce((k, m) => k + (m.work.unparsed ?? 0), 0);
    lines.push(`predictions ${work(total)}`.replace(' failed', ` failed${unparsed(total)}`));
    for (const m of s.predictions) lines.push(`  ${m.model}: ${work(m.work)}`.replace(' failed', ` failed${unparsed(m.work)}`));
    if (s.stages.select !== 'done') lines.push('  (pending is known once the samples are selected: plens make select)');
    lines.push(`scores     ${s.stages.scores}`);
  }
  if (s.cells.length) {
    lines.push(`dialogues  ${work(s.totals.dialogues)}`);
    for (const c of s.cells) lines.push(`  ${c.setting} | ${c.assistant}: ${work(c.dialogues)}`);
    if (s.totals.judge) {
      lines.push(`judge      ${work(s.totals.judge)}`);
      for (const c of s.cells) if (c.judge) lines.push(`  ${c.setting} | ${c.assistant}: ${work(c.judge)}`);
    }
    if (s.stages.scenarios !== 'done') lines.push('  (pending is known once the scenarios are selected: plens make scenarios)');
  }
  const spend = formatSpend(s.spend);
  if (spend) lines.push(`spend      ${spend}`);
  if (s.open_batches.batches)
    lines.push(
      `batches    ${s.open_batches.batches} open (${s.open_batches.requests} requests; ${s.open_batches.batch_ids.join(', ')}): plens make judge (or plens judge --batch) collects them`,
    );
  for (const k of ['warehouse', 'tables', 'report'] as const) lines.push(`${k.padEnd(10)} ${s.stages[k]}`);
  if (s.report) lines.push(`report: ${s.report}`);
  return lines.join('\n');
}
