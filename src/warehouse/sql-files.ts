import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

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

export async function readWarehouseSqlFiles(dir: string): Promise<WarehouseSqlFile[]> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.sql')).sort();
  const files: WarehouseSqlFile[] = [];
  for (const name of names) {
    const path = join(dir, name);
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
