import { readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { spawnCli, waitFor } from '../helpers/batch.js';
import { runCli, sampleDir, tempDir } from '../helpers/cli.js';

/*
 * A warehouse build killed with SIGKILL leaves its temp database (and WAL) beside the target; the
 * next build removes them. Another host's leftovers go only once they are hours old (a build there
 * may still be running), and a running process's are never touched.
 */
it('the next build removes what a SIGKILLed build left, and leaves what may still be in use', async () => {
  const root = tempDir('plens-killed-build-');
  const ws = join(root, 'out');
  const db = join(root, 'w.duckdb');
  expect((await runCli(['import', '--from', sampleDir, '-w', ws, '-q'])).code).toBe(0);
  const temps = () => readdirSync(root).filter((f) => f.startsWith('.w.duckdb.tmp-'));

  // Killed while it writes its temp database (Table 10 keeps it busy for a while).
  const run = spawnCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'laps'], {});
  await waitFor('the build to start writing', () => temps().length > 0);
  run.child.kill('SIGKILL');
  expect(await run.exit).toBe(-1);
  const left = temps();
  expect(left.length).toBeGreaterThan(0);

  // Another host's files: one a build may still be writing, one a day old.
  const fresh = '.w.duckdb.tmp-abcdef-4242-0011aabb';
  const old = '.w.duckdb.tmp-abcdef-4243-2233ccdd';
  writeFileSync(join(root, fresh), 'x');
  writeFileSync(join(root, old), 'x');
  utimesSync(join(root, old), new Date(Date.now() - 86_400_000), new Date(Date.now() - 86_400_000));

  expect((await runCli(['warehouse', '-w', ws, '--db', db])).code).toBe(0);
  expect(temps()).toEqual([fresh]);
  expect(readdirSync(root)).toContain('w.duckdb');
});
