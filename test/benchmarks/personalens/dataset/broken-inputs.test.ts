import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, runCli, runCliJson, tempDir } from '../../../helpers/cli.js';

interface BrokenCase {
  case: string;
  defect: string;
  exit_code: number;
  code: string;
  file: string;
  pointer?: string;
  line?: number;
  message_includes?: string;
}

const corpus = join(repoRoot, 'test', 'fixtures', 'broken');
const cases = JSON.parse(readFileSync(join(corpus, 'cases.json'), 'utf8')) as BrokenCase[];

describe('plens import on broken inputs (test/fixtures/broken)', () => {
  it('the corpus base itself imports cleanly', async () => {
    const r = await runCliJson<{ ok: boolean; warnings: string[] }>(['import', '--from', join(corpus, '_valid', 'data'), '-w', join(tempDir(), 'ws')]);
    expect(r.code).toBe(0);
    expect(r.json.warnings).toEqual([]);
  });

  it('covers every case directory', () => {
    const dirs = readdirSync(corpus).filter((d) => !d.startsWith('_') && statSync(join(corpus, d)).isDirectory());
    expect(cases.map((c) => c.case).sort()).toEqual(dirs.sort());
  });

  it.each(cases.map((c) => [c.case, c] as const))('%s: a clear error naming the file, and nothing written', async (_name, c) => {
    const ws = join(tempDir(), 'ws');
    const r = await runCliJson<{ ok: boolean; error: { code: string; message: string; file: string; pointer?: string; line?: number } }>([
      'import',
      '--from',
      join(corpus, c.case, 'data'),
      '-w',
      ws,
    ]);
    expect(r.code, c.defect).toBe(c.exit_code);
    expect(r.json.ok).toBe(false);
    expect(r.json.error.code).toBe(c.code);
    expect(r.json.error.file).toBe(join(corpus, c.case, c.file));
    if (c.pointer !== undefined) expect(r.json.error.pointer).toBe(c.pointer);
    if (c.line !== undefined) expect(r.json.error.line).toBe(c.line);
    if (c.message_includes !== undefined) expect(r.json.error.message).toContain(c.message_includes);
    expect(existsSync(ws)).toBe(false);
  });

  it('a failed import leaves an earlier good import untouched', async () => {
    const ws = join(tempDir(), 'ws');
    expect((await runCli(['import', '--from', join(corpus, '_valid', 'data'), '-w', ws])).code).toBe(0);
    const manifest = readFileSync(join(ws, 'dataset', 'manifest.json'), 'utf8');
    const bad = await runCli(['import', '--from', join(corpus, 'unknown-task-id', 'data'), '-w', ws]);
    expect(bad.code).toBe(3);
    // Human-readable form: file#pointer and what is wrong, on stderr; stdout stays clean.
    expect(bad.stderr).toContain(
      `plens: error E_INPUT_REFERENCE: ${join(corpus, 'unknown-task-id', 'data', 'profile', 'user0', 'tasks.json')}#/Task 1/task_id: task_id "SD-Alarm-task-9" is not defined`,
    );
    expect(bad.stdout).toBe('');
    expect(readFileSync(join(ws, 'dataset', 'manifest.json'), 'utf8')).toBe(manifest);
    expect(readdirSync(ws)).toEqual(['dataset']);
  });

  it('an empty list preference is kept as one row with value NULL (not dropped, not counted as a value)', async () => {
    const root = tempDir();
    const src = join(corpus, '_valid', 'data');
    const data = join(root, 'data');
    // Copy the base and empty one list value.
    for (const rel of walk(src)) {
      mkdirSync(join(data, rel, '..'), { recursive: true });
      writeFileSync(join(data, rel), readFileSync(join(src, rel)));
    }
    const profileFile = join(data, 'profile', 'user0', 'profile.json');
    const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as { affinities: Record<string, Record<string, unknown>> };
    const [domain, prefs] = Object.entries(profile.affinities).find(([, p]) => Object.values(p).some(Array.isArray))!;
    const type = Object.keys(prefs).find((k) => Array.isArray(prefs[k]))!;
    prefs[type] = [];
    writeFileSync(profileFile, JSON.stringify(profile));
    const ws = join(root, 'ws');
    expect((await runCli(['import', '--from', data, '-w', ws])).code).toBe(0);
    const db = join(root, 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db])).code).toBe(0);
    const rows = (
      await runCliJson<unknown[]>([
        'sql',
        `select value, position, is_list from affinities where domain = '${domain}' and preference_type = '${type}'`,
        '--db',
        db,
      ])
    ).json;
    expect(rows).toEqual([{ value: null, position: null, is_list: true }]);
  });
});

function walk(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(dir, join(prefix, e.name)) : [join(prefix, e.name)]));
}
