import { readFile } from 'node:fs/promises';
import { PlensError } from '../core/errors.js';
import { Database } from '../db/database.js';
import { columnsOf, type RenderableTable } from '../tables/render.js';
import { requireWarehouse } from './build.js';

/** Runs SQL against the warehouse (read-only) and returns the last statement's result as a table. */
export async function querySql(dbPath: string, sql: string, file?: string, access: { workspace?: string; allowFiles?: boolean } = {}): Promise<RenderableTable> {
  requireWarehouse(dbPath);
  const db = await openAnalystConnection(dbPath, access);
  try {
    const result = await db.query(sql, file ? { file } : undefined);
    return { name: 'query', columns: columnsOf(result.columns), rows: result.rows };
  } finally {
    db.close();
  }
}

/**
 * The analyst's connection (`plens sql`, notebooks): reads the warehouse (and files under the
 * workspace it was built from, or the one given); writes nothing, loads no extension;
 * `allowFiles` lifts the file and network lock.
 */
export async function openAnalystConnection(dbPath: string, access: { workspace?: string; allowFiles?: boolean } = {}): Promise<Database> {
  const readDirs = [...(access.workspace ? [access.workspace] : []), ...(await builtFrom(dbPath))];
  return Database.open(dbPath, { readOnly: true, sandbox: { readDirs, allowFiles: access.allowFiles ?? false } });
}

/** The workspace the warehouse was built from (plens_build), whose files a query may read too. */
async function builtFrom(dbPath: string): Promise<string[]> {
  const db = await Database.open(dbPath, { readOnly: true });
  try {
    const rows = await db.all<{ workspace: string }>(`SELECT workspace FROM plens_build`).catch(() => []);
    return rows.map((r) => r.workspace).filter((w) => typeof w === 'string' && w !== '');
  } finally {
    db.close();
  }
}

export async function readSqlFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new PlensError('E_INPUT_NOT_FOUND', `cannot read SQL file: ${(error as NodeJS.ErrnoException).code}`, { location: { file } });
  }
}
