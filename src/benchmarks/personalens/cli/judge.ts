import type { CommandModule } from 'yargs';
import { DEFAULT_DIMENSIONS } from '../judge-dimensions.js';
import { interruptSignal } from '../../../platform/interrupt.js';
import { llmStageOptions, llmStageRunOptions, setStageExitCode, withStageProgress, type LlmStageArgs } from '../../../platform/cli-stage-args.js';
import { printResult, type GlobalArgs } from '../../../platform/cli-options.js';
import { batchFlags, resolveBatch } from '../../../platform/run-settings.js';
import { STAGE_DEFAULTS } from '../stage-defaults.js';

interface JudgeArgs extends LlmStageArgs {
  judge: string;
  dimensions: string[];
  reask: boolean;
  batch?: boolean;
  'batch-fallback'?: string;
  'poll-interval'?: number;
  'batch-size'?: number;
}

export const judgeCommand: CommandModule<GlobalArgs, JudgeArgs> = {
  command: 'judge',
  describe: 'Let the judge agent score every finished dialogue (resumable; unreadable replies are kept as parse errors, never scored)',
  builder: (y) =>
    llmStageOptions(
      batchFlags(y)
        .option('judge', {
          type: 'string',
          demandOption: true,
          describe: "Judge model spec, e.g. anthropic:claude-3-5-sonnet-20241022 (the paper's) or sim:default",
        })
        .option('dimensions', {
          type: 'string',
          array: true,
          default: DEFAULT_DIMENSIONS,
          describe:
            'task_completion, personalization, naturalness, coherence (the last two for user and assistant), personalization_turns (Figure 5 per prefix: one call for each prefix ending with an assistant turn), personalization_chain (Figure 5 as the original "chain of turn" prompt: one call per dialogue, one score per assistant turn in one reply)',
        })
        .option('reask', {
          type: 'boolean',
          default: STAGE_DEFAULTS.reask,
          describe: 'When a reply does not parse, ask once more, restating the required format',
        }),
      'Judgments',
    )
      .example('$0 judge --judge sim:default', 'offline')
      .example('$0 judge --judge anthropic:claude-3-5-sonnet-20241022 --dimensions task_completion personalization --reask', '')
      .example('$0 judge --judge openai:gpt-4o --batch', 'through the OpenAI Batch API: half price, answers within 24 h; rerun to resume'),
  handler: async (args) => {
    const { runJudge, parseDimensions } = await import('../judge-stage.js');
    const { formatStageSummary } = await import('../../../engine/stage-summary.js');
    const stop = interruptSignal(() => process.stderr.write('\nplens: stopping; finished judgments are kept (Ctrl-C again to quit now)\n'));
    try {
      const batch = resolveBatch({ flags: args });
      const summary = await withStageProgress(args, 'judge', () =>
        runJudge({
          ...llmStageRunOptions(args, stop.signal),
          ...(batch ? { batch } : {}),
          judge: args.judge,
          dimensions: parseDimensions(args.dimensions),
          reask: args.reask,
        }),
      );
      printResult(args, summary, () => formatStageSummary(summary));
      setStageExitCode(summary);
    } finally {
      stop.dispose();
    }
  },
};
