import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli, runCliJson } from '../helpers/cli.js';
import { judgePartition } from '../helpers/batch.js';
import { simDialoguesWorkspace } from '../helpers/workspace.js';

/*
 * A bare `ok` line in a stage log ({"key", "try", "status": "ok"} and nothing else) was taken for
 * done work: the key was never run, and compaction made a row of NULLs of it. A line plens did not
 * write is refused when the log is read, with its file and line; the real line back, all is well.
 */
it('a foreign ok line is refused with its file and line, not taken for done work', async () => {
  const ws = await simDialoguesWorkspace();
  const args = ['judge', '-w', ws, '--judge', 'sim:default', '--dimensions', 'task_completion'];
  expect((await runCli(args)).code).toBe(0);
  const file = join(judgePartition(ws), 'records.jsonl');
  const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
  const real = lines[3]!;
  const key = (JSON.parse(real) as { key: string }).key;
  lines[3] = JSON.stringify({ key, try: 1, status: 'ok' });
  writeFileSync(file, `${lines.join('\n')}\n`);
  const r = await runCli(args);
  expect(r.code).toBe(3);
  expect(r.stderr).toContain(`${file}:4`);
  expect(r.stderr).toContain('an ok record without "dialogue_id"');
  lines[3] = real;
  writeFileSync(file, `${lines.join('\n')}\n`);
  const again = await runCliJson<{ planned: number; already_done: number }>(args);
  expect(again.code, again.stderr).toBe(0);
  expect(again.json).toMatchObject({ planned: 0, already_done: 49 });
});
