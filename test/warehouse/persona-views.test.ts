import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { warehouseSqlFile } from '../helpers/warehouse-sql.js';
import { tableCatalog } from '../../src/registry/registry.js';
import { Database } from '../../src/db/database.js';
import { renderTable } from '../../src/tables/render.js';
import { collectTables } from '../../src/tables/tables.js';

const sql = (name: string) => readFileSync(warehouseSqlFile(name), 'utf8');

let lastDbPath = '';

/** A real DuckDB file over real Parquet fixtures in the stages' layout. */
async function warehouseFor(withPersona: boolean): Promise<Database> {
  const ws = mkdtempSync(join(tmpdir(), 'plens-persona-'));
  lastDbPath = join(ws, 'w.duckdb');
  const db = await Database.open(lastDbPath);
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
    await db.run(`COPY (SELECT 'x' AS sample_id, NULL::DOUBLE AS rouge1 LIMIT 0) TO '${ws}/persona/scores/sample_scores.parquet' (FORMAT parquet)`);
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

describe('persona_setting_comparison (paired on the same sample, clustered by user)', () => {
  let db: Database;
  beforeAll(async () => {
    const ws = mkdtempSync(join(tmpdir(), 'plens-persona-pair-'));
    mkdirSync(join(ws, 'persona/scores'), { recursive: true });
    mkdirSync(join(ws, 'persona/predictions/m1'), { recursive: true });
    db = await Database.open(join(ws, 'w.duckdb'));
    await db.run('SET VARIABLE workspace = $1', undefined, [ws]);
    for (const f of ['00_macros.sql', '03_significance.sql']) await db.run(sql(f));
    await db.run(`COPY (SELECT * FROM (VALUES ('m1','3.1','P-Conv','paper','strict',NULL,NULL,'accuracy',0.5,1,1,0,0))
      t(model,task,setting,fidelity,parser,subreddit,mode,metric,value,n_total,n_scored,n_unparsed,n_failed)) TO '${ws}/persona/scores/metrics.parquet' (FORMAT parquet)`);
    // 3.1 correctness, P-Conv vs NP-Conv. Differences per sample: u1 s1 1, s2 1; u2 s3 0, s4 0;
    // u3 s5 1, s6 0: mean 3/6 = 0.5. s7 has no NP-Conv partner; s8's NP-Conv reply did not parse.
    const rows: string[] = [];
    const add = (key: string, status: string, setting: string, sample: string, user: string, truth: string, pred: string) =>
      rows.push(`('${key}',1,'${status}','3.1','${setting}','m1','strict','paper','${sample}','${user}','${truth}','${pred}')`);
    const p = [1, 1, 0, 0, 1, 0];
    const np = [0, 0, 0, 0, 0, 0];
    ['u1', 'u1', 'u2', 'u2', 'u3', 'u3'].forEach((u, i) => {
      add(`p${i}`, 'ok', 'P-Conv', `s${i + 1}`, u, 'positive', p[i] ? 'positive' : 'negative');
      add(`n${i}`, 'ok', 'NP-Conv', `s${i + 1}`, u, 'positive', np[i] ? 'positive' : 'negative');
    });
    add('p7', 'ok', 'P-Conv', 's7', 'u1', 'positive', 'positive');
    add('p8', 'ok', 'P-Conv', 's8', 'u1', 'positive', 'positive');
    add('n8', 'parse_error', 'NP-Conv', 's8', 'u1', 'positive', 'positive');
    // No target ids here: pairs fall back to sample_id (the real stage's ids are paired in test/make/persona-make.test.ts).
    await db.run(`COPY (SELECT *, NULL::DOUBLE AS true_number, NULL::DOUBLE AS predicted_number, NULL::VARCHAR AS target_reply_id FROM (VALUES ${rows.join(',')})
      t("key",try,status,task,setting,model,parser,fidelity,sample_id,"user",true_label,predicted))
      TO '${ws}/persona/predictions/m1/predictions.parquet' (FORMAT parquet)`);
    // 3.3 rouge1 with two replicates. best-of-n: g1 0.6 - 0.3 = 0.3, g2 0.5 - 0.5 = 0: mean 0.15.
    // single-sample (replicate 1): g1 0.2 - 0.1 = 0.1, g2 0.5 - 0.5 = 0: mean 0.05.
    await db.run(`COPY (SELECT sample_id || setting || replicate AS "key", sample_id, '3.3' AS task, setting, 'm1' AS model,
        'paper' AS fidelity, replicate, 'r/a' AS subreddit, "user", rouge1, NULL::DOUBLE AS rouge_l, NULL::DOUBLE AS bleu,
        NULL::DOUBLE AS meteor, NULL::DOUBLE AS sbert
      FROM (VALUES
        ('g1','P-Conv',1,'u1',0.2),('g1','P-Conv',2,'u1',0.6),('g1','NP-Conv',1,'u1',0.1),('g1','NP-Conv',2,'u1',0.3),
        ('g2','P-Conv',1,'u2',0.5),('g2','P-Conv',2,'u2',0.4),('g2','NP-Conv',1,'u2',0.5),('g2','NP-Conv',2,'u2',0.1)
      ) t(sample_id,setting,replicate,"user",rouge1)) TO '${ws}/persona/scores/sample_scores.parquet' (FORMAT parquet)`);
    for (const f of ['80_persona_load.sql', '81_persona_predictions.sql', '82_persona_views.sql', '83_persona_setting_comparison.sql']) await db.run(sql(f));
  });
  afterAll(() => db.close());

  const cell = async (task: string, metric: string) =>
    db.all<{ mode: string | null; setting_a: string; setting_b: string; n_pairs: number; n_users: number; mean_difference: number; lo: number; hi: number }>(
      `SELECT mode, setting_a, setting_b, n_pairs::INT AS n_pairs, n_users::INT AS n_users, mean_difference, lo, hi
       FROM persona_setting_comparison WHERE task = $1 AND metric = $2 ORDER BY mode`,
      undefined,
      [task, metric],
    );

  it('classification: the paired difference in correctness, its interval bracketing the mean, same twice', async () => {
    const [r] = await cell('3.1', 'correct');
    expect(r).toMatchObject({ mode: null, setting_a: 'P-Conv', setting_b: 'NP-Conv', n_pairs: 6, n_users: 3 });
    expect(r!.mean_difference).toBeCloseTo(0.5, 12);
    expect(r!.lo).toBeLessThan(0.5);
    expect(r!.hi).toBeGreaterThan(0.5);
    // Cluster means lie in [0, 1] (u2 0, u3 0.5, u1 1), so every resample does too.
    expect(r!.lo).toBeGreaterThanOrEqual(0);
    expect(r!.hi).toBeLessThanOrEqual(1);
    const [again] = await cell('3.1', 'correct');
    expect(again).toEqual(r);
  });

  it('generation: best-of-n and single-sample per-sample differences', async () => {
    const rows = await cell('3.3', 'rouge1');
    expect(rows.map((r) => [r.mode, r.n_pairs, r.n_users])).toEqual([
      ['best-of-n', 2, 2],
      ['single-sample', 2, 2],
    ]);
    expect(rows[0]!.mean_difference).toBeCloseTo(0.15, 12);
    expect(rows[1]!.mean_difference).toBeCloseTo(0.05, 12);
    expect(await cell('3.3', 'bleu')).toEqual([]);
  });
});

describe('plens tables renders the PERSONA-bench views', () => {
  it('renders persona_results from a built warehouse and lists the views as missing when empty', async () => {
    (await warehouseFor(true)).close();
    const full = await collectTables({ catalog: tableCatalog(), dbPath: lastDbPath, format: 'csv', only: ['persona_results', 'persona_prediction_status'] });
    const results = full.tables.find((t) => t.name === 'persona_results')!;
    const csv = renderTable(results, 'csv');
    expect(csv.split('\n')[0]).toContain('scored');
    expect(csv).toContain(',0.75,');
    expect(csv).toContain('3 of 4');
    (await warehouseFor(false)).close();
    const empty = await collectTables({ catalog: tableCatalog(), dbPath: lastDbPath, format: 'md' });
    // A PersonaLens-only listing leaves them out (the golden tables stay byte-identical) ...
    expect(empty.tables.some((t) => t.name.startsWith('persona_'))).toBe(false);
    expect(empty.missing.some((m) => m.name.startsWith('persona_'))).toBe(false);
    // ... and asking for one by name says why it is missing.
    await expect(collectTables({ catalog: tableCatalog(), dbPath: lastDbPath, format: 'md', only: ['persona_results'] })).rejects.toThrow(
      /persona_results: no PERSONA-bench predictions or scores in the workspace yet/,
    );
  });
});
