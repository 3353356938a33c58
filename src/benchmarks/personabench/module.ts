import { join } from 'node:path';
import { fileStamp } from '../../core/file-stamps.js';
import { packageRoot } from '../../core/paths.js';
import type { Benchmark, StepContext } from '../../platform/benchmark.js';
import { recordedBuild } from '../../platform/make-state.js';
import { planCellStep, type StepResult } from '../../platform/step-kit.js';
import { emptyWork, formatWork, readPartition, sumStatus, type WorkStatus } from '../../platform/status-kit.js';
import type { ChartEntry } from '../../report/report.js';
import { workspaceHas } from '../../warehouse/workspace-files.js';
import { PERSONABENCH_TABLE_GROUP } from './catalog.js';
import { personaCommand } from './cli.js';
import { PERSONABENCH_METADATA } from './report-metadata.js';
import { PERSONABENCH_EXPORT } from './export-cells.js';
import { personaResultsChart, personaSettingChart } from './charts.js';
import { personaMetricsFile, personaScoresInputs, personaSelectInputs, personaSelectionDir, personaSelectionStamp } from './make-state.js';
import { type PersonaBenchPipeline, resolvePersonaBenchSections } from './pipeline-settings.js';

type Ctx = StepContext<PersonaBenchPipeline>;

/** What a model's predictions cover, as the plan lists it. */
const personaGrid = (p: PersonaBenchPipeline) => `${p.persona.tasks.join('/')} x ${p.persona.settings.join('/')}`;

async function selectStep(ctx: Ctx): Promise<StepResult> {
  const { p, state } = ctx;
  const s = p.persona;
  const inputs = ctx.inputs();
  if (ctx.isCurrent(inputs)) return { step: ctx.step, status: 'up-to-date', work: 0, detail: `up to date (${s.source})` };
  const { runPersonaSelect } = await import('./select-stage.js');
  // A dry run whose selection is out of date selects into a scratch folder to count.
  const out = ctx.dryRun ? join(ctx.scratch(), 'selection') : personaSelectionDir(p);
  if (ctx.dryRun) ctx.shared.set('persona.selection', out);
  const r = await runPersonaSelect({
    from: s.source,
    out,
    fidelity: s.fidelity,
    seed: s.seed,
    ...(s.original !== undefined ? { original: s.original } : {}),
    ...(s.python !== undefined ? { python: s.python } : {}),
  });
  const total = Object.values(r.counts).reduce((n, c) => n + c, 0);
  if (ctx.dryRun)
    return {
      step: ctx.step,
      status: 'would-run',
      work: 1,
      detail: `would select ${total} samples (${s.fidelity}, seed ${s.seed}${s.original ? ", the original's wording" : ''}) from ${s.source}`,
      reason: state['select'] ? 'the input or the selection settings changed' : 'not selected yet',
    };
  await ctx.save(inputs, personaSelectionStamp(p)!);
  return {
    step: ctx.step,
    status: 'ran',
    work: 1,
    detail: `selected ${total} samples (${s.fidelity}, seed ${s.seed}${s.original ? ", the original makers' files" : ''}) -> ${out}`,
  };
}

async function predictionsStep(ctx: Ctx): Promise<StepResult> {
  const { p } = ctx;
  // The stages' code loads when a step runs: the registry lists this module for every command.
  const { personaPromptsFile, planPersonaPredictions, runPredictionStep } = await import('./make-predictions.js');
  const promptRecords = personaPromptsFile(p, ctx.shared.get('persona.selection') as string | undefined);
  const plans = await planPersonaPredictions(p, ctx.ws, { promptRecords, signal: ctx.signal, retryFailed: ctx.retryFailed });
  if (ctx.dryRun)
    return planCellStep(
      'predictions',
      plans.map((m) => ({ id: m.model, assistant: m.model, setting: personaGrid(p), work: m.work })),
      { noun: 'model', extra: `; ${plans.reduce((n, m) => n + m.unparsed, 0)} unparsed` },
    );
  return runPredictionStep(ctx, plans, promptRecords);
}

async function scoresStep(ctx: Ctx): Promise<StepResult> {
  const { p } = ctx;
  const s = p.persona;
  if (!ctx.upstreamChanged && ctx.isCurrent()) return { step: ctx.step, status: 'up-to-date', work: 0, detail: `up to date (${personaMetricsFile(p)})` };
  if (ctx.dryRun)
    return {
      step: ctx.step,
      status: 'would-run',
      work: 1,
      detail: `would score the predictions${s.embeddings ? ` (SBERT through ${s.embeddings.startsWith('local:') ? 'the local model folder' : 'the embeddings endpoint'})` : ''}`,
    };
  const { runPersonaScores } = await import('./predict.js');
  const r = await runPersonaScores({ workspace: ctx.ws, ...(s.embeddings ? { embeddings: s.embeddings } : {}) });
  // Fingerprinted after scoring: the inputs are the predictions it read.
  await ctx.save(ctx.inputs(), fileStamp(r.metrics)!);
  return {
    step: ctx.step,
    status: 'ran',
    work: 1,
    detail: `scored -> ${r.metrics} (${r.rows} metric rows); SBERT ${r.sbert === null ? 'not scored (no persona.embeddings)' : `from ${r.sbert}`}`,
  };
}

