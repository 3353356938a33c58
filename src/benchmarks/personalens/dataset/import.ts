import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replaceDirectoryAtomic } from '../../../core/atomic.js';
import { createProgress } from '../../../core/progress.js';
import { plensVersion } from '../../../core/version.js';
import type { Workspace } from '../../../core/workspace.js';
import { appendRow } from '../../../db/append-row.js';
import { Database, sqlString } from '../../../db/database.js';
import type { Normalisation } from './domains.js';
import { DATASET_FORMAT, DATASET_TABLES, DATASET_TABLE_NAMES, ROW_GROUP_SIZE } from './tables.js';
import { locateUpstream } from './upstream/layout.js';
import { PreferenceSchema } from './upstream/preference-schema.js';
import { readTaskDefinitions } from './upstream/task-definitions.js';
import { defaultReadWorkers, readUsers } from './read-users.js';
import { PER_USER_TABLES, type PerUserTable } from './user-rows.js';

export interface ImportOptions {
  from: string;
  schema?: string;
  workspace: Workspace;
  progress?: boolean;
  /** Validate and count, write nothing. */
  dryRun?: boolean;
  /** Threads that read and validate the users (default: one per core, none for a small import). */
  workers?: number;
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
  // The per-user rows go through newline-delimited JSON files that DuckDB loads in one statement each.
  const staging = await mkdtemp(join(tmpdir(), 'plens-import-'));
  try {
    for (const name of DATASET_TABLE_NAMES) await db.run(`CREATE TABLE ${name} (${DATASET_TABLES[name]})`);
    await appendSchemaAndTasks(db, schema, tasks);

    const normalisations: Normalisation[] = [];
    const warnings: string[] = [];
    const scenarios = { sd: 0, md: 0 };
    const rows = new RowFiles(staging);
    const progress = createProgress({ label: 'import', total: layout.users.length, unit: 'users', enabled: options.progress });
    try {
      const workers = options.workers ?? defaultReadWorkers(layout.users.length);
      for await (const user of readUsers(layout.users, { schema, tasks: taskById, schemaFile: layout.schemaFile, taskDir: layout.taskDir }, workers)) {
        await rows.add(user.rows);
        normalisations.push(...user.normalisations);
        warnings.push(...user.warnings);
        scenarios.sd += user.sd;
        scenarios.md += user.md;
        progress.increment();
      }
    } finally {
      progress.stop();
    }
    await rows.flush();
    for (const name of PER_USER_TABLES) {
      // In file order (DuckDB keeps insertion order), so the tables come out in user order as before.
      await db.run(`INSERT INTO ${name} BY NAME SELECT * FROM read_json($file, format = 'newline_delimited', columns = ${jsonColumns(name)})`, undefined, {
        file: rows.file(name),
      });
    }

    const tables: ImportSummary['tables'] = {};
    for (const name of DATASET_TABLE_NAMES) {
      const [row] = await db.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM ${name}`);
      tables[name] = { file: `${name}.parquet`, rows: row!.n };
    }
    // Row texts hashed in a fixed order: the same data gives the same fingerprint, wherever it is read from.
    const [{ fingerprint }] = (await db.all<{ fingerprint: string }>(
      `SELECT md5(string_agg(h, '' ORDER BY h)) AS fingerprint FROM (
         SELECT md5(u::VARCHAR) AS h FROM users u UNION ALL SELECT md5(t::VARCHAR) FROM tasks t UNION ALL SELECT md5(s::VARCHAR) FROM scenario_pool s)`,
    )) as [{ fingerprint: string }];
    if (!options.dryRun)
      await replaceDirectoryAtomic(options.workspace.datasetDir, async (staging) => {
        for (const name of DATASET_TABLE_NAMES) {
          const file = join(staging, `${name}.parquet`);
          const rowGroup = ROW_GROUP_SIZE[name] ? `, ROW_GROUP_SIZE ${ROW_GROUP_SIZE[name]}` : '';
          await db.run(`COPY ${name} TO $1 (FORMAT parquet, COMPRESSION zstd${rowGroup})`, undefined, [file]);
        }
        const manifest = {
          stage: 'import',
          dataset_format: DATASET_FORMAT,
          plens_version: plensVersion,
          created_at: new Date().toISOString(),
          source: { data_dir: layout.dataDir, schema_file: layout.schemaFile },
          tables,
          fingerprint,
          normalisations,
          warnings,
        };
        await writeFile(join(staging, 'manifest.json'), JSON.stringify(manifest, null, 2) + '\n');
      });

    return {
      dry_run: Boolean(options.dryRun),
      source: { data_dir: layout.dataDir, schema_file: layout.schemaFile },
      dataset_dir: options.workspace.datasetDir,
      users: layout.users.length,
      tasks: { sd: tasks.filter((t) => t.kind === 'SD').length, md: tasks.filter((t) => t.kind === 'MD').length },
      scenarios,
      tables: Object.fromEntries(Object.entries(tables).map(([k, v]) => [k, { file: join(options.workspace.datasetDir, v.file), rows: v.rows }])),
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

/** Per-user table rows buffered in memory a few MB at a time and appended to one NDJSON file per table. */
class RowFiles {
  private readonly buffers = new Map<PerUserTable, string[]>(PER_USER_TABLES.map((t) => [t, []]));
  private buffered = 0;

  constructor(private readonly dir: string) {}

  file(table: PerUserTable): string {
    return join(this.dir, `${table}.ndjson`);
  }

  async add(rows: Record<PerUserTable, string>): Promise<void> {
    for (const t of PER_USER_TABLES) {
      this.buffers.get(t)!.push(rows[t]);
      this.buffered += rows[t].length;
    }
    if (this.buffered > 8 * 1024 * 1024) await this.flush();
  }

  async flush(): Promise<void> {
    for (const [t, chunks] of this.buffers) {
      await appendFile(this.file(t), chunks.join(''));
      chunks.length = 0;
    }
    this.buffered = 0;
  }
}

/** read_json's `columns` for a table: its declared names and types, in order. */
function jsonColumns(table: PerUserTable): string {
  const columns = DATASET_TABLES[table].split(',').map((c) => c.trim().split(/\s+/) as [string, string]);
  return `{${columns.map(([name, type]) => `${name}: ${sqlString(type)}`).join(', ')}}`;
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
