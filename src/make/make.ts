import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pMap from 'p-map';
import { PlensError, usageError } from '../core/errors.js';
import { Workspace } from '../core/workspace.js';
import { runImport } from '../benchmarks/personalens/dataset/import.js';
import type { WorkCost } from '../engine/stage-runner.js';
import { runDialogues } from '../benchmarks/personalens/dialogues-stage.js';
import { runJudge } from '../benchmarks/personalens/judge-stage.js';
import { runScenarios } from '../benchmarks/personalens/scenarios/stage.js';
import { dialogueCell } from '../benchmarks/personalens/records.js';
import { collectTables } from '../tables/tables.js';
import { ViewRows } from '../tables/view-rows.js';
import { runPersonaSelect } from '../benchmarks/personabench/select-stage.js';
import { buildWarehouse } from '../warehouse/build.js';
import { formatEstimatedCost } from '../engine/stage-summary.js';
import { addSpend, emptySpend, formatSpend, SpendBudget, type SpendBreakdown } from '../engine/spend-budget.js';
import { parseModelSpec, unpriced } from '../llm/model-spec.js';
import { planCells, stageOptions, sumWork, type CellPlan, type CellWork } from './cells.js';
import { needsPersonaCompaction, personaPromptsFile, planPersonaPredictions, runPersonaModel, type PersonaModelPlan } from './persona.js';
import { buildGraph, type Step } from './graph.js';
import type { Pipeline } from './pipeline.js';
import { fileStamp } from '../core/file-stamps.js';
import { manifestStamp, needsCompaction, personaMetricsFile, personaSelectionDir, personaSelectionStamp, readState, writeState } from './state.js';
import { isCurrent, reportFileOf, stepInputs, tableStateKey } from './steps.js';

export interface MakeOptions {
  targets: string[];
  dryRun: boolean;
  keepGoing: boolean;
  retryFailed: boolean;
  progress: boolean;
  signal: AbortSignal;
  /** One line per step as it finishes (the CLI prints them; --json collects them). */
  log: (line: string) => void;
}

export type StepStatus = 'up-to-date' | 'ran' | 'would-run' | 'failed' | 'not-run';

export interface StepResult {
  step: Step;
  status: StepStatus;
  /** Units of new work: dialogues, judgments, or 1 for a rebuilt import/selection/warehouse/table set/report. */
  work: number;
  detail: string;
  reason?: string;
  /** Wall time of the step, checks included (a step that was up to date takes milliseconds). */
  elapsed_ms?: number;
  cells?: Array<{
    id: string;
    assistant: string;
    setting: string;
    status: StepStatus;
    work: CellWork;
    new?: { ok: number; failed: number; failure_reasons: Record<string, number> };
    error?: string;
    /** The spend cap stopped this cell before its work was done. */
    spend_capped?: boolean;
  }>;
  estimate?: WorkCost;
  /** With an estimate: the models whose spec gives no price, left out of its cost. */
  price_unknown?: string[];
  /** What the step's calls cost, by role and by model. */
  spend?: SpendBreakdown;
  /** The spend cap stopped this step before its work was done. */
  spend_capped?: boolean;
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
  let scratch: string | undefined;
  let planWs = ws;
  let cells: CellPlan[] | undefined;
  // PERSONA-bench: a dry run whose selection is out of date selects into a scratch folder to count.
  let personaScratch: string | undefined;
  let reportFile = reportFileOf(state);
  // One budget for the whole run: every cell and the judge draw from the same cap.
  const maxCost = p.limits.maxCost;
  if (maxCost !== undefined) assertPriced(p);
  const budget = maxCost !== undefined && !o.dryRun ? new SpendBudget(maxCost) : undefined;

