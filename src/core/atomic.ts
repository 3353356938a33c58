import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { PlensError } from './errors.js';
import { pidRuns } from './pid.js';
import { redact } from './redact.js';

/** This host, as temp names carry it: a later process can tell its own host's leftovers from another's. */
const HOST_TAG = createHash('sha256').update(hostname()).digest('hex').slice(0, 6);

/**
 * A sibling temp path: same directory, so the final rename stays on one filesystem and is atomic.
 * Its name carries this host and pid (`.<name>.tmp-<host>-<pid>-<random>`), so staleTempSiblings
 * can tell a killed process's leftovers from a running one's.
 */
export function tempSibling(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${HOST_TAG}-${process.pid}-${randomBytes(4).toString('hex')}`);
}

/** How old another host's leftover must be before it is taken for a killed process's (its build would have touched it). */
const FOREIGN_TEMP_AGE_MS = 6 * 3600_000;

/**
 * Removes the temp siblings of `path` (and their `.wal` / `.tmp` companions) that a killed process
 * left: those of this host whose pid no longer runs, and another host's not touched for 6 hours.
 * A running process's temp files are never touched. Returns the names removed.
 */
export async function removeStaleTempSiblings(path: string): Promise<string[]> {
  const dir = dirname(path);
  const prefix = `.${basename(path)}.tmp-`;
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return removed;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const m = /^([0-9a-f]{6})-(\d+)-[0-9a-f]{8}(?:\.wal|\.tmp)?$/.exec(name.slice(prefix.length));
    if (!m) continue;
    const file = join(dir, name);
    let stale: boolean;
    if (m[1] === HOST_TAG) stale = Number(m[2]) !== process.pid && !pidRuns(Number(m[2]));
    else stale = Date.now() - (await stat(file).catch(() => ({ mtimeMs: Date.now() }))).mtimeMs > FOREIGN_TEMP_AGE_MS;
    if (!stale) continue;
    await rm(file, { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = tempSibling(path);
  try {
    // Manifests, state and reports are text a user may share: no key in them.
    await writeFile(tmp, typeof data === 'string' ? redact(data) : data);
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
}

/**
 * Builds a directory in a temp sibling and swaps it in only when `build` succeeds,
 * so a failure or a kill leaves the previous directory (or none) and never a half-written one.
 * With `ownOnly` (a folder the user named), an existing folder is replaced only when it holds
 * nothing but what this build writes: anything else in it is a user's, and the swap is refused.
 */
export async function replaceDirectoryAtomic(
  finalDir: string,
  build: (stagingDir: string) => Promise<void>,
  options: { ownOnly?: boolean } = {},
): Promise<void> {
  await mkdir(dirname(finalDir), { recursive: true });
  const staging = tempSibling(finalDir);
  await mkdir(staging, { recursive: true });
  try {
    await build(staging);
    if (options.ownOnly) {
      const ours = new Set(await readdir(staging));
      const foreign = (await readdir(finalDir).catch(() => [] as string[])).filter((n) => !ours.has(n));
      if (foreign.length) {
        throw new PlensError(
          'E_USAGE',
          `the output folder holds files this command did not write (${foreign.slice(0, 5).join(', ')}${foreign.length > 5 ? ', ...' : ''}); nothing was replaced`,
          {
            location: { file: finalDir },
            hint: 'choose an empty or new --out folder',
          },
        );
      }
    }
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  const old = tempSibling(finalDir);
  let moved = false;
  try {
    await rename(finalDir, old);
    moved = true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await rename(staging, finalDir);
  if (moved) await rm(old, { recursive: true, force: true });
}

/**
 * Builds a set of files in a temp sibling and moves them into `dir` only when `build` succeeds,
 * each by an atomic rename, `last` (a summary that says the set is whole) after the others.
 * Unlike replaceDirectoryAtomic it leaves everything else in `dir` alone: a folder that also holds
 * a user's later work (selections, paid predictions) keeps it.
 */
export async function replaceFilesAtomic(dir: string, build: (stagingDir: string) => Promise<void>, last?: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const staging = tempSibling(dir);
  await mkdir(staging, { recursive: true });
  try {
    await build(staging);
    // The old summary goes first: a kill midway leaves a set without one (incomplete, and seen to
    // be), never new tables under the old summary.
    if (last !== undefined) await rm(join(dir, last), { force: true });
    const names = (await readdir(staging)).sort((a, b) => Number(a === last) - Number(b === last) || a.localeCompare(b));
    for (const name of names) await rename(join(staging, name), join(dir, name));
    return names;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
