import type { CommandModule } from 'yargs';
import { usageError } from '../../core/errors.js';
import { userPath } from '../../core/paths.js';
import { requireProjectWarehouse, warehouseOption, type GlobalArgs } from '../../platform/cli-options.js';

interface SqlArgs extends GlobalArgs {
  db: string;
  query?: string;
  file?: string;
  format: 'table' | 'csv' | 'json' | 'md';
  'allow-files': boolean;
}

export const sqlCommand: CommandModule<GlobalArgs, SqlArgs> = {
  command: 'sql [query]',
  describe: 'Run SQL against the warehouse (read-only) and print the result',
  builder: (y) =>
    warehouseOption(y)
      .positional('query', { type: 'string', describe: 'SQL text; several statements run in order and the last one is printed' })
      .option('file', { alias: 'f', type: 'string', describe: 'Read the SQL from a file' })
      .option('format', {
        choices: ['table', 'csv', 'json', 'md'] as const,
        default: 'table' as const,
        describe: 'Output format; json is the same as --json (the rows as a JSON array)',
      })
      .option('allow-files', {
        type: 'boolean',
        default: false,
        describe:
          'Let the SQL read and write files anywhere and reach the network (COPY ... TO, EXPORT DATABASE, ATTACH, read_csv of any path). Off: it reads the warehouse and files under --workspace only',
      })
      .example('$0 sql "select count(*) from scenarios"', '')
      .example('$0 sql -f notebooks/my-query.sql --format csv > out.csv', '')
      .example('$0 sql "select * from runs" --json', 'the rows as JSON'),
  handler: async (args) => {
    if (!args.query === !args.file) throw usageError('give either a query or --file, not both or neither');
    const { querySql } = await import('../../tables/query.js');
    const { readSqlFile } = await import('../../warehouse/query.js');
    const { renderTable } = await import('../../tables/render.js');
    const file = args.file ? userPath(args.file) : undefined;
    const sql = file ? await readSqlFile(file) : args.query!;
    const db = requireProjectWarehouse(args);
    const table = await querySql(db, sql, file, { workspace: userPath(args.workspace), allowFiles: args['allow-files'] });
    // --json means the machine-readable rows; same as --format json.
    const format = args.json ? 'json' : args.format;
    if (format === 'json') process.stdout.write(JSON.stringify(table.rows, null, 2) + '\n');
    else if (!args.quiet) process.stdout.write(renderTable(table, format) + '\n');
  },
};
