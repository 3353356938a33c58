import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cli.js';

/** A warehouse SQL file of the package by its name: the shared ones in warehouse/, a benchmark's in its folder there. */
export function warehouseSqlFile(name: string): string {
  for (const dir of [
    '',
    ...readdirSync(join(repoRoot, 'warehouse'), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name),
  ]) {
    const file = join(repoRoot, 'warehouse', dir, name);
    if (existsSync(file)) return file;
  }
  throw new Error(`no warehouse SQL file ${name}`);
}
