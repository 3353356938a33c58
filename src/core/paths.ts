import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The installed package's root (holds package.json, schemas/, warehouse/, data/sample/). */
export const packageRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('plens: cannot find package.json above ' + fileURLToPath(import.meta.url));
    dir = parent;
  }
  return dir;
})();

export const schemasDir = join(packageRoot, 'schemas');
export const sampleDataDir = join(packageRoot, 'data', 'sample');

/** Paths the user gives are relative to the current directory. */
export function userPath(p: string): string {
  return resolve(process.cwd(), p);
}
