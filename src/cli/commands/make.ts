import type { CommandModule } from 'yargs';
import { ExitCode, usageError } from '../../core/errors.js';
import { interruptSignal } from '../../platform/interrupt.js';
import { printResult, showProgress, type GlobalArgs } from '../../platform/cli-options.js';
import { LIMIT_KEYS, limitFlags, type LimitFlagValues } from '../../platform/run-settings.js';
import { benchmarks } from '../../registry/registry.js';

interface MakeArgs extends GlobalArgs, Partial<LimitFlagValues> {
  targets: string[];
  pipeline: string | undefined;
  'dry-run': boolean;
  'keep-going': boolean;
  'retry-failed': boolean;
}

export const makeCommand: CommandModule<GlobalArgs, MakeArgs> = {
  command: 'make [targets..]',
  describe: "Build a pipeline's targets, running only what is missing or out of date (pipelines/*.yaml)",
  builder: (y) =>
    limitFlags(
      y
        .positional('targets', {
          type: 'string',
          array: true,
          default: ['all'],
          describe: `${benchmarks()
            .map((b) => `${b.title}: ${b.steps.map((step) => step.name).join(', ')}`)
            .join('; ')}; every pipeline: warehouse, tables, a table (by its name), report or all`,
        })
        .option('pipeline', {
          alias: 'p',
          type: 'string',
          describe: 'The pipeline file (YAML); it names the workspace and the warehouse. A first argument ending in .yaml or .yml is taken as the pipeline too',
        })
        .option('dry-run', {
          type: 'boolean',
          default: false,
          describe: 'Print the plan: per stage and cell the work left, calls, tokens and cost; run nothing',
        })
        .option('keep-going', {
          alias: 'k',
          type: 'boolean',
          default: false,
          describe: 'Go on past a failing cell or step; exit 1 at the end if anything failed',
        })
        .option('retry-failed', {
          type: 'boolean',
          default: false,
          describe: 'Run again dialogues, judgments and PERSONA-bench predictions recorded as failed (or unparsed)',
        })
        .example('$0 make all -p pipelines/demo.yaml', 'the demo: every stage on the bundled sample, offline')
        .example('$0 make all -p pipelines/persona-demo.yaml', 'PERSONA-bench on its bundled sample, offline')
        .example('$0 make table3 -p pipelines/paper-table3.yaml --dry-run', 'what Table 3 would still cost')
        .example('$0 make dialogues -p pipelines/paper-ablation.yaml --keep-going', '')
        .example('$0 make -p pipelines/paper-table3.yaml --cache replay --concurrency 4', "the pipeline's run with other limits (keys and results unchanged)"),
      { what: 'Dialogues per cell (the judge gets cells x concurrency)', keys: LIMIT_KEYS, defaults: false },
    ),
  handler: async (args) => {
    const { loadPipeline } = await import('../../make/pipeline.js');
    const { make, formatMake } = await import('../../make/make.js');
    const { file, targets } = pipelineAndTargets(args.pipeline, args.targets);
    // A limit given as a flag beats the pipeline's limits:, which beat the defaults.
    const pipeline = loadPipeline(file, process.env, { limits: args as unknown as Record<string, unknown> });
    const stop = interruptSignal(() => process.stderr.write('\nplens: stopping; finished work is kept, rerun to resume\n'));
    try {
      const quiet = args.json || args.quiet;
      const result = await make(pipeline, {
        targets,
        dryRun: args['dry-run'],
        keepGoing: args['keep-going'],
        retryFailed: args['retry-failed'],
        progress: showProgress(args),
        signal: stop.signal,
        log: (line) => {
          if (!quiet) process.stdout.write(line + '\n');
        },
      });
      printResult(args, { ok: result.failed.length === 0, ...result }, () => formatMake(result));
      if (stop.signal.aborted) process.exitCode = 130;
      else if (result.failed.length > 0 && !result.dry_run) process.exitCode = 1;
      else if (result.spend_capped) process.exitCode = ExitCode.spendCapped;
    } finally {
      stop.dispose();
    }
  },
};

/**
 * `-p FILE`, or an argument naming a YAML file (`plens make pipelines/demo.yaml [targets]`); the
 * other arguments are the targets (default all).
 */
export function pipelineAndTargets(flag: string | undefined, positional: readonly string[]): { file: string; targets: string[] } {
  const files = positional.filter((a) => /\.ya?ml$/i.test(a));
  const targets = positional.filter((a) => !/\.ya?ml$/i.test(a));
  const named = flag !== undefined ? [flag, ...files] : files;
  if (named.length > 1) throw usageError(`more than one pipeline: ${named.join(', ')}`, 'name the pipeline once, with -p FILE or as an argument');
  if (named.length === 0)
    throw usageError(
      'name the pipeline: plens make -p FILE [targets] (or plens make FILE.yaml [targets])',
      'the shipped ones are in pipelines/, e.g. pipelines/demo.yaml',
    );
  return { file: named[0]!, targets: targets.length > 0 ? targets : ['all'] };
}
