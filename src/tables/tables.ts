import { join } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { PlensError, usageError } from '../core/errors.js';
import { Database, sqlIdentifier } from '../db/database.js';
import { requireWarehouse } from '../warehouse/build.js';
import { PAPER_TABLES } from './catalog.js';
import { renderTable, type RenderableTable, type TableFormat } from './render.js';
import type { ViewResult, ViewRows } from './view-rows.js';

export interface TablesOptions {
  dbPath: string;
  only?: string[];
  format: TableFormat;
  /**
   * The formats written to outDir (default: format alone). Every view is computed once and each
   * format is rendered from the same rows: the result views (bootstrap intervals) cost seconds.
   */
  formats?: readonly TableFormat[];
  outDir?: string;
  /** Leave out the dialogues the simulator audit flags (simulator_audit_flagged). */
  excludeFlagged?: boolean;
  /** Rows already queried from this warehouse build, reused and added to (never with excludeFlagged). */
  viewRows?: ViewRows;
}

export interface TablesResult {
  tables: RenderableTable[];
  missing: Array<{ name: string; reason: string }>;
  files: string[];
  warnings: string[];
}

const EXTENSION: Record<TableFormat, string> = { table: 'txt', md: 'md', csv: 'csv', tex: 'tex', json: 'json' };

/** What brings a missing view into the warehouse, where rebuilding it alone does not. */
const MISSING_FIX: Record<string, string> = {
  table5:
    'not in the warehouse: it needs human labels. Export a sample with `plens annotate export`, have annotators label it, load their files with `plens annotate import`, then run `plens warehouse` again',
};

/** Reads the paper's tables from the warehouse views; renders and optionally writes one file per table. */
export async function collectTables(options: TablesOptions): Promise<TablesResult> {
  requireWarehouse(options.dbPath);
  const known = new Set(PAPER_TABLES.map((t) => t.name));
  for (const name of options.only ?? []) {
    if (!known.has(name)) throw usageError(`--only: unknown table "${name}"`, `known tables: ${[...known].join(', ')}`);
  }
  // The build's stamp is taken before the file is opened: a build swapped in meanwhile is not taken for this one.
  const kept = options.viewRows && !options.excludeFlagged ? options.viewRows.of(options.dbPath) : undefined;
  const db = await Database.open(options.dbPath, { readOnly: true });
  try {
    const views = new Set((await db.all<{ name: string }>(`SELECT table_name AS name FROM information_schema.tables`)).map((r) => r.name));
    const warnings: string[] = [];
    // Two connections query the views side by side (a result view's bootstrap keeps one core busy for
    // seconds); each is set up alike, since temp views belong to their connection.
    const connections = [db, await db.connect()];
    if (options.excludeFlagged) {
      const said = await Promise.all(connections.map((c) => excludeFlaggedDialogues(c, views)));
      warnings.push(said[0]!);
    }
    const wanted = PAPER_TABLES.filter((t) => !options.only || options.only.includes(t.name));
    // A warehouse without the PersonaLens dataset was built from PERSONA-bench outputs alone.
    const personaOnly = !views.has('domains');
    // ... whose PersonaLens tables are left out unless named (below); only what is listed is queried.
    const listed = (t: { name: string }) => t.name.startsWith('persona_') || !personaOnly || Boolean(options.only);
    const present = wanted.filter((t) => views.has(t.name) && listed(t));
    const results = new Map<string, ViewResult>();
    let next = 0;
    await Promise.all(
      connections.map(async (c) => {
        while (next < present.length) {
          const t = present[next++]!;
          const cached = kept?.get(t.name);
          if (cached) {
            results.set(t.name, cached);
            continue;
          }
          const rows = await c.all(`SELECT * FROM ${t.name}`);
          const notes: string[] = [];
          if (t.name === 'table6_7' && views.has('unmapped_birth_countries')) {
            const unmapped = await c.all<{ birth_country: string; users: number }>('SELECT * FROM unmapped_birth_countries');
            for (const u of unmapped)
              notes.push(`birth country "${u.birth_country}" (${u.users} users) has no region; shown as "Unmapped: ${u.birth_country}"`);
          }
          results.set(t.name, { rows, notes });
          kept?.set(t.name, { rows, notes });
        }
      }),
    );
    const tables: RenderableTable[] = [];
    const missing: TablesResult['missing'] = [];
    for (const t of wanted) {
      // PERSONA-bench tables stay out of a PersonaLens-only listing unless asked for by name.
      const persona = t.name.startsWith('persona_');
      if (persona && !options.only && !views.has(t.name)) continue;
      // ... and the PersonaLens tables out of a PERSONA-bench-only one.
      if (!persona && personaOnly && !options.only) continue;
      const result = results.get(t.name);
      if (!result) {
        missing.push({ name: t.name, reason: MISSING_FIX[t.name] ?? 'not in the warehouse (its inputs are not built yet; see `plens warehouse`)' });
        continue;
      }
      // The PERSONA-bench views exist (empty) in every warehouse.
      if (persona && result.rows.length === 0) {
        if (options.only) missing.push({ name: t.name, reason: 'no PERSONA-bench predictions or scores in the workspace yet' });
        continue;
      }
      warnings.push(...result.notes);
      tables.push({ name: t.name, title: t.title, caption: t.caption, columns: t.columns, rows: result.rows, notes: result.notes });
    }
    if (options.only && missing.length > 0 && tables.length === 0) {
      throw new PlensError('E_PREREQUISITE', `${missing.map((m) => m.name).join(', ')}: ${missing[0]!.reason}`);
    }
    const files: string[] = [];
    if (options.outDir) {
      for (const format of options.formats ?? [options.format]) {
        for (const t of tables) {
          const file = join(options.outDir, `${t.name}.${EXTENSION[format]}`);
          await writeFileAtomic(file, renderTable(t, format) + '\n');
          files.push(file);
        }
      }
    }
    return { tables, missing, files, warnings };
  } finally {
    await db.close();
  }
}

