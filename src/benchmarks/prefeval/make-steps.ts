/**
 * PrefEval in `plens make`: the responses step over the pipeline's models, then the judge's checks
 * of every answered question. Plans are the stages' own dry runs, as PersonaLens's grid is.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PlensError } from '../../core/errors.js';
import { zeroCost } from '../../engine/stage-runner.js';
import { modelId, parseModelSpec, unpriced } from '../../llm/model-spec.js';
import type { StepContext } from '../../platform/benchmark.js';
import { stepStageOptions } from '../../platform/run-settings.js';
import { planCellStep, reasons, runModelsInTurn, sumWork, type CellWork, type StepResult } from '../../platform/step-kit.js';
import { PLENS_PROMPTS, originalPrompts, type PrefEvalPrompts } from './prompts.js';
import type { Retriever } from './rag.js';
import type { PrefEvalPipeline } from './section.js';
import { JUDGE_MAX_TOKENS, type PrefEvalSummary, readResponses, runPrefEvalChecks, runPrefEvalResponses } from './stages.js';

type Ctx = StepContext<PrefEvalPipeline>;

export function wordingOf(p: PrefEvalPipeline): PrefEvalPrompts {
  return p.prefeval.prompts === 'original' ? originalPrompts(p.prefeval.data) : PLENS_PROMPTS;
}

const stageOptions = (ctx: Ctx, dryRun: boolean) => stepStageOptions(ctx, dryRun);

function gridOf(ctx: Ctx) {
  const s = ctx.p.prefeval;
  return {
    data: s.data,
    topics: s.topics,
    forms: s.forms,
    ...(s.limit !== undefined ? { perTopic: s.limit } : {}),
    baselines: s.baselines,
    interTurns: s.interTurns,
    wording: wordingOf(ctx.p),
    ...(s.retrieval !== undefined ? { retrieval: s.retrieval } : {}),
    requests: s.requests,
  };
}

/**
 * RAG's retriever for a run that calls models (a dry run retrieves nothing): the checkout's
 * precomputed retrievals, or plens's embeddings (vectors cached in the workspace). `close` ends it.
 */
async function openRetriever(ctx: Ctx): Promise<{ retriever?: Retriever; close: () => Promise<void> }> {
  const s = ctx.p.prefeval;
  if (!s.baselines.includes('rag') || s.retrieval === undefined) return { close: async () => undefined };
  const { originalRetriever, embeddingRetriever } = await import('./rag.js');
  if (s.retrieval === 'original') return { retriever: originalRetriever(s.data), close: async () => undefined };
  const { openEmbedder } = await import('../../llm/embedders.js');
  const embedder = openEmbedder(s.retrieval, { cacheDir: join(ctx.ws.root, 'cache', 'embeddings'), field: 'prefeval.retrieval' });
  return { retriever: embeddingRetriever(embedder), close: () => embedder.close() };
}

/** Runs `run` with the pipeline's retriever open, and closes it after. */
async function withRetriever<T>(ctx: Ctx, run: (retriever: Retriever | undefined) => Promise<T>): Promise<T> {
  const r = await openRetriever(ctx);
  try {
    return await run(r.retriever);
  } finally {
    await r.close();
  }
}

const gridLabel = (ctx: Ctx) => `${ctx.p.prefeval.forms.join('/')} x ${ctx.p.prefeval.baselines.join('/')} x ${ctx.p.prefeval.interTurns.join('/')} turns`;

interface ModelPlan {
  model: string;
  work: CellWork;
  dirs: string[];
}

/** Per model, what a task's stage has done, left and failed, from the stage's own dry run. */
async function planModels(ctx: Ctx, dry: (model: string) => Promise<PrefEvalSummary>): Promise<ModelPlan[]> {
  const out: ModelPlan[] = [];
  for (const model of ctx.p.prefeval.models) {
    const d = await dry(model);
    out.push({
      model,
      dirs: d.partitions.map((x) => x.dir),
      work: {
        done: d.already_done,
        pending: d.planned,
        failed: ctx.retryFailed ? 0 : d.already_failed,
        estimate: d.estimate ?? zeroCost(),
        priceUnknown: d.price_unknown.length ? d.price_unknown : unpriced([parseModelSpec(model)]),
      },
    });
  }
  return out;
}

/** Per model, the responses done, left and failed. */
export async function planResponses(ctx: Ctx): Promise<ModelPlan[]> {
  if (!ctx.p.prefeval.tasks.includes('generation')) return [];
  return planModels(ctx, (model) => runPrefEvalResponses({ ...stageOptions(ctx, true), ...gridOf(ctx), model }));
}

