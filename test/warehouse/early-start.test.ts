import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { warehouseSqlFile } from '../helpers/warehouse-sql.js';
import { runImport } from '../../src/benchmarks/personalens/dataset/import.js';
import { Workspace } from '../../src/core/workspace.js';
import { Database } from '../../src/db/database.js';
import { buildWarehouse } from '../../src/warehouse/build.js';
import { sampleDir, tempDir } from '../helpers/cli.js';

/**
 * Table 10's step starts on a second connection as soon as turns and dialogues exist, beside the files
 * before 90_table10.sql: the same rows as a build that runs it in place; a failure in it, or in a file
 * while it runs, fails the build with that error, leaves no temp database, and rejects nothing unhandled.
 */
describe('warehouse steps started early on a second connection', () => {
  const root = tempDir();
  const workspace = new Workspace(join(root, 'out'));
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  /** A SQL folder: the lexical macros, the dataset, hand-written dialogues, `extra` files, Table 10. */
  function sqlDir(name: string, turnsSql: string, extra: Record<string, string> = {}): string {
    const dir = join(root, name);
    mkdirSync(dir);
    for (const f of ['02_lexical.sql', '10_dataset.sql', '90_table10.sql']) copyFileSync(warehouseSqlFile(f), join(dir, f));
    writeFileSync(join(dir, '50_dialogues.sql'), turnsSql);
    for (const [file, sql] of Object.entries(extra)) writeFileSync(join(dir, file), sql);
    return dir;
  }

  const texts = [
    ['d1', 'SD', 0, 'user', 'Book me a table for two tonight please'],
    ['d1', 'SD', 1, 'assistant', 'Done, a table for two at eight'],
    ['d2', 'SD', 0, 'user', 'Find a flight to Lisbon on Friday morning'],
    ['d2', 'SD', 1, 'assistant', 'The 9:40 to Lisbon has seats left'],
    ['d3', 'MD', 0, 'user', 'Play some jazz and dim the lights'],
    ['d3', 'MD', 1, 'assistant', 'Now playing jazz; the lights are at thirty percent'],
  ];
  const values = texts.map(([d, k, t, sp, text]) => `('${d}', 's-${d}', '${k}', ${t}, '${sp}', '${text}')`).join(',\n  ');
  const goodTurns = `CREATE OR REPLACE TABLE turns AS SELECT dialogue_id, scenario_id, kind, turn, speaker, text, 'sim:default' AS assistant_model, 'base' AS setting, 'ok' AS status
  FROM (VALUES\n  ${values}) v(dialogue_id, scenario_id, kind, turn, speaker, text);
CREATE OR REPLACE TABLE dialogues AS SELECT DISTINCT dialogue_id, 0 AS replicate FROM turns;\n`;
  // Work for the main connection while the step runs beside it.
  const busy = { '60_busy.sql': `CREATE OR REPLACE TABLE busy AS SELECT count(DISTINCT hash(i)) AS n FROM range(2000000) t(i);\n` };

  async function rows(db: string, sql: string): Promise<unknown[]> {
    const d = await Database.open(join(root, db), { readOnly: true });
    try {
      return await d.all(sql);
    } finally {
      await d.close();
    }
  }

  /** Nothing of a failed build is left beside the target: no temp database, WAL or spill folder. */
  function leftovers(db: string): string[] {
    return readdirSync(root).filter((f) => f.startsWith(db) && f !== db);
  }

  beforeAll(async () => {
    await runImport({ from: sampleDir, workspace });
    process.on('unhandledRejection', onUnhandled);
  });
  afterAll(() => {
    process.off('unhandledRejection', onUnhandled);
  });

  it('gives the same Table 10 as running the step in place, and says it ran beside the build', async () => {
    const dir = sqlDir('same', goodTurns, busy);
    const early = await buildWarehouse({ workspace, dbPath: join(root, 'early.duckdb'), sqlDir: dir, stepCache: false });
    const inPlace = await buildWarehouse({ workspace, dbPath: join(root, 'inplace.duckdb'), sqlDir: dir, stepCache: false, earlySteps: false });
    expect(early.steps).toEqual([expect.objectContaining({ step: 'lexical_diversity', status: 'uncached', early: true })]);
    expect(inPlace.steps[0]!.early).toBeUndefined();
    const table10 = 'SELECT * FROM table10 ORDER BY ALL';
    const want = await rows('inplace.duckdb', table10);
    expect(want).toHaveLength(8); // 2 kinds x (3 speaker groups full + both laps)
    expect(await rows('early.duckdb', table10)).toEqual(want);
    // The build's other tables are there too, and the step's temp objects are not.
    expect(await rows('early.duckdb', `SELECT table_name FROM information_schema.tables WHERE table_name IN ('busy', 'lexical_diversity') ORDER BY 1`)).toEqual(
      [{ table_name: 'busy' }, { table_name: 'lexical_diversity' }],
    );
    expect(await rows('early.duckdb', `SELECT type_name FROM duckdb_types() WHERE type_name LIKE 'lexical%'`)).toEqual([]);
  });

  it('a failure in the early step fails the build with its error, cleanly', async () => {
    // turns without a text column: the step's first query fails while 60_busy.sql runs on the main connection.
    const dir = sqlDir('step-fails', goodTurns.replace(' speaker, text,', ' speaker,'), busy);
    await expect(buildWarehouse({ workspace, dbPath: join(root, 'stepfail.duckdb'), sqlDir: dir })).rejects.toMatchObject({
      code: 'E_SQL',
      message: expect.stringMatching(/text/),
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unhandled).toEqual([]);
    expect(leftovers('stepfail.duckdb')).toEqual([]);
  });

  it('a failing file while the step runs fails the build with the file’s error; the step is stopped and settled', async () => {
    const dir = sqlDir('file-fails', goodTurns, { '60_broken.sql': 'SELEC nothing FROM nowhere;\n' });
    const failed = buildWarehouse({ workspace, dbPath: join(root, 'filefail.duckdb'), sqlDir: dir, stepCache: false });
    await expect(failed).rejects.toMatchObject({ code: 'E_SQL', location: { file: join(dir, '60_broken.sql') } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(unhandled).toEqual([]);
    expect(leftovers('filefail.duckdb')).toEqual([]);
    // The folder builds once the file is fixed.
    rmSync(join(dir, '60_broken.sql'));
    const fixed = await buildWarehouse({ workspace, dbPath: join(root, 'filefail.duckdb'), sqlDir: dir, stepCache: false });
    expect(fixed.steps[0]).toMatchObject({ early: true });
  });
});
