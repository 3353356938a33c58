import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli, runCliJson } from '../helpers/cli.js';
import { PA, pairedWarehouse } from '../helpers/paired-experiment.js';

// The hand-made paired experiment (test/helpers/paired-experiment.ts). Expected values: by hand in the
// comments, or from scipy / numpy (test/expected/significance.json and the literals marked scipy below,
// from stats.wilcoxon(d, zero_method='pratt', correction=False, method='approx')).
const ref = JSON.parse(readFileSync(join(repoRoot, 'test', 'expected', 'significance.json'), 'utf8'));
const close = (a: unknown, b: number, tol = 1e-9) => expect(Math.abs((a as number) - b), `${a} vs ${b}`).toBeLessThanOrEqual(tol);

describe('paired views on a hand-made experiment clustered by user', () => {
  let db: string;
  const q = async (sql: string) => (await runCliJson<Array<Record<string, unknown>>>(['sql', sql, '--db', db])).json;

  beforeAll(async () => {
    db = (await pairedWarehouse()).db;
  });

  it('paired_lift, P overall: mean lift 10/14, the cluster-robust se of the reference, Wilcoxon (pratt) p of scipy', async () => {
    const [r] = await q(
      `select * from paired_lift where dimension = 'P' and scope_type = 'all' and run = (select run from paired_lift where dimension = 'P' limit 1)`,
    );
    expect(r).toMatchObject({ assistant_model: PA, block: 'base+all', n: 14, n_users: 4, test: 'Wilcoxon signed-rank (pratt)', reason: null });
    close(r!['lift'], 10 / 14, 1e-12);
    close(r!['base'], 31 / 14, 1e-12); // 8 + 9 + 8 + 6 = 31
    close(r!['with_block'], 41 / 14, 1e-12); // 12 + 8 + 16 + 5 = 41
    close(r!['p'], 0.025717368836671983); // scipy
    close(r!['mde'], ref.clustered.mde, 1e-12); // users u1..u4 of the reference script are this experiment's P differences
    // The interval is the clustered bootstrap: the macro over the same per-user sums with the views' seed.
    const [m] = await q(
      `select paired_cluster_mean([{'cluster': 'user0', 'sum': 4, 'n': 4}, {'cluster': 'user1', 'sum': -1, 'n': 3}, {'cluster': 'user2', 'sum': 8, 'n': 5}, {'cluster': 'user3', 'sum': -1, 'n': 2}], seed := 'plens.cluster') as m`,
    );
    const mm = m!['m'] as { lo: number; hi: number; se: number };
    close(r!['lift_lo'], mm.lo, 1e-12);
    close(r!['lift_hi'], mm.hi, 1e-12);
    close(mm.se, ref.clustered.se, 1e-12);
    // Clustering matters here: the interval is wider than the unclustered normal one (2 x 1.96 x 0.2658).
    expect((r!['lift_hi'] as number) - (r!['lift_lo'] as number)).toBeGreaterThan(2 * 1.96 * ref.clustered.se_unclustered * 1.3);
  });

  it('paired_lift, SD only: lift 7/12, clustered se 0.48684 (numpy), scipy p 0.0742', async () => {
    const [r] = await q(`select * from paired_lift where dimension = 'P' and scope_type = 'kind' and scope = 'SD' and judge_model = 'openai:judge'`);
    close(r!['lift'], 7 / 12, 1e-12);
    close(r!['mde'], (ref.z.z_975 + ref.z.z_80) * 0.48683808075419494, 1e-12);
    close(r!['p'], 0.07423377614335579);
  });

  it('paired_lift, TC: McNemar exact on five 0->1 and one 1->0, Holm and BH over the kinds', async () => {
    const rows = await q(
      `select scope_type, scope, n, lift, p, p_holm, p_bh, reason from paired_lift where dimension = 'TC' and judge_model = 'openai:judge' and scope_type in ('all', 'kind')`,
    );
    // all: 4 net successes of 14 pairs = 28.57 points; p = 2 (1 + 6) / 64 = 0.21875 (statsmodels mcnemar exact).
    expect(rows.map((r) => [r['scope_type'], r['scope'], r['n'], r['reason']])).toEqual([
      ['all', 'all', 14, null],
      ['kind', 'SD', 12, null],
      ['kind', 'MD', 2, 'fewer than 2 users: no interval; no discordant pairs: p = 1'],
    ]);
    close(rows[0]!['lift'], (100 * 4) / 14, 1e-12);
    close(rows[0]!['p'], 0.21875, 1e-12);
    close(rows[0]!['p_holm'], 0.21875, 1e-12);
    // SD: the same discordant pairs (p 0.21875); MD: none (p = 1, said). Holm over 2: 0.4375, 1; BH: 0.4375, 1.
    close(rows[1]!['lift'], (100 * 4) / 12, 1e-12);
    [
      [0.21875, 0.4375, 0.4375],
      [1, 1, 1],
    ].forEach(([p, holm, bh], i) => {
      close(rows[i + 1]!['p'], p!, 1e-12);
      close(rows[i + 1]!['p_holm'], holm!, 1e-12);
      close(rows[i + 1]!['p_bh'], bh!, 1e-12);
    });
    expect(rows[2]!['lift']).toBe(0);
  });

  it('paired_lift per domain: an MD scenario counts in each of its domains; one user gives no interval', async () => {
    const rows = await q(
      `select scope, n, n_users, lift, lift_lo from paired_lift where dimension = 'P' and scope_type = 'domain' and judge_model = 'openai:judge'`,
    );
    expect(rows.map((r) => [r['scope'], r['n'], r['n_users']])).toEqual([
      ['Alarm', 7, 2],
      ['Books', 5, 2],
      ['Flights', 2, 1],
      ['Hotels', 2, 1],
    ]);
    close(rows[0]!['lift'], 3 / 7, 1e-12);
    expect(rows[2]!['lift_lo']).toBeNull();
  });

  it('paired_comparisons: every dimension of a pair of cells, normal cluster interval, family-wise corrections', async () => {
    const rows = await q(
      `select kind, cell_a, cell_b, dimension, n, diff, diff_lo, diff_hi, p, p_holm, mde from paired_comparisons where judge_model = 'openai:judge' and kind = 'SD'`,
    );
    expect(rows.map((r) => r['dimension'])).toEqual(['TC', 'P']);
    const p = rows[1]!;
    expect([p['cell_a'], p['cell_b'], p['n']]).toEqual([`${PA} | base`, `${PA} | base+all`, 12]);
    close(p['diff'], 7 / 12, 1e-12);
    close(p['diff_lo'], 7 / 12 - ref.z.z_975 * 0.48683808075419494, 1e-12);
    close(p['diff_hi'], 7 / 12 + ref.z.z_975 * 0.48683808075419494, 1e-12);
    close(p['p'], 0.07423377614335579);
    expect(p['p_holm']).toBe(p['p']); // a family of one
  });

  it('plens tables shows the lift', async () => {
    const r = await runCli(['tables', '--db', db, '--only', 'paired_lift', '--format', 'md']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('personalization lift');
    expect(r.stdout).toContain('base+all');
  });

  it('plens compare: per dimension difference, clustered interval, test, p corrected over the dimensions, MDE and a verdict', async () => {
    const r = await runCliJson<{ dimensions: Array<Record<string, unknown>> }>([
      'compare',
      'setting=base',
      'setting=base+all',
      '--where',
      'judge=openai:judge',
      '--db',
      db,
    ]);
    expect(r.code, r.stderr).toBe(0);
    const [tc, p] = r.json.dimensions;
    expect([tc!['dimension'], tc!['n'], tc!['test'], p!['dimension'], p!['n'], p!['n_users']]).toEqual(['TC', 14, 'McNemar exact', 'P', 14, 4]);
    close(tc!['diff'], (100 * 4) / 14, 1e-12);
    close(tc!['p'], 0.21875, 1e-12);
    close(tc!['p_mid'], (14 - 6) / 64, 1e-12); // 2 P(X <= 1) - P(X = 1), X ~ Bin(6, 1/2)
    close(p!['p'], 0.025717368836671983); // scipy
    // Holm over the two dimensions: 2 x 0.02572 = 0.05143, then max(0.05143, 0.21875).
    close(p!['p_holm'], 2 * 0.025717368836671983);
    close(tc!['p_holm'], 0.21875, 1e-12);
    close(p!['mde'], ref.clustered.mde, 1e-12);
    // The same clustered bootstrap as the lift view.
    const [lift] = await q(`select lift_lo, lift_hi from paired_lift where dimension = 'P' and scope_type = 'all' and judge_model = 'openai:judge'`);
    close(p!['diff_lo'], lift!['lift_lo'] as number, 1e-12);
    close(p!['diff_hi'], lift!['lift_hi'] as number, 1e-12);
    expect(p!['verdict']).toMatch(/^no significant difference \(0\.71, Holm p = 0\.051\); this sample detects about ±1\.40 with 80% power$/);
    const text = await runCli(['compare', 'setting=base', 'setting=base+all', '--where', 'judge=openai:judge', '--db', db]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('Wilcoxon signed-rank (pratt)');
    expect(text.stdout).toContain('P: no significant difference');
  });

  it('plens compare: a side that matches several cells or none, or an unknown key, is a usage error', async () => {
    const many = await runCli(['compare', 'setting=base', 'setting=base+all', '--db', db]);
    expect(many.code).toBe(2);
    expect(many.stderr).toContain('A (setting=base) matches 2 cells; add keys to pick one');
    const none = await runCli(['compare', 'setting=base+d', 'setting=base', '--where', 'judge=openai:judge', '--db', db]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('matches no judged dialogue');
    const bad = await runCli(['compare', 'model=x', 'setting=base', '--db', db]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"model=x" is not key=value with a known key');
  });

  const hx = ref.hand_experiment;

  it('judge_validity: Krippendorff alpha judge vs annotators and among annotators, signed bias (reference script)', async () => {
    const rows = await q(`select * from judge_validity where judge_model = 'openai:judge'`);
    expect(rows.map((r) => [r['label'], r['n_dialogues'], r['n_annotators'], r['reason']])).toEqual([
      ['TC', 7, 2, null],
      ['P', 7, 2, null],
    ]);
    for (const r of rows) {
      const v = hx.validity[r['label'] as string];
      close(r['alpha_judge_human'], v.alpha_judge_human, 1e-12);
      close(r['alpha_humans'], v.alpha_humans, 1e-12);
      close(r['bias'], v.bias, 1e-12);
      close(r['bias_lo'], v.bias - ref.z.z_975 * v.bias_se, 1e-12);
      expect(r['alpha_humans_lo'] as number).toBeLessThanOrEqual(r['alpha_humans'] as number);
      expect(r['alpha_judge_human_hi'] as number).toBeGreaterThanOrEqual(r['alpha_judge_human'] as number);
    }
  });

  it('ppi_estimates: the judge mean corrected by the annotated subset (numpy worked example)', async () => {
    const rows = await q(`select * from ppi_estimates where judge_model = 'openai:judge' and assistant_model = '${PA}' and setting = 'base'`);
    expect(rows.map((r) => [r['dimension'], r['n'], r['n_labeled'], r['reason']])).toEqual([
      ['TC', 14, 7, null],
      ['P', 14, 7, null],
    ]);
    for (const r of rows) {
      const e = hx.ppi[r['dimension'] as string];
      for (const [col, key] of [
        ['raw', 'raw'],
        ['ppi', 'ppi'],
        ['ppi_lo', 'lo'],
        ['ppi_hi', 'hi'],
      ] as const)
        close(r[col], e[key], 1e-12);
    }
    // base+all has no annotated dialogue: the raw mean, no PPI, and why.
    const [none] = await q(`select raw, ppi, reason from ppi_estimates where judge_model = 'openai:judge' and setting = 'base+all' and dimension = 'P'`);
    expect(none).toEqual({ raw: 41 / 14, ppi: null, reason: 'fewer than 2 labeled items' });
  });

  it('judge_swap: the same dialogues under a second judge, paired change and agreement', async () => {
    const rows = await q(`select judge_a, judge_b, dimension, n, diff, p, cohen_kappa, alpha from judge_swap`);
    expect(rows.map((r) => [r['judge_a'], r['judge_b'], r['dimension'], r['n']])).toEqual([
      ['openai:judge', 'openai:judge2', 'TC', 14],
      ['openai:judge', 'openai:judge2', 'P', 14],
    ]);
    const [tc, p] = rows;
    expect([tc!['diff'], tc!['p'], tc!['cohen_kappa'], tc!['alpha']]).toEqual([0, 1, hx.swap.tc_cohen_kappa, hx.swap.tc_alpha_nominal]);
    close(p!['diff'], hx.swap.p_diff, 1e-12);
    close(p!['p'], hx.swap.p_wilcoxon_pratt);
    close(p!['cohen_kappa'], hx.swap.p_cohen_kappa, 1e-12);
    close(p!['alpha'], hx.swap.p_alpha_ordinal, 1e-12);
  });

  it('judge_repeatability: a dimension judged twice, share of changed scores and intra-judge alpha', async () => {
    const rows = await q(`select dimension, n_dialogues, k, share_changed, alpha, reason from judge_repeatability`);
    expect(rows).toHaveLength(2);
    const p = rows.find((r) => r['dimension'] === 'personalization')!;
    expect([p['n_dialogues'], p['k']]).toEqual([3, 2]);
    close(p['share_changed'], hx.repeat.p_share_changed, 1e-12);
    close(p['alpha'], hx.repeat.p_alpha_ordinal, 1e-12);
    // TC repeated identically, all 1: a single category, alpha undefined and said so.
    expect(rows.find((r) => r['dimension'] === 'task_completion')).toMatchObject({
      share_changed: 0,
      alpha: null,
      reason: 'a single category: expected disagreement is 0, alpha undefined',
    });
  });

  it('simulator_audit: one deterministic flag per planted failure, none on ordinary dialogues', async () => {
    const flags = [
      'role_inversion',
      'terminate_opening',
      'terminate_never',
      'terminate_early',
      'terminate_in_text',
      'empty_turn',
      'duplicate_turn',
      'non_english',
      'preference_leak',
      'round_limit',
    ];
    const rows = await q(`select * from simulator_audit order by dialogue_id`);
    expect(rows).toHaveLength(28);
    const on = Object.fromEntries(rows.map((r) => [r['dialogue_id'], flags.filter((f) => r[f] === true)]));
    expect(Object.fromEntries(Object.entries(on).filter(([, f]) => f.length > 0))).toEqual({
      'u1-1-base': ['role_inversion'],
      'u1-2-base': ['terminate_opening', 'terminate_in_text'],
      'u2-1-base': ['terminate_never', 'round_limit'],
      'u2-2-base': ['empty_turn', 'duplicate_turn'],
      'u3-1-base': ['non_english'],
      'u3-2-base': ['preference_leak'],
      'u3-3-base': ['terminate_early'],
    });
    expect(rows.find((r) => r['dialogue_id'] === 'u3-2-base')!['leaked_value']).toBe('literary fiction');
    const counts = await q(`select setting, n_dialogues, n_flagged, role_inversion, terminate_never, preference_leak, round_limit from simulator_audit_counts`);
    expect(counts).toEqual([
      { setting: 'base', n_dialogues: 14, n_flagged: 6, role_inversion: 1, terminate_never: 1, preference_leak: 1, round_limit: 1 },
      { setting: 'base+all', n_dialogues: 14, n_flagged: 0, role_inversion: 0, terminate_never: 0, preference_leak: 0, round_limit: 0 },
    ]);
  });

  it('plens tables --exclude-flagged: the result views leave the six flagged dialogues out', async () => {
    const all = await runCliJson<{ tables: Array<{ name: string; rows: Array<Record<string, unknown>> }> }>([
      'tables',
      '--db',
      db,
      '--only',
      'table3,simulator_audit_counts',
    ]);
    const kept = await runCliJson<{ tables: Array<{ name: string; rows: Array<Record<string, unknown>> }>; warnings: string[] }>([
      'tables',
      '--db',
      db,
      '--only',
      'table3',
      '--exclude-flagged',
    ]);
    expect(kept.code, kept.stdout + kept.stderr).toBe(0);
    const n = (t: typeof all.json.tables, kind: string) =>
      t
        .find((x) => x.name === 'table3')!
        .rows.filter((r) => r['judge_model'] === 'openai:judge' && r['kind'] === kind)
        .map((r) => r['n_dialogues']);
    expect(n(all.json.tables, 'SD')).toEqual([12]);
    // Flagged base dialogues: u1-1, u1-2, u2-2, u3-1, u3-2, u3-3 (all SD): 12 - 6 = 6 left.
    expect(n(kept.json.tables, 'SD')).toEqual([6]);
    expect(kept.json.warnings[0]).toMatch(/^--exclude-flagged: 6 dialogue\(s\) flagged/);
  });

  it('plens report shows the lift chart with intervals and the audit counts', async () => {
    const out = join(db, '..', 'report.html');
    const r = await runCli(['report', '--db', db, '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const html = readFileSync(out, 'utf8');
    expect(html).toContain('The personalization lift over Base');
    expect(html).toContain('Simulator audit: flagged dialogues per assistant, setting and user agent');
    expect(html).toMatch(/<svg[^>]*>/);
  });
});
