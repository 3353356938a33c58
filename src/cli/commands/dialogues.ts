import type { CommandModule } from 'yargs';
import { usageError } from '../../core/errors.js';
import { userPath } from '../../core/paths.js';
import { interruptSignal } from '../interrupt.js';
import { printResult, showProgress, workspaceOf, type GlobalArgs } from '../options.js';

interface DialoguesArgs extends GlobalArgs {
  assistant: string[];
  setting: string[];
  user?: string;
  replicates: number;
  prompts?: string;
  cache: string;
  concurrency: number;
  limit?: number;
  shard?: string;
  'retry-failed': boolean;
  'dry-run': boolean;
  retries: number;
  'retry-delay-ms': number;
  'retry-window': number;
  'call-timeout': number;
  'connect-timeout': number;
}

export const dialoguesCommand: CommandModule<GlobalArgs, DialoguesArgs> = {
  command: 'dialogues',
  describe: 'Let the simulated user talk to each assistant under test, for every selected scenario (resumable)',
  builder: (y) =>
    y
      .option('assistant', {
        type: 'string',
        array: true,
        demandOption: true,
        describe: 'Assistant model spec(s): openai:MODEL, anthropic:MODEL or sim:default; params after ?, e.g. openai:gpt-4o-mini?temperature=0&price_in=0.15&price_out=0.6&rpm=500&tpm=200000&base_url=URL&key_env=VAR',
      })
      .option('setting', { type: 'string', array: true, default: ['base'], describe: 'Setting(s): vanilla, base, base+d, base+i, base+s, base+all' })
      .option('user', { type: 'string', describe: 'User-agent model spec (required unless every assistant is sim)' })
      .option('replicates', { type: 'number', default: 1, describe: 'Dialogues per scenario and cell (each its own key and cache entries)' })
      .option('prompts', { type: 'string', describe: 'Folder of prompt templates overriding the bundled ones, file by file' })
      .option('cache', { choices: ['on', 'off', 'read', 'write', 'replay'], default: 'on', describe: 'Call cache: on (use+record), off, read (use only), write (record only), replay (use; a miss fails)' })
      .option('concurrency', { type: 'number', default: 16, describe: 'Dialogues in flight at once' })
      .option('limit', { type: 'number', describe: 'Run at most N dialogues this time' })
      .option('shard', { type: 'string', describe: 'Run only shard i of n (i/n, 0-based), by key hash' })
      .option('retry-failed', { type: 'boolean', default: false, describe: 'Run again the dialogues recorded as failed' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Print the planned work and an estimate of calls, tokens and cost; call nothing' })
      .option('retries', { type: 'number', default: 6, describe: 'Retries per call on 408/409/429/5xx, resets, timeouts and unreadable answers (never on 400/401/403/404)' })
      .option('retry-delay-ms', { type: 'number', default: 1000, describe: 'First backoff delay; doubles per retry with jitter, at most 60 s; a Retry-After header is always honoured' })
      .option('retry-window', { type: 'number', default: 600, describe: 'Seconds after which a call stops retrying' })
      .option('call-timeout', { type: 'number', default: 180, describe: 'Seconds one attempt may take, start to last byte (headers and body each get the same bound)' })
      .option('connect-timeout', { type: 'number', default: 10, describe: 'Seconds to establish a connection' })
      .example('$0 dialogues --assistant sim:default --setting base+all', 'offline, on the selected scenarios')
      .example('$0 dialogues --assistant openai:gpt-4o-mini --user anthropic:claude-3-5-sonnet-20241022 --setting base base+all --concurrency 32', '')
      .example("$0 dialogues --assistant 'openai:llama3?base_url=http://localhost:8000/v1&price_in=0' --user sim:default --dry-run", 'quote specs that hold &'),
  handler: async (args) => {
    if (!Number.isInteger(args.concurrency) || args.concurrency < 1) throw usageError('--concurrency must be a whole number >= 1');
    if (!Number.isInteger(args.replicates) || args.replicates < 1) throw usageError('--replicates must be a whole number >= 1');
    if (args.limit !== undefined && (!Number.isInteger(args.limit) || args.limit < 0)) throw usageError('--limit must be a whole number >= 0');
    const { runDialogues } = await import('../../personalens/dialogues-stage.js');
    const { formatStageSummary } = await import('../../engine/stage-summary.js');
    const { parseSetting } = await import('../../personalens/settings.js');
    const { parseShard } = await import('../../engine/shard.js');
    const { DEFAULT_RETRY } = await import('../../llm/retry.js');
    for (const k of ['retries', 'retry-delay-ms', 'retry-window', 'call-timeout', 'connect-timeout'] as const) {
      if (!Number.isFinite(args[k]) || args[k] < 0) throw usageError(`--${k} must be a number >= 0`);
    }
    const stop = interruptSignal(() => process.stderr.write('\nplens: stopping; finished dialogues are kept (Ctrl-C again to quit now)\n'));
    try {
      const summary = await runDialogues({
        workspace: workspaceOf(args),
        assistants: args.assistant.flatMap((a) => a.split(',')),
        settings: args.setting.flatMap((s) => s.split(',')).map(parseSetting),
        ...(args.user ? { user: args.user } : {}),
        replicates: args.replicates,
        ...(args.prompts ? { prompts: userPath(args.prompts) } : {}),
        cache: args.cache as 'on',
        concurrency: args.concurrency,
        ...(args.limit !== undefined ? { limit: args.limit } : {}),
        ...(args.shard ? { shard: parseShard(args.shard) } : {}),
        retryFailed: args['retry-failed'],
        dryRun: args['dry-run'],
        progress: showProgress(args),
        signal: stop.signal,
        retry: { ...DEFAULT_RETRY, retries: args.retries, minDelayMs: args['retry-delay-ms'], maxTotalMs: args['retry-window'] * 1000 },
        timeouts: {
          connectMs: args['connect-timeout'] * 1000,
          headersMs: args['call-timeout'] * 1000,
          bodyMs: args['call-timeout'] * 1000,
          deadlineMs: args['call-timeout'] * 1000,
        },
      });
      printResult(args, summary, () => formatStageSummary(summary));
      if (summary.interrupted) process.exitCode = 130;
    } finally {
      stop.dispose();
    }
  },
};
