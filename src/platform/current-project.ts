/**
 * The current project: the workspace and warehouse a command works on when no flag names them.
 *
 * In order, the first that applies:
 * 1. flags: `-p FILE` (a pipeline: its workspace and warehouse), `-w DIR`, `--db FILE`;
 * 2. the environment: PLENS_WORKSPACE, PLENS_WAREHOUSE;
 * 3. the last `plens make` (or `plens demo`) run in this folder, kept in .plens/current.json;
 * 4. a pipeline named plens.yaml (or plens.yml) in this folder;
 * 5. out/ and warehouse/plens.duckdb.
 *
 * A workspace also remembers its warehouse (.plens-project.json at its root, written by make and
 * by `plens warehouse`), so `-w DIR` alone finds the warehouse built from DIR. When one of the
 * pair is named (by a flag or the environment), the other never comes from steps 3-4: a report
 * of another warehouse is not written into the last run's workspace, and a build from another
 * workspace never replaces the last run's warehouse.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

export const DEFAULT_WORKSPACE = 'out';
export const DEFAULT_WAREHOUSE_FILE = 'warehouse/plens.duckdb';
/** A pipeline by one of these names in the current folder is its project. */
export const CONFIG_FILES = ['plens.yaml', 'plens.yml'] as const;
/** The folder's memory of its last make, under the state folder. */
export const CURRENT_FILE = 'current.json';
/** At a workspace's root: the warehouse (and pipeline) it was last built into. */
export const WORKSPACE_RECORD = '.plens-project.json';

export type ProjectSource = 'pipeline' | 'flags' | 'env' | 'last-make' | 'config' | 'default';

export interface Project {
  /** Absolute paths. */
  workspace: string;
  warehouse: string;
  /** The pipeline file that names them, when one does. */
  pipeline?: string;
  source: ProjectSource;
}

/** What a command line says about the project; absent = not given. */
export interface ProjectFlags {
  workspace?: string | undefined;
  db?: string | undefined;
  pipeline?: string | undefined;
}

/** A pipeline's paths: make/pipeline.ts's loader, passed in (this layer sits below make). */
export type PipelinePaths = (file: string) => { file: string; workspace: string; warehouse: string };

export interface ProjectContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  loadPipeline: PipelinePaths;
}

const given = (value: string | undefined): string | undefined => (value === undefined || value === '' ? undefined : value);

/**
 * The state folder of a working folder: `<cwd>/.plens`, or env PLENS_STATE_DIR (relative to the
 * folder); `off` keeps no state (the tests set it, so that one test's make never becomes another's
 * project).
 */
export function stateDir(cwd: string, env: NodeJS.ProcessEnv): string | undefined {
  const dir = given(env['PLENS_STATE_DIR']);
  if (dir === 'off') return undefined;
  return resolve(cwd, dir ?? '.plens');
}

interface Remembered {
  pipeline?: string;
  workspace?: string;
  warehouse: string;
  /** The folder the make ran in: a pipeline's relative paths are relative to it. */
  folder?: string;
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(readFileSync(file, 'utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    // Missing or unreadable: as if nothing were remembered (a memory, never an input).
    return undefined;
  }
}

function remembered(file: string, base: string): Remembered | undefined {
  const json = readJson(file);
  if (!json || typeof json['warehouse'] !== 'string') return undefined;
  const at = (key: string) => (typeof json[key] === 'string' ? resolve(base, json[key] as string) : undefined);
  const pipeline = at('pipeline');
  const workspace = at('workspace');
  const folder = at('folder');
  return { warehouse: at('warehouse')!, ...(pipeline ? { pipeline } : {}), ...(workspace ? { workspace } : {}), ...(folder ? { folder } : {}) };
}

/** What .plens/current.json says: the last make run in this folder. */
export function lastMake(cwd: string, env: NodeJS.ProcessEnv): (Remembered & { workspace: string }) | undefined {
  const dir = stateDir(cwd, env);
  if (!dir) return undefined;
  const r = remembered(join(dir, CURRENT_FILE), cwd);
  return r?.workspace ? { ...r, workspace: r.workspace } : undefined;
}

/** What a workspace says about itself: the warehouse (and pipeline) it was last built into. */
export function workspaceRecord(workspace: string): Remembered | undefined {
  return remembered(join(workspace, WORKSPACE_RECORD), workspace);
}

/** The config pipeline of a folder (plens.yaml), when there is one. */
export function configFile(cwd: string): string | undefined {
  return CONFIG_FILES.map((name) => join(cwd, name)).find((file) => existsSync(file));
}

/** Resolves the project of one command; see the top of this file for the order. */
export function resolveProject(flags: ProjectFlags, ctx: ProjectContext): Project {
  const at = (p: string) => resolve(ctx.cwd, p);
  const workspaceFlag = given(flags.workspace);
  const dbFlag = given(flags.db);
  const pipelineFlag = given(flags.pipeline);
  if (pipelineFlag) {
    const p = ctx.loadPipeline(at(pipelineFlag));
    return {
      workspace: workspaceFlag ? at(workspaceFlag) : resolve(p.workspace),
      warehouse: dbFlag ? at(dbFlag) : resolve(p.warehouse),
      pipeline: p.file,
      source: 'pipeline',
    };
  }
  const envWorkspace = given(ctx.env['PLENS_WORKSPACE']);
  const envWarehouse = given(ctx.env['PLENS_WAREHOUSE']);
  if (workspaceFlag || dbFlag || envWorkspace || envWarehouse) {
    const workspace = at(workspaceFlag ?? envWorkspace ?? DEFAULT_WORKSPACE);
    // -w alone: the warehouse that workspace was built into, when it says.
    const record = dbFlag ? undefined : workspaceFlag || !envWarehouse ? workspaceRecord(workspace) : undefined;
    const warehouse = dbFlag ? at(dbFlag) : (record?.warehouse ?? at(envWarehouse ?? DEFAULT_WAREHOUSE_FILE));
    return {
      workspace,
      warehouse,
      ...(record?.pipeline ? { pipeline: record.pipeline } : {}),
      source: workspaceFlag || dbFlag ? 'flags' : 'env',
    };
  }
  const last = lastMake(ctx.cwd, ctx.env);
  if (last) return { workspace: last.workspace, warehouse: last.warehouse, ...(last.pipeline ? { pipeline: last.pipeline } : {}), source: 'last-make' };
  const config = configFile(ctx.cwd);
  if (config) {
    const p = ctx.loadPipeline(config);
    return { workspace: resolve(p.workspace), warehouse: resolve(p.warehouse), pipeline: p.file, source: 'config' };
  }
  const workspace = at(DEFAULT_WORKSPACE);
  const record = workspaceRecord(workspace);
  return {
    workspace,
    warehouse: record?.warehouse ?? at(DEFAULT_WAREHOUSE_FILE),
    ...(record?.pipeline ? { pipeline: record.pipeline } : {}),
    source: 'default',
  };
}

/** The pipeline `plens status` and `plens make` mean when none is named: -w's record, the last make's, plens.yaml's. */
export function projectPipeline(
  workspaceFlag: string | undefined,
  ctx: Omit<ProjectContext, 'loadPipeline'>,
): { file: string; from: string; folder?: string } | undefined {
  const workspace = given(workspaceFlag);
  if (workspace) {
    const record = workspaceRecord(resolve(ctx.cwd, workspace));
    if (!record?.pipeline) return undefined;
    return {
      file: record.pipeline,
      from: `the pipeline that last built ${shownPath(resolve(ctx.cwd, workspace), ctx.cwd)}`,
      ...(record.folder ? { folder: record.folder } : {}),
    };
  }
  const last = lastMake(ctx.cwd, ctx.env);
  if (last?.pipeline) return { file: last.pipeline, from: 'the last `plens make` here' };
  const config = configFile(ctx.cwd);
  return config ? { file: config, from: `${shownPath(config, ctx.cwd)} here` } : undefined;
}

/** Writes a small JSON file in one step (a reader never sees half of it); errors are the caller's. */
function writeJson(file: string, value: object): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  writeFileSync(tmp, JSON.stringify(value, null, 2) + '\n');
  renameSync(tmp, file);
}

