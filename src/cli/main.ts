#!/usr/bin/env node
import { createRequire } from 'node:module';
import type { Argv, MiddlewareFunction } from 'yargs';
import type yargsEsm from 'yargs';
import { hideBin } from 'yargs/helpers';
import { asPlensError, ExitCode, usageError } from '../core/errors.js';
import { redact, registerSecretsFromEnv } from '../core/redact.js';
import { plensVersion } from '../core/version.js';
import { batchesCommand } from './commands/batches.js';
import { compareCommand } from './commands/compare.js';
import { exportCommand } from './commands/export.js';
import { demoCommand } from './commands/demo.js';
import { notebookCommand } from './commands/notebook.js';
import { makeCommand } from './commands/make.js';
import { reportCommand } from './commands/report.js';
import { sqlCommand } from './commands/sql.js';
import { statusCommand } from './commands/status.js';
import { statsCommand } from './commands/stats.js';
import { tablesCommand } from './commands/tables.js';
import { warehouseCommand } from './commands/warehouse.js';
import { globalOptions, paint } from '../platform/cli-options.js';
import { listParsing, projectMiddleware } from './conventions.js';
import { benchmarks } from '../registry/registry.js';

/**
 * yargs's ESM build lays out help with cliui's ESM shim, whose wrap cuts every line at the column,
 * mid-word; the CommonJS build (same yargs, same API) wraps with wrap-ansi, at word boundaries.
 */
const yargs = createRequire(import.meta.url)('yargs') as typeof yargsEsm;

/** Help text width: the terminal's, at most 120 columns (100 when not on a terminal). */
export function helpWidth(columns = process.stdout.columns): number {
  return Math.min(120, columns || 100);
}

