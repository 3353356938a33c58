import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cli.js';

/** A warehouse SQL file of the package by its name: the shared ones in warehouse/, a benchmark's in its folder there. */
export function warehouseSqlFile(name: string): string {
  for (const dir of ['', 'personalens', 'personabench']) {
    const file = join(repoRoot, 'warehouse', dir, name);
    if (existsSync(file)) return file;
  }
  throw new Error(`no warehouse SQL file ${name}`);
}
