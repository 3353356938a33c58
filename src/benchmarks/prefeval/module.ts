import { join } from 'node:path';
import { packageRoot } from '../../core/paths.js';
import type { Benchmark, StepContext } from '../../platform/benchmark.js';
import { workspaceHas } from '../../warehouse/workspace-files.js';
import { PREFEVAL_TABLE_GROUP } from './catalog.js';
import { prefevalAccuracyChart } from './charts.js';
import { prefevalComparison, prefevalMcqComparison } from './comparison.js';
import { prefevalCommand } from './cli.js';
import { PREFEVAL_EXPORT } from './export-cells.js';
import { PREFEVAL_SECTION_SCHEMA, type PrefEvalPipeline, resolvePrefEvalSection } from './section.js';

type Ctx = StepContext<PrefEvalPipeline>;

type Responses = Array<{ model: string; done: number; pending: number; failed: number }>;
type Checks = { judge: string; done: number; pending: number; failed: number; estimated: boolean } | null;

/*
 * The stages' code is imported when a step runs (./make-steps.js): the registry lists this module
 * for every command, and most need none of it.
 */

/** PrefEval (Zhao et al., ICLR 2025): does the assistant follow a preference stated many turns before the question? */
export const prefEval: Benchmark<PrefEvalPipeline> = {
  id: 'prefeval',
  title: 'PrefEval',
  summary:
    'PrefEval; explicit and implicit preferences, generation task: prefeval-responses -> prefeval-checks, classification task: prefeval-mcq (plens make)',
  sections: ['prefeval'],
  requiredSections: ['prefeval'],
  folders: ['prefeval'],
  sectionSchemas: { prefeval: PREFEVAL_SECTION_SCHEMA },
  resolve: resolvePrefEvalSection,
  steps: [
    {
      name: 'prefeval-responses',
      needs: () => [],
      available: (p) => p.prefeval.tasks.includes('generation'),
      run: async (ctx) => (await import('./make-steps.js')).responsesStep(ctx),
    },
    {
      name: 'prefeval-checks',
      needs: () => ['prefeval-responses'],
      available: (p) => p.prefeval.tasks.includes('generation'),
      run: async (ctx) => (await import('./make-steps.js')).checksStep(ctx),
    },
    {
      name: 'prefeval-mcq',
      needs: () => [],
      available: (p) => p.prefeval.tasks.includes('classification'),
      run: async (ctx) => (await import('./make-steps.js')).mcqStep(ctx),
    },
  ],
  warehouse: {
    needs: (p) => [
      ...(p.prefeval.tasks.includes('generation') ? ['prefeval-checks'] : []),
      ...(p.prefeval.tasks.includes('classification') ? ['prefeval-mcq'] : []),
    ],
    // No file step comes before it: its steps are keyed LLM work.
    after: () => undefined,
    source: {
      present: (ws) => workspaceHas(ws.root, 'prefeval/responses/*/responses.parquet') || workspaceHas(ws.root, 'prefeval/mcq/*/mcq.parquet'),
      missing: (ws) => `PrefEval responses in ${join(ws.root, 'prefeval')}`,
      hint: '`plens make prefeval-responses -p <pipeline>` or `plens make prefeval-mcq -p <pipeline>` (PrefEval)',
      example: 'prefeval_results',
    },
  },
  sqlDir: join(packageRoot, 'warehouse', 'prefeval'),
  tables: PREFEVAL_TABLE_GROUP,
  charts: [{ label: 'PrefEval accuracy', view: 'prefeval_results', build: prefevalAccuracyChart }],
  metadata: {
    comparison: [
      { view: 'prefeval_results', build: prefevalComparison },
      { view: 'prefeval_mcq_results', build: prefevalMcqComparison },
    ],
  },
  reportMetadata: (p) => ({
    pipeline: p.name,
    pipeline_file: p.file,
    description: p.description,
    benchmark: p.benchmark,
    data: p.prefeval.data,
    topics: p.prefeval.topics,
    forms: p.prefeval.forms,
    limit: p.prefeval.limit ?? null,
    baselines: p.prefeval.baselines,
    inter_turns: p.prefeval.interTurns,
    tasks: p.prefeval.tasks,
    models: p.prefeval.models,
    judge: p.prefeval.judge,
    retrieval: p.prefeval.retrieval ?? null,
    prompts: p.prefeval.prompts,
    requests: p.prefeval.requests,
  }),
  models: (p) => [...p.prefeval.models, ...(p.prefeval.judge === null ? [] : [p.prefeval.judge])],
  status: {
    async collect({ p, ws, signal }) {
      const { prefevalStatus } = await import('./make-steps.js');
      // The plans need no budget, progress or parent run: a status runs nothing.
      const ctx = { p, ws, signal, progress: false, retryFailed: false, keepGoing: false, runId: '' } as unknown as Ctx;
      return prefevalStatus(ctx);
    },
    format(s) {
      const responses = s['responses'] as Responses;
      const mcq = (s['mcq'] as Responses | undefined) ?? [];
      const checks = s['checks'] as Checks;
      const n = (x: number) => x.toLocaleString('en-US');
      const block = (label: string, rows: Responses) =>
        rows.length === 0
          ? []
          : [
              `${label.padEnd(11)}${n(rows.reduce((k, r) => k + r.done, 0))} done, ${n(rows.reduce((k, r) => k + r.pending, 0))} pending, ${n(rows.reduce((k, r) => k + r.failed, 0))} failed`,
              ...rows.map((r) => `  ${r.model}: ${n(r.done)} done, ${n(r.pending)} pending, ${n(r.failed)} failed`),
            ];
      const blocked = s['blocked'] as { message: string; hint?: string } | undefined;
      if (blocked) return { body: [`blocked    ${blocked.message}`, ...(blocked.hint ? [`  hint: ${blocked.hint}`] : [])] };
      return {
        body: [
          ...block('responses', responses),
          ...(checks
            ? [
                `checks     ${n(checks.done)} done, ${checks.estimated ? '~' : ''}${n(checks.pending)} pending, ${n(checks.failed)} failed (judge ${checks.judge})`,
              ]
            : []),
          ...block('mcq', mcq),
        ],
      };
    },
  },
  export: PREFEVAL_EXPORT,
  cli: { command: prefevalCommand },
};
