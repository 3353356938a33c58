import type { CommandModule } from 'yargs';
import { userPath } from '../../core/paths.js';
import { printResult, warehouseOption, type GlobalArgs } from '../../platform/cli-options.js';

interface TablesArgs extends GlobalArgs {
  db: string;
  only?: string;
  format: 'md' | 'csv' | 'tex' | 'json' | 'table';
  'out-dir'?: string;
  'exclude-flagged': boolean;
}

export const tablesCommand: CommandModule<GlobalArgs, TablesArgs> = {
  command: 'tables',
  describe: "Render the paper's tables from the warehouse (md, csv, LaTeX, JSON)",
  builder: (y) =>
    warehouseOption(y)
      .option('only', { type: 'string', describe: 'Comma-separated table names, e.g. table1,table8_9' })
      .option('format', {
        choices: ['md', 'csv', 'tex', 'json', 'table'] as const,
        default: 'md' as const,
        describe: 'Output format (tex: booktabs, ready to paste)',
      })
      .option('out-dir', { type: 'string', describe: 'Write one file per table here instead of printing' })
      .option('exclude-flagged', {
        type: 'boolean',
        default: false,
        describe: 'Leave out the dialogues the simulator audit flags (see the simulator_audit table)',
      })
      .example('$0 tables', 'every table the warehouse can give, as Markdown')
      .example('$0 tables --only table8_9 --format tex --out-dir paper/', 'LaTeX for Tables 8-9'),
  handler: async (args) => {
    const { collectTables, formatTables } = await import('../../tables/tables.js');
    const { tableCatalog } = await import('../../registry/registry.js');
    const result = await collectTables({
      catalog: tableCatalog(),
      dbPath: userPath(args.db),
      format: args.format,
      excludeFlagged: args['exclude-flagged'],
      ...(args.only
        ? {
            only: args.only
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          }
        : {}),
      ...(args['out-dir'] ? { outDir: userPath(args['out-dir']) } : {}),
    });
    for (const w of result.warnings) if (!args.json) process.stderr.write(`plens: warning: ${w}\n`);
    printResult(
      args,
      {
        tables: result.tables.map((t) => ({ name: t.name, title: t.title, rows: t.rows, notes: t.notes })),
        missing: result.missing,
        files: result.files,
        warnings: result.warnings,
      },
      () => formatTables(result, args.format),
    );
  },
};
