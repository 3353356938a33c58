import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
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
 */
export async function replaceDirectoryAtomic(finalDir: string, build: (stagingDir: string) => Promise<void>): Promise<void> {
  await mkdir(dirname(finalDir), { recursive: true });
  const staging = tempSibling(finalDir);
  await mkdir(staging, { recursive: true });
  try {
    await build(staging);
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
