import type { CommandModule } from 'yargs';
import { usageError } from '../../core/errors.js';
import { userPath } from '../../core/paths.js';
import { printResult, requireProjectWarehouse, warehouseOption, warn, type GlobalArgs } from '../../platform/cli-options.js';

interface TablesArgs extends GlobalArgs {
  db: string;
  only?: string[];
  format: 'md' | 'csv' | 'tex' | 'json' | 'table';
  'out-dir'?: string;
  'exclude-flagged': boolean;
}

export const tablesCommand: CommandModule<GlobalArgs, TablesArgs> = {
  command: 'tables',
  describe: "Render the paper's tables from the warehouse (md, csv, LaTeX, JSON)",
  builder: (y) =>
    warehouseOption(y)
      .option('only', { type: 'string', array: true, describe: 'Table names, e.g. table1 table8_9 (or table1,table8_9)' })
      .option('format', {
        choices: ['md', 'csv', 'tex', 'json', 'table'] as const,
        default: 'md' as const,
        describe:
          'Output format (tex: booktabs, ready to paste; json is the same as --json). csv on stdout is one table: name it with --only, or write them all with --out-dir',
      })
      .option('out-dir', { type: 'string', describe: 'Write one file per table here instead of printing' })
      .option('exclude-flagged', {
        type: 'boolean',
        default: false,
        describe: 'Leave out the dialogues the simulator audit flags (see the simulator_audit table)',
      })
      .example('$0 tables', 'every table the warehouse can give, as Markdown')
      .example('$0 tables --only table8_9 --format tex --out-dir paper/', 'LaTeX for Tables 8-9')
      .example('$0 tables --only table3 --format csv > table3.csv', 'one table as CSV'),
  handler: async (args) => {
    const { collectTables, formatTables } = await import('../../tables/tables.js');
    const { tableCatalog } = await import('../../registry/registry.js');
    const { renderTable } = await import('../../tables/render.js');
    const json = args.json || args.format === 'json';
    const csvOnStdout = args.format === 'csv' && !args['out-dir'] && !json;
    const only = [...new Set(args.only ?? [])];
    // CSV is one table with one header: several go to files.
    if (csvOnStdout && only.length > 1) throw usageError(`CSV on stdout holds one table; --only names ${only.length}`, csvHint(only));
    const result = await collectTables({
      catalog: tableCatalog(),
      dbPath: requireProjectWarehouse(args),
      format: args.format,
      excludeFlagged: args['exclude-flagged'],
      ...(only.length > 0 ? { only } : {}),
      ...(args['out-dir'] ? { outDir: userPath(args['out-dir']) } : {}),
    });
    for (const w of result.warnings) warn({ json }, w);
    if (csvOnStdout) {
      if (result.tables.length > 1)
        throw usageError(`CSV on stdout holds one table; this warehouse gives ${result.tables.length}`, csvHint(result.tables.map((t) => t.name)));
      for (const m of result.missing) warn({ json }, `${m.name}: ${m.reason}`);
      const table = result.tables[0];
      if (table && !args.quiet) process.stdout.write(renderTable(table, 'csv').replace(/\n?$/, '\n'));
      return;
    }
    printResult(
      { ...args, json },
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

function csvHint(names: string[]): string {
  return `name one with --only NAME (${names.join(', ')}), or write each to its own file with --format csv --out-dir DIR`;
}