const charts: ChartEntry[] = [
  { label: 'PERSONA-bench results', view: 'persona_result_intervals', build: personaResultsChart },
  { label: 'PERSONA-bench settings', view: 'persona_setting_comparison', build: personaSettingChart },
];

type ModelStatus = { model: string; work: WorkStatus };

/** PERSONA-bench (Li et al. 2025): Reddit conversations, three prediction tasks x three settings. */
export const personaBench: Benchmark<PersonaBenchPipeline> = {
  id: 'persona-bench',
  title: 'PERSONA-bench',
  summary: 'PERSONA-bench; also plens persona: import -> select -> predict -> score',
  sections: ['persona'],
  requiredSections: ['persona'],
  folders: ['persona'],
  resolve: resolvePersonaBenchSections,
  // The selection writes every task x setting's prompts; predictions are keyed LLM work (planned by
  // the stage's dry run, as the dialogues are); scores are rebuilt when the compacted predictions change.
  steps: [
    {
      name: 'select',
      needs: () => [],
      available: () => true,
      fingerprint: {
        inputs: personaSelectInputs,
        current: (p, state, o) => recordedBuild(state, 'select', o.inputs, personaSelectionStamp(p)),
        exists: (p) => personaSelectionStamp(p) !== null,
      },
      run: selectStep,
    },
    { name: 'predictions', needs: () => ['select'], available: () => true, run: predictionsStep },
    {
      name: 'scores',
      needs: () => ['predictions'],
      available: () => true,
      fingerprint: {
        inputs: personaScoresInputs,
        current: (p, state, o) => recordedBuild(state, 'scores', o.inputs, fileStamp(personaMetricsFile(p))),
        exists: (p) => fileStamp(personaMetricsFile(p)) !== null,
        after: () => 'select',
      },
      run: scoresStep,
    },
  ],
  warehouse: {
    needs: () => ['scores'],
    after: () => 'scores',
    source: {
      present: (ws) => workspaceHas(ws.root, 'persona/predictions/*/predictions.parquet') || workspaceHas(ws.root, 'persona/scores/metrics.parquet'),
      missing: (ws) => `PERSONA-bench predictions in ${join(ws.root, 'persona')}`,
      hint: '`plens persona predict` (PERSONA-bench)',
      example: 'persona_results',
    },
  },
  sqlDir: join(packageRoot, 'warehouse', 'personabench'),
  tables: PERSONABENCH_TABLE_GROUP,
  charts,
  reportMetadata: (p) => {
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
  },
  models: (p) => p.persona.models,
  cli: { command: personaCommand },
  metadata: PERSONABENCH_METADATA,
  export: PERSONABENCH_EXPORT,
  status: {
    async collect({ p, ws, done, signal, spend }) {
      const predictions: ModelStatus[] = [];
      if (done['select']) {
        const { personaPromptsFile, planPersonaPredictions } = await import('./make-predictions.js');
        const { predictionPartition } = await import('./predict.js');
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
      } else {
        for (const model of p.persona.models) predictions.push({ model, work: { ...emptyWork(), unparsed: 0 } });
      }
      return { predictions };
    },
    format(s) {
      const predictions = s['predictions'] as ModelStatus[];
      const n = (x: number) => Math.round(x).toLocaleString('en-US');
      const unparsed = (w: WorkStatus) => (w.unparsed !== undefined ? `, ${n(w.unparsed)} unparsed` : '');
      const body = [`select     ${s.stages['select']}`];
      const total = sumStatus(predictions.map((m) => m.work));
      total.unparsed = predictions.reduce((k, m) => k + (m.work.unparsed ?? 0), 0);
      body.push(`predictions ${formatWork(total)}`.replace(' failed', ` failed${unparsed(total)}`));
      for (const m of predictions) body.push(`  ${m.model}: ${formatWork(m.work)}`.replace(' failed', ` failed${unparsed(m.work)}`));
      if (s.stages['select'] !== 'done') body.push('  (pending is known once the samples are selected: plens make select)');
      body.push(`scores     ${s.stages['scores']}`);
      return { body };
    },
  },
};
