import type { CommandModule } from 'yargs';
import { usageError } from '../../../core/errors.js';
import { interruptSignal } from '../../../platform/interrupt.js';
import { llmStageOptions, llmStageRunOptions, setStageExitCode, withStageProgress, type LlmStageArgs } from '../../../platform/cli-stage-args.js';
import { printResult, type GlobalArgs } from '../../../platform/cli-options.js';
import { STAGE_DEFAULTS } from '../stage-defaults.js';

interface DialoguesArgs extends LlmStageArgs {
  assistant: string[];
  setting: string[];
  user?: string;
  replicates: number;
}

export const dialoguesCommand: CommandModule<GlobalArgs, DialoguesArgs> = {
  command: 'dialogues',
  describe: 'Let the simulated user talk to each assistant under test, for every selected scenario (resumable)',
  builder: (y) =>
    llmStageOptions(
      y
        .option('assistant', {
          type: 'string',
          array: true,
          demandOption: true,
          describe:
            'Assistant model spec(s): openai:MODEL, anthropic:MODEL or sim:default; params after ?, e.g. openai:gpt-4o-mini?temperature=0&price_in=0.15&price_out=0.6 (also max_tokens, top_p, rpm, tpm, base_url, key_env)',
        })
        .option('setting', { type: 'string', array: true, default: ['base'], describe: 'Setting(s): vanilla, base, base+d, base+i, base+s, base+all' })
        .option('user', { type: 'string', describe: 'User-agent model spec (required unless every assistant is sim)' })
        .option('replicates', {
          type: 'number',
          default: STAGE_DEFAULTS.replicates,
          describe: 'Dialogues per scenario and cell (each its own key and cache entries)',
        }),
      'Dialogues',
    )
      .example('$0 dialogues --assistant sim:default --setting base+all', 'offline, on the selected scenarios')
      .example('$0 dialogues --assistant openai:gpt-4o-mini --user anthropic:claude-3-5-sonnet-20241022 --setting base base+all --concurrency 32', '')
      .example("$0 dialogues --assistant 'openai:llama3?base_url=http://localhost:8000/v1&price_in=0' --user sim:default --dry-run", 'quote specs that hold &'),
  handler: async (args) => {
    if (!Number.isInteger(args.replicates) || args.replicates < 1) throw usageError('--replicates must be a whole number >= 1');
    const { runDialogues } = await import('../dialogues-stage.js');
    const { formatStageSummary } = await import('../../../engine/stage-summary.js');
    const { parseSetting } = await import('../settings.js');
    const stop = interruptSignal(() => process.stderr.write('\nplens: stopping; finished dialogues are kept (Ctrl-C again to quit now)\n'));
    try {
      const summary = await withStageProgress(args, 'dialogues', () =>
        runDialogues({
          ...llmStageRunOptions(args, stop.signal),
          assistants: args.assistant.flatMap((a) => a.split(',')),
          settings: args.setting.flatMap((s) => s.split(',')).map(parseSetting),
          ...(args.user ? { user: args.user } : {}),
          replicates: args.replicates,
        }),
      );
      printResult(args, summary, () => formatStageSummary(summary));
      setStageExitCode(summary);
    } finally {
      stop.dispose();
    }
  },
};
