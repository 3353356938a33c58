import type { CommandModule } from 'yargs';
import { usageError } from '../../core/errors.js';
import { userPath } from '../../core/paths.js';
import { interruptSignal } from '../interrupt.js';
import { printResult, showProgress, workspaceOf, type GlobalArgs } from '../options.js';

interface JudgeArgs extends GlobalArgs {
  judge: string;
  dimensions: string[];
  prompts?: string;
  reask: boolean;
  cache: string;
  concurrency: number;
  limit?: number;
  shard?: string;
  'retry-failed': boolean;
  'dry-run': boolean;
  retries: number;
  'retry-delay-ms': number;
  'call-timeout': number;
}

export const judgeCommand: CommandModule<GlobalArgs, JudgeArgs> = {
  command: 'judge',
  describe: 'Let the judge agent score every finished dialogue (resumable; unreadable replies are kept as parse errors, never scored)',
  builder: (y) =>
    y
      .option('judge', { type: 'string', demandOption: true, describe: 'Judge model spec, e.g. anthropic:claude-3-5-sonnet-20241022 (the paper\'s) or sim:default' })
      .option('dimensions', {
        type: 'string',
        array: true,
        default: ['task_completion', 'personalization', 'naturalness', 'coherence'],
        describe: 'task_completion, personalization, naturalness, coherence (the last two for user and assistant), personalization_turns (each prefix ending with an assistant turn; Figure 5)',
      })
      .option('prompts', { type: 'string', describe: 'Folder of prompt templates overriding the bundled ones, file by file' })
      .option('reask', { type: 'boolean', default: false, describe: 'When a reply does not parse, ask once more, restating the required format' })
      .option('cache', { choices: ['on', 'off', 'read', 'write', 'replay'], default: 'on', describe: 'Call cache mode (see plens dialogues --help)' })
      .option('concurrency', { type: 'number', default: 16, describe: 'Judge calls in flight at once' })
      .option('limit', { type: 'number', describe: 'Judge at most N items this time' })
      .option('shard', { type: 'string', describe: 'Run only shard i of n (i/n, 0-based), by key hash' })
      .option('retry-failed', { type: 'boolean', default: false, describe: 'Judge again what failed or did not parse' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Print the planned judgments and an estimate of tokens and cost; call nothing' })
      .option('retries', { type: 'number', default: 6, describe: 'Retries per call (see plens dialogues --help)' })
      .option('retry-delay-ms', { type: 'number', default: 1000, describe: 'First backoff delay' })
      .option('call-timeout', { type: 'number', default: 180, describe: 'Seconds one attempt may take' })
      .example('$0 judge --judge sim:default', 'offline')
      .example('$0 judge --judge anthropic:claude-3-5-sonnet-20241022 --dimensions task_completion personalization --reask', ''),
  handler: async (args) => {
    if (!Number.isInteger(args.concurrency) || args.concurrency < 1) throw usageError('--concurrency must be a whole number >= 1');
    const { runJudge, parseDimensions } = await import('../../personalens/judge-stage.js');
    const { formatStageSummary } = await import('../../engine/stage-summary.js');
    const { parseShard } = await import('../../engine/shard.js');
    const { DEFAULT_RETRY } = await import('../../llm/retry.js');
    const stop = interruptSignal(() => process.stderr.write('\nplens: stopping; finished judgments are kept (Ctrl-C again to quit now)\n'));
    try {
      const summary = await runJudge({
        workspace: workspaceOf(args),
        judge: args.judge,
        dimensions: parseDimensions(args.dimensions),
        ...(args.prompts ? { prompts: userPath(args.prompts) } : {}),
        reask: args.reask,
        cache: args.cache as 'on',
        concurrency: args.concurrency,
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        ...(args.shard ? { shard: parseShard(args.shard) } : {}),
        retryFailed: args['retry-failed'],
        dryRun: args['dry-run'],
        progress: showProgress(args),
        signal: stop.signal,
        retry: { ...DEFAULT_RETRY, retries: args.retries, minDelayMs: args['retry-delay-ms'] },
        timeouts: { connectMs: 10_000, headersMs: args['call-timeout'] * 1000, bodyMs: args['call-timeout'] * 1000, deadlineMs: args['call-timeout'] * 1000 },
      });
      printResult(args, summary, () =>
        formatStageSummary({ ...summary, cells: [{ dir: summary.dir, setting: 'all', assistant: 'all', user: summary.judge, rows: summary.rows }] }).replace(/cell {9}all \| all \| user /, 'judge        '),
      );
      if (summary.interrupted) process.exitCode = 130;
    } finally {
      stop.dispose();
    }
  },
};
