import { readFile } from 'node:fs/promises';
import { PlensError } from '../core/errors.js';
import { Database } from '../db/database.js';

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
