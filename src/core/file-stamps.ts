import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Make-style stamps: a file's size and modification time stand for its content, as make and git's
 * index take them, so telling whether anything changed never reads the data itself.
 */

/** `size:mtime` of a file, or null when it is absent. */
export function fileStamp(file: string): string | null {
  const st = statSync(file, { throwIfNoEntry: false });
  return st ? `${st.size}:${Math.round(st.mtimeMs)}` : null;
}

/**
 * Path (relative to `dir`), size and mtime of every file below `dir` whose name passes `keep`, in
 * sorted order; hidden names (temp files, dot folders) are passed over, and so are the folders
 * `skipDir` names by their path relative to `dir`.
 */
export function fileStats(
  dir: string,
  keep: (name: string) => boolean = () => true,
  skipDir: (relativePath: string) => boolean = () => false,
): Array<[string, number, number]> {
  const out: Array<[string, number, number]> = [];
  const walk = (d: string) => {
    let names: string[];
    try {
      names = readdirSync(d).sort();
    } catch {
      return;
    }
    for (const name of names) {
      if (name.startsWith('.')) continue;
      const p = join(d, name);
      const st = statSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) {
        if (!skipDir(relative(dir, p))) walk(p);
      } else if (keep(name)) out.push([relative(dir, p), st.size, Math.round(st.mtimeMs)]);
    }
  };
  walk(dir);
  return out;
}
