import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { repoRoot } from '../helpers/cli.js';

const sql = (name: string) => readFileSync(join(repoRoot, 'warehouse', name), 'utf8');

/** A real DuckDB file over real Parquet fixtures in the stages' layout. */
async function warehouseFor(withPersona: boolean): Promise<Database> {
  const ws = mkdtempSync(join(tmpdir(), 'plens-persona-'));
  const db = await Database.open(join(ws, 'w.duckdb'));
  await db.run('SET VARIABLE workspace = $1', undefined, [ws]);
  if (withPersona) {
    mkdirSync(join(ws, 'persona/scores'), { recursive: true });
    mkdirSync(join(ws, 'persona/predictions/m1'), { recursive: true });
    await db.run(`COPY (SELECT * FROM (VALUES
      ('m1','3.1','P-Conv','paper','strict',NULL,NULL,'accuracy',0.75,4,3,1,0),
      ('m1','3.1','NP-Conv','paper','strict',NULL,NULL,'accuracy',0.5,4,4,0,0),
      ('m1','3.1','P-Conv','paper','strict','r/a',NULL,'accuracy',1.0,2,2,0,0),
      ('m1','3.3','P-Conv','paper','strict',NULL,'best-of-n','rouge1',0.25,4,4,0,0)
    ) t(model,task,setting,fidelity,parser,subreddit,mode,metric,value,n_total,n_scored,n_unparsed,n_failed))
    TO '${ws}/persona/scores/metrics.parquet' (FORMAT parquet)`);
    await db.run(`COPY (SELECT * FROM (VALUES
      ('k1',1,'failed','3.1','P-Conv','m1','strict','paper'),
      ('k1',2,'ok','3.1','P-Conv','m1','strict','paper'),
      ('k2',1,'parse_error','3.1','P-Conv','m1','strict','paper'),
      ('k3',1,'failed','3.1','P-Conv','m1','strict','paper'),
      ('k4',1,'ok','3.1','NP-Conv','m1','strict','paper')
    ) t("key",try,status,task,setting,model,parser,fidelity))
    TO '${ws}/persona/predictions/m1/predictions.parquet' (FORMAT parquet)`);
    await db.run(sql('80_persona_load.sql'));
    await db.run(sql('81_persona_predictions.sql'));
  }
  await db.run(sql('82_persona_views.sql'));
  return db;
}

describe('PERSONA-bench warehouse views', () => {
  let db: Database;
  beforeAll(async () => {
    db = await warehouseFor(true);
  });
  afterAll(() => db.close());

  it('persona_results presents the overall metrics with scored M of N', async () => {
    const rows = await db.all<{ setting: string; value: number; scored: string }>(
      `SELECT setting, value, scored FROM persona_results WHERE task = '3.1' ORDER BY setting`,
    );
    expect(rows).toEqual([
      { setting: 'NP-Conv', value: 0.5, scored: '4 of 4' },
      { setting: 'P-Conv', value: 0.75, scored: '3 of 4' },
    ]);
    expect((await db.all(`SELECT * FROM persona_results`)).length).toBe(3);
  });

  it('persona_results_by_subreddit holds only the per-subreddit rows', async () => {
    const rows = await db.all<{ subreddit: string; value: number }>(`SELECT subreddit, value FROM persona_results_by_subreddit`);
    expect(rows).toEqual([{ subreddit: 'r/a', value: 1 }]);
  });

  it('persona_prediction_status counts each request once, by its last try', async () => {
    const rows = await db.all<{ setting: string; ok: number; unparsed: number; failed: number; total: number }>(
      `SELECT setting, ok::INT AS ok, unparsed::INT AS unparsed, failed::INT AS failed, total::INT AS total FROM persona_prediction_status ORDER BY setting`,
    );
    // k1 failed then succeeded (ok), k2 unparsed, k3 failed; NP-Conv: k4 ok.
    expect(rows).toEqual([
      { setting: 'NP-Conv', ok: 1, unparsed: 0, failed: 0, total: 1 },
      { setting: 'P-Conv', ok: 1, unparsed: 1, failed: 1, total: 3 },
    ]);
  });

  it('a workspace without PERSONA-bench outputs still has the views, empty', async () => {
    const empty = await warehouseFor(false);
    try {
      for (const v of ['persona_results', 'persona_results_by_subreddit', 'persona_prediction_status'])
        expect(await empty.all(`SELECT * FROM ${v}`)).toEqual([]);
    } finally {
      empty.close();
    }
  });
});