  // The tables step's query results, for the report step that reads the same warehouse build.
  const viewRows = new ViewRows();
  let stepStarted = performance.now();
  const finish = (r: StepResult) => {
    // Floored, so the steps' times never add up to more than the run's.
    r.elapsed_ms = Math.floor(performance.now() - stepStarted);
    steps.push(r);
    outcome.set(r.step, r.status);
    if (r.status === 'failed') failed.push(r.step);
    o.log(formatStep(r));
  };
  // A step runs when what it depends on did not fail; --keep-going runs it on whatever is there.
  const blocked = (s: Step) => !o.keepGoing && !o.dryRun && graph.dependsOn[s].some((d) => outcome.get(d) === 'failed' || outcome.get(d) === 'not-run');
  const upstreamChanged = (s: Step) => graph.dependsOn[s].some((d) => outcome.get(d) === 'ran' || outcome.get(d) === 'would-run');
  const save = async (step: string, inputs: string, output?: string) => {
    state[step] = { inputs, ...(output ? { output } : {}) };
    await writeState(p, state);
  };

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
      try {
        switch (step) {
          case 'import': {
            const data = p.data!;
            const inputs = stepInputs('import', p);
            if (isCurrent('import', p, state, { inputs })) finish({ step, status: 'up-to-date', work: 0, detail: `up to date (${data.from})` });
            else if (o.dryRun) {
              // The plan needs the scenarios to count the dialogues: import into a scratch folder.
              scratch = mkdtempSync(join(tmpdir(), 'plens-plan-'));
              planWs = new Workspace(scratch);
              const r = await runImport({ from: data.from, ...(data.schema ? { schema: data.schema } : {}), workspace: planWs });
              finish({
                step,
                status: 'would-run',
                work: 1,
                detail: `would import ${r.users} users, ${r.scenarios.sd + r.scenarios.md} scenarios from ${data.from}`,
                reason: state['import'] ? 'the data changed' : 'not imported yet',
              });
            } else {
              const r = await runImport({ from: data.from, ...(data.schema ? { schema: data.schema } : {}), workspace: ws, progress: o.progress });
              await save('import', inputs, manifestStamp(ws.datasetDir)!);
              finish({ step, status: 'ran', work: 1, detail: `imported ${r.users} users, ${r.scenarios.sd + r.scenarios.md} scenarios -> ${ws.datasetDir}` });
            }
            break;
          }
          case 'scenarios': {
            if (!upstreamChanged(step) && isCurrent('scenarios', p, state)) finish({ step, status: 'up-to-date', work: 0, detail: 'up to date' });
            else if (o.dryRun) {
              if (!scratch) {
                scratch = mkdtempSync(join(tmpdir(), 'plens-plan-'));
                symlinkSync(ws.datasetDir, join(scratch, 'dataset'), 'dir');
                planWs = new Workspace(scratch);
              }
              const r = await runScenarios(planWs, p.selection!);
              finish({
                step,
                status: 'would-run',
                work: 1,
                detail: `would select ${r.scenarios.total} scenarios (${r.scenarios.sd} SD + ${r.scenarios.md} MD)`,
                reason: 'the selection or the import changed',
              });
            } else {
              const r = await runScenarios(ws, p.selection!);
              await save('scenarios', stepInputs('scenarios', p), manifestStamp(ws.scenariosDir)!);
              finish({ step, status: 'ran', work: 1, detail: `selected ${r.scenarios.total} scenarios (${r.scenarios.sd} SD + ${r.scenarios.md} MD)` });
            }
            break;
          }
          case 'dialogues': {
            if (scratch) {
              // The scratch view sees the real outputs, so done keys count as done in the plan.
              for (const d of ['dialogues', 'judgments'])
                if (existsSync(join(ws.root, d)) && !existsSync(join(scratch, d))) symlinkSync(join(ws.root, d), join(scratch, d), 'dir');
            }
            cells = await planCells(p, planWs, o.signal, o.retryFailed);
            finish(o.dryRun ? planStep('dialogues', cells, (c) => c.dialogues) : await runDialogueCells(p, ws, cells, o, budget));
            break;
          }
          case 'judge': {
            cells ??= await planCells(p, planWs, o.signal, o.retryFailed);
            finish(o.dryRun ? planStep('judge', cells, (c) => c.judge!) : await runJudgeStep(p, ws, cells, o, budget));
            break;
          }
          case 'select': {
            const s = p.persona!;
            const inputs = stepInputs('select', p);
            if (isCurrent('select', p, state, { inputs })) finish({ step, status: 'up-to-date', work: 0, detail: `up to date (${s.source})` });
            else {
              if (o.dryRun) {
                scratch ??= mkdtempSync(join(tmpdir(), 'plens-plan-'));
                personaScratch = join(scratch, 'selection');
              }
              const out = o.dryRun ? personaScratch! : personaSelectionDir(p);
              const r = await runPersonaSelect({
                from: s.source,
                out,
                fidelity: s.fidelity,
                seed: s.seed,
                ...(s.original !== undefined ? { original: s.original } : {}),
                ...(s.python !== undefined ? { python: s.python } : {}),
              });
              const total = Object.values(r.counts).reduce((n, c) => n + c, 0);
              if (o.dryRun)
                finish({
                  step,
                  status: 'would-run',
                  work: 1,
                  detail: `would select ${total} samples (${s.fidelity}, seed ${s.seed}${s.original ? ", the original's wording" : ''}) from ${s.source}`,
                  reason: state['select'] ? 'the input or the selection settings changed' : 'not selected yet',
                });
              else {
                await save('select', inputs, personaSelectionStamp(p)!);
                finish({
                  step,
                  status: 'ran',
                  work: 1,
                  detail: `selected ${total} samples (${s.fidelity}, seed ${s.seed}${s.original ? ", the original makers' files" : ''}) -> ${out}`,
                });
              }
            }
            break;
          }
          case 'predictions': {
            const promptRecords = personaPromptsFile(p, personaScratch);
            const plans = await planPersonaPredictions(p, ws, { promptRecords, signal: o.signal, retryFailed: o.retryFailed });
            finish(o.dryRun ? planPersonaStep(p, plans) : await runPersonaPredictionStep(p, ws, plans, promptRecords, o, budget));
            break;
          }
          case 'scores': {
            const s = p.persona!;
            const inputs = stepInputs('scores', p);
            if (!upstreamChanged(step) && isCurrent('scores', p, state, { inputs }))
              finish({ step, status: 'up-to-date', work: 0, detail: `up to date (${personaMetricsFile(p)})` });
            else if (o.dryRun)
              finish({
                step,
                status: 'would-run',
                work: 1,
                detail: `would score the predictions${s.embeddings ? ` (SBERT through ${s.embeddings.startsWith('local:') ? 'the local model folder' : 'the embeddings endpoint'})` : ''}`,
              });
            else {
              const { runPersonaScores } = await import('../benchmarks/personabench/predict.js');
              const r = await runPersonaScores({ workspace: ws, ...(s.embeddings ? { embeddings: s.embeddings } : {}) });
              // Fingerprinted after scoring: the inputs are the predictions it read.
              await save('scores', stepInputs('scores', p), fileStamp(r.metrics)!);
              finish({
                step,
                status: 'ran',
                work: 1,
                detail: `scored -> ${r.metrics} (${r.rows} metric rows); SBERT ${r.sbert === null ? 'not scored (no persona.embeddings)' : `from ${r.sbert}`}`,
              });
            }
            break;
          }
          case 'warehouse': {
            const inputs = stepInputs('warehouse', p);
            if (!upstreamChanged(step) && isCurrent('warehouse', p, state, { inputs }))
              finish({ step, status: 'up-to-date', work: 0, detail: `up to date (${p.warehouse})` });
            else if (o.dryRun) finish({ step, status: 'would-run', work: 1, detail: `would build ${p.warehouse}` });
            else {
              const r = await buildWarehouse({ workspace: ws, dbPath: p.warehouse, lexical: p.lexical, lapsSpeakers: p.lapsSpeakers });
              // Fingerprinted after the build: the inputs are what this build read.
              await save('warehouse', inputs, fileStamp(p.warehouse)!);
              // The build itself found nothing it reads changed (e.g. a step before it ran and rewrote nothing).
              if (r.up_to_date) finish({ step, status: 'up-to-date', work: 0, detail: `up to date (${p.warehouse})` });
              else
                finish({
                  step,
                  status: 'ran',
                  work: 1,
                  detail: `built ${r.db} (${r.relations.filter((x) => x.type === 'view').length} views${skippedFiles(p, r.skipped)})`,
                });
            }
            break;
          }
          case 'tables': {
            if (!upstreamChanged(step) && isCurrent('tables', p, state, { tables: graph.tables }))
              finish({ step, status: 'up-to-date', work: 0, detail: `up to date (${p.tables.outDir})` });
            else if (o.dryRun)
              finish({
                step,
                status: 'would-run',
                work: 1,
                detail: `would render ${graph.tables.length} table(s) as ${p.tables.formats.join(', ')} in ${p.tables.outDir}`,
              });
            else {
              // One pass over the views for every format (each result view is computed once).
              const r = await collectTables({
                dbPath: p.warehouse,
                format: p.tables.formats[0] ?? 'md',
                formats: p.tables.formats,
                outDir: p.tables.outDir,
                only: graph.tables,
                viewRows,
              });
              const files = r.files.length;
              const missing = new Set(r.missing.map((m) => m.name));
              const now = stepInputs('tables', p);
              for (const t of graph.tables) state[tableStateKey(t)] = { inputs: now };
              await writeState(p, state);
              finish({
                step,
                status: 'ran',
                work: 1,
                detail: `wrote ${files} file(s) to ${p.tables.outDir}${missing.size ? ` (not in the warehouse: ${[...missing].join(', ')})` : ''}`,
              });
            }
            break;
          }
          case 'report': {
            const r = p.report!;
            const inputs = stepInputs('report', p);
            if (!upstreamChanged(step) && isCurrent('report', p, state, { inputs }))
              finish({ step, status: 'up-to-date', work: 0, detail: `up to date (${reportFile})` });
            else if (o.dryRun) finish({ step, status: 'would-run', work: 1, detail: `would write the report to ${r.out}` });
            else {
              // Imported only when a report is written: it is the heaviest module and most targets need none.
              const { writeReport } = await import('../report/report.js');
              const w = await writeReport({ dbPath: p.warehouse, out: r.out, title: r.title, metadata: reportMetadata(p), viewRows });
              reportFile = w.file;
              await save('report', inputs, w.file);
              finish({ step, status: 'ran', work: 1, detail: `wrote ${w.file} (${w.tables} tables, ${w.charts} charts)` });
            }
            break;
          }
        }
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
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
  const work = steps.reduce((n, s) => n + s.work, 0);
  const spend = emptySpend();
  for (const s of steps) addSpend(spend, s.spend);
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
    report: reportFile,
    elapsed_ms: Math.round(performance.now() - started),
    spend_capped: Boolean(budget?.capped) && steps.some((s) => s.spend_capped || s.status === 'not-run'),
    max_cost_usd: maxCost ?? null,
    spend,
    spent_usd: Object.values(spend.by_model).reduce((n, l) => n + l.cost_usd, 0),
  };
}

