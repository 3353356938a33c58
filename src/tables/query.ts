import { requireWarehouse } from '../warehouse/build.js';
import { openAnalystConnection } from '../warehouse/query.js';
import { columnsOf, type RenderableTable } from './render.js';

/** Runs SQL against the warehouse (read-only) and returns the last statement's result as a table. */
export async function querySql(
  dbPath: string,
  sql: string,
  file?: string,
  access: { workspace?: string; allowFiles?: boolean } = {},
): Promise<RenderableTable> {
  requireWarehouse(dbPath);
  const db = await openAnalystConnection(dbPath, access);
  try {
    const result = await db.query(sql, file ? { file } : undefined);
    return { name: 'query', columns: columnsOf(result.columns), rows: result.rows };
  } finally {
    db.close();
  }
}
