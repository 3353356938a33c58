import { readdirSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PlensError } from '../core/errors.js';
import { packageRoot } from '../core/paths.js';

/** The package's SQL: the shared files in warehouse/, each built-in benchmark's in a folder there. */
export const defaultSqlDir = join(packageRoot, 'warehouse');

/** A warehouse .sql file and the needs its header declares. */
export interface WarehouseSqlFile {
  name: string;
  path: string;
  sql: string;
  requiresFiles: string[];
  requiresRelations: string[];
  /** Computations plens runs (in TypeScript-driven SQL) before this file, e.g. `-- step: lexical_diversity`. */
  steps: string[];
}

const HEADER = /^--\s*(requires|requires-file|step):\s*(.+)$/;

/**
 * A folder of SQL files and its subfolders (one level): the package's warehouse/ holds the shared
 * files, and each benchmark's in a folder of its own.
 */
export function sqlTree(dir: string): string[] {
  let subdirs: string[] = [];
  try {
    subdirs = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.') && !e.name.endsWith('.steps'))
      .map((e) => join(dir, e.name))
      .sort();
  } catch {
    // A folder that is not there has no files; the caller says so when it matters.
  }
  return [dir, ...subdirs];
}

/**
 * The .sql files of the folders, run in file-name order across all of them (so a benchmark's
 * files interleave with the shared ones by number). Two files of one name are an error.
 */
export async function readWarehouseSqlFiles(dirs: readonly string[]): Promise<WarehouseSqlFile[]> {
  const found = new Map<string, string>();
  for (const dir of dirs) {
    for (const name of (await readdir(dir)).filter((n) => n.endsWith('.sql'))) {
      const other = found.get(name);
      if (other !== undefined && other !== dir)
        throw new PlensError('E_USAGE', `two warehouse SQL files are named ${name}: in ${other} and in ${dir}`, {
          hint: 'rename one: files run in name order',
        });
      found.set(name, dir);
    }
  }
  const names = [...found.keys()].sort();
  const files: WarehouseSqlFile[] = [];
  for (const name of names) {
    const path = join(found.get(name)!, name);
    const sql = await readFile(path, 'utf8');
    const file: WarehouseSqlFile = { name, path, sql, requiresFiles: [], requiresRelations: [], steps: [] };
    for (const line of sql.split('\n')) {
      const m = HEADER.exec(line.trim());
      if (!m) continue;
      const items = m[2]!
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      (m[1] === 'requires' ? file.requiresRelations : m[1] === 'step' ? file.steps : file.requiresFiles).push(...items);
    }
    files.push(file);
  }
  return files;
}