/** `a, b and c`. */
const listed = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`);

export function buildCli(argv: string[]): Argv {
  const registered = benchmarks();
  let cli = globalOptions(yargs(argv))
    .scriptName('plens')
    .usage(
      `$0 <command> [options]\n\nRuns and builds personalization benchmarks for conversational assistants as pipelines of resumable stages (plens make runs a whole pipeline).\nBenchmarks: ${listed(registered.map((b) => `${b.id} (${b.summary})`))}.\nShared by every benchmark: make, status, warehouse, sql, tables, report, export, notebook, compare, stats, batches.`,
    );
  // Each benchmark's stage commands kept at the top level, then the shared commands, then each
  // benchmark's own command (`plens personalens <stage>`, `plens persona-bench <stage>`).
  for (const b of registered) for (const c of b.cli.topLevel ?? []) cli = cli.command(c);
  cli = cli
    .command(warehouseCommand)
    .command(sqlCommand)
    .command(notebookCommand)
    .command(tablesCommand)
    .command(compareCommand)
    .command(reportCommand)
    .command(exportCommand)
    .command(statsCommand)
    .command(demoCommand)
    .command(makeCommand)
    .command(statusCommand)
    .command(batchesCommand);
  for (const b of registered) cli = cli.command(b.cli.command);
  return (
    cli
      .demandCommand(1, 'Name a command; `plens --help` lists them.')
      .strict()
      .recommendCommands()
      .version(plensVersion)
      .help()
      .alias('h', 'help')
      // --help and --version print and return like any command: main() returns the exit code.
      .exitProcess(false)
      .wrap(helpWidth())
      .epilog(
        'Exit codes: 0 ok, 1 failure, 2 usage, 3 invalid input data, 4 missing prerequisite, 5 SQL error, 6 stopped at the spend cap (rerun with a higher cap), 130 stopped by Ctrl-C (rerun to resume). plens notebook exits 5 when some cells failed; it writes its output all the same.\n' +
          'The current project: without -p, -w or --db, a command uses the workspace and warehouse of the last `plens make` in this folder, else of plens.yaml here, else out/ and warehouse/plens.duckdb (docs/project.md).\n' +
          'Lists take commas or spaces: --setting base,base+all is --setting base base+all. NO_COLOR turns colour off.\nDocs: README.md, docs/',
      )
      .updateStrings(helpHeadings())
      // Lists split at commas before validation (choices see the items); the project after it.
      .middleware(listParsing as unknown as MiddlewareFunction, true)
      .middleware(projectMiddleware as unknown as MiddlewareFunction)
      .fail((message, error) => {
        // yargs reports usage problems as a message, handler failures as an error: keep the two apart.
        throw error ?? usageError(message);
      })
  );
}

/** Help's section headings, bold on a terminal that takes colour. */
function helpHeadings(): Record<string, string> {
  const headings = ['Commands:', 'Options:', 'Positionals:', 'Examples:'];
  return Object.fromEntries(headings.map((h) => [h, paint(process.stdout, 'bold', h)]));
}

/** Runs the CLI; returns the exit code instead of exiting so tests can call it in-process. */
export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const debug = argv.includes('--debug');
  redactTerminal();
  try {
    await buildCli(argv).parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.ok;
  } catch (error) {
    return reportError(error, json, debug);
  }
}

/** Every expected failure is a typed error with a code, printed once; a stack trace only under --debug. */
let errorReported = false;
function reportError(error: unknown, json: boolean, debug: boolean): number {
  errorReported = true;
  const plensError = asPlensError(error);
  if (json) {
    process.stdout.write(JSON.stringify({ ok: false, error: plensError.toJSON() }, null, 2) + '\n');
  } else {
    const where = plensError.where ? `${plensError.where}: ` : '';
    process.stderr.write(`plens: ${paint(process.stderr, 'red', `error ${plensError.code}`)}: ${where}${plensError.message}\n`);
    if (plensError.hint) process.stderr.write(`  ${paint(process.stderr, 'cyan', 'hint')}: ${plensError.hint}\n`);
    if (plensError.code === 'E_USAGE') process.stderr.write('  see `plens <command> --help`\n');
  }
  if (debug) {
    const original = plensError.cause ?? plensError;
    process.stderr.write(`${(original as Error)?.stack ?? String(original)}\n`);
  }
  return plensError.exitCode;
}

const redactingWrites = new WeakSet<object>();
/**
 * The last guard before the terminal: whatever a command prints (a plan holding a `${VAR}` key,
 * a query over a record that echoed one) goes through the shared redactor. Each run checks that
 * the streams still write through it (a host that swapped them, as in-process tests do, is wrapped
 * again) and registers the secrets of the environment as it is now.
 */
function redactTerminal(): void {
  registerSecretsFromEnv();
  for (const stream of [process.stdout, process.stderr]) {
    if (redactingWrites.has(stream.write)) continue;
    const write = stream.write.bind(stream) as (chunk: unknown, ...rest: unknown[]) => boolean;
    const redacting = ((chunk: unknown, ...rest: unknown[]) => write(typeof chunk === 'string' ? redact(chunk) : chunk, ...rest)) as typeof stream.write;
    redactingWrites.add(redacting);
    stream.write = redacting;
  }
}

// Run when executed as a program (bin or `node dist/cli/main.js`), not when imported by tests.
const invokedDirectly = process.argv[1] !== undefined && import.meta.url === new URL(`file://${(await import('node:fs')).realpathSync(process.argv[1])}`).href;
if (invokedDirectly) {
  const argv = hideBin(process.argv);
  let settled = false;
  // What escapes the command's own promise (a callback, a stream, a library's stray promise) is
  // still reported once, as a typed error with a code: never a bare stack trace. Once the command
  // has reported its own result, a stray failure of its teardown does not replace it.
  const escaped = (error: unknown) => {
    if (settled || errorReported) {
      if (argv.includes('--debug')) process.stderr.write(`plens: after the command ended: ${(error as Error)?.stack ?? String(error)}\n`);
      return;
    }
    settled = true;
    process.exitCode = reportError(error, argv.includes('--json'), argv.includes('--debug'));
    process.exit();
  };
  process.on('uncaughtException', escaped);
  process.on('unhandledRejection', (reason) => {
    // LMDB's own promise for a failed commit: the call cache reports that failure (call-cache.ts).
    if (reason instanceof Error && 'commitError' in reason) return;
    escaped(reason);
  });
  const code = await main(argv);
  settled = true;
  process.exitCode = code;
}
