import type { CommandModule } from 'yargs';
import { userPath } from '../../core/paths.js';
import { DEFAULT_LAPS_SPEAKERS, SPEAKER_GROUPS, type SpeakerGroup } from '../../stats/speaker-groups.js';
import { PlensError } from '../../core/errors.js';
import { printResult, warehouseOption, workspaceOf, type GlobalArgs } from '../../platform/cli-options.js';
import { rememberWarehouse, shownPath, workspaceHasOutputs } from '../../platform/current-project.js';

interface WarehouseArgs extends GlobalArgs {
  db: string;
  'sql-dir'?: string;
  'dry-run': boolean;
  lexical: Array<'laps' | 'full' | 'none'>;
  'laps-speakers': SpeakerGroup[];
  'memory-limit'?: string;
  'step-cache': boolean;
  force: boolean;
}

export const warehouseCommand: CommandModule<GlobalArgs, WarehouseArgs> = {
  command: 'warehouse',
  describe: "Build the DuckDB warehouse from the workspace's Parquet and the SQL files in warehouse/",
  builder: (y) =>
    warehouseOption(y)
      .option('sql-dir', { type: 'string', describe: 'Folder of .sql files to run (default: the package warehouse/)' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Check every SQL file against the inputs without loading data or writing' })
      .option('lexical', {
        type: 'array',
        choices: ['laps', 'full', 'none'] as const,
        default: ['laps', 'full'] as Array<'laps' | 'full' | 'none'>,
        describe: "Table 10's lexical-diversity protocols (full costs about 40 s per million utterances; none skips it)",
      })
      .option('laps-speakers', {
        type: 'array',
        choices: SPEAKER_GROUPS,
        default: [...DEFAULT_LAPS_SPEAKERS] as SpeakerGroup[],
        describe:
          "Speaker groups the laps protocol measures (with --lexical laps): both (the paper's row) and, on request, user and assistant alone; each group adds 100 subsets of 7,012 tokens per assistant and kind, whatever the corpus size. full measures all three",
      })
      .option('memory-limit', {
        type: 'string',
        describe: 'DuckDB memory limit, e.g. 4GB; beyond it DuckDB spills to disk (default 1GB; env PLENS_MEMORY_LIMIT)',
      })
      .option('step-cache', {
        type: 'boolean',
        default: true,
        describe:
          "Reuse Table 10's results kept in <db>.steps/ when its inputs are unchanged, and skip a build whose inputs all are (--no-step-cache recomputes everything)",
      })
      .option('force', {
        type: 'boolean',
        default: false,
        describe: 'Build even when nothing changed since the last build (the workspace Parquet, the SQL files, the plens version, --lexical, --laps-speakers)',
      })
      .example('$0 warehouse', "build the current project's warehouse from its workspace (nothing to do if nothing changed)")
      .example('$0 warehouse --db /tmp/run.duckdb -w /data/run1', 'another workspace and database'),
  handler: async (args) => {
    const { buildWarehouse, formatWarehouseSummary } = await import('../../warehouse/build.js');
    const { sqlDirs, warehouseExamples, warehouseSources } = await import('../../registry/registry.js');
    const workspace = workspaceOf(args);
    const summary = await buildWarehouse({
      sources: warehouseSources(),
      workspace,
      dbPath: userPath(args.db),
      // --sql-dir: that folder (and its subfolders) instead of the registered benchmarks' SQL.
      ...(args['sql-dir'] ? { sqlDir: userPath(args['sql-dir']) } : { sqlDirs: sqlDirs() }),
      dryRun: args['dry-run'],
      lexical: args.lexical.filter((p): p is 'laps' | 'full' => p !== 'none'),
      lapsSpeakers: args['laps-speakers'],
      stepCache: args['step-cache'],
      force: args.force,
      ...(args['memory-limit'] ? { memoryLimit: args['memory-limit'] } : {}),
    }).catch((error: unknown) => {
      // Nothing at all in the workspace: say how to get something there first.
      if (error instanceof PlensError && error.code === 'E_PREREQUISITE' && !workspaceHasOutputs(workspace.root))
        throw new PlensError('E_PREREQUISITE', error.message, {
          hint: `nothing has run in ${shownPath(workspace.root, process.cwd())}: \`plens demo\` runs the bundled sample offline and builds its warehouse; \`plens make -p FILE.yaml\` runs a pipeline (it builds its own warehouse). With data of your own: ${error.hint ?? 'run a stage first'}`,
          cause: error,
        });
      throw error;
    });
    // -w DIR alone finds this warehouse from now on (current-project.ts).
    const pipeline = args.project?.pipeline && args.project.source !== 'flags' ? { file: args.project.pipeline, folder: process.cwd() } : undefined;
    if (!args['dry-run']) rememberWarehouse(workspace.root, userPath(args.db), pipeline);
    printResult(args, summary, () => formatWarehouseSummary(summary, warehouseExamples()));
  },
};
