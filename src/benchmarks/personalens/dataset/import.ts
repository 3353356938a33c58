import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DuckDBAppender } from '@duckdb/node-api';
import { pMapIterable } from 'p-map';
import { replaceDirectoryAtomic } from '../../../core/atomic.js';
import { createProgress } from '../../../core/progress.js';
import { plensVersion } from '../../../core/version.js';
import type { Workspace } from '../../../core/workspace.js';
import { appendRow } from '../../../db/append-row.js';
import { Database } from '../../../db/database.js';
import type { Normalisation } from './domains.js';
import { DATASET_FORMAT, DATASET_TABLES, DATASET_TABLE_NAMES, ROW_GROUP_SIZE } from './tables.js';
import { locateUpstream } from './upstream/layout.js';
import { PreferenceSchema } from './upstream/preference-schema.js';
import { readTaskDefinitions } from './upstream/task-definitions.js';
import { readUser, type UserRecord } from './upstream/user-reader.js';

export interface ImportOptions {
  from: string;
  schema?: string;
  workspace: Workspace;
  progress?: boolean;
  /** Validate and count, write nothing. */
  dryRun?: boolean;
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

// Reading is I/O plus JSON.parse; a few users in flight hide the I/O without holding much memory.
const USERS_IN_FLIGHT = 8;

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
  try {
    for (const name of DATASET_TABLE_NAMES) await db.run(`CREATE TABLE ${name} (${DATASET_TABLES[name]})`);
    await appendSchemaAndTasks(db, schema, tasks);

    const appenders = {
      users: await db.appender('users'),
      interests: await db.appender('interests'),
      affinities: await db.appender('affinities'),
      interactions: await db.appender('interactions'),
      scenario_pool: await db.appender('scenario_pool'),
    };
    const normalisations: Normalisation[] = [];
    const warnings: string[] = [];
    const scenarios = { sd: 0, md: 0 };
    const progress = createProgress({ label: 'import', total: layout.users.length, unit: 'users', enabled: options.progress });
    try {
      const records = pMapIterable(layout.users, (user) => readUser(user, { schema, tasks: taskById }), { concurrency: USERS_IN_FLIGHT });
      for await (const record of records) {
        appendUser(appenders, record);
        normalisations.push(...record.normalisations);
        warnings.push(...record.warnings);
        for (const s of record.scenarios) scenarios[s.kind === 'SD' ? 'sd' : 'md']++;
        progress.increment();
      }
    } finally {
      progress.stop();
    }
    for (const appender of Object.values(appenders)) appender.closeSync();

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
    if (!options.dryRun) await replaceDirectoryAtomic(options.workspace.datasetDir, async (staging) => {
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
  }
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

function appendUser(a: Record<'users' | 'interests' | 'affinities' | 'interactions' | 'scenario_pool', DuckDBAppender>, r: UserRecord): void {
  const d = r.demographics;
  const user = d.user_id;
  appendRow(a.users, [user, r.index, d.age, d.gender, d.employment_status, d.education, d.marital_status, d.english_proficiency, d.ethnicity, d.religion, d.birth_country, d.reside_country]);
  for (const i of r.interests) appendRow(a.interests, [user, r.index, i.domain, i.interested]);
  for (const f of r.affinities) appendRow(a.affinities, [user, r.index, f.domain, f.preference_type, f.value, f.position, f.is_list]);
  for (const x of r.interactions) appendRow(a.interactions, [user, r.index, x.domain, x.summary]);
  for (const s of r.scenarios) {
    appendRow(a.scenario_pool, [
      s.scenario_id, user, r.index, s.task_id, s.kind, s.task_key, s.relevant_domains, s.relevant_preference_types,
      s.location, s.device, s.time_of_day, s.day_of_week, s.environment,
    ]);
  }
}