/** A cap cannot be kept on a model whose calls cannot be priced: refused before anything runs (also by a dry run). */
function assertPriced(p: Pipeline): void {
  const specs = [p.dialogues?.user, ...(p.dialogues?.assistants ?? []), p.judge?.model, ...(p.persona?.models ?? [])]
    .filter((s): s is string => s !== undefined)
    .map((s) => parseModelSpec(s));
  const missing = unpriced(specs);
  if (missing.length)
    throw usageError(
      `--max-cost / limits.max_cost: no price is known for ${missing.join(', ')}, so a spend cap cannot be kept`,
      `add price_in=...&price_out=... (USD per 1M tokens) to ${missing.length === 1 ? 'its model spec' : 'their model specs'} in ${p.file}, or run without a cap`,
    );
}

/** The SQL files a build skipped; a PERSONA-bench workspace skips every PersonaLens one by design, so they are only counted. */
function skippedFiles(p: Pipeline, skipped: Array<{ file: string }>): string {
  if (skipped.length === 0) return '';
  if (p.benchmark === 'persona-bench') return `; ${skipped.length} PersonaLens SQL file(s) skipped: no PersonaLens data here`;
  return `; skipped ${skipped.map((s) => s.file).join(', ')}`;
}

function reportMetadata(p: Pipeline): Record<string, unknown> {
  if (p.persona) {
    const s = p.persona;
    return {
      pipeline: p.name,
      pipeline_file: p.file,
      description: p.description,
      benchmark: p.benchmark,
      source: s.source,
      fidelity: s.fidelity,
      seed: s.seed,
      tasks: s.tasks,
      settings: s.settings,
      models: s.models,
      decoding: s.decoding === 'best-of-n' ? `best-of-n (n = ${s.samples})` : 'single-sample',
      parsers: s.parsers,
      embeddings: s.embeddings ?? null,
    };
  }
  return {
    pipeline: p.name,
    pipeline_file: p.file,
    description: p.description,
    selection: p.selection,
    assistants: p.dialogues?.assistants ?? [],
    settings: p.dialogues?.settings ?? [],
    user: p.dialogues?.user ?? null,
    judge: p.judge ? { model: p.judge.model, dimensions: p.judge.dimensions } : null,
  };
}

