import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { validatorFor } from '../../../../src/core/validator.js';
import { Database } from '../../../../src/db/database.js';
import { runCli, runCliJson, sampleDir, tempDir } from '../../../helpers/cli.js';
import { expectDatasetTablesMatch } from '../../../helpers/dataset-tables.js';
import { loadExpected } from '../../../helpers/expected.js';

const expected = loadExpected('sample');

describe('the bundled sample through import -> scenarios -> warehouse -> tables', () => {
  const root = tempDir();
  const ws = join(root, 'out');
  const db = join(root, 'plens.duckdb');

  beforeAll(async () => {
    const imported = await runCli(['import', '--from', sampleDir, '-w', ws]);
    expect(imported.code, imported.stderr).toBe(0);
    const selected = await runCli(['scenarios', '--kind', 'all', '-w', ws]);
    expect(selected.code, selected.stderr).toBe(0);
    const built = await runCli(['warehouse', '-w', ws, '--db', db]);
    expect(built.code, built.stderr).toBe(0);
  });

  it('writes one Parquet file per dataset table and a manifest, with the oracle counts', async () => {
    expect(readdirSync(join(ws, 'dataset')).sort()).toEqual(
      ['affinities', 'domains', 'interactions', 'interests', 'manifest', 'preference_schema', 'scenario_pool', 'tasks', 'users']
        .map((n) => (n === 'manifest' ? 'manifest.json' : `${n}.parquet`))
        .sort(),
    );
    const duck = await Database.open(':memory:');
    try {
      const count = async (table: string, where = 'true') =>
        (await duck.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM read_parquet('${join(ws, 'dataset', table)}.parquet') WHERE ${where}`))[0]!.n;
      expect(await count('users')).toBe(expected.counts['users']);
      expect(await count('tasks')).toBe(expected.counts['tasks']);
      expect(await count('tasks', "kind = 'MD'")).toBe(expected.counts['md_tasks']);
      expect(await count('scenario_pool')).toBe(expected.counts['scenarios']);
      expect(await count('scenario_pool', "kind = 'SD'")).toBe(expected.counts['sd_scenarios']);
      expect(await count('interests')).toBe(expected.counts['interests_rows']);
      expect(await count('interests', 'NOT interested')).toBe(expected.counts['masked_interests']);
      expect(await count('interactions')).toBe(expected.counts['interactions_rows']);
      expect(await count('affinities', 'value IS NOT NULL')).toBe(expected.counts['affinity_mentions']);
    } finally {
      duck.close();
    }
  });

  // The import builds scenario rows from upstream files its schemas have checked, so it does not check
  // each row again; this holds it to the scenario schema, row by row.
  it('writes scenario rows that the scenario schema accepts, every one', async () => {
    const duck = await Database.open(':memory:');
    try {
      const rows = await duck.all<Record<string, unknown>>(`SELECT * FROM read_parquet('${join(ws, 'dataset', 'scenario_pool')}.parquet')`);
      expect(rows).toHaveLength(expected.counts['scenarios']!);
      const validate = validatorFor('plens:scenario');
      for (const row of rows) expect(validate(row), `${row['scenario_id']}: ${JSON.stringify(validate.errors)}`).toBe(true);
      // ... and the check is a real one: a row with a malformed id fails it.
      expect(validate({ ...rows[0], scenario_id: 'user5-MD-task-4' })).toBe(false);
    } finally {
      duck.close();
    }
  });

  it('reports the normalised "Buses**" key with its file and pointer', async () => {
    const r = await runCliJson<{
      normalisations: Array<{ file: string; pointer: string; from: string; to: string }>;
      fingerprint: string;
      tables: Record<string, { rows: number }>;
    }>(['import', '--from', sampleDir, '-w', join(root, 'again'), '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.json.normalisations).toEqual([
      { file: join(sampleDir, 'profile', 'user5', 'profile.json'), pointer: '/interests/Buses**', from: 'Buses**', to: 'Buses' },
    ]);
    expect(expected.normalisations).toEqual([{ user_id: 'user5', field: 'interests', from: 'Buses**', to: 'Buses' }]);
    // a dry run writes nothing, and counts and identifies the data as the import did
    expect(existsSync(join(root, 'again'))).toBe(false);
    const manifest = JSON.parse(readFileSync(join(ws, 'dataset', 'manifest.json'), 'utf8')) as {
      fingerprint: string;
      tables: Record<string, { rows: number }>;
    };
    expect(r.json.fingerprint).toBe(manifest.fingerprint);
    expect(Object.fromEntries(Object.entries(r.json.tables).map(([k, v]) => [k, v.rows]))).toEqual(
      Object.fromEntries(Object.entries(manifest.tables).map(([k, v]) => [k, v.rows])),
    );
    expect(manifest.tables['scenario_pool']!.rows).toBe(expected.counts['scenarios']);
  });

  it('gives scenario ids as <user>:<task> and keeps the situational context', async () => {
    const r = await runCliJson<unknown[]>([
      'sql',
      "select scenario_id, kind, location, relevant_domains from scenarios where scenario_id = 'user5:MD-task-4'",
      '--db',
      db,
    ]);
    expect(r.json).toHaveLength(1);
    expect(r.json[0]).toMatchObject({ scenario_id: 'user5:MD-task-4', kind: 'MD' });
    expect((r.json[0] as { relevant_domains: string[] }).relevant_domains).toContain('Buses');
  });

  it('builds table1, table6_7 and table8_9 equal to the independent oracle', async () => {
    const q = async (view: string) => (await runCliJson<Record<string, unknown>[]>(['sql', `select * from ${view}`, '--db', db])).json;
    expectDatasetTablesMatch({ table1: await q('table1'), table6_7: await q('table6_7'), table8_9: await q('table8_9') }, expected);
  });

  it('renders every table as Markdown, CSV, LaTeX and JSON files', async () => {
    for (const format of ['md', 'csv', 'tex', 'json'] as const) {
      const dir = join(root, `tables-${format}`);
      const r = await runCli(['tables', '--db', db, '--format', format, '--out-dir', dir]);
      expect(r.code, r.stderr).toBe(0);
      expect(readdirSync(dir).sort()).toEqual([`table1.${format}`, `table6_7.${format}`, `table8_9.${format}`]);
    }
  });
});