/** The README leaderboard's figures for the pipeline's models (prefeval.published), written where the warehouse reads them. */
async function writePublished(ctx: Ctx): Promise<void> {
  const names = ctx.p.prefeval.published;
  if (!names || ctx.dryRun) return;
  const { readPublished } = await import('./published.js');
  const { writeFileAtomic } = await import('../../core/atomic.js');
  // Keyed by the model's id, as the responses and checks record it (its spec without endpoint or key settings).
  const figures = readPublished(ctx.p.prefeval.data, Object.fromEntries(Object.entries(names).map(([spec, name]) => [modelId(parseModelSpec(spec)), name])));
  const file = join(ctx.ws.root, 'prefeval', 'published.json');
  const text = `${JSON.stringify(figures, null, 2)}\n`;
  // Written only when it changes: the warehouse is rebuilt when it does.
  if (!existsSync(file) || readFileSync(file, 'utf8') !== text) await writeFileAtomic(file, text);
}

export async function responsesStep(ctx: Ctx): Promise<StepResult> {
  await writePublished(ctx);
  const plans = await planResponses(ctx);
  if (ctx.dryRun)
    return planCellStep(
      'prefeval-responses',
      plans.map((m) => ({ id: m.model, assistant: m.model, setting: gridLabel(ctx), work: m.work })),
      { noun: 'model' },
    );
  return runModelsInTurn(ctx, 'prefeval-responses', plans, {
    setting: gridLabel(ctx),
    noun: 'response',
    failure: 'response',
    run: async (m) => {
      const s = await withRetriever(ctx, (retriever) =>
        runPrefEvalResponses({ ...stageOptions(ctx, false), ...gridOf(ctx), model: m.model, ...(retriever ? { retriever } : {}) }),
      );
      const failedNow = s.failed + (ctx.retryFailed ? 0 : s.already_failed);
      ctx.log(`  prefeval-responses  ${m.model}: ${s.ok} ok, ${s.failed} failed${s.failed ? ` (${reasons(s.failure_reasons)})` : ''}`);
      return {
        new: { ok: s.ok, failed: s.failed, failure_reasons: s.failure_reasons },
        failedNow,
        error: `${failedNow} response(s) failed`,
        ...(s.spend_capped ? { spend_capped: true } : {}),
      };
    },
  });
}

/** The judge's work: what its dry run counts over the responses there, plus 4 calls for each response still to come. */
async function planChecks(ctx: Ctx): Promise<{ work: CellWork; dirs: string[] }> {
  const plans = await planResponses(ctx);
  const dirs = plans.flatMap((m) => m.dirs);
  const responses = await readResponses(dirs);
  const wording = wordingOf(ctx.p);
  const judgeSpec = judgeOf(ctx);
  const d = await runPrefEvalChecks({ ...stageOptions(ctx, true), judge: judgeSpec, responseDirs: dirs, wording }, responses);
  const judge = parseModelSpec(judgeSpec);
  const coming = sumWork(plans.map((m) => m.work)).pending;
  const work: CellWork = {
    done: d.already_done,
    pending: d.planned,
    failed: ctx.retryFailed ? 0 : d.already_failed,
    estimate: d.estimate ?? zeroCost(),
    priceUnknown: d.price_unknown.length ? d.price_unknown : unpriced([judge]),
  };
  if (coming > 0) {
    // About 1,000 tokens of template and response a check; 4 checks of JUDGE_MAX_TOKENS each.
    const inputTokens = coming * 4 * 1000;
    const outputTokens = coming * 4 * JUDGE_MAX_TOKENS;
    const { costOfTokens } = await import('../../llm/model-spec.js');
    work.pending += coming;
    work.estimated = true;
    work.estimate = {
      calls: work.estimate.calls + coming * 4,
      cachedCalls: work.estimate.cachedCalls,
      inputTokens: work.estimate.inputTokens + inputTokens,
      outputTokens: work.estimate.outputTokens + outputTokens,
      costUsd: work.estimate.costUsd + costOfTokens(judge, { inputTokens, outputTokens }),
    };
  }
  return { work, dirs };
}

/** The generation task's judge (the section requires one when generation runs). */
function judgeOf(ctx: Ctx): string {
  const judge = ctx.p.prefeval.judge;
  if (judge === null) throw new Error('prefeval: the generation task runs without a judge');
  return judge;
}

