import { existsSync, mkdtempSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../../core/paths.js';
import { assertOneImport } from './dataset-identity.js';
import { Workspace } from '../../core/workspace.js';
import type { Benchmark, StepContext } from '../../platform/benchmark.js';
import { manifestStamp, recordedBuild } from '../../platform/make-state.js';
import { figure4Chart, figure5Chart, SCORE_DIMENSIONS, scoreDistributionChart, table4Chart } from './charts.js';
import type { ChartEntry } from '../../report/report.js';
import { PERSONALENS_TABLE_GROUP } from './catalog.js';
import { liftChart } from './lift-chart.js';
import type { CellPlan } from './make-cells.js';
import { importInputs, scenariosInputs } from './make-state.js';
import { type PersonaLensPipeline, resolvePersonaLensSections } from './pipeline-section.js';
import { BUILD_SECTION_SCHEMA } from './construction/section.js';
import { buildExportInputs, buildMarker, buildReferenceDir, buildReferenceInputs, buildUsersFile, buildUsersInputs } from './construction/make-state.js';
import { BUILD_LLM_STAGES } from './construction/types.js';
import { fileStamp } from '../../core/file-stamps.js';
import { annotateCommand } from './cli/annotate.js';
import { dialoguesCommand } from './cli/dialogues.js';
import { importLegacyCommand } from './cli/import-legacy.js';
import { importCommand } from './cli/import.js';
import { judgeCommand } from './cli/judge.js';
import { personalensCommand } from './cli/personalens.js';
import { promptsCommand } from './cli/prompts.js';
import { scenariosCommand } from './cli/scenarios.js';
import { personaLensStatus } from './make-status.js';
import { PERSONALENS_METADATA } from './report-metadata.js';
import { PERSONALENS_EXPORT } from './export-cells.js';
import { datasetDir, requireDataset, scenariosDir } from './dataset/workspace-files.js';

type Ctx = StepContext<PersonaLensPipeline>;

/**
 * The workspace a dry run plans in: the real one, or a scratch one once the import or the selection
 * would change (it imports or selects there to count what the next steps would do).
 */
function planWorkspace(ctx: Ctx, o: { fresh?: boolean } = {}): Workspace {
  let ws = ctx.shared.get('personalens.plan') as Workspace | undefined;
  if (!ws && o.fresh) {
    const dir = mkdtempSync(join(ctx.scratch(), 'personalens-'));
    ws = new Workspace(dir);
    ctx.shared.set('personalens.plan', ws);
  }
  return ws ?? ctx.ws;
}

/*
 * The stages' code is imported when a step runs: the registry lists this module for every command,
 * and most (tables, report, status of another benchmark) need none of it.
 */

/** A build's plan: the benchmark it will import does not exist yet, so what comes after it cannot be counted. */
const UNBUILT = 'personalens.unbuilt';

/** A grid step's plan before the benchmark it runs on is built: its size is not known yet. */
const unbuiltPlan = (step: string) => ({
  step,
  status: 'would-run' as const,
  work: 0,
  detail: 'runs on the built benchmark: its dialogues are counted and priced once it is built (plens make build-export, then --dry-run again)',
});

async function importStep(ctx: Ctx) {
  const { p, state } = ctx;
  const { runImport } = await import('./dataset/import.js');
  const data = p.data!;
  const inputs = ctx.inputs();
  if (ctx.isCurrent(inputs)) return { step: ctx.step, status: 'up-to-date' as const, work: 0, detail: `up to date (${data.from})` };
  if (ctx.dryRun && p.build && (ctx.upstreamChanged || !existsSync(data.from))) {
    ctx.shared.set(UNBUILT, true);
    return {
      step: ctx.step,
      status: 'would-run' as const,
      work: 1,
      detail: `would import the built benchmark from ${data.from}`,
      reason: 'the build changes it',
    };
  }
  if (ctx.dryRun) {
    // The plan needs the scenarios to count the dialogues: import into a scratch folder.
    const planWs = planWorkspace(ctx, { fresh: true });
    const r = await runImport({ from: data.from, ...(data.schema ? { schema: data.schema } : {}), workspace: planWs });
    return {
      step: ctx.step,
      status: 'would-run' as const,
      work: 1,
      detail: `would import ${r.users} users, ${r.scenarios.sd + r.scenarios.md} scenarios from ${data.from}`,
      reason: state['import'] ? 'the data changed' : 'not imported yet',
    };
  }
  const r = await runImport({ from: data.from, ...(data.schema ? { schema: data.schema } : {}), workspace: ctx.ws, progress: ctx.progress });
  await ctx.save(inputs, manifestStamp(datasetDir(ctx.ws))!);
  return {
    step: ctx.step,
    status: 'ran' as const,
    work: 1,
    detail: `imported ${r.users} users, ${r.scenarios.sd + r.scenarios.md} scenarios -> ${datasetDir(ctx.ws)}`,
  };
}

async function scenariosStep(ctx: Ctx) {
  const { runScenarios } = await import('./scenarios/stage.js');
  if (!ctx.upstreamChanged && ctx.isCurrent()) return { step: ctx.step, status: 'up-to-date' as const, work: 0, detail: 'up to date' };
  if (ctx.dryRun && ctx.shared.get(UNBUILT))
    return { step: ctx.step, status: 'would-run' as const, work: 1, detail: 'would select the scenarios of the built benchmark (counted once it is built)' };
  if (ctx.dryRun) {
    let planWs = ctx.shared.get('personalens.plan') as Workspace | undefined;
    if (!planWs) {
      planWs = planWorkspace(ctx, { fresh: true });
      symlinkSync(datasetDir(ctx.ws), datasetDir(planWs), 'dir');
    }
    const r = await runScenarios(planWs, ctx.p.selection!);
    return {
      step: ctx.step,
      status: 'would-run' as const,
      work: 1,
      detail: `would select ${r.scenarios.total} scenarios (${r.scenarios.sd} SD + ${r.scenarios.md} MD)`,
      reason: 'the selection or the import changed',
    };
  }
  const r = await runScenarios(ctx.ws, ctx.p.selection!);
  await ctx.save(ctx.inputs(), manifestStamp(scenariosDir(ctx.ws))!);
  return { step: ctx.step, status: 'ran' as const, work: 1, detail: `selected ${r.scenarios.total} scenarios (${r.scenarios.sd} SD + ${r.scenarios.md} MD)` };
}

/** The grid's cells and their work, planned once per make (the dialogues and the judge read the same plan). */
async function cellsOf(ctx: Ctx): Promise<CellPlan[]> {
  // Before a build exists there is nothing to count the dialogues of.
  if (ctx.dryRun && ctx.shared.get(UNBUILT)) return [];
  let cells = ctx.shared.get('personalens.cells') as CellPlan[] | undefined;
  if (!cells) {
    const planWs = planWorkspace(ctx);
    if (planWs !== ctx.ws) {
      // The scratch view sees the real outputs, so done keys count as done in the plan.
      for (const d of ['dialogues', 'judgments'])
        if (existsSync(join(ctx.ws.root, d)) && !existsSync(join(planWs.root, d))) symlinkSync(join(ctx.ws.root, d), join(planWs.root, d), 'dir');
    }
    const { planCells } = await import('./make-cells.js');
    cells = await planCells(ctx.p, planWs, ctx.signal, ctx.retryFailed);
    ctx.shared.set('personalens.cells', cells);
  }
  return cells;
}

const charts: ChartEntry[] = [
  { label: 'Figure 4', view: 'figure4', build: figure4Chart },
  { label: 'Figure 5', view: 'figure5', build: figure5Chart },
  { label: 'Table 4', view: 'table4', build: table4Chart },
  { label: 'Personalization lift', view: 'paired_lift', build: liftChart },
  {
    label: 'Score distributions',
    view: 'dialogue_scores',
    // UNPIVOT drops NULLs, so dimensions a dialogue was not (or not successfully) judged on count nowhere.
    sql: `SELECT judge_model, run, assistant_model, dimension, score, count(*) AS n
      FROM (UNPIVOT (SELECT judge_model, run, assistant_model, ${SCORE_DIMENSIONS.map((d) => d.key).join(', ')} FROM dialogue_scores)
        ON ${SCORE_DIMENSIONS.map((d) => d.key).join(', ')} INTO NAME dimension VALUE score)
      GROUP BY ALL ORDER BY ALL`,
    build: scoreDistributionChart,
  },
];

/**
 * Building the benchmark (a pipeline's build section, construction/): the users, the seven LLM
 * stages in order, then the export that import reads.
 */
function buildSteps(): Benchmark<PersonaLensPipeline>['steps'] {
  const has = (p: PersonaLensPipeline) => Boolean(p.build);
  const steps = (): Promise<typeof import('./construction/make-steps.js')> => import('./construction/make-steps.js');
  const llm = BUILD_LLM_STAGES.map((stage) => ({
    name: `build-${stage}`,
    needs: () => [
      'build-users',
      ...({
        masks: [],
        preferences: ['build-masks'],
        interactions: ['build-preferences'],
        'sd-tasks': [],
        'md-tasks': [],
        situations: ['build-preferences', 'build-sd-tasks', 'build-md-tasks'],
        consistency: ['build-preferences'],
      }[stage] ?? []),
    ],
    available: has,
    run: async (ctx: StepContext<PersonaLensPipeline>) => (await steps()).llmStep(stage)(ctx),
  }));
  return [
    {
      name: 'build-users',
      needs: () => [],
      available: has,
      fingerprint: {
        inputs: buildUsersInputs,
        current: (p, state, o) => recordedBuild(state, 'build-users', o.inputs, fileStamp(buildUsersFile(p.workspace))),
        exists: (p) => fileStamp(buildUsersFile(p.workspace)) !== null,
      },
      run: async (ctx) => (await steps()).usersStep(ctx),
    },
    ...llm,
    {
      name: 'build-reference',
      needs: () => [],
      available: (p) => Boolean(p.build?.compareWith),
      fingerprint: {
        inputs: buildReferenceInputs,
        current: (p, state, o) => recordedBuild(state, 'build-reference', o.inputs, manifestStamp(join(buildReferenceDir(p.workspace), 'dataset'))),
        exists: (p) => manifestStamp(join(buildReferenceDir(p.workspace), 'dataset')) !== null,
      },
      run: async (ctx) => (await steps()).referenceStep(ctx),
    },
    {
      name: 'build-export',
      needs: () => BUILD_LLM_STAGES.map((s) => `build-${s}`),
      available: has,
      fingerprint: {
        inputs: buildExportInputs,
        current: (p, state, o) => recordedBuild(state, 'build-export', o.inputs, fileStamp(buildMarker(p.build!.out))),
        exists: (p) => fileStamp(buildMarker(p.build!.out)) !== null,
        after: () => 'build-users',
      },
      run: async (ctx) => (await steps()).exportStep(ctx),
    },
  ];
}

/** PersonaLens (Zhao et al. 2025): a simulated user talks with the assistant under test; an LLM judge scores the dialogues. */
export const personaLens: Benchmark<PersonaLensPipeline> = {
  id: 'personalens',
  title: 'PersonaLens',
  summary: 'PersonaLens; its stages are also top-level commands: import -> scenarios -> dialogues -> judge',
  sections: ['build', 'data', 'scenarios', 'dialogues', 'judge', 'statistics'],
  // data, or a build section that makes it (the resolver checks).
  requiredSections: ['scenarios'],
  sectionSchemas: { build: BUILD_SECTION_SCHEMA },
  folders: ['dataset', 'scenarios', 'dialogues', 'judgments', 'annotation'],
  resolve: resolvePersonaLensSections,
  steps: [
    ...buildSteps(),
    {
      name: 'import',
      needs: (p) => (p.build ? ['build-export'] : []),
      available: () => true,
      fingerprint: {
        inputs: importInputs,
        current: (p, state, o) => recordedBuild(state, 'import', o.inputs, manifestStamp(datasetDir(new Workspace(p.workspace)))),
        exists: (p) => manifestStamp(datasetDir(new Workspace(p.workspace))) !== null,
        after: (p) => (p.build ? 'build-export' : undefined),
      },
      run: importStep,
    },
    {
      name: 'scenarios',
      needs: () => ['import'],
      available: () => true,
      fingerprint: {
        inputs: scenariosInputs,
        current: (p, state, o) => recordedBuild(state, 'scenarios', o.inputs, manifestStamp(scenariosDir(new Workspace(p.workspace)))),
        exists: (p) => manifestStamp(scenariosDir(new Workspace(p.workspace))) !== null,
        after: () => 'import',
      },
      run: scenariosStep,
    },
    {
      name: 'dialogues',
      needs: () => ['scenarios'],
      available: (p) => Boolean(p.dialogues),
      run: async (ctx) => {
        if (ctx.dryRun && ctx.shared.get(UNBUILT)) return unbuiltPlan(ctx.step);
        const cells = await cellsOf(ctx);
        const { planCellsStep, runDialogueCells } = await import('./make-steps.js');
        return ctx.dryRun ? planCellsStep('dialogues', cells, (c) => c.dialogues) : runDialogueCells(ctx, cells);
      },
    },
    {
      name: 'judge',
      needs: () => ['dialogues'],
      available: (p) => Boolean(p.judge),
      run: async (ctx) => {
        if (ctx.dryRun && ctx.shared.get(UNBUILT)) return unbuiltPlan(ctx.step);
        const cells = await cellsOf(ctx);
        const { planCellsStep, runJudgeStep } = await import('./make-steps.js');
        return ctx.dryRun ? planCellsStep('judge', cells, (c) => c.judge!) : runJudgeStep(ctx, cells);
      },
    },
  ],
  warehouse: {
    needs: (p) => [
      ...(p.judge ? ['scenarios', 'judge'] : p.dialogues ? ['scenarios', 'dialogues'] : ['scenarios']),
      ...(p.build?.compareWith ? ['build-reference'] : []),
    ],
    after: () => 'scenarios',
    source: {
      // An import is checked whole: its format, and one import throughout.
      present: (ws) => {
        if (!existsSync(join(datasetDir(ws), 'manifest.json'))) return false;
        requireDataset(ws);
        assertOneImport(ws, 'plens warehouse');
        return true;
      },
      missing: (ws) => `imported dataset in ${datasetDir(ws)}`,
      hint: '`plens import --from <data dir>` (PersonaLens)',
      example: 'table1',
    },
  },
  sqlDir: join(packageRoot, 'warehouse', 'personalens'),
  tables: PERSONALENS_TABLE_GROUP,
  charts,
  reportMetadata: (p) => ({
    pipeline: p.name,
    pipeline_file: p.file,
    description: p.description,
    selection: p.selection,
    assistants: p.dialogues?.assistants ?? [],
    settings: p.dialogues?.settings ?? [],
    user: p.dialogues?.user ?? null,
    judge: p.judge ? { model: p.judge.model, dimensions: p.judge.dimensions } : null,
  }),
  models: (p) => [p.dialogues?.user, ...(p.dialogues?.assistants ?? []), p.judge?.model].filter((s): s is string => s !== undefined),
  status: personaLensStatus,
  metadata: PERSONALENS_METADATA,
  export: PERSONALENS_EXPORT,
  cli: {
    command: personalensCommand,
    topLevel: [importCommand, importLegacyCommand, scenariosCommand, dialoguesCommand, judgeCommand, promptsCommand, annotateCommand],
  },
};
