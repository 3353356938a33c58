import type { CommandModule } from 'yargs';
import { ExitCode, usageError } from '../../core/errors.js';
import { interruptSignal } from '../../platform/interrupt.js';
import { join, resolve } from 'node:path';
import { packageRoot } from '../../core/paths.js';
import { printResult, progressIntervalOption, showProgress, type GlobalArgs } from '../../platform/cli-options.js';
import { projectPipeline, rememberMake, shownPath } from '../../platform/current-project.js';
import { LIMIT_KEYS, limitFlags, type LimitFlagValues } from '../../platform/run-settings.js';
import { benchmarks } from '../../registry/registry.js';

interface MakeArgs extends GlobalArgs, Partial<LimitFlagValues> {
  targets: string[];
  pipeline: string | undefined;
  'dry-run': boolean;
  'keep-going': boolean;
  'retry-failed': boolean;
  'progress-interval'?: number;
}

export const makeCommand: CommandModule<GlobalArgs, MakeArgs> = {
  command: 'make [targets..]',
  describe: "Build a pipeline's targets, running only what is missing or out of date (pipelines/*.yaml)",
  builder: (y) =>
    limitFlags(
      progressIntervalOption(y)
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
          describe:
            "The pipeline file (YAML); it names the workspace and the warehouse. A first argument ending in .yaml or .yml is taken as the pipeline too. Default: the pipeline that last built -w's workspace, else the last plens make here (to resume it), else plens.yaml here",
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
    const { makeProgressView } = await import('../../platform/progress-view.js');
    let ranIn: string | undefined;
    const { file, targets } = pipelineAndTargets(args.pipeline, args.targets, () => {
      const found = pipelineOfProject(undefined, args.workspace, 'make', args);
      ranIn = found.folder;
      return found.file;
    });
    const view = makeProgressView(args);
    // A limit given as a flag beats the pipeline's limits:, which beat the defaults.
    const pipeline = loadPipeline(file, process.env, { limits: args as unknown as Record<string, unknown> });
    checkWorkspaceFlag(args.workspace, pipeline, ranIn, 'make');
    // What the next plens sql, tables, report, status ... here work on (a dry run writes nothing).
    if (!args['dry-run']) rememberMake({ pipeline: pipeline.file, workspace: pipeline.workspace, warehouse: pipeline.warehouse }, process.cwd(), process.env);
    const stop = interruptSignal(() => process.stderr.write('\nplens: stopping; finished work is kept, rerun to resume\n'));
    try {
      const quiet = args.json || args.quiet;
      const result = await make(pipeline, {
        targets,
        dryRun: args['dry-run'],
        keepGoing: args['keep-going'],
        retryFailed: args['retry-failed'],
        progress: showProgress(args),
        ...(view ? { view } : {}),
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
export function pipelineAndTargets(
  flag: string | undefined,
  positional: readonly string[],
  /** The current project's pipeline, when none is named. */
  fallback?: () => string | undefined,
): { file: string; targets: string[] } {
  const files = positional.filter((a) => /\.ya?ml$/i.test(a));
  const targets = positional.filter((a) => !/\.ya?ml$/i.test(a));
  const named = flag !== undefined ? [flag, ...files] : files;
  if (named.length > 1) throw usageError(`more than one pipeline: ${named.join(', ')}`, 'name the pipeline once, with -p FILE or as an argument');
  const file = named[0] ?? fallback?.();
  if (file === undefined)
    throw usageError(
      'name the pipeline: plens make -p FILE [targets] (or plens make FILE.yaml [targets])',
      'the shipped ones are in pipelines/, e.g. pipelines/demo.yaml; `plens demo` runs the bundled sample',
    );
  return { file, targets: targets.length > 0 ? targets : ['all'] };
}

/**
 * The pipeline a command means: the one named, else the current project's (the pipeline that last
 * built -w's workspace, the last make here, plens.yaml here), said on stderr; else a usage error.
 */
export function pipelineOfProject(
  named: string | undefined,
  workspaceFlag: string | undefined,
  command: 'make' | 'status',
  args: Pick<GlobalArgs, 'json' | 'quiet'> = { json: true, quiet: true },
): { file: string; folder?: string } {
  if (named !== undefined) return { file: named };
  const cwd = process.cwd();
  const found = projectPipeline(workspaceFlag, { cwd, env: process.env });
  if (found) {
    if (!args.json && !args.quiet) process.stderr.write(`plens: pipeline ${shownPath(found.file, cwd)} (${found.from})\n`);
    return { file: found.file, ...(found.folder ? { folder: found.folder } : {}) };
  }
  if (workspaceFlag !== undefined)
    throw usageError(
      `no pipeline has run in ${workspaceFlag}, so -w alone does not say which to ${command === 'make' ? 'run' : 'show'}`,
      `name it: plens ${command} -p FILE`,
    );
  throw usageError(
    `name the pipeline: plens ${command} -p FILE${command === 'make' ? ' [targets] (or plens make FILE.yaml [targets])' : ' (or plens status FILE)'}`,
    `no plens make has run here and there is no plens.yaml here; the shipped pipelines are in ${shownPath(join(packageRoot, 'pipelines'), cwd)}/, e.g. demo.yaml; \`plens demo\` runs the bundled sample`,
  );
}

/**
 * -w with a pipeline: the pipeline names its workspace, so -w may only name the same folder. A
 * pipeline found through -w that ran in another folder reads its relative paths from there.
 */
export function checkWorkspaceFlag(
  workspaceFlag: string | undefined,
  pipeline: { file: string; workspace: string },
  ranIn?: string,
  command: 'make' | 'status' = 'status',
): void {
  if (workspaceFlag === undefined || workspaceFlag === '' || resolve(workspaceFlag) === pipeline.workspace) return;
  const cwd = process.cwd();
  if (ranIn !== undefined && ranIn !== cwd)
    throw usageError(
      `${shownPath(pipeline.file, cwd)} last built ${workspaceFlag} from ${ranIn}, and its paths are relative to that folder`,
      `run it from there: cd ${ranIn} && plens ${command} -p ${shownPath(pipeline.file, ranIn)}`,
    );
  throw usageError(
    `-w ${workspaceFlag} is not the workspace of ${shownPath(pipeline.file, cwd)} (${shownPath(pipeline.workspace, cwd)}): a pipeline names its own workspace`,
    'drop -w; to run the pipeline elsewhere, change its workspace: line (or set PLENS_WORKSPACE, where the pipeline reads it)',
  );
}
