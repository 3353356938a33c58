import type { Argv } from 'yargs';
import { Workspace } from '../core/workspace.js';
import { userPath } from '../core/paths.js';

export interface GlobalArgs {
  workspace: string;
  json: boolean;
  quiet: boolean;
  progress: boolean;
}

/** Options every command shares; declared once so they read the same everywhere. */
export function globalOptions(argv: Argv): Argv<GlobalArgs> {
  return argv
    .option('workspace', {
      alias: 'w',
      type: 'string',
      default: process.env['PLENS_WORKSPACE'] || 'out',
      describe: 'Folder for stage outputs (Parquet, manifests); env PLENS_WORKSPACE',
      global: true,
    })
    .option('json', { type: 'boolean', default: false, describe: 'Print a machine-readable JSON result on stdout', global: true })
    .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'Print only errors', global: true })
    .option('progress', { type: 'boolean', default: true, describe: 'Show progress bars on a terminal (--no-progress to hide)', global: true })
    .option('debug', { type: 'boolean', default: false, describe: 'On an error, also print its stack trace', global: true });
}

export const DEFAULT_WAREHOUSE = process.env['PLENS_WAREHOUSE'] || 'warehouse/plens.duckdb';

export function warehouseOption<T>(argv: Argv<T>) {
  return argv.option('db', {
    type: 'string',
    default: DEFAULT_WAREHOUSE,
    describe: 'DuckDB warehouse file; env PLENS_WAREHOUSE',
  });
}

export function workspaceOf(args: GlobalArgs): Workspace {
  return new Workspace(userPath(args.workspace));
}

export function showProgress(args: GlobalArgs): boolean {
  return args.progress && !args.json && !args.quiet && Boolean(process.stderr.isTTY);
}

/** Prints a result: JSON when asked, else the human text (unless --quiet). */
export function printResult(args: GlobalArgs, result: unknown, text: () => string): void {
  if (args.json) {
    process.stdout.write(JSON.stringify({ ok: true, ...(result as object) }, null, 2) + '\n');
  } else if (!args.quiet) {
    process.stdout.write(text().replace(/\n?$/, '\n'));
  }
}
