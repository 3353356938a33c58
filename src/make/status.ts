import { Workspace } from '../core/workspace.js';
import { emptySpend, formatSpend, type SpendBreakdown } from '../engine/spend-budget.js';
import { readState } from '../platform/make-state.js';
import type { Pipeline } from '../platform/pipeline.js';
import { benchmarkFor, benchmarkOf } from '../registry/registry.js';
import { allSteps, doneSteps, outputExists, reportFileOf } from './steps.js';

export type { Spent, WorkStatus } from '../platform/status-kit.js';

type StageState = 'done' | 'out-of-date' | 'pending' | 'off';

export interface StatusResult {
  pipeline: string;
  file: string;
  workspace: string;
  warehouse: string;
  benchmark: string;
  /** The pipeline's file steps (its benchmark's, then the shared ones), in order. */
  stages: Record<string, StageState>;
  /** What the pipeline's calls have cost so far, by role (user agent, assistant, judge) and by model, from the call events. */
  spend: SpendBreakdown;
  report: string | null;
  /** The benchmark's own fields (PersonaLens: scenarios, cells, totals, open_batches; PERSONA-bench: predictions). */
  [field: string]: unknown;
}

/** The shared steps status lists after the benchmark's. */
const SHARED = ['warehouse', 'tables', 'report'];

/** `plens status`: per stage and cell, what is done, left and failed, and what it has cost so far. Runs nothing. */
export async function pipelineStatus(p: Pipeline, signal: AbortSignal): Promise<StatusResult> {
  const ws = new Workspace(p.workspace);
  const state = readState(p);
  const benchmark = benchmarkFor(p);
  // Done: current by the step table's fingerprint, and so is every file step before it.
  const done = doneSteps(p, state);
  const spend = emptySpend();
  const own = benchmark.status ? await benchmark.status.collect({ p, ws, state, done, signal, spend }) : {};
  const stages: Record<string, StageState> = {};
  for (const s of allSteps()) {
    if (!s.fingerprint) continue;
    // The report is listed as off when the pipeline has none; other steps of another benchmark are absent.
    if (s.name === 'report') stages['report'] = p.report ? state3(outputExists('report', p, state), done['report'] === true) : 'off';
    else if (s.available(p)) stages[s.name] = state3(outputExists(s.name, p, state), done[s.name] === true);
  }
  return {
    pipeline: p.name,
    file: p.file,
    workspace: p.workspace,
    warehouse: p.warehouse,
    benchmark: p.benchmark,
    stages,
    ...own,
    spend,
    report: reportFileOf(state),
  };
}

const state3 = (known: boolean, current: boolean): StageState => (current ? 'done' : known ? 'out-of-date' : 'pending');

export function formatStatus(s: StatusResult): string {
  const lines = [`pipeline ${s.pipeline} (${s.file})`, `  workspace ${s.workspace} | warehouse ${s.warehouse}`];
  const own = benchmarkOf(s.benchmark).status?.format(s as StatusResult & { stages: Record<string, string> }) ?? { body: [] };
  lines.push(...own.body);
  const spend = formatSpend(s.spend);
  if (spend) lines.push(`spend      ${spend}`);
  lines.push(...(own.footer ?? []));
  for (const k of SHARED) lines.push(`${k.padEnd(10)} ${s.stages[k]}`);
  if (s.report) lines.push(`report: ${s.report}`);
  return lines.join('\n');
}
