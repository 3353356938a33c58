import type { Argv } from 'yargs';
import { ExitCode, usageError } from '../core/errors.js';
import { userPath } from '../core/paths.js';
import { resolveShard } from '../engine/shard.js';
import type { LlmStageOptions } from '../engine/llm-stage.js';
import { limitFlags, llmStageOptionsOf, resolveLimits, STAGE_LIMIT_KEYS } from './run-settings.js';
import { withProgressSink, type ProgressSink } from '../engine/stage-progress.js';
import { makeProgressView } from './progress-view.js';
import { progressIntervalOption, showProgress, workspaceOf, type GlobalArgs } from './cli-options.js';

export interface LlmStageArgs extends GlobalArgs {
  prompts?: string;
  cache: string;
  concurrency: number;
  limit?: number;
  shard?: string;
  'shard-count'?: string;
  'retry-failed': boolean;
  'dry-run': boolean;
  retries: number;
  'retry-delay-ms': number;
  'retry-window': number;
  'call-timeout': number;
  'connect-timeout': number;
  'max-cost'?: number;
  'progress-interval'?: number;
}

/** The options every LLM stage (dialogues, judge) takes, declared once; the limits come from the one settings schema. */
export function llmStageOptions<T>(y: Argv<T>, what: string) {
  const stage = progressIntervalOption(y)
    .option('prompts', { type: 'string', describe: 'Folder of prompt templates overriding the bundled ones, file by file' })
    .option('limit', { type: 'number', describe: `Run at most N ${what.toLowerCase()} this time` })
    .option('shard', {
      type: 'string',
      describe:
        'Run only shard i of n (i/n, 0-based), by key hash; each shard writes its own log. Absent or "auto": env PLENS_SHARD=i/n, else the array-job index JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID or AWS_BATCH_JOB_ARRAY_INDEX',
    })
    .option('shard-count', {
      type: 'string',
      describe: 'Number of shards when the scheduler gives only an index (Kubernetes, AWS Batch); env PLENS_SHARD_COUNT',
    })
    .option('retry-failed', { type: 'boolean', default: false, describe: 'Run again what is recorded as failed (or, for the judge, unparsed)' })
    .option('dry-run', { type: 'boolean', default: false, describe: 'Print the planned work and an estimate of calls, tokens and cost; call nothing' });
  return limitFlags(stage, { what, keys: STAGE_LIMIT_KEYS, defaults: true });
}

/** Checks the shared options once and turns them into the stage's options, through the settings resolver. */
export function llmStageRunOptions(args: LlmStageArgs, signal: AbortSignal, env: NodeJS.ProcessEnv = process.env): LlmStageOptions {
  const limits = resolveLimits({ flags: args as unknown as Record<string, unknown> });
  if (args.limit !== undefined && (!Number.isInteger(args.limit) || args.limit < 0)) throw usageError('--limit must be a whole number >= 0');
  const shard = resolveShard(args.shard, args['shard-count'], env);
  return llmStageOptionsOf(limits, {
    workspace: workspaceOf(args),
    ...(args.prompts ? { prompts: userPath(args.prompts) } : {}),
    ...(args.limit !== undefined ? { limit: args.limit } : {}),
    ...(shard ? { shard } : {}),
    retryFailed: args['retry-failed'],
    dryRun: args['dry-run'],
    progress: showProgress(args),
    signal,
  });
}

/**
 * Runs a stage command's work under its progress. On a terminal the stage draws its own bar
 * (llmStageRunOptions' `progress`). With stderr a file or a pipe (nohup, Slurm, CI), lines that
 * start with `progress `, as `plens make` writes them: when the stage starts and ends, and every
 * --progress-interval seconds (env PLENS_PROGRESS_INTERVAL, default 10; 0 turns them off) how far
 * it is, so a log shows the run is alive. None with --no-progress, --quiet or --dry-run, nor
 * before the stage has work to do.
 */
export async function withStageProgress<T extends { interrupted: boolean }>(args: LlmStageArgs, stage: string, run: () => Promise<T>): Promise<T> {
  const view = process.stderr.isTTY || args['dry-run'] ? undefined : makeProgressView(args);
  if (!view) return run();
  // The step is shown once the stage has work: an invalid flag or nothing left to do prints no progress.
  let opened = false;
  const sink: ProgressSink = {
    open: (name, total, where) => {
      if (!opened) view.stepStarted(stage);
      opened = true;
      return view.open(name, total, where);
    },
  };
  view.start();
  try {
    const result = await withProgressSink(sink, run);
    // A stop (Ctrl-C) ends the stage early with what it finished: `stopped`, as make says it.
    if (opened) view.stepEnded(stage, result.interrupted ? 'stopped' : 'done');
    return result;
  } catch (error) {
    if (opened) view.stepEnded(stage, 'FAILED');
    throw error;
  } finally {
    view.stop();
  }
}

/** A stage's exit code when it ran to its end without an error: 130 when stopped by Ctrl-C, 6 when stopped by the spend cap. */
export function setStageExitCode(summary: { interrupted: boolean; spend_capped: boolean }): void {
  if (summary.interrupted) process.exitCode = 130;
  else if (summary.spend_capped) process.exitCode = ExitCode.spendCapped;
}
