import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Every temporary file of one test run goes under one folder, removed when the run ends. Tests make
 * their folders with mkdtemp(tmpdir()) and most leave them, as do the CLIs they spawn: without
 * this, each `npm test` left ~0.5 GB in /tmp, and after some hundred runs a run (CI's) failed with
 * the disk full. os.tmpdir() reads TMPDIR on every call, and child processes inherit it.
 */
export function makeTempRoot(): { root: string; remove: () => void } {
  const before = process.env['TMPDIR'];
  const root = mkdtempSync(join(tmpdir(), 'plens-test-run-'));
  process.env['TMPDIR'] = root;
  return {
    root,
    remove: () => {
      if (before === undefined) delete process.env['TMPDIR'];
      else process.env['TMPDIR'] = before;
      rmSync(root, { recursive: true, force: true });
    },
  };
}
