#!/usr/bin/env node
import yargs, { type Argv } from 'yargs';
import { hideBin } from 'yargs/helpers';
import { ExitCode, PlensError, usageError } from '../core/errors.js';
import { plensVersion } from '../core/version.js';
import { annotateCommand } from './commands/annotate.js';
import { demoCommand } from './commands/demo.js';
import { dialoguesCommand } from './commands/dialogues.js';
import { importCommand } from './commands/import.js';
import { notebookCommand } from './commands/notebook.js';
import { personaCommand } from './commands/persona.js';
import { importLegacyCommand } from './commands/import-legacy.js';
import { judgeCommand } from './commands/judge.js';
import { makeCommand } from './commands/make.js';
import { reportCommand } from './commands/report.js';
import { scenariosCommand } from './commands/scenarios.js';
import { sqlCommand } from './commands/sql.js';
import { statusCommand } from './commands/status.js';
import { statsCommand } from './commands/stats.js';
import { tablesCommand } from './commands/tables.js';
import { warehouseCommand } from './commands/warehouse.js';
import { globalOptions } from './options.js';

export function buildCli(argv: string[]): Argv {
  return globalOptions(yargs(argv))
    .scriptName('plens')
    .usage('$0 <command> [options]\n\nRuns the PersonaLens personalization benchmark as a pipeline of resumable stages:\nimport -> scenarios -> (dialogues -> judgments) -> warehouse -> tables.')
    .command(importCommand)
    .command(importLegacyCommand)
    .command(scenariosCommand)
    .command(dialoguesCommand)
    .command(judgeCommand)
    .command(warehouseCommand)
    .command(sqlCommand)
    .command(notebookCommand)
    .command(tablesCommand)
    .command(reportCommand)
    .command(statsCommand)
    .command(annotateCommand)
    .command(demoCommand)
    .command(makeCommand)
    .command(personaCommand)
    .command(statusCommand)
    .demandCommand(1, 'Name a command; `plens --help` lists them.')
    .strict()
    .recommendCommands()
    .version(plensVersion)
    .help()
    .alias('h', 'help')
    .wrap(Math.min(110, process.stdout.columns || 100))
    .epilog('Exit codes: 0 ok, 1 failure, 2 usage, 3 invalid input data, 4 missing prerequisite, 5 SQL error.\nDocs: README.md')
    .fail((message, error) => {
      // yargs reports usage problems as a message, handler failures as an error: keep the two apart.
      throw error ?? usageError(message);
    });
}

/** Runs the CLI; returns the exit code instead of exiting so tests can call it in-process. */
export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  try {
    await buildCli(argv).parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : ExitCode.ok;
  } catch (error) {
    return reportError(error, json);
  }
}

function reportError(error: unknown, json: boolean): number {
  const plensError = error instanceof PlensError ? error : new PlensError('E_INTERNAL', (error as Error)?.stack ?? String(error));
  if (json) {
    process.stdout.write(JSON.stringify({ ok: false, error: plensError.toJSON() }, null, 2) + '\n');
  } else {
    const where = plensError.where ? `${plensError.where}: ` : '';
    process.stderr.write(`plens: error ${plensError.code}: ${where}${plensError.message}\n`);
    if (plensError.hint) process.stderr.write(`  hint: ${plensError.hint}\n`);
    if (plensError.code === 'E_USAGE') process.stderr.write('  see `plens <command> --help`\n');
  }
  return plensError.exitCode;
}

// Run when executed as a program (bin or `node dist/cli/main.js`), not when imported by tests.
const invokedDirectly = process.argv[1] !== undefined && import.meta.url === new URL(`file://${(await import('node:fs')).realpathSync(process.argv[1])}`).href;
if (invokedDirectly) {
  process.exitCode = await main(hideBin(process.argv));
}
