import { join } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { PlensError, usageError } from '../core/errors.js';
import { Database } from '../db/database.js';
import { requireWarehouse } from '../warehouse/build.js';
import type { PaperTable } from './catalog.js';
import { renderTable, type RenderableTable, type TableFormat } from './render.js';
import type { ViewResult, ViewRows } from './view-rows.js';

/** A benchmark's tables: the views it adds to a warehouse and how each is presented. */
export interface TableGroup {
  /** Whether a warehouse holds this benchmark's results: its tables are listed then, and left out otherwise unless named. */
  holds(relations: ReadonlySet<string>): boolean;
  tables: PaperTable[];
  /** A view that exists with no rows means no results yet: left out (when named, reported missing with this reason). */
  emptyIsMissing?: string;
  /**
   * `--exclude-flagged`: shadows the benchmark's relations on one connection with temporary views
   * that leave out what its audit flags; returns what was done.
   */
  excludeFlagged?(db: Database, relations: ReadonlySet<string>): Promise<string>;
}

export interface TablesOptions {
  dbPath: string;
  /** The registered benchmarks' tables, in the order they are listed. */
  catalog: readonly TableGroup[];
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

/** Reads the paper's tables from the warehouse views; renders and optionally writes one file per table. */
export async function collectTables(options: TablesOptions): Promise<TablesResult> {
  requireWarehouse(options.dbPath);
  const entries = options.catalog.flatMap((group) => group.tables.map((table) => ({ table, group })));
  const known = new Set(entries.map((e) => e.table.name));
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
      const filters = options.catalog.filter((g) => g.excludeFlagged);
      if (filters.length === 0) throw new PlensError('E_PREREQUISITE', '--exclude-flagged: no benchmark here has an audit that flags results');
      for (const g of filters) {
        const said = await Promise.all(connections.map((c) => g.excludeFlagged!(c, views)));
        warnings.push(said[0]!);
      }
    }
    const wanted = entries.filter((e) => !options.only || options.only.includes(e.table.name));
    // A benchmark whose results the warehouse does not hold has its tables left out unless they are named.
    const holding = new Map(options.catalog.map((g) => [g, g.holds(views)]));
    const listed = (e: (typeof entries)[number]) => holding.get(e.group) === true || Boolean(options.only);
    const present = wanted.filter((e) => views.has(e.table.name) && listed(e));
    const results = new Map<string, ViewResult>();
    let next = 0;
    await Promise.all(
      connections.map(async (c) => {
        while (next < present.length) {
          const t = present[next++]!.table;
          const cached = kept?.get(t.name);
          if (cached) {
            results.set(t.name, cached);
            continue;
          }
          const rows = await c.all(`SELECT * FROM ${t.name}`);
          const notes = t.notes ? await t.notes(c, views) : [];
          results.set(t.name, { rows, notes });
          kept?.set(t.name, { rows, notes });
        }
      }),
    );
    const tables: RenderableTable[] = [];
    const missing: TablesResult['missing'] = [];
    for (const { table: t, group } of wanted) {
      if (!listed({ table: t, group })) continue;
      const result = results.get(t.name);
      // A benchmark whose empty views mean "no results yet" has an absent view left out alike unless named.
      if (!result && (group.emptyIsMissing !== undefined || t.optional) && !options.only) continue;
      if (!result) {
        missing.push({ name: t.name, reason: t.missingHint ?? 'not in the warehouse (its inputs are not built yet; see `plens warehouse`)' });
        continue;
      }
      if (group.emptyIsMissing !== undefined && result.rows.length === 0) {
        if (options.only) missing.push({ name: t.name, reason: group.emptyIsMissing });
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