export async function checksStep(ctx: Ctx): Promise<StepResult> {
  const judge = judgeOf(ctx);
  const { work, dirs } = await planChecks(ctx);
  const cell = { id: judge, assistant: judge, setting: `judging ${ctx.p.prefeval.models.length} model(s)`, work };
  if (ctx.dryRun) return planCellStep('prefeval-checks', [cell], { noun: 'judge' });
  if (work.pending === 0)
    return work.failed > 0
      ? { step: 'prefeval-checks', status: 'failed', work: 0, detail: `${work.failed} check(s) recorded failed (--retry-failed reruns them)` }
      : { step: 'prefeval-checks', status: 'up-to-date', work: 0, detail: `up to date (${work.done} responses judged)` };
  const responses = await readResponses(dirs);
  const s = await runPrefEvalChecks({ ...stageOptions(ctx, false), judge, responseDirs: dirs, wording: wordingOf(ctx.p) }, responses);
  const failedNow = s.failed + (ctx.retryFailed ? 0 : s.already_failed);
  return {
    step: 'prefeval-checks',
    status: failedNow > 0 ? 'failed' : 'ran',
    work: s.ok + s.failed,
    detail: `${s.ok} response(s) judged, ${s.failed} failed${s.failed ? ` (${reasons(s.failure_reasons)})` : ''}; ${s.already_done} kept`,
    ...(s.spend ? { spend: s.spend } : {}),
    ...(s.spend_capped ? { spend_capped: true } : {}),
  };
}

/** Per model, the MCQ answers done, left and failed. */
export async function planMcq(ctx: Ctx): Promise<ModelPlan[]> {
  if (!ctx.p.prefeval.tasks.includes('classification')) return [];
  const { runPrefEvalMcq } = await import('./mcq.js');
  return planModels(ctx, (model) => runPrefEvalMcq({ ...stageOptions(ctx, true), ...gridOf(ctx), model }));
}

/** The classification task: per model its MCQ answers, read for their letter (no judge). */
export async function mcqStep(ctx: Ctx): Promise<StepResult> {
  const plans = await planMcq(ctx);
  if (ctx.dryRun)
    return planCellStep(
      'prefeval-mcq',
      plans.map((m) => ({ id: m.model, assistant: m.model, setting: gridLabel(ctx), work: m.work })),
      { noun: 'model' },
    );
  const { runPrefEvalMcq } = await import('./mcq.js');
  return runModelsInTurn(ctx, 'prefeval-mcq', plans, {
    setting: gridLabel(ctx),
    noun: 'answer',
    failure: 'answer',
    run: async (m) => {
      const s = await withRetriever(ctx, (retriever) =>
        runPrefEvalMcq({ ...stageOptions(ctx, false), ...gridOf(ctx), model: m.model, ...(retriever ? { retriever } : {}) }),
      );
      const failedNow = s.failed + (ctx.retryFailed ? 0 : s.already_failed);
      ctx.log(`  prefeval-mcq  ${m.model}: ${s.ok} ok, ${s.failed} failed${s.failed ? ` (${reasons(s.failure_reasons)})` : ''}`);
      return {
        new: { ok: s.ok, failed: s.failed, failure_reasons: s.failure_reasons },
        failedNow,
        error: `${failedNow} MCQ answer(s) failed`,
        ...(s.spend_capped ? { spend_capped: true } : {}),
      };
    },
  });
}

/**
 * `plens status`: per model its responses and MCQ answers, and the judge's checks. A pipeline its
 * workspace keeps from running (answers made there with other settings) is reported as blocked,
 * with the reason and hint make would give, not as a failed status.
 */
export async function prefevalStatus(ctx: Ctx): Promise<Record<string, unknown>> {
  try {
    return await planStatus(ctx);
  } catch (error) {
    if (!(error instanceof PlensError && error.code === 'E_USAGE')) throw error;
    return { responses: [], mcq: [], checks: null, blocked: { message: error.message, ...(error.hint ? { hint: error.hint } : {}) } };
  }
}

async function planStatus(ctx: Ctx): Promise<Record<string, unknown>> {
  const generation = ctx.p.prefeval.tasks.includes('generation');
  const plans = await planResponses(ctx);
  const checks = generation ? await planChecks(ctx) : null;
  const mcq = await planMcq(ctx);
  const counts = (m: ModelPlan) => ({ model: m.model, done: m.work.done, pending: m.work.pending, failed: m.work.failed });
  return {
    responses: plans.map(counts),
    mcq: mcq.map(counts),
    checks:
      checks === null
        ? null
        : {
            judge: judgeOf(ctx),
            done: checks.work.done,
            pending: checks.work.pending,
            failed: checks.work.failed,
            estimated: Boolean(checks.work.estimated),
          },
  };
}
