import { PlensError } from '../core/errors.js';
import { Database } from '../db/database.js';
import { requireWarehouse } from '../warehouse/build.js';
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
}

/**
 * Runs every cell in order on one read-only connection, so a cell sees the temp tables, macros and
 * variables of the cells above it. A failing cell is recorded and the run goes on: the output then
 * shows every failure at once.
 */
export async function runNotebook(notebook: Notebook, dbPath: string, params: Record<string, ParamValue>, options: { maxRows?: number } = {}): Promise<NotebookRun> {
  requireWarehouse(dbPath);
  const db = await Database.open(dbPath, { readOnly: true });
  const results: CellResult[] = [];
  try {
    for (const [name, value] of Object.entries(params)) {
      // A bound value, never spliced into SQL text: a parameter cannot inject SQL. The name is an identifier (parse.ts).
      // Whole numbers bind as BIGINT so `limit getvariable('n')` and integer comparisons behave.
      await db.query(`SET VARIABLE ${name} = $1`, undefined, [typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value]);
    }
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
  return { notebook, params, results, failures: results.filter((r) => r.status === 'error') };
}
