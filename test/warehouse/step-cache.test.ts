import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { warehouseSqlFile } from '../helpers/warehouse-sql.js';
import { Workspace } from '../../src/core/workspace.js';
import { Database } from '../../src/db/database.js';
import { runImport } from '../../src/benchmarks/personalens/dataset/import.js';
import { buildWarehouse, formatWarehouseSummary, type WarehouseSummary } from '../../src/warehouse/build.js';
import { stepCacheDir } from '../../src/warehouse/step-cache.js';
import { sampleDir, tempDir } from '../helpers/cli.js';

/**
 * Table 10's step is cached by the fingerprint of its inputs: a warehouse built from the sample
 * import plus a small hand-written set of dialogues (a SQL file in place of 50_dialogues.sql), so
 * the laps protocol runs in well under a second.
 */
describe('warehouse step cache (Table 10)', () => {
  const root = tempDir();
  const workspace = new Workspace(join(root, 'out'));
  const sqlDir = join(root, 'sql');

  /** Three dialogues of two turns; `last` is the final assistant text, the input a test changes. */
  function writeDialogues(last: string): void {
    const rows = [
      ['d1', 's1', 'SD', 0, 'user', 'Book me a table for two tonight please'],
      ['d1', 's1', 'SD', 1, 'assistant', 'Done, a table for two at eight'],
      ['d2', 's2', 'SD', 0, 'user', 'Find a flight to Lisbon on Friday morning'],
      ['d2', 's2', 'SD', 1, 'assistant', 'The 9:40 to Lisbon has seats left'],
      ['d3', 's3', 'MD', 0, 'user', 'Play some jazz and dim the lights'],
      ['d3', 's3', 'MD', 1, 'assistant', last],
    ];
    const values = rows.map(([d, s, k, t, sp, text]) => `('${d}', '${s}', '${k}', ${t}, '${sp}', '${String(text).replace(/'/g, "''")}')`).join(',\n  ');
    writeFileSync(
      join(sqlDir, '50_dialogues.sql'),
      `CREATE OR REPLACE TABLE turns AS SELECT dialogue_id, scenario_id, kind, turn, speaker, text, 'sim:default' AS assistant_model, 'base' AS setting, 'ok' AS status
  FROM (VALUES\n  ${values}) v(dialogue_id, scenario_id, kind, turn, speaker, text);
CREATE OR REPLACE TABLE dialogues AS SELECT DISTINCT dialogue_id, 0 AS replicate FROM turns;\n`,
    );
  }

  /** The cache's step entries (the folder also keeps the build record, build.json). */
  const entries = (db: string) => readdirSync(stepCacheDir(join(root, db))).filter((n) => n.startsWith('lexical_diversity-'));

  async function build(db: string, options: { stepCache?: boolean; force?: boolean } = {}): Promise<WarehouseSummary> {
    return buildWarehouse({ workspace, dbPath: join(root, db), sqlDir, ...options });
  }

  async function table10(db: string): Promise<unknown[]> {
    const d = await Database.open(join(root, db), { readOnly: true });
    try {
      return await d.all('SELECT * FROM table10 ORDER BY ALL');
    } finally {
      d.close();
    }
  }

  beforeAll(async () => {
    await runImport({ from: sampleDir, workspace });
    mkdirSync(sqlDir);
    for (const f of ['02_lexical.sql', '10_dataset.sql', '90_table10.sql']) copyFileSync(warehouseSqlFile(f), join(sqlDir, f));
  });

  afterEach(() => writeDialogues('Now playing jazz; the lights are at thirty percent'));

  it('computes Table 10 once, reuses it while the inputs are unchanged, with identical results', async () => {
    writeDialogues('Now playing jazz; the lights are at thirty percent');
    const first = await build('w.duckdb');
    expect(first.steps).toEqual([expect.objectContaining({ step: 'lexical_diversity', status: 'computed' })]);
    const computed = await table10('w.duckdb');
    expect(computed).toHaveLength(8); // 2 kinds x (3 speaker groups full + both laps)
    expect(entries('w.duckdb')).toEqual([`lexical_diversity-${first.steps[0]!.fingerprint}`]);

    // Forced: with nothing changed, a build would otherwise have nothing to do (up-to-date.test.ts).
    const second = await build('w.duckdb', { force: true });
    expect(second.steps).toEqual([expect.objectContaining({ step: 'lexical_diversity', status: 'reused', fingerprint: first.steps[0]!.fingerprint })]);
    expect(await table10('w.duckdb')).toEqual(computed);

    // Without the cache the step runs again, and gives the same rows as the reused ones.
    const fresh = await build('nocache.duckdb', { stepCache: false });
    expect(fresh.steps).toEqual([expect.objectContaining({ status: 'uncached', fingerprint: null })]);
    expect(existsSync(stepCacheDir(join(root, 'nocache.duckdb')))).toBe(false);
    expect(await table10('nocache.duckdb')).toEqual(computed);
  });

  it('recomputes for other laps speaker groups, and reuses each choice in any order', async () => {
    writeDialogues('Now playing jazz; the lights are at thirty percent');
    const both = await build('s.duckdb');
    expect(both.steps[0]!.settings).toEqual({ lexical: ['full', 'laps'], laps_speakers: ['both'] });
    const every = await build('s.duckdb', { lapsSpeakers: ['both', 'user', 'assistant'] });
    // The summary says what Table 10 was computed with.
    expect(formatWarehouseSummary(every)).toMatch(
      /step {5}lexical_diversity: computed in \d+\.\d s \(beside the build\); lexical full, laps; laps_speakers both, user, assistant\n/,
    );
    expect(every.steps[0]).toMatchObject({ status: 'computed' });
    expect(every.steps[0]!.fingerprint).not.toBe(both.steps[0]!.fingerprint);
    expect(await table10('s.duckdb')).toHaveLength(12); // 2 kinds x 3 speaker groups x 2 protocols
    const again = await build('s.duckdb', { lapsSpeakers: ['assistant', 'user', 'both', 'user'], force: true });
    expect(again.steps[0]).toMatchObject({ status: 'reused', fingerprint: every.steps[0]!.fingerprint });
  });

  it('recomputes when an utterance changes, and keeps only the latest entry', async () => {
    writeDialogues('Now playing jazz; the lights are at thirty percent');
    const before = await build('x.duckdb');
    const rowsBefore = await table10('x.duckdb');
    writeDialogues('Jazz is on and the lights are dimmed');
    const after = await build('x.duckdb');
    expect(after.steps[0]).toMatchObject({ status: 'computed' });
    expect(after.steps[0]!.fingerprint).not.toBe(before.steps[0]!.fingerprint);
    const rowsAfter = await table10('x.duckdb');
    expect(rowsAfter).not.toEqual(rowsBefore);
    expect(entries('x.duckdb')).toEqual([`lexical_diversity-${after.steps[0]!.fingerprint}`]);
    // The recomputed rows are those of a build that never saw the old inputs.
    await build('y.duckdb', { stepCache: false });
    expect(rowsAfter).toEqual(await table10('y.duckdb'));
  });

  it('a damaged cache entry is recomputed, not an error', async () => {
    writeDialogues('Now playing jazz; the lights are at thirty percent');
    const first = await build('z.duckdb');
    const entry = join(stepCacheDir(join(root, 'z.duckdb')), `lexical_diversity-${first.steps[0]!.fingerprint}`);
    writeFileSync(join(entry, 'lexical_diversity.parquet'), 'not parquet');
    const again = await build('z.duckdb', { force: true });
    expect(again.steps[0]).toMatchObject({ status: 'computed', fingerprint: first.steps[0]!.fingerprint });
    expect(await table10('z.duckdb')).toEqual(await table10('w.duckdb'));
  });
});

