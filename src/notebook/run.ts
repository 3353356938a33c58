import { PlensError } from '../core/errors.js';
import type { Database } from '../db/database.js';
import { requireWarehouse } from '../warehouse/build.js';
import { openAnalystConnection } from '../warehouse/query.js';
import type { Notebook, ParamValue, SqlCell } from './parse.js';

export const DEFAULT_MAX_ROWS = 50;

export interface CellResult {
  cell: SqlCell;
  status: 'ok' | 'error' | 'skipped';
  /** The last statement's columns (none when the cell holds no statement). */
  columns: string[];
  types: string[];
  /** At most the cell's row cap. */
  rows: unknown[][];
  /** Rows in the whole result. */
  total: number;
  maxRows: number;
  ms: number;
  error?: PlensError;
}

export interface NotebookRun {
  notebook: Notebook;
  params: Record<string, ParamValue>;
  results: CellResult[];
  failures: CellResult[];
  /** Parameters whose value matches nothing in the warehouse (the notebook's param_values). */
  warnings: string[];
}

/**
 * Runs every cell in order on one read-only connection, so a cell sees the temp tables, macros and
 * variables of the cells above it. A failing cell is recorded and the run goes on: the output then
 * shows every failure at once.
 */
export async function runNotebook(
  notebook: Notebook,
  dbPath: string,
  params: Record<string, ParamValue>,
  options: { maxRows?: number; workspace?: string; allowFiles?: boolean } = {},
): Promise<NotebookRun> {
  requireWarehouse(dbPath);
  // A notebook is SQL someone typed: the same locked-down connection as plens sql.
  const db = await openAnalystConnection(dbPath, { ...(options.workspace ? { workspace: options.workspace } : {}), allowFiles: options.allowFiles ?? false });
  const results: CellResult[] = [];
  const warnings: string[] = [];
  try {
    for (const [name, value] of Object.entries(params)) {
      // A bound value, never spliced into SQL text: a parameter cannot inject SQL. The name is an identifier (parse.ts).
      // Whole numbers bind as BIGINT so `limit getvariable('n')` and integer comparisons behave.
      await db.query(`SET VARIABLE ${name} = $1`, undefined, [typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value]);
    }
    warnings.push(...(await unmatchedParams(db, notebook, params)));
    for (const cell of notebook.cells) {
      const maxRows = cell.options.maxRows ?? options.maxRows ?? notebook.maxRows ?? DEFAULT_MAX_ROWS;
      const base = { cell, columns: [], types: [], rows: [], total: 0, maxRows, ms: 0 };
      if (cell.options.skip) {
        results.push({ ...base, status: 'skipped' });
        continue;
      }
      const started = performance.now();
      try {
        const head = await db.head(cell.sql, maxRows);
        results.push({ ...base, ...head, status: 'ok', ms: performance.now() - started });
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const where = cell.options.name ? `cell ${cell.index} (${cell.options.name})` : `cell ${cell.index}`;
        results.push({
          ...base,
          status: 'error',
          ms: performance.now() - started,
          error: new PlensError('E_SQL', `${where}: ${message}`, { location: { file: notebook.file, line: cell.line }, cause: error }),
        });
      }
    }
  } finally {
    db.close();
  }
  return { notebook, params, results, failures: results.filter((r) => r.status === 'error'), warnings };
}

/**
 * A parameter that matches nothing (an assistant that is not in the warehouse, a misspelt setting)
 * would give empty tables without a word: each declared check lists what the value could be. An
 * empty value means "all" in the notebooks, so it is not checked.
 */
async function unmatchedParams(db: Database, notebook: Notebook, params: Record<string, ParamValue>): Promise<string[]> {
  const out: string[] = [];
  for (const [name, sql] of Object.entries(notebook.paramValues)) {
    const value = params[name];
    if (value === undefined || value === '') continue;
    let known: string[];
    try {
      known = (await db.query(sql)).rows.map((r) => String(Object.values(r)[0]));
    } catch (error) {
      // A check that cannot run (a warehouse without the view it reads) is no reason to run no cell:
      // it is said, and the cells run and fail or not on their own.
      const reason = ((error as Error).message ?? String(error)).split('\n')[0];
      out.push(`parameter ${name} = ${JSON.stringify(value)} could not be checked (param_values in ${notebook.file}: ${reason})`);
      continue;
    }
    if (known.includes(String(value))) continue;
    const list =
      known
        .slice(0, 12)
        .map((v) => JSON.stringify(v))
        .join(', ') + (known.length > 12 ? `, ... (${known.length} in all)` : '');
    out.push(
      `parameter ${name} = ${JSON.stringify(value)} matches nothing in the warehouse, so the cells that use it show no rows; ${known.length ? `it has: ${list}` : 'it has none at all'}`,
    );
  }
  return out;
}
