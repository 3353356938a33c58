import { join } from 'node:path';
import type { CommandModule } from 'yargs';
import { userPath } from '../../core/paths.js';
import { printResult, requireProjectWarehouse, warehouseOption, type GlobalArgs } from '../../platform/cli-options.js';

interface ExportArgs extends GlobalArgs {
  db: string;
  pipeline: string | undefined;
  format: 'inspect';
  out?: string;
  where?: string;
  force: boolean;
}

export const exportCommand: CommandModule<GlobalArgs, ExportArgs> = {
  command: 'export',
  describe: "Write a run's results as eval logs an existing viewer opens (Inspect: inspect view), one per task and model",
  builder: (y) =>
    warehouseOption(y)
      .option('format', {
        choices: ['inspect'] as const,
        default: 'inspect' as const,
        describe: "Log format: inspect = Inspect's eval log (.json, log format 2), opened by `inspect view` (docs/export.md)",
      })
      .option('out', {
        alias: 'o',
        type: 'string',
        describe: 'Folder for the logs (default: <workspace>/export/<format>), or a FILE.json when one cell is exported',
      })
      .option('where', {
        type: 'string',
        describe:
          "Only the cells whose fields match key=value pairs, comma-separated; keys: benchmark, task, model, a role (user, judge) or a cell's field (setting, form ...)",
      })
      .option('force', { type: 'boolean', default: false, describe: 'Replace log files that exist with other content (an unchanged file is left as it is)' })
      .example('$0 export', "the current project's run, one Inspect log per cell, in <workspace>/export/inspect")
      .example('$0 export -p pipelines/demo.yaml -o logs/ && inspect view --log-dir logs/', 'the demo, opened in the Inspect viewer')
      .example('$0 export --where setting=base+all -o base-all.json', 'one cell into one file'),
  handler: async (args) => {
    const { exportRun, formatExport, parseCellMatch } = await import('../../export/export.js');
    const { exportParts } = await import('../../registry/registry.js');
    const dbPath = requireProjectWarehouse(args);
    const result = await exportRun({
      dbPath,
      format: args.format,
      parts: exportParts(),
      // -w names the workspace whose export/ folder takes the logs; else the warehouse's own workspace.
      ...(args.out !== undefined ? { out: userPath(args.out) } : args.workspaceGiven ? { out: join(userPath(args.workspace), 'export', args.format) } : {}),
      ...(args.where !== undefined ? { where: parseCellMatch(args.where) } : {}),
      force: args.force,
    });
    printResult(args, result, () => formatExport(result));
  },
};