describe('DuckDB memory limit', () => {
  const saved = process.env['PLENS_MEMORY_LIMIT'];
  afterEach(() => {
    if (saved === undefined) delete process.env['PLENS_MEMORY_LIMIT'];
    else process.env['PLENS_MEMORY_LIMIT'] = saved;
  });

  async function limit(options: { memoryLimit?: string } = {}): Promise<string> {
    const db = await Database.open(':memory:', options);
    try {
      return (await db.all<{ m: string }>(`SELECT current_setting('memory_limit') AS m`))[0]!.m;
    } finally {
      db.close();
    }
  }

  it('is 1GB unless PLENS_MEMORY_LIMIT or the caller raises it', async () => {
    delete process.env['PLENS_MEMORY_LIMIT'];
    // DuckDB prints limits in binary units: 1GB = 10^9 bytes = 953.6 MiB.
    expect(await limit()).toBe('953.6 MiB');
    process.env['PLENS_MEMORY_LIMIT'] = '2GB';
    expect(await limit()).toBe('1.8 GiB');
    expect(await limit({ memoryLimit: '256MB' })).toBe('244.1 MiB');
  });

  it('gives every database a spill folder of its own under the temp folder', async () => {
    const dbs = [await Database.open(':memory:'), await Database.open(':memory:')];
    try {
      const dirs = await Promise.all(dbs.map(async (d) => (await d.all<{ t: string }>(`SELECT current_setting('temp_directory') AS t`))[0]!.t));
      expect(dirs[0]).toMatch(/plens-duckdb-\d+-\d+$/);
      expect(dirs[1]).not.toBe(dirs[0]);
    } finally {
      for (const d of dbs) d.close();
    }
  });
});
