import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { expectTablesCsvGolden } from '../helpers/golden.js';

// `npm run demo` end to end (about 2 minutes on 2 cores): the demo pipeline ends with the report's
// path, and a rerun does no work and says so. The environment moves its workspace and warehouse.
it('npm run demo = plens make all -p pipelines/demo.yaml: builds everything, then nothing to do', { timeout: 600_000 }, async () => {
  const dir = tempDir('plens-demo-');
  const env = { PLENS_WORKSPACE: join(dir, 'out'), PLENS_WAREHOUSE: join(dir, 'plens.duckdb') };
  const first = await runCli(['make', 'all', '-p', 'pipelines/demo.yaml', '--no-progress'], { env });
  expect(first.code, first.stderr).toBe(0);
  const report = /^report: (.+)$/m.exec(first.stdout)?.[1];
  expect(report).toBe(join(dir, 'out', 'report.html'));
  expect(existsSync(report!)).toBe(true);
  expect(first.stdout.trim().split('\n').at(-1)).toBe(`report: ${report}`);
  // A step that did work says how long it took.
  expect(first.stdout).toMatch(/^report {5}wrote .+ \(\d+ tables?, \d+ charts?\) \[\d+\.\d s\]$/m);
  // Every figure of the demo, pinned byte for byte (refactors must not move a number).
  await expectTablesCsvGolden(env.PLENS_WAREHOUSE, 'demo-tables');

  const again = await runCli(['demo', '--no-progress', '-w', env.PLENS_WORKSPACE, '--db', env.PLENS_WAREHOUSE]);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stdout).toContain('nothing to do: every target is up to date');
  expect(again.stdout).toContain(`report: ${report}`);
});