export function formatTables(result: TablesResult, format: TableFormat): string {
  if (result.files.length > 0) {
    return [`Wrote ${result.files.length} table(s):`, ...result.files.map((f) => `  ${f}`), ...result.missing.map((m) => `  (${m.name}: ${m.reason})`)].join(
      '\n',
    );
  }
  const separator = format === 'csv' ? '\n\n' : '\n\n';
  const body = result.tables.map((t) => (format === 'csv' ? `# ${t.name}\n${renderTable(t, format)}` : renderTable(t, format))).join(separator);
  const missing = result.missing.map((m) => `(${m.name}: ${m.reason})`).join('\n');
  return missing ? `${body}\n\n${missing}` : body;
}

/**
 * Shadows dialogues, turns, judgments, dialogue_scores and paired_scores with temporary views (temp names come first on DuckDB's search
 * path, and views rebind on every query) that leave out the dialogues the simulator audit flags; every
 * result view then works on the rest. The warehouse file is untouched. Returns what was done.
 */
async function excludeFlaggedDialogues(db: Database, relations: Set<string>): Promise<string> {
  if (!relations.has('simulator_audit_flagged')) {
    throw new PlensError('E_PREREQUISITE', '--exclude-flagged: the warehouse has no simulator audit', {
      hint: 'it needs dialogues and the dataset profiles; run plens warehouse',
    });
  }
  // The warehouse's own catalog name: "main" alone would also name the temp catalog's schema.
  const [{ catalog }] = (await db.all<{ catalog: string }>(`SELECT current_database() AS catalog`)) as [{ catalog: string }];
  const q = `${sqlIdentifier(catalog)}.main`;
  await db.run(`CREATE TEMP TABLE audit_flagged_ids AS SELECT DISTINCT dialogue_id FROM ${q}.simulator_audit_flagged`);
  for (const t of ['dialogues', 'turns', 'judgments', 'dialogue_scores', 'paired_scores']) {
    if (relations.has(t)) await db.run(`CREATE TEMP VIEW ${t} AS SELECT * FROM ${q}.${t} WHERE dialogue_id NOT IN (SELECT dialogue_id FROM audit_flagged_ids)`);
  }
  const [row] = await db.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM audit_flagged_ids`);
  return `--exclude-flagged: ${row!.n} dialogue(s) flagged by the simulator audit are left out of every table but table10 (lexical diversity is computed when the warehouse is built)`;
}
