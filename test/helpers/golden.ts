import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { repoRoot, runCliJson, tempDir } from './cli.js';

/**
 * Every table of a warehouse as CSV (`plens tables --format csv --out-dir`), one after another
 * under `# name` lines, then the missing ones as `(name: reason)`: compared byte for byte with a
 * file committed under test/expected/golden/. It pins the numbers through refactors: a change that
 * moves any figure fails here. PLENS_UPDATE_GOLDEN=1 rewrites the file (only for a deliberate,
 * reviewed change).
 */
export async function expectTablesCsvGolden(db: string, name: string): Promise<void> {
  const dir = tempDir('plens-golden-');
  const run = await runCliJson<{ tables: Array<{ name: string }>; missing: Array<{ name: string; reason: string }> }>([
    'tables',
    '--db',
    db,
    '--format',
    'csv',
    '--out-dir',
    dir,
  ]);
  expect(run.code, run.stderr).toBe(0);
  const body = run.json.tables.map((t) => `# ${t.name}\n${readFileSync(join(dir, `${t.name}.csv`), 'utf8').replace(/\n$/, '')}`).join('\n\n');
  const missing = run.json.missing.map((m) => `(${m.name}: ${m.reason})`).join('\n');
  const r = { stdout: `${missing ? `${body}\n\n${missing}` : body}\n` };
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
