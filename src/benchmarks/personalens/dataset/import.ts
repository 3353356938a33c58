import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replaceDirectoryAtomic } from '../../../core/atomic.js';
import { assertImportReplaceable } from '../dataset-identity.js';
import { createProgress } from '../../../core/progress.js';
import { plensVersion } from '../../../core/version.js';
import type { Workspace } from '../../../core/workspace.js';
import { appendRow } from '../../../db/append-row.js';
import { Database, sqlString } from '../../../db/database.js';
import type { Normalisation } from './domains.js';
import { DATASET_FORMAT, DATASET_TABLES, DATASET_TABLE_NAMES, ROW_GROUP_SIZE, type DatasetTable } from './tables.js';
import { locateUpstream } from './upstream/layout.js';
import { PreferenceSchema } from './upstream/preference-schema.js';
import { readTaskDefinitions } from './upstream/task-definitions.js';
import { defaultReaders, readUsers } from './read-users.js';
import { RowFiles } from './row-files.js';
import { isPerUserTable, PER_USER_TABLES, USER_KEY_COLUMNS, type PerUserTable, type UserSummary } from './user-rows.js';
import { datasetDir } from './workspace-files.js';

export interface ImportOptions {
  from: string;
  schema?: string;
  workspace: Workspace;
  progress?: boolean;
  /** Validate and count, write nothing. */
  dryRun?: boolean;
  /** Threads that read and validate the users, this one included (default: one per core; this one alone for a small import). */
  workers?: number;
  /**
   * Users this thread reads ahead of each other thread, for their start (default THREAD_START_IN_USERS).
   * Tests set 0 (an even split of a small sample) or -1 (this thread one user short: a lone user goes to a thread).
   */
  threadStartInUsers?: number;
}

export interface ImportSummary {
  dry_run: boolean;
  source: { data_dir: string; schema_file: string };
  dataset_dir: string;
  users: number;
  tasks: { sd: number; md: number };
  scenarios: { sd: number; md: number };
  tables: Record<string, { file: string; rows: number }>;
  /** Identifies what was imported (users, tasks, scenario pool): later stages record it, and refuse to mix two. */
  fingerprint: string;
  normalisations: Normalisation[];
  warnings: string[];
  elapsed_ms: number;
}

/**
 * Reads the upstream PersonaLens layout as a stream of users, validates each file,
 * and writes the normalised dataset tables as Parquet. Any invalid input aborts the
 * whole import and leaves the workspace as it was.
 */
