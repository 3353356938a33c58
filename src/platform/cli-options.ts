import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv } from 'yargs';
import { PlensError, usageError } from '../core/errors.js';
import { Workspace } from '../core/workspace.js';
import { packageRoot, userPath } from '../core/paths.js';
import { DEFAULT_WAREHOUSE_FILE, DEFAULT_WORKSPACE, describeProject, type Project, shownPath, workspaceHasOutputs } from './current-project.js';

export interface GlobalArgs {
  /** Filled before the handler runs: -w, else the current project's (current-project.ts). */
  workspace: string;
  json: boolean;
  quiet: boolean;
  progress: boolean;
  /** The current project, as the CLI resolved it (absent for make, status and demo, which read their pipeline). */
  project?: Project;
  /** Whether -w (or --workspace) was on the command line. */
  workspaceGiven?: boolean;
}

/** Options every command shares; declared once so they read the same everywhere. */
export function globalOptions(argv: Argv): Argv<GlobalArgs> {
  return argv
    .option('workspace', {
      alias: 'w',
      type: 'string',
      describe: `Folder for stage outputs (Parquet, manifests); env PLENS_WORKSPACE. Default: the current project's (the last plens make here, or plens.yaml here), else ${DEFAULT_WORKSPACE}`,
      global: true,
    })
    .option('json', { type: 'boolean', default: false, describe: 'Print a machine-readable JSON result on stdout', global: true })
    .option('quiet', { alias: 'q', type: 'boolean', default: false, describe: 'Print only errors', global: true })
    .option('progress', {
      type: 'boolean',
      default: true,
      describe:
        'Show progress on stderr: a live view on a terminal, progress lines every 10 s in a log (plens make and the stage commands; --no-progress to hide)',
      global: true,
    })
    .option('debug', { type: 'boolean', default: false, describe: 'On an error, also print its stack trace', global: true }) as Argv<GlobalArgs>;
}

/** The warehouse when nothing names one and there is no current project. */
export const DEFAULT_WAREHOUSE = DEFAULT_WAREHOUSE_FILE;

/**
 * `--db` and `-p/--pipeline` for a command that reads a warehouse. Neither has a yargs default:
 * the CLI fills them from the current project (current-project.ts) before the handler runs.
 */
export function warehouseOption<T>(argv: Argv<T>): Argv<T & { db: string; pipeline: string | undefined }> {
  return argv
    .option('db', {
      type: 'string',
      describe: `DuckDB warehouse file; env PLENS_WAREHOUSE. Default: the current project's (the last plens make here, the one -w was built into, or plens.yaml's), else ${DEFAULT_WAREHOUSE_FILE}`,
    })
    .option('pipeline', {
      alias: 'p',
      type: 'string',
      describe: "Use this pipeline's workspace and warehouse (a pipeline file, YAML)",
    }) as Argv<T & { db: string; pipeline: string | undefined }>;
}

/**
 * The warehouse a command reads, checked before it opens it: a missing one is explained by where
 * its path came from, with a command that builds it (plens make for a pipeline's, plens warehouse
 * for a workspace with outputs, plens demo when nothing has run here).
 */
export function requireProjectWarehouse(args: GlobalArgs & { db: string }): string {
  const db = userPath(args.db);
  if (existsSync(db)) return db;
  const cwd = process.cwd();
  const project = args.project;
  const shown = shownPath(db, cwd);
  const flags = (p: Project) =>
    `${p.workspace !== userPath(DEFAULT_WORKSPACE) ? ` -w ${shownPath(p.workspace, cwd)}` : ''}${db !== userPath(DEFAULT_WAREHOUSE_FILE) ? ` --db ${shown}` : ''}`;
  if (project?.pipeline && project.source !== 'flags') {
    const pipeline = shownPath(project.pipeline, cwd);
    throw new PlensError('E_PREREQUISITE', `no warehouse at ${shown} (the warehouse of ${describeProject(project, cwd)})`, {
      hint: `build it with \`plens make warehouse -p ${pipeline}\` (or run the whole pipeline: \`plens make -p ${pipeline}\`), or name another with --db FILE`,
    });
  }
  if (project && workspaceHasOutputs(project.workspace)) {
    throw new PlensError('E_PREREQUISITE', `no warehouse at ${shown}`, {
      hint: `build it from ${shownPath(project.workspace, cwd)} with \`plens warehouse${flags(project)}\`, or name another with --db FILE`,
    });
  }
  throw new PlensError(
    'E_PREREQUISITE',
    `no warehouse at ${shown}, and nothing has run in ${shownPath(project?.workspace ?? userPath(DEFAULT_WORKSPACE), cwd)}`,
    {
      hint: `\`plens demo\` runs the bundled sample offline (then this command reads it); \`plens make -p FILE.yaml\` runs a pipeline (examples in ${shownPath(join(packageRoot, 'pipelines'), cwd)}/); or name a warehouse with --db FILE`,
    },
  );
}

/** For a command that has no use for a workspace: -w is refused, not ignored. */
export function refuseWorkspace(args: GlobalArgs, command: string, why: string): void {
  if (args.workspaceGiven) throw usageError(`${command} takes no workspace (-w): ${why}`, `drop -w; see \`${command} --help\``);
}

export function workspaceOf(args: GlobalArgs): Workspace {
  return new Workspace(userPath(args.workspace));
}

/** `--progress-interval`: how often a long run writes a progress line when stderr is not a terminal. */
export function progressIntervalOption<T>(argv: Argv<T>) {
  return argv.option('progress-interval', {
    type: 'number',
    describe:
      'When stderr is not a terminal (a log file, nohup, Slurm, Kubernetes): seconds between progress lines (default 10; 0 turns them off); env PLENS_PROGRESS_INTERVAL',
  });
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

/**
 * Whether to colour what goes to a stream: on a terminal, unless NO_COLOR is set (no-color.org)
 * or TERM is dumb; FORCE_COLOR (not 0) colours a pipe too. NO_COLOR wins over FORCE_COLOR.
 */
export function useColour(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env['NO_COLOR']) return false;
  const force = env['FORCE_COLOR'];
  if (force !== undefined && force !== '' && force !== '0' && force !== 'false') return true;
  return Boolean(stream.isTTY) && env['TERM'] !== 'dumb';
}

const SGR = { red: [31, 39], yellow: [33, 39], cyan: [36, 39], bold: [1, 22], dim: [2, 22] } as const;

/** `text` in a colour (ANSI SGR) when the stream takes colour, else as it is. */
export function paint(stream: NodeJS.WriteStream, style: keyof typeof SGR, text: string): string {
  if (!useColour(stream)) return text;
  const [on, off] = SGR[style];
  return `\u001b[${on}m${text}\u001b[${off}m`;
}

/** A warning on stderr, `plens: warning: ...` (yellow on a terminal); none under --json. */
export function warn(args: Pick<GlobalArgs, 'json'>, message: string): void {
  if (!args.json) process.stderr.write(`plens: ${paint(process.stderr, 'yellow', 'warning')}: ${message}\n`);
}
