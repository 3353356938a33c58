import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { warehouseSqlFile } from '../helpers/warehouse-sql.js';

/**
 * prefeval_paired on hand-made checks: which pairs each comparison takes, the accuracies, the
 * difference, the discordant counts and McNemar's exact p (binomial by hand).
 */
describe('prefeval_paired', () => {
  let db: Database;
  beforeAll(async () => {
    db = await Database.open(':memory:');
    for (const f of ['00_macros.sql', '03_significance.sql']) await db.run(readFileSync(warehouseSqlFile(f), 'utf8'));
    // Model m1: zero-shot follows on tasks 0-1 of 5, remind on 0-4 but task 1 (b = 1, c = 3).
    // Model m2: remind on tasks 0, 1. One failed check (m1 remind task 4 is failed: unpaired).
    const rows: Array<[string, string, number, boolean, string]> = [];
    for (let i = 0; i < 5; i++) rows.push(['m1', 'zero-shot', i, i < 2, 'ok']);
    for (let i = 0; i < 5; i++) rows.push(['m1', 'remind', i, i !== 1, i === 4 ? 'failed' : 'ok']);
    for (let i = 0; i < 5; i++) rows.push(['m2', 'remind', i, i < 2, 'ok']);
    await db.run(
      `CREATE TABLE prefeval_checks AS SELECT * FROM (VALUES ${rows.map(([m, b, i, y, s]) => `('${m}', 'judge', 'explicit', '${b}', 10, 'travel_restaurant', ${i}, ${y}, '${s}')`).join(', ')})
        t(model, judge_model, form, baseline, inter_turns, topic, task_index, follows_preference, status)`,
    );
    for (const f of ['84_prefeval_pairs.sql', '87_prefeval_paired.sql']) await db.run(readFileSync(warehouseSqlFile(f), 'utf8'));
  });
  afterAll(() => db.close());

  it('pairs each baseline with zero-shot, and each pair of models, on the preferences judged on both', async () => {
    const got = await db.all<Record<string, unknown>>(
      `SELECT comparison, model, a, b, n_pairs::INT AS n_pairs, accuracy_a, accuracy_b, difference, n_a_only::INT AS n_a_only, n_b_only::INT AS n_b_only, p_mcnemar
       FROM prefeval_paired ORDER BY comparison, a, b`,
    );
    // Baseline, m1: tasks 0-3 paired (task 4 failed on remind): zero-shot 1,1,0,0; remind 1,0,1,1.
    // Discordant: task 1 (a only), tasks 2, 3 (b only): p = min(1, 2 P(X <= 1)), X ~ Bin(3, 1/2) = 2 * 4/8 = 1.
    expect(got[0]).toMatchObject({ comparison: 'baseline', model: 'm1', a: 'zero-shot', b: 'remind', n_pairs: 4, n_a_only: 1, n_b_only: 2, p_mcnemar: 1 });
    expect(got[0]!['accuracy_a']).toBeCloseTo(0.5, 12);
    expect(got[0]!['accuracy_b']).toBeCloseTo(0.75, 12);
    expect(got[0]!['difference']).toBeCloseTo(0.25, 12);
    // Models, remind: m1 1,0,1,1 (task 4 failed) vs m2 1,1,0,0: discordant 2 (m1 only) and 1 (m2 only).
    expect(got[1]).toMatchObject({ comparison: 'model', model: null, a: 'm1', b: 'm2', n_pairs: 4, n_a_only: 2, n_b_only: 1, p_mcnemar: 1 });
    expect(got[1]!['difference']).toBeCloseTo(-0.25, 12);
    expect(got).toHaveLength(2);
  });

  it('gives an interval around the difference, and an exact p below 1 when the discordance is one-sided', async () => {
    const [row] = await db.all<{ lo: number; hi: number; difference: number }>(
      "SELECT difference_lo AS lo, difference_hi AS hi, difference FROM prefeval_paired WHERE comparison = 'baseline'",
    );
    expect(row!.lo).toBeLessThan(row!.difference);
    expect(row!.hi).toBeGreaterThan(row!.difference);
    const [p] = await db.all<{ p: number }>('SELECT mcnemar_test(0, 5).p_exact AS p');
    // 2 * (1/2)^5
    expect(p!.p).toBeCloseTo(0.0625, 12);
  });
});

/**
 * The classification task's views on hand-made answers: accuracy (a missing letter counts wrong,
 * a failed call counts nowhere) and the same paired comparisons over is_correct.
 */
describe('prefeval_mcq_results and prefeval_mcq_paired', () => {
  let db: Database;
  beforeAll(async () => {
    db = await Database.open(':memory:');
    for (const f of ['00_macros.sql', '03_significance.sql', '84_prefeval_pairs.sql']) await db.run(readFileSync(warehouseSqlFile(f), 'utf8'));
    // m1 zero-shot: right on 0, 1 of 4; task 2 has no letter. m1 remind: right on 0-2, task 3 failed.
    const rows: Array<[string, number, string | null, boolean | null, string]> = [
      ['zero-shot', 0, 'A', true, 'ok'],
      ['zero-shot', 1, 'B', true, 'ok'],
      ['zero-shot', 2, null, false, 'ok'],
      ['zero-shot', 3, 'C', false, 'ok'],
      ['remind', 0, 'A', true, 'ok'],
      ['remind', 1, 'B', true, 'ok'],
      ['remind', 2, 'D', true, 'ok'],
      ['remind', 3, null, null, 'failed'],
    ];
    const sql = (v: string | null) => (v === null ? 'NULL' : `'${v}'`);
    await db.run(
      `CREATE TABLE prefeval_mcq AS SELECT * FROM (VALUES ${rows.map(([b, i, c, y, s]) => `('m1', 'explicit', '${b}', 2, 'travel_restaurant', ${i}, ${sql(c)}, ${y === null ? 'NULL' : y}, '${s}')`).join(', ')})
        t(model, form, baseline, inter_turns, topic, task_index, choice, is_correct, status)`,
    );
    const file = readFileSync(warehouseSqlFile('89_prefeval_mcq.sql'), 'utf8');
    // The table itself is made above; the views follow it.
    await db.run(file.slice(file.indexOf('-- MCQ accuracy')));
  });
  afterAll(() => db.close());

  it('accuracy counts a missing letter as wrong and a failed call nowhere', async () => {
    const got = await db.all<Record<string, unknown>>(
      'SELECT baseline, n::INT AS n, accuracy, n_no_choice::INT AS n_no_choice, n_failed::INT AS n_failed FROM prefeval_mcq_results ORDER BY baseline',
    );
    expect(got).toEqual([
      { baseline: 'remind', n: 3, accuracy: 1, n_no_choice: 0, n_failed: 1 },
      { baseline: 'zero-shot', n: 4, accuracy: 0.5, n_no_choice: 1, n_failed: 0 },
    ]);
  });

  it('pairs remind with zero-shot on the records answered both ways', async () => {
    const got = await db.all<Record<string, unknown>>(
      'SELECT comparison, a, b, n_pairs::INT AS n_pairs, accuracy_a, accuracy_b, n_a_only::INT AS n_a_only, n_b_only::INT AS n_b_only FROM prefeval_mcq_paired',
    );
    // Tasks 0-2: zero-shot 1, 1, 0; remind 1, 1, 1.
    expect(got).toEqual([{ comparison: 'baseline', a: 'zero-shot', b: 'remind', n_pairs: 3, accuracy_a: 2 / 3, accuracy_b: 1, n_a_only: 0, n_b_only: 1 }]);
  });
});