function planStep(step: 'dialogues' | 'judge', cells: CellPlan[], of: (c: CellPlan) => CellWork): StepResult {
  const total = sumWork(cells.map(of));
  return {
    step,
    status: total.pending > 0 ? 'would-run' : total.failed > 0 ? 'failed' : 'up-to-date',
    work: total.pending,
    detail: `${cells.length} cell(s): ${fmtWork(total)}`,
    cells: cells.map((c) => ({
      id: c.id,
      assistant: c.assistant,
      setting: c.setting,
      status: of(c).pending > 0 ? 'would-run' : of(c).failed > 0 ? 'failed' : 'up-to-date',
      work: of(c),
    })),
    estimate: total.estimate,
    price_unknown: total.priceUnknown ?? [],
  };
}

/** The predictions plan: per model, what is left and what it would cost. */
/** What a model's predictions cover, as the plan lists it. */
const personaGrid = (p: Pipeline) => `${p.persona!.tasks.join('/')} x ${p.persona!.settings.join('/')}`;

function planPersonaStep(p: Pipeline, plans: PersonaModelPlan[]): StepResult {
  const total = sumWork(plans.map((m) => m.work));
  return {
    step: 'predictions',
    status: total.pending > 0 ? 'would-run' : total.failed > 0 ? 'failed' : 'up-to-date',
    work: total.pending,
    detail: `${plans.length} model(s): ${fmtWork(total)}; ${plans.reduce((n, m) => n + m.unparsed, 0)} unparsed`,
    cells: plans.map((m) => ({
      id: m.model,
      assistant: m.model,
      setting: personaGrid(p),
      status: m.work.pending > 0 ? 'would-run' : m.work.failed > 0 ? 'failed' : 'up-to-date',
      work: m.work,
    })),
    estimate: total.estimate,
    price_unknown: total.priceUnknown ?? [],
  };
}

