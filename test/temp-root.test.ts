import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { expect, inject, test } from 'vitest';

// What a test or a CLI it spawns makes in the temporary folder goes into the run's own folder, which
// the global setup removes when the run ends (test/temp-root.ts).
test("temporary files of tests and of the processes they spawn go under the run's folder", () => {
  const root = inject('tempRoot');
  expect(root).toMatch(/plens-test-run-/);
  expect(tmpdir()).toBe(root);
  const child = execFileSync(process.execPath, ['-e', 'process.stdout.write(require("node:os").tmpdir())'], { encoding: 'utf8' });
  expect(child).toBe(root);
});
