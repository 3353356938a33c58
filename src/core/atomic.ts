import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { PlensError } from './errors.js';
import { redact } from './redact.js';

/** A sibling temp path: same directory, so the final rename stays on one filesystem and is atomic. */
export function tempSibling(path: string): string {
  return join(dirname(path), `.${basename(path)}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
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
    const names = (await readdir(staging)).sort((a, b) => Number(a === last) - Number(b === last) || a.localeCompare(b));
    for (const name of names) await rename(join(staging, name), join(dir, name));
    return names;
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}