/**
 * Each model's predictions that are left, one model at a time (each with the pipeline's
 * concurrency). An unparsed reply is an outcome, counted and never scored; a failed call fails the step.
 */
async function runPersonaPredictionStep(
  p: Pipeline,
  ws: Workspace,
  plans: PersonaModelPlan[],
  promptRecords: string,
  o: MakeOptions,
  budget: SpendBudget | undefined,
): Promise<StepResult> {
  const results: NonNullable<StepResult['cells']> = [];
  let stop = false;
  for (const m of plans) {
    const entry = { id: m.model, assistant: m.model, setting: personaGrid(p), work: m.work };
    if (m.work.pending === 0 && !needsPersonaCompaction(m.dirs)) {
      results.push(
        m.work.failed > 0
          ? { ...entry, status: 'failed', error: `${m.work.failed} call(s) recorded failed (--retry-failed reruns them)` }
          : { ...entry, status: 'up-to-date' },
      );
      stop ||= m.work.failed > 0 && !o.keepGoing;
      continue;
    }
    if (stop || o.signal.aborted || budget?.capped) {
      results.push({ ...entry, status: 'not-run' });
      continue;
    }
    try {
      const r = await runPersonaModel(p, ws, m.model, {
        promptRecords,
        signal: o.signal,
        progress: o.progress,
        retryFailed: o.retryFailed,
        ...(budget ? { budget } : {}),
      });
      const failedNow = r.failed + (o.retryFailed ? 0 : m.work.failed);
      o.log(`  predictions  ${m.model}: ${r.ok} ok, ${r.unparsed} unparsed, ${r.failed} failed`);
      const line = {
        ...entry,
        new: { ok: r.ok, failed: r.summary.failed, failure_reasons: r.summary.failure_reasons },
        ...(r.summary.spend_capped ? { spend_capped: true } : {}),
      };
      if (failedNow > 0) {
        stop ||= !o.keepGoing;
        results.push({ ...line, status: 'failed', error: `${failedNow} call(s) failed${r.failed ? `: ${reasons(r.summary.failure_reasons)}` : ''}` });
      } else results.push({ ...line, status: 'ran' });
    } catch (error) {
      stop ||= !o.keepGoing;
      results.push({ ...entry, status: 'failed', error: error instanceof PlensError ? `${error.code}: ${error.message}` : (error as Error).message });
    }
  }
  const work = results.reduce((n, r) => n + (r.new ? r.new.ok + r.new.failed : 0), 0);
  const bad = results.filter((r) => r.status === 'failed');
  const capped = Boolean(budget?.capped) && results.some((r) => r.spend_capped || r.status === 'not-run');
  return {
    step: 'predictions',
    status: bad.length ? 'failed' : results.some((r) => r.status === 'ran') ? 'ran' : capped ? 'not-run' : 'up-to-date',
    ...(capped ? { spend_capped: true } : {}),
    work,
    detail: bad.length
      ? `${bad.length} of ${plans.length} model(s) failed: ${bad.map((b) => `${b.assistant}: ${b.error}`).join('; ')}`
      : work === 0
        ? `up to date (${plans.length} model(s), ${plans.reduce((n, m) => n + m.work.done, 0)} predictions)`
        : `${work} new prediction(s) for ${results.filter((r) => r.status === 'ran').length} of ${plans.length} model(s)`,
    cells: results,
  };
}

