import type { CommandModule } from 'yargs';
import { userPath } from '../../../core/paths.js';
import { printResult, showProgress, workspaceOf, type GlobalArgs } from '../../../platform/cli-options.js';

interface ImportArgs extends GlobalArgs {
  from: string;
  schema?: string;
  'dry-run': boolean;
}

export const importCommand: CommandModule<GlobalArgs, ImportArgs> = {
  command: 'import',
  describe: 'Read the upstream PersonaLens data, validate it, and write normalised Parquet tables',
  builder: (y) =>
    y
      .option('from', {
        type: 'string',
        demandOption: true,
        describe: 'The upstream data/ folder (holds profile/ and task/), e.g. ../shared/personalens/data',
      })
      .option('schema', { type: 'string', describe: 'Preference schema; default <from>/res/schema.json or <from>/../res/schema.json' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Read and validate everything, write nothing' })
      .example('$0 import --from ../shared/personalens/data', 'import the released data into ./out/dataset')
      .example('$0 import --from data/sample --workspace /tmp/ws', 'import the bundled sample elsewhere'),
  handler: async (args) => {
    const { runImport } = await import('../dataset/import.js');
    const { formatImportSummary } = await import('../dataset/summary.js');
    const summary = await runImport({
      from: userPath(args.from),
      ...(args.schema ? { schema: userPath(args.schema) } : {}),
      workspace: workspaceOf(args),
      progress: showProgress(args),
      dryRun: args['dry-run'],
    });
    printResult(args, summary, () => formatImportSummary(summary));
  },
};