/** A path as stored: relative to `base` when it lies below it (the folder can move), else absolute. */
function stored(path: string, base: string): string {
  const rel = relative(base, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/**
 * Remembers a make (or demo) run in this folder: .plens/current.json here, and the workspace's own
 * record. A memory only: a folder that cannot be written to loses it, and the run goes on. Returns
 * the files written.
 */
export function rememberMake(run: { pipeline?: string | undefined; workspace: string; warehouse: string }, cwd: string, env: NodeJS.ProcessEnv): string[] {
  const written: string[] = [];
  const dir = stateDir(cwd, env);
  if (dir) {
    const file = join(dir, CURRENT_FILE);
    try {
      writeJson(file, {
        note: 'The last `plens make` in this folder: plens sql, tables, report, notebook, compare, status and warehouse use it when no flag names a project. Delete this file to forget it.',
        ...(run.pipeline ? { pipeline: stored(run.pipeline, cwd) } : {}),
        workspace: stored(run.workspace, cwd),
        warehouse: stored(run.warehouse, cwd),
      });
      written.push(file);
    } catch {
      // A read-only folder: no memory, same run.
    }
  }
  if (rememberWarehouse(run.workspace, run.warehouse, run.pipeline ? { file: run.pipeline, folder: cwd } : undefined))
    written.push(join(run.workspace, WORKSPACE_RECORD));
  return written;
}

/**
 * Records in a workspace the warehouse built from it, and the pipeline with the folder it ran in
 * (given, else the ones recorded before).
 */
export function rememberWarehouse(workspace: string, warehouse: string, pipeline?: { file: string; folder: string }): boolean {
  const before = workspaceRecord(workspace);
  pipeline ??= before?.pipeline ? { file: before.pipeline, folder: before.folder ?? workspace } : undefined;
  try {
    writeJson(join(workspace, WORKSPACE_RECORD), {
      note: 'The warehouse last built from this workspace: `plens ... -w <this folder>` reads it.',
      warehouse: stored(warehouse, workspace),
      ...(pipeline ? { pipeline: stored(pipeline.file, workspace), folder: stored(pipeline.folder, workspace) } : {}),
    });
    return true;
  } catch {
    return false;
  }
}

/** A path as the user would type it from cwd: relative when below it. */
export function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
}

/** Whether a workspace holds anything at all (a stage's output, an import). */
export function workspaceHasOutputs(workspace: string): boolean {
  try {
    return readdirSync(workspace).some((name) => !name.startsWith('.'));
  } catch {
    return false;
  }
}

/** Where a project came from, in words, for the note a command prints and for error messages. */
export function describeProject(project: Project, cwd: string): string {
  const pipeline = project.pipeline ? shownPath(project.pipeline, cwd) : undefined;
  switch (project.source) {
    case 'last-make':
      return `the last \`plens make\` here${pipeline ? ` (${pipeline})` : ''}`;
    case 'config':
      return `${pipeline} here`;
    case 'pipeline':
      return `the pipeline ${pipeline}`;
    case 'env':
      return 'PLENS_WORKSPACE / PLENS_WAREHOUSE';
    case 'flags':
      return pipeline ? `-w (last built by ${pipeline})` : 'the flags';
    default:
      return 'the defaults';
  }
}
