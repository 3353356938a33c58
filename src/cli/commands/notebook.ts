import { relative } from 'node:path';
import type { CommandModule } from 'yargs';
import { requireProjectWarehouse, warehouseOption, warn, type GlobalArgs } from '../../platform/cli-options.js';

interface NotebookArgs extends GlobalArgs {
  file: string;
  db: string;
  format?: 'md' | 'html';
  out?: string;
  param: string[];
  'max-rows'?: number;
  'allow-files'?: boolean;
}

export const notebookCommand: CommandModule<GlobalArgs, NotebookArgs> = {
  command: 'notebook <file>',
  describe: 'Run a SQL notebook (Markdown with ```sql cells) against the warehouse and write Markdown or HTML with the results',
  builder: (y) =>
    warehouseOption(y)
      .positional('file', {
        type: 'string',
        demandOption: true,
        describe: 'The notebook: a Markdown file whose ```sql blocks are cells (see notebooks/README.md)',
      })
      .option('format', { choices: ['md', 'html'] as const, describe: 'Output format (default: from --out, else md)' })
      .option('out', { alias: 'o', type: 'string', describe: 'Output file, or - for stdout (default: <workspace>/notebooks/<name>.<format>)' })
      .option('param', {
        alias: 'P',
        type: 'string',
        array: true,
        default: [] as string[],
        describe: "name=value for a parameter the notebook declares; read in SQL as getvariable('name'). Several: -P a=1 -P b=2, -P a=1 b=2 or -P a=1,b=2",
      })
      .option('max-rows', { type: 'number', describe: 'Rows shown per cell unless the cell says otherwise (default 50)' })
      .option('allow-files', {
        type: 'boolean',
        default: false,
        describe:
          'Let cells read and write files anywhere and use the network (COPY, read_csv of any path); by default they read the warehouse and files under the workspace only, as plens sql',
      })
      .check((a) => {
        const n = a['max-rows'];
        if (n !== undefined && (!Number.isInteger(n) || n < 0)) throw new Error('--max-rows must be a whole number >= 0');
        return true;
      })
      .example('$0 notebook notebooks/paper-tables.md', 'writes out/notebooks/paper-tables.md')
      .example('$0 notebook notebooks/compare-assistants.md --format html -P assistant_a=openai:gpt-4o -P assistant_b=openai:gpt-4o-mini', '')
      .example('$0 notebook notebooks/cost.md -o - | less', 'print instead of writing a file')
      .epilogue(
        'Each cell runs on its own: a failing cell shows its error under itself and the cells after it still run. ' +
          'Exit 0 when every cell ran; 5 when one or more failed (the output is written all the same, and --json lists each cell with its status); ' +
          '4 when there is no warehouse, 3 when the notebook cannot be read.',
      ),
  handler: async (args) => {
    const { notebookCommand: run } = await import('../../notebook/notebook.js');
    requireProjectWarehouse(args);
    const { summary, error } = await run({
      file: args.file,
      // As the user would type them: the output names the warehouse.
      db: shown(args.db),
      cwd: process.cwd(),
      workspace: shown(args.workspace),
      ...(args.format ? { format: args.format } : {}),
      ...(args.out !== undefined ? { out: args.out } : {}),
      params: args.param.map(String),
      allowFiles: args['allow-files'] ?? false,
      ...(args['max-rows'] !== undefined ? { maxRows: args['max-rows'] } : {}),
    });
    if (args.json) {
      // The summary says which cells failed; the exit code still says that something did.
      process.stdout.write(JSON.stringify({ ok: !error, ...summary, ...(error ? { error: error.toJSON() } : {}) }, null, 2) + '\n');
      if (error) process.exitCode = error.exitCode;
      return;
    }
    for (const w of summary.warnings) warn(args, w);
    if (summary.document !== undefined) process.stdout.write(summary.document);
    else if (!args.quiet) process.stdout.write(`${shown(summary.output)}\n`);
    if (error) throw error;
  },
};

/** The path relative to the current directory when it lies below it (what the user would type). */
function shown(path: string): string {
  const rel = relative(process.cwd(), path);
  return rel && !rel.startsWith('..') ? rel : path;
}
