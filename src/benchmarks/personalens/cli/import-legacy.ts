import type { Argv, CommandModule } from 'yargs';
import { userPath } from '../../../core/paths.js';
import { printResult, workspaceOf, type GlobalArgs } from '../../../platform/cli-options.js';

interface ImportLegacyArgs extends GlobalArgs {
  'output-dir': string;
  'setting-map'?: string | string[];
  'user-model'?: string;
  'dry-run': boolean;
}

export const importLegacyCommand: CommandModule<GlobalArgs, ImportLegacyArgs> = {
  command: 'import-legacy <output-dir>',
  describe: 'Import dialogues and judge replies written by the original PersonaLens scripts (output/dialogue, output/evaluation) into the workspace',
  builder: (y) =>
    (y as Argv<GlobalArgs>)
      .positional('output-dir', {
        type: 'string',
        demandOption: true,
        describe: "The scripts' output folder (holds dialogue/ and evaluation/), or the folder above it",
      })
      .option('setting-map', {
        // Not an array option: that would swallow the positional after it. Repeat the flag or use commas.
        type: 'string',
        describe:
          'Extra model-folder suffixes, SUFFIX=SETTING, repeatable or comma-separated (e.g. _v=vanilla; =vanilla for no suffix). Defaults: (none) base, _d base+d, _p base+i, _s base+s, _d_p_s base+all',
      })
      .option('user-model', { type: 'string', describe: 'The user-agent model the dialogues were made with, recorded as user_model (default legacy:unknown)' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'Read and check everything, print what would be imported, write nothing' })
      .example('$0 import-legacy ../PersonaLens/output --dry-run', 'check a run of the original scripts')
      .example('$0 import-legacy ../PersonaLens/output && $0 warehouse', 'import it and build the warehouse') as unknown as Argv<ImportLegacyArgs>,
  handler: async (args) => {
    const { importLegacy, formatLegacySummary } = await import('../legacy/import.js');
    const summary = await importLegacy({
      workspace: workspaceOf(args),
      from: userPath(args['output-dir']),
      settingMap: ([] as string[]).concat(args['setting-map'] ?? []),
      ...(args['user-model'] !== undefined ? { userModel: args['user-model'] } : {}),
      dryRun: args['dry-run'],
    });
    printResult(args, summary, () => formatLegacySummary(summary));
  },
};