export async function runImport(options: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  const layout = await locateUpstream(options.from, options.schema);
  const schema = await PreferenceSchema.read(layout.schemaFile);
  const tasks = await readTaskDefinitions(layout.taskDir, schema);
  const taskById = new Map(tasks.map((t) => [t.task_id, t]));

  const db = await Database.open(':memory:', { threads: 2 });
  // The per-user rows go through newline-delimited JSON files (one per table and reader) that DuckDB loads in bulk.
  const staging = await mkdtemp(join(tmpdir(), 'plens-import-'));
  try {
    for (const name of DATASET_TABLE_NAMES) {
      if (!isPerUserTable(name)) await db.run(`CREATE TABLE ${name} (${DATASET_TABLES[name]})`);
    }
    await appendSchemaAndTasks(db, schema, tasks);

    const normalisations: Normalisation[] = [];
    const warnings: string[] = [];
    const scenarios = { sd: 0, md: 0 };
    const summaries: UserSummary[] = [];
    const progress = createProgress({ label: 'import', total: layout.users.length, unit: 'users', enabled: options.progress });
    try {
      const workers = options.workers ?? defaultReaders(layout.users.length);
      const ctx = { schema, tasks: taskById, schemaFile: layout.schemaFile, taskDir: layout.taskDir };
      for await (const { seq, user } of readUsers(layout.users, ctx, workers, staging, options.threadStartInUsers)) {
        summaries[seq] = user;
        progress.increment();
      }
    } finally {
      progress.stop();
    }
    // In user order, whichever thread read them.
    for (const user of summaries) {
      normalisations.push(...user.normalisations);
      warnings.push(...user.warnings);
      scenarios.sd += user.sd;
      scenarios.md += user.md;
    }
    // The per-user tables are views over their row files (the readers' parts in user order; DuckDB keeps
    // the files' order and the rows'), so each is parsed straight into its Parquet file, not first into a
    // table. One line holds a user's rows of a table: DuckDB's 16 MiB line limit (maximum_object_size; a
    // larger one allocates twice its size up front) is over 300 times the released data's longest, 45 KB.
    // The Parquet writes run on two connections, half the tables each: each statement alone leaves the
    // second core mostly idle.
    for (const name of PER_USER_TABLES) {
      await db.run(
        `CREATE VIEW ${name} AS SELECT ${unnestColumns(name)} FROM read_json([${RowFiles.parts(staging, name).map(sqlString).join(', ')}], format = 'newline_delimited', columns = ${jsonColumns(name)})`,
      );
    }
    const side = await db.connect();
    const tables: ImportSummary['tables'] = {};
    const rows = (name: DatasetTable, n: number | bigint) => (tables[name] = { file: `${name}.parquet`, rows: Number(n) });
    let fingerprint = '';
    try {
      if (options.dryRun) {
        await allSettled(
          splitTables().map((names, i) =>
            inOrder(names, async (name) => {
              const [row] = await (i === 0 ? db : side).all<{ n: bigint }>(`SELECT count(*) AS n FROM ${name}`);
              rows(name, row!.n);
            }),
          ),
        );
        fingerprint = await datasetFingerprint(db, (name) => name);
      } else
        await replaceDirectoryAtomic(datasetDir(options.workspace), async (dir) => {
          const file = (name: DatasetTable) => join(dir, `${name}.parquet`);
          const copy = async (on: Database, name: DatasetTable) => {
            const rowGroup = ROW_GROUP_SIZE[name] ? `, ROW_GROUP_SIZE ${ROW_GROUP_SIZE[name]}` : '';
            const [row] = await on.all<{ Count: bigint }>(`COPY ${name} TO $1 (FORMAT parquet, COMPRESSION zstd${rowGroup})`, undefined, [file(name)]);
            rows(name, row!.Count);
          };
          // Two connections: this one writes the small tables, then interests and interactions (most of
          // the bytes); the other scenario_pool, the fingerprint (from the files: each table is parsed
          // once) as soon as users and tasks are written too, then affinities.
          const [here, there] = splitTables();
          const late = new Set<DatasetTable>(['interests', 'interactions']);
          const small = inOrder(
            here.filter((n) => !late.has(n)),
            (name) => copy(db, name),
          );
          await allSettled([
            small.then(() => inOrder([...late], (name) => copy(db, name))),
            (async () => {
              const [pool, ...rest] = there;
              await copy(side, pool!);
              await small;
              fingerprint = await datasetFingerprint(side, (name) => `read_parquet(${sqlString(file(name))})`);
              // Before the swap: an import of other data never replaces one that work was built on.
              assertImportReplaceable(options.workspace, fingerprint, layout.dataDir);
              await inOrder(rest, (name) => copy(side, name));
            })(),
          ]);
          const manifest = {
            stage: 'import',
            dataset_format: DATASET_FORMAT,
            plens_version: plensVersion,
            created_at: new Date().toISOString(),
            source: { data_dir: layout.dataDir, schema_file: layout.schemaFile },
            tables: Object.fromEntries(DATASET_TABLE_NAMES.map((name) => [name, tables[name]!])),
            fingerprint,
            normalisations,
            warnings,
          };
          await writeFile(join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
        });
    } finally {
      await side.close();
    }

    return {
      dry_run: Boolean(options.dryRun),
      source: { data_dir: layout.dataDir, schema_file: layout.schemaFile },
      dataset_dir: datasetDir(options.workspace),
      users: layout.users.length,
      tasks: { sd: tasks.filter((t) => t.kind === 'SD').length, md: tasks.filter((t) => t.kind === 'MD').length },
      scenarios,
      tables: Object.fromEntries(DATASET_TABLE_NAMES.map((k) => [k, { file: join(datasetDir(options.workspace), tables[k]!.file), rows: tables[k]!.rows }])),
      fingerprint,
      normalisations,
      warnings,
      elapsed_ms: Math.round(performance.now() - started),
    };
  } finally {
    db.close();
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * The dataset tables in two halves of about equal work (interactions' texts are most of the bytes;
 * scenario_pool and affinities most of the rows): the first in DATASET_TABLE_NAMES order, the second
 * scenario_pool first (the fingerprint reads its file as soon as it is written).
 */
function splitTables(): [DatasetTable[], DatasetTable[]] {
  const second = new Set<DatasetTable>(['scenario_pool', 'affinities']);
  return [DATASET_TABLE_NAMES.filter((n) => !second.has(n)), [...second]];
}

/**
 * Identifies the imported data: the row texts of users, tasks and scenario_pool hashed in a fixed
 * order, so the same data gives the same fingerprint, wherever it is read from (`from` names where a
 * table's rows are: the table itself, or its Parquet file).
 */
async function datasetFingerprint(db: Database, from: (table: DatasetTable) => string): Promise<string> {
  const [row] = await db.all<{ fingerprint: string }>(
    `SELECT md5(string_agg(h, '' ORDER BY h)) AS fingerprint FROM (
     SELECT md5(u::VARCHAR) AS h FROM ${from('users')} u UNION ALL SELECT md5(t::VARCHAR) FROM ${from('tasks')} t
     UNION ALL SELECT md5(s::VARCHAR) FROM ${from('scenario_pool')} s)`,
  );
  return row!.fingerprint;
}

/** Waits for every promise, then throws the first failure: nothing is left running on a failure. */
async function allSettled(work: Promise<unknown>[]): Promise<void> {
  const failed = (await Promise.allSettled(work)).find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
}

/** Runs `task` over `items` one after another. */
async function inOrder<T>(items: readonly T[], task: (item: T) => Promise<unknown>): Promise<void> {
  for (const item of items) await task(item);
}

/** A per-user table's declared columns: names and types, in order. */
function tableColumns(table: PerUserTable): Array<[string, string]> {
  return DATASET_TABLES[table].split(',').map((c) => c.trim().split(/\s+/) as [string, string]);
}

const isUserKey = (column: string) => (USER_KEY_COLUMNS as readonly string[]).includes(column);

/** read_json's `columns` for a table's lines (user-rows.ts): the user's key columns as declared, every other column a list of them. */
function jsonColumns(table: PerUserTable): string {
  return `{${tableColumns(table)
    .map(([name, type]) => `${name}: ${sqlString(isUserKey(name) ? type : `${type}[]`)}`)
    .join(', ')}}`;
}

/** The select list that turns a table's lines back into rows: the lists unnested side by side (they are as long as each other). */
function unnestColumns(table: PerUserTable): string {
  return tableColumns(table)
    .map(([name]) => (isUserKey(name) ? name : `unnest(${name}) AS ${name}`))
    .join(', ');
}

async function appendSchemaAndTasks(db: Database, schema: PreferenceSchema, tasks: Awaited<ReturnType<typeof readTaskDefinitions>>): Promise<void> {
  const domains = await db.appender('domains');
  const prefs = await db.appender('preference_schema');
  schema.domains.forEach((d, i) => {
    appendRow(domains, [d.domain, i, d.description]);
    d.affinities.forEach((a, j) =>
      appendRow(prefs, [d.domain, a.name, j, a.description, a.is_categorical, a.has_multiple_values, a.possible_values, a.possible_values.length]),
    );
  });
  domains.closeSync();
  prefs.closeSync();

  const out = await db.appender('tasks');
  for (const t of tasks) {
    appendRow(out, [t.task_id, t.kind, t.task_number, t.domain, t.description, t.user_intent, t.goal, t.relevant_domains, t.relevant_preference_types]);
  }
  out.closeSync();
}