/** Runs the grid's cells that have work left, `limits.cells` at a time, each with its own concurrency. */
async function runDialogueCells(p: Pipeline, ws: Workspace, cells: CellPlan[], o: MakeOptions, budget: SpendBudget | undefined): Promise<StepResult> {
  const base = stageOptions(p, ws, {
    signal: o.signal,
    dryRun: false,
    progress: o.progress && p.limits.cells === 1,
    retryFailed: o.retryFailed,
    concurrency: p.limits.concurrency,
    ...(budget ? { budget } : {}),
  });
  let stop = false;
  const spend = emptySpend();
  const results = await pMap(
    cells,
    async (c): Promise<NonNullable<StepResult['cells']>[number]> => {
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
async function runJudgeStep(p: Pipeline, ws: Workspace, cells: CellPlan[], o: MakeOptions, budget: SpendBudget | undefined): Promise<StepResult> {
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

function reasons(r: Record<string, number>): string {
  return Object.entries(r)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} x${v}`)
    .join(', ');
}

function fmtWork(w: CellWork): string {
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  const left = `${n(w.pending)}${w.estimated ? ' (estimated)' : ''} left, ${n(w.done)} done, ${n(w.failed)} failed`;
  return w.pending > 0
    ? `${left}; ~${n(w.estimate.calls)} calls, ~${n(w.estimate.inputTokens)} in + ~${n(w.estimate.outputTokens)} out tokens, ${formatEstimatedCost(w.estimate.costUsd, w.priceUnknown ?? []).replace(/ \(prices from the model specs\)$/, '')}`
    : left;
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
