import { copyFileSync, cpSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/core/workspace.js';
import { Database } from '../../src/db/database.js';
import { buildWarehouse, type WarehouseOptions } from '../../src/warehouse/build.js';
import { stepCacheDir } from '../../src/warehouse/step-cache.js';
import { repoRoot, runCli, runCliJson, tempDir } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';
import { scenariosDir } from '../../src/benchmarks/personalens/dataset/workspace-files.js';

/**
 * A warehouse build with nothing changed since the last one (workspace Parquet, SQL files, plens
 * version, Table 10's protocols, the database file itself) has nothing to do, as make would say.
 */
describe('warehouse: a build with nothing changed is up to date', () => {
  let ws: string;
  let workspace: Workspace;
  const root = tempDir('plens-uptodate-');
  // The dataset file alone: what is under test is whether a build runs, not what the SQL makes.
  const sqlDir = join(root, 'sql');

  beforeAll(async () => {
    ws = await sampleWorkspace();
    workspace = new Workspace(ws);
    mkdirSync(sqlDir);
    copyFileSync(join(repoRoot, 'warehouse', 'personalens', '10_dataset.sql'), join(sqlDir, '10_dataset.sql'));
  });

  const build = (db: string, o: Partial<WarehouseOptions> = {}) => buildWarehouse({ workspace, dbPath: join(root, db), sqlDir, lexical: [], ...o });
  const stamp = (db: string) => {
    const st = statSync(join(root, db));
    return { ino: st.ino, mtime: st.mtimeMs, size: st.size };
  };

  it('leaves the database as it was and lists the same relations', async () => {
    const first = await build('a.duckdb');
    expect(first.up_to_date).toBe(false);
    expect(first.ran).toContain('10_dataset.sql');
    const before = stamp('a.duckdb');

    const second = await build('a.duckdb');
    expect(second.up_to_date).toBe(true);
    expect(second.ran).toEqual([]);
    expect(second.steps).toEqual([]);
    expect(second.relations).toEqual(first.relations);
    // Not rebuilt and renamed into place: the very same file.
    expect(stamp('a.duckdb')).toEqual(before);
  });

  it('rebuilds when a workspace Parquet file changes, or when forced', async () => {
    await build('b.duckdb');
    const scenarios = readdirSync(scenariosDir(workspace)).find((f) => f.endsWith('.parquet'))!;
    const later = new Date(Date.now() + 5_000);
    utimesSync(join(scenariosDir(workspace), scenarios), later, later);
    expect((await build('b.duckdb')).up_to_date).toBe(false);
    expect((await build('b.duckdb')).up_to_date).toBe(true);
    const forced = await build('b.duckdb', { force: true });
    expect(forced.up_to_date).toBe(false);
    expect(forced.ran).toContain('10_dataset.sql');
  });

  it('rebuilds for other Table 10 protocols or other SQL files', async () => {
    await build('c.duckdb');
    expect((await build('c.duckdb', { lexical: ['full'] })).up_to_date).toBe(false);
    expect((await build('c.duckdb', { lexical: ['full'] })).up_to_date).toBe(true);
    // The laps speaker groups matter only when laps runs.
    expect((await build('c.duckdb', { lexical: ['full'], lapsSpeakers: ['user'] })).up_to_date).toBe(true);
    expect((await build('c.duckdb', { lexical: ['laps'] })).up_to_date).toBe(false);
    expect((await build('c.duckdb', { lexical: ['laps'], lapsSpeakers: ['both'] })).up_to_date).toBe(true);
    expect((await build('c.duckdb', { lexical: ['laps'], lapsSpeakers: ['both', 'user'] })).up_to_date).toBe(false);
    expect((await build('c.duckdb', { lexical: ['laps'], lapsSpeakers: ['user', 'both'] })).up_to_date).toBe(true);

    const otherSql = join(root, 'sql-other');
    cpSync(sqlDir, otherSql, { recursive: true });
    await build('c.duckdb', { lexical: ['full'], sqlDir: otherSql });
    writeFileSync(join(otherSql, '99_extra.sql'), 'CREATE OR REPLACE VIEW extra AS SELECT 1 AS one;\n');
    const extra = await build('c.duckdb', { lexical: ['full'], sqlDir: otherSql });
    expect(extra.up_to_date).toBe(false);
    expect(extra.relations.map((r) => r.name)).toContain('extra');
  });

  it('rebuilds a database changed since its build', async () => {
    await build('d.duckdb');
    const db = await Database.open(join(root, 'd.duckdb'));
    await db.run('CREATE TABLE scribble AS SELECT 1 AS x');
    await db.close();
    const again = await build('d.duckdb');
    expect(again.up_to_date).toBe(false);
    expect(again.relations.map((r) => r.name)).not.toContain('scribble');
  });

  it("does not count the step cache's Parquet as an input when the database sits in the workspace", async () => {
    const inside = join(ws, 'w.duckdb');
    await buildWarehouse({ workspace, dbPath: inside, sqlDir, lexical: [] });
    const entry = join(stepCacheDir(inside), 'lexical_diversity-0');
    mkdirSync(entry, { recursive: true });
    writeFileSync(join(entry, 'lexical_diversity.parquet'), 'cached output');
    expect((await buildWarehouse({ workspace, dbPath: inside, sqlDir, lexical: [] })).up_to_date).toBe(true);
  });

  it('never skips without the step cache or on a dry run', async () => {
    await build('e.duckdb');
    expect((await build('e.duckdb', { stepCache: false })).up_to_date).toBe(false);
    const dry = await build('e.duckdb', { dryRun: true });
    expect(dry).toMatchObject({ up_to_date: false, dry_run: true });
  });

  it('--laps-speakers is part of what a build is made from; an unknown group is a usage error', async () => {
    const db = join(root, 'cli-laps.duckdb');
    const args = ['warehouse', '-w', ws, '--db', db, '--sql-dir', sqlDir, '--lexical', 'laps', '--json'];
    const upToDate = async (...extra: string[]) => (await runCliJson<{ up_to_date: boolean }>([...args, ...extra])).json.up_to_date;
    expect(await upToDate('--laps-speakers', 'both', 'user')).toBe(false);
    expect(await upToDate('--laps-speakers', 'user', 'both')).toBe(true);
    expect(await upToDate()).toBe(false); // the default: both alone
    expect(await upToDate('--laps-speakers', 'both')).toBe(true);
    const bad = await runCli([...args.slice(0, -1), '--laps-speakers', 'everyone']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/laps-speakers, Given: "everyone", Choices: "both", "user", "assistant"/);
  });

  it('says so on the command line; --force rebuilds', async () => {
    const db = join(root, 'cli.duckdb');
    const args = ['warehouse', '-w', ws, '--db', db, '--sql-dir', sqlDir, '--lexical', 'none'];
    expect((await runCliJson<{ up_to_date: boolean }>([...args, '--json'])).json.up_to_date).toBe(false);
    const again = await runCli(args);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain(`Warehouse ${db} is up to date`);
    expect(again.stdout).toContain('--force rebuilds it');
    const forced = await runCliJson<{ up_to_date: boolean; ran: string[] }>([...args, '--force', '--json']);
    expect(forced.json.up_to_date).toBe(false);
    expect(forced.json.ran).toContain('10_dataset.sql');
  });
});
