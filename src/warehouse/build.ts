import { existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { removeStaleTempSiblings, tempSibling } from '../core/atomic.js';
import { PlensError, storageError } from '../core/errors.js';
import { plensVersion } from '../core/version.js';
import type { Workspace } from '../core/workspace.js';
import { Database, sqlIdentifier } from '../db/database.js';
import type { LexicalProtocol } from '../stats/lexical.js';
import { DEFAULT_LAPS_SPEAKERS, type SpeakerGroup } from '../stats/speaker-groups.js';
import { defaultSqlDir, readWarehouseSqlFiles, sqlTree } from './sql-files.js';
import { workspaceHas } from './workspace-files.js';

export { workspaceHas };
import { isBuildCurrent, recordBuild, warehouseInputs } from './build-record.js';
import { stepCacheDir, type StepRun } from './step-cache.js';
import { EarlySteps, runStep } from './steps.js';

export interface WarehouseOptions {
  workspace: Workspace;
  dbPath: string;
  /** Folder of .sql files, with its subfolders; default: the package's warehouse/ (shared files, a folder per benchmark). */
  sqlDir?: string;
  /** The registered benchmarks' outputs: a build needs one of them in the workspace (absent: nothing is checked). */
  sources?: readonly WarehouseSource[];
  /** The exact folders of .sql files (the registry's: the package's tree and any plug-in's folder); beats sqlDir. */
  sqlDirs?: readonly string[];
  dryRun?: boolean;
  /** Protocols of Table 10's lexical diversity (default both); [] leaves lexical_diversity empty. */
  lexical?: readonly LexicalProtocol[];
  /** Speaker groups the laps protocol measures (default both speakers, the paper's row; full measures all three). */
  lapsSpeakers?: readonly SpeakerGroup[];
  /** Reuse and keep expensive steps' outputs in `<db>.steps/` (default true). */
  stepCache?: boolean;
  /** DuckDB's memory limit for the build (default: PLENS_MEMORY_LIMIT or 1GB). */
  memoryLimit?: string;
  /**
   * Start each computed step on a second connection as soon as the relations its file requires exist,
   * beside the files before it (default true); false runs it in place, just before its file.
   */
  earlySteps?: boolean;
  /** Build even when the inputs and the database are as the last build left them (default false). */
  force?: boolean;
}

export interface WarehouseSummary {
  dry_run: boolean;
  /** Nothing changed since the last build (see build-record.ts): the database was left as it was. */
  up_to_date: boolean;
  db: string;
  workspace: string;
  ran: string[];
  skipped: Array<{ file: string; reason: string }>;
  /** The computed steps (Table 10 ...): whether each ran or was reused from the step cache. */
  steps: StepRun[];
  relations: Array<{ name: string; type: 'table' | 'view'; rows: number | null }>;
  elapsed_ms: number;
}

export { defaultSqlDir };

/**
 * Builds the warehouse into a temp file next to the target and renames it into place,
 * so readers never see a half-built database and a failed build keeps the old one.
 */
export async function buildWarehouse(options: WarehouseOptions): Promise<WarehouseSummary> {
  const started = performance.now();
  requireSomethingToLoad(options.workspace, options.sources ?? []);
  const sqlDirs = options.sqlDirs ?? sqlTree(options.sqlDir ?? defaultSqlDir);
  const files = await readWarehouseSqlFiles(sqlDirs);
  const cacheDir = options.dryRun || options.stepCache === false ? null : stepCacheDir(options.dbPath);
  const lexical = options.dryRun ? [] : (options.lexical ?? ['laps', 'full']);
  const lapsSpeakers = options.lapsSpeakers ?? DEFAULT_LAPS_SPEAKERS;
  // Taken before the build reads anything: a file changed while it runs makes the next build run again.
  const inputs = cacheDir ? warehouseInputs({ workspaceRoot: options.workspace.root, sqlDirs, dbPath: options.dbPath, lexical, lapsSpeakers }) : null;
  if (inputs && !options.force && isBuildCurrent(options.dbPath, inputs)) return upToDate(options, started);
  await mkdir(dirname(options.dbPath), { recursive: true });
  // What a killed build left (its temp database and WAL) goes before this one starts.
  if (!options.dryRun) await removeStaleTempSiblings(options.dbPath);
  const tmp = options.dryRun ? ':memory:' : tempSibling(options.dbPath);
  const ran: string[] = [];
  const skipped: WarehouseSummary['skipped'] = [];
  const steps: StepRun[] = [];
  let relations: WarehouseSummary['relations'] = [];
  const db = await Database.open(tmp, { threads: 2, ...(options.memoryLimit ? { memoryLimit: options.memoryLimit } : {}) });
  const early = new EarlySteps(db, { lexical, lapsSpeakers, cacheDir });
  try {
    await db.run('SET VARIABLE workspace = $1', undefined, [options.workspace.root]);
    for (const [index, file] of files.entries()) {
      const missingFile = file.requiresFiles.find((f) => !workspaceHas(options.workspace.root, f));
      const existing = new Set((await db.all<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables`)).map((r) => r.name));
      if (options.earlySteps !== false) await early.startReady(files.slice(index), existing, (f) => workspaceHas(options.workspace.root, f));
      const missingRelation = file.requiresRelations.find((r) => !existing.has(r));
      if (missingFile || missingRelation) {
        skipped.push({ file: file.name, reason: missingFile ? `needs ${missingFile} in the workspace` : `needs ${missingRelation}` });
        continue;
      }
      if (options.dryRun && file.requiresFiles.length > 0) {
        // A dry run checks the SQL without loading data: the data-loading files only need their inputs to exist.
        ran.push(file.name);
        await db.run(
          file.sql.replace(
            /CREATE OR REPLACE TABLE (\w+) AS SELECT \* FROM (read_parquet\([^;]+\));/g,
            'CREATE OR REPLACE TABLE $1 AS SELECT * FROM $2 LIMIT 0;',
          ),
          { file: file.path },
        );
        continue;
      }
      for (const step of file.steps) steps.push(await early.result(file, step, () => runStep(step, { db, lexical, lapsSpeakers, cacheDir }, file.path)));
      await db.run(file.sql, { file: file.path });
      ran.push(file.name);
    }
    await db.run('CREATE OR REPLACE TABLE plens_build AS SELECT $1 AS plens_version, now() AS built_at, $2 AS workspace', undefined, [
      plensVersion,
      options.workspace.root,
    ]);
    await early.finish();
    relations = await listRelations(db);
    // Closing checkpoints too, but swallows a failed write (a full disk): checkpoint here, where it throws.
    if (!options.dryRun) await db.run('CHECKPOINT');
  } catch (error) {
    // Work started on the second connection is stopped and settled before the database closes.
    await early.cancel();
    await db.close();
    if (!options.dryRun) await removeTemp(tmp);
    throw storageError(error, options.dbPath) ?? error;
  }
  await db.close();
  if (!options.dryRun) {
    try {
      await verifyBuilt(tmp, relations);
      await rm(`${options.dbPath}.wal`, { force: true });
      await rename(tmp, options.dbPath);
    } catch (error) {
      await removeTemp(tmp);
      throw storageError(error, options.dbPath) ?? error;
    }
    if (inputs) await recordBuild(options.dbPath, inputs);
  }
  return {
    dry_run: Boolean(options.dryRun),
    up_to_date: false,
    db: options.dbPath,
    workspace: options.workspace.root,
    ran,
    skipped,
    steps,
    relations,
    elapsed_ms: Math.round(performance.now() - started),
  };
}

/** The summary of a build with nothing to do: the database's relations as they are. */
async function upToDate(options: WarehouseOptions, started: number): Promise<WarehouseSummary> {
  const db = await Database.open(options.dbPath, { readOnly: true });
  try {
    return {
      dry_run: false,
      up_to_date: true,
      db: options.dbPath,
      workspace: options.workspace.root,
      ran: [],
      skipped: [],
      steps: [],
      relations: await listRelations(db),
      elapsed_ms: Math.round(performance.now() - started),
    };
  } finally {
    await db.close();
  }
}

/**
 * What a benchmark's outputs give a warehouse: whether a workspace holds them (checked whole,
 * throwing when they are damaged), and what to say and do when none does.
 */
export interface WarehouseSource {
  /** Whether the workspace holds this benchmark's outputs; throws when they are there but unusable. */
  present(workspace: Workspace): boolean;
  /** What is missing, for the error: `imported dataset in out/dataset`. */
  missing(workspace: Workspace): string;
  /** The command that makes them: `plens import --from <data dir>` (PersonaLens). */
  hint: string;
  /** A relation to show in the `Query it:` line when the build has it. */
  example?: string;
}

/**
 * A warehouse needs some benchmark's outputs in the workspace; the SQL files whose inputs are
 * absent are skipped, so a workspace with one benchmark's outputs gets that benchmark's views.
 */
function requireSomethingToLoad(workspace: Workspace, sources: readonly WarehouseSource[]): void {
  if (sources.length === 0 || sources.some((s) => s.present(workspace))) return;
  throw new PlensError('E_PREREQUISITE', `no ${sources.map((s) => s.missing(workspace)).join(' and no ')}`, {
    hint: `run ${sources.map((s) => s.hint).join(' or ')} first, or pass --workspace`,
  });
}

/**
 * Success only over a complete file: a WAL left beside it means the last checkpoint did not reach
 * the disk, and every relation listed during the build must be there when it is read back.
 */
async function verifyBuilt(tmp: string, relations: WarehouseSummary['relations']): Promise<void> {
  if (existsSync(`${tmp}.wal`)) {
    throw new PlensError('E_STORAGE', 'the warehouse could not be written completely (its write-ahead log was not checkpointed; disk full?)', {
      location: { file: tmp },
      hint: 'free some space and run `plens warehouse` again; the previous warehouse is kept',
    });
  }
  const db = await Database.open(tmp, { readOnly: true });
  try {
    const found = new Set((await listRelations(db)).map((r) => r.name));
    const missing = relations.filter((r) => !found.has(r.name)).map((r) => r.name);
    if (missing.length) throw new PlensError('E_STORAGE', `the written warehouse lacks ${missing.join(', ')} (a failed write?)`, { location: { file: tmp } });
  } finally {
    db.close();
  }
}

/** The temp database and whatever DuckDB wrote beside it. */
async function removeTemp(tmp: string): Promise<void> {
  await Promise.all([rm(tmp, { force: true }), rm(`${tmp}.wal`, { force: true }), rm(`${tmp}.tmp`, { recursive: true, force: true })]);
}

async function listRelations(db: Database): Promise<WarehouseSummary['relations']> {
  const rows = await db.all<{ name: string; type: string }>(
    `SELECT table_name AS name, CASE table_type WHEN 'VIEW' THEN 'view' ELSE 'table' END AS type
     FROM information_schema.tables WHERE table_schema = 'main' ORDER BY type, name`,
  );
  const out: WarehouseSummary['relations'] = [];
  for (const r of rows) {
    // Views are computed on query; counting them here would run every view at build time.
    const rows = r.type === 'table' ? (await db.all<{ n: number }>(`SELECT count(*)::BIGINT AS n FROM ${sqlIdentifier(r.name)}`))[0]!.n : null;
    out.push({ name: r.name, type: r.type as 'table' | 'view', rows });
  }
  return out;
}

export function formatWarehouseSummary(s: WarehouseSummary, examples: readonly string[] = []): string {
  // The first benchmark example the build has, or the build's own record.
  const example = examples.find((e) => s.relations.some((r) => r.name === e)) ?? 'plens_build';
  if (s.up_to_date) {
    return [
      `Warehouse ${s.db} is up to date: nothing it is built from changed since its last build (--force rebuilds it)`,
      `  from workspace ${s.workspace}`,
      `Query it: plens sql "select * from ${example}"`,
    ].join('\n');
  }
  const lines = [`${s.dry_run ? 'Checked (dry run)' : 'Built'} warehouse ${s.db}`, `  from workspace ${s.workspace}`];
  lines.push(`  ran      ${s.ran.join(', ')}`);
  for (const k of s.skipped) lines.push(`  skipped  ${k.file}: ${k.reason}`);
  for (const k of s.steps)
    lines.push(
      `  step     ${k.step}: ${k.status === 'reused' ? 'reused (inputs unchanged)' : k.status} in ${(k.elapsed_ms / 1000).toFixed(1)} s${k.early ? ' (beside the build)' : ''}${k.settings ? `; ${describeSettings(k.settings)}` : ''}`,
    );
  const tables = s.relations.filter((r) => r.type === 'table');
  const views = s.relations.filter((r) => r.type === 'view');
  lines.push(`  tables   ${tables.map((t) => `${t.name} (${t.rows})`).join(', ')}`);
  lines.push(`  views    ${views.map((v) => v.name).join(', ')}`);
  lines.push(`  took     ${(s.elapsed_ms / 1000).toFixed(1)} s`);
  lines.push(`Query it: plens sql "select * from ${example}"`);
  return lines.join('\n');
}

/** A step's settings in a line: `lexical full, laps; laps_speakers both`. */
function describeSettings(settings: Record<string, unknown>): string {
  return Object.entries(settings)
    .map(([k, v]) => `${k} ${Array.isArray(v) ? v.join(', ') : String(v)}`)
    .join('; ');
}

export function requireWarehouse(dbPath: string): void {
  if (!existsSync(dbPath)) {
    throw new PlensError('E_PREREQUISITE', `no warehouse at ${dbPath}`, { hint: 'run `plens warehouse` first (or pass --db)' });
  }
}
