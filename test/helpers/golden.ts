import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { repoRoot, runCli } from './cli.js';

/**
 * `plens tables --format csv` of a warehouse, compared byte for byte with a file committed under
 * test/expected/golden/. It pins the numbers through refactors: a change that moves any figure
 * fails here. PLENS_UPDATE_GOLDEN=1 rewrites the file (only for a deliberate, reviewed change).
 */
export async function expectTablesCsvGolden(db: string, name: string): Promise<void> {
  const r = await runCli(['tables', '--db', db, '--format', 'csv']);
  expect(r.code, r.stderr).toBe(0);
  const file = join(repoRoot, 'test', 'expected', 'golden', `${name}.csv`);
  if (process.env.PLENS_UPDATE_GOLDEN === '1' || !existsSync(file)) {
    if (process.env.CI || process.env.PLENS_UPDATE_GOLDEN !== '1') expect.fail(`${file} is missing; run with PLENS_UPDATE_GOLDEN=1 to write it`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, r.stdout);
    return;
  }
  const expected = readFileSync(file, 'utf8');
  if (r.stdout !== expected) {
    // The first differing line, so the failure says which table and figure moved.
    const got = r.stdout.split('\n');
    const want = expected.split('\n');
    const i = got.findIndex((line, k) => line !== want[k]);
    const table = [...got.slice(0, i + 1)].reverse().find((l) => l.startsWith('# ')) ?? '';
    expect.fail(`${name}: tables differ from ${file} at line ${i + 1} (${table}):\n  want: ${want[i]}\n  got:  ${got[i]}`);
  }
}
