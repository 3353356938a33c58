import { cpSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, sampleDir, tempDir } from '../../../helpers/cli.js';

/*
 * An import of other data never replaces one that work was built on: `PLENS_WORKSPACE=<the
 * released data's workspace> plens make all -p pipelines/demo.yaml` once re-imported the 8-user
 * sample over the 1,500-user import before any guard ran. The check runs before the swap, so
 * nothing of the workspace is written.
 */
describe('plens import over an import that work was built on', () => {
  it('refuses other data (exit 4, nothing written), takes the same data again, and the demo pipeline cannot overwrite it', async () => {
    const ws = join(tempDir('plens-import-guard-'), 'ws');
    expect((await runCli(['import', '--from', sampleDir, '-w', ws, '-q'])).code).toBe(0);
    const manifest = join(ws, 'dataset', 'manifest.json');
    const before = readFileSync(manifest, 'utf8');
    const users = join(ws, 'dataset', 'users.parquet');
    const stamp = statSync(users).mtimeMs;
    // No work yet: another import may replace it; the same data again too.
    expect((await runCli(['import', '--from', sampleDir, '-w', ws, '-q'])).code).toBe(0);
    expect((await runCli(['scenarios', '-w', ws, '--users', '0-1', '-q'])).code).toBe(0);
    expect((await runCli(['dialogues', '-w', ws, '--assistant', 'sim:default', '--limit', '2', '-q'])).code).toBe(0);

    // Other data: the sample less one user.
    const other = join(tempDir('plens-import-other-'), 'data');
    cpSync(sampleDir, other, { recursive: true });
    rmSync(join(other, 'profile', 'user2'), { recursive: true });
    const refused = await runCli(['import', '--from', other, '-w', ws]);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/would replace the workspace's import of .*sample.*, on which .*dialogues was made; nothing was written/);
    expect(refused.stderr).toContain('-w DIR');
    const after = readFileSync(manifest, 'utf8');
    expect(JSON.parse(after).fingerprint).toBe(JSON.parse(before).fingerprint);

    // The demo pipeline pointed at this workspace (the documented variable) stops at its import step.
    const other2 = join(tempDir('plens-import-ws2-'), 'ws');
    expect((await runCli(['import', '--from', other, '-w', other2, '-q'])).code).toBe(0);
    expect((await runCli(['scenarios', '-w', other2, '-q'])).code).toBe(0);
    expect((await runCli(['dialogues', '-w', other2, '--assistant', 'sim:default', '--limit', '1', '-q'])).code).toBe(0);
    const users2 = readFileSync(join(other2, 'dataset', 'users.parquet'));
    const make = await runCli(['make', 'all', '-p', 'pipelines/demo.yaml'], { env: { PLENS_WORKSPACE: other2 } });
    expect(make.code).toBe(4);
    expect(make.stderr).toContain('nothing was written');
    expect(readFileSync(join(other2, 'dataset', 'users.parquet')).equals(users2)).toBe(true);

    // The same data is re-imported over the work as before.
    expect((await runCli(['import', '--from', sampleDir, '-w', ws, '-q'])).code).toBe(0);
    expect(statSync(users).mtimeMs).toBeGreaterThanOrEqual(stamp);
  });
});
