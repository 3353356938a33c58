import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { warehouseSqlFile } from '../helpers/warehouse-sql.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/db/database.js';
import { repoRoot } from '../helpers/cli.js';

// Expected values come from test/expected/significance.json, made once by
// test/expected/significance_reference.py with scipy 1.10 / statsmodels 0.13 (which never read our SQL),
// or are worked by hand in the comments.
const ref = JSON.parse(readFileSync(join(repoRoot, 'test', 'expected', 'significance.json'), 'utf8'));

let db: Database;
beforeAll(async () => {
  db = await Database.open(':memory:', { threads: 1 });
  for (const f of ['00_macros.sql', '03_significance.sql', '04_reliability.sql']) await db.run(readFileSync(warehouseSqlFile(f), 'utf8'), { file: f });
});
afterAll(() => db.close());

const one = async <T>(sql: string): Promise<T> => Object.values((await db.all(sql))[0]!)[0] as T;
const num = (x: number | null): string => (x === null ? 'NULL' : Number.isInteger(x) ? `${x}` : `${x}::DOUBLE`);
const close = (actual: number | null, expected: number, tol = 1e-9): void => {
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - expected), `${actual} vs ${expected}`).toBeLessThanOrEqual(tol);
};

interface Mcnemar {
  n_discordant: number;
  b: number;
  c: number;
  p_exact: number | null;
  p_mid: number | null;
  reason: string | null;
}
interface Wilcoxon {
  n: number;
  n_zero: number;
  statistic: number | null;
  r_plus: number | null;
  r_minus: number | null;
  z: number | null;
  p: number | null;
  method: string | null;
  reason: string | null;
}

describe('normal tail and quantiles', () => {
  it('normal_sf matches scipy norm.sf to 1e-15 (absolute) and the z constants match scipy', async () => {
    for (const c of ref.normal_sf as Array<{ x: number; sf: number }>) close(await one<number>(`SELECT normal_sf(${c.x}::DOUBLE)`), c.sf, 1e-15);
    expect(await one<number>('SELECT z_975()')).toBe(ref.z.z_975);
    expect(await one<number>('SELECT z_80()')).toBe(ref.z.z_80);
  });
});

describe('mcnemar_test (exact and mid-p)', () => {
  it('matches statsmodels mcnemar(exact=True) / scipy binomtest and the mid-p from scipy', async () => {
    for (const c of ref.mcnemar as Array<{ b: number; c: number; p_exact: number; p_mid: number }>) {
      const r = await one<Mcnemar>(`SELECT mcnemar_test(${c.b}, ${c.c})`);
      close(r.p_exact, c.p_exact);
      close(r.p_mid, c.p_mid);
      expect(r.n_discordant).toBe(c.b + c.c);
    }
  });

  it('by hand: b = 3, c = 11: P(X <= 3) = (1 + 14 + 91 + 364) / 2^14', async () => {
    const r = await one<Mcnemar>('SELECT mcnemar_test(3, 11)');
    close(r.p_exact, (2 * 470) / 16384, 1e-15);
    close(r.p_mid, (2 * 470 - 364) / 16384, 1e-15);
  });

  it('no discordant pairs gives p = 1 with the reason; bad counts give NULL with a reason', async () => {
    expect(await one<Mcnemar>('SELECT mcnemar_test(0, 0)')).toEqual({
      n_discordant: 0,
      b: 0,
      c: 0,
      p_exact: 1,
      p_mid: 1,
      reason: 'no discordant pairs: p = 1',
    });
    const bad = await one<Mcnemar>('SELECT mcnemar_test(-1, 3)');
    expect(bad.p_exact).toBeNull();
    expect(bad.reason).toBe('discordant counts must be non-negative integers');
    expect((await one<Mcnemar>('SELECT mcnemar_test(NULL, 3)')).reason).toBe('discordant counts must be non-negative integers');
  });
});

describe('wilcoxon_signed_rank', () => {
  it('matches scipy.stats.wilcoxon (zero_method wilcox / pratt / zsplit, exact and normal) to 1e-9', async () => {
    for (const c of ref.wilcoxon as Array<{
      d: number[];
      zero_method: string;
      method: string;
      statistic: number;
      p: number;
      r_plus: number;
      r_minus: number;
      n: number;
    }>) {
      const r = await one<Wilcoxon>(`SELECT wilcoxon_signed_rank_list([${c.d.map(num).join(', ')}]::DOUBLE[], zero_method := '${c.zero_method}')`);
      expect(r.reason, JSON.stringify(c.d)).toBeNull();
      expect(r.method, JSON.stringify(c)).toBe(c.method);
      close(r.statistic, c.statistic);
      close(r.r_plus, c.r_plus);
      close(r.r_minus, c.r_minus);
      close(r.p, c.p);
      expect(r.n).toBe(c.n);
    }
  });

  it('takes a histogram of differences as the views build it', async () => {
    // d = [1, 1, -2, 0, 3, 3, 3, -1] as {key, value}: same as the list form.
    const h = await one<Wilcoxon>(
      `SELECT wilcoxon_signed_rank([{'key': 1, 'value': 2}, {'key': -2, 'value': 1}, {'key': 0, 'value': 1}, {'key': 3, 'value': 3}, {'key': -1, 'value': 1}], zero_method := 'pratt')`,
    );
    const l = await one<Wilcoxon>(`SELECT wilcoxon_signed_rank_list([1, 1, -2, 0, 3, 3, 3, -1], zero_method := 'pratt')`);
    expect(h).toEqual(l);
    // By hand (pratt): |d| ranks with the zero: 0 -> 1; 1,1,1 -> 3; 2 -> 5; 3,3,3 -> 7. R+ = 3 + 3 + 21 = 27, R- = 5 + 3 = 8.
    expect([h.r_plus, h.r_minus, h.statistic]).toEqual([27, 8, 8]);
  });

  it('gives NULL with a reason when the test is undefined, never an error', async () => {
    const empty = await one<Wilcoxon>('SELECT wilcoxon_signed_rank_list([]::DOUBLE[])');
    expect([empty.p, empty.reason]).toEqual([null, 'no differences']);
    for (const zm of ['wilcox', 'pratt']) {
      const zeros = await one<Wilcoxon>(`SELECT wilcoxon_signed_rank_list([0, 0, 0], zero_method := '${zm}')`);
      expect([zeros.p, zeros.reason]).toEqual([null, `every difference is zero: no signed ranks (${zm})`]);
    }
    // zsplit splits the zeros' ranks evenly: R+ = R- = 3, z = 0, p = 1 (as scipy).
    expect((await one<Wilcoxon>(`SELECT wilcoxon_signed_rank_list([0, 0, 0], zero_method := 'zsplit')`)).p).toBe(1);
    expect((await one<Wilcoxon>(`SELECT wilcoxon_signed_rank_list([1, 2], zero_method := 'both')`)).reason).toBe(
      'unknown zero_method: both (use wilcox, pratt or zsplit)',
    );
    // A single non-zero difference: exact, p = 2 * P(W <= 0) = 2 * 1/2 = 1.
    expect(await one<Wilcoxon>('SELECT wilcoxon_signed_rank_list([4])')).toMatchObject({ n: 1, p: 1, method: 'exact', reason: null });
    // NULL differences are ignored.
    expect(await one<Wilcoxon>('SELECT wilcoxon_signed_rank_list([4, NULL])')).toMatchObject({ n: 1, p: 1 });
  });
});

describe('p_adjust (Holm, Benjamini-Hochberg)', () => {
  it('matches statsmodels multipletests holm and fdr_bh', async () => {
    for (const f of ref.p_adjust as Array<{ p: number[]; holm: number[]; bh: number[] }>) {
      const ps = `[${f.p.map((x) => `${x}::DOUBLE`).join(', ')}]`;
      const holm = await one<number[]>(`SELECT p_adjust(${ps}, method := 'holm')`);
      const bh = await one<number[]>(`SELECT p_adjust(${ps}, method := 'bh')`);
      f.holm.forEach((x, i) => close(holm[i]!, x, 1e-12));
      f.bh.forEach((x, i) => close(bh[i]!, x, 1e-12));
    }
  });

  it('leaves NULL p-values out of the family and in place', async () => {
    // Family of 3: sorted 0.01, 0.03, 0.04 -> Holm 0.03, 0.06, 0.06 (cumulative max), BH 0.03, 0.04, 0.04.
    const holm = await one<Array<number | null>>(`SELECT p_adjust([0.04, NULL, 0.01, 0.03]::DOUBLE[])`);
    expect(holm[1]).toBeNull();
    [0.06, null, 0.03, 0.06].forEach((x, i) => (x === null ? expect(holm[i]).toBeNull() : close(holm[i]!, x, 1e-15)));
    const bh = await one<Array<number | null>>(`SELECT p_adjust([0.04, NULL, 0.01, 0.03]::DOUBLE[], method := 'bh')`);
    [0.04, null, 0.03, 0.04].forEach((x, i) => (x === null ? expect(bh[i]).toBeNull() : close(bh[i]!, x, 1e-15)));
    expect(await one('SELECT p_adjust([]::DOUBLE[])')).toEqual([]);
  });

  it("takes statsmodels' names and Bonferroni; an unknown method is an error, never NULLs", async () => {
    const ps = '[0.04, NULL, 0.01, 0.03]::DOUBLE[]';
    expect(await one(`SELECT p_adjust(${ps}, method := 'fdr_bh')`)).toEqual(await one(`SELECT p_adjust(${ps}, method := 'bh')`));
    expect(await one(`SELECT p_adjust(${ps}, method := 'BH')`)).toEqual(await one(`SELECT p_adjust(${ps}, method := 'bh')`));
    const bonferroni = await one<Array<number | null>>(`SELECT p_adjust(${ps}, method := 'bonferroni')`);
    [0.12, null, 0.03, 0.09].forEach((x, i) => (x === null ? expect(bonferroni[i]).toBeNull() : close(bonferroni[i]!, x, 1e-15)));
    await expect(db.all(`SELECT p_adjust(${ps}, method := 'hochberg')`)).rejects.toThrow(
      /p_adjust: unknown method 'hochberg'; use holm, bh \(statsmodels: fdr_bh\) or bonferroni/,
    );
  });
});

describe('wilson_ci95', () => {
  it('matches statsmodels proportion_confint(method="wilson")', async () => {
    for (const c of ref.wilson as Array<{ x: number; n: number; lo: number; hi: number }>) {
      const r = await one<{ lo: number; hi: number; reason: string | null }>(`SELECT wilson_ci95(${c.x}, ${c.n})`);
      close(r.lo, Math.max(0, c.lo), 1e-12);
      close(r.hi, Math.min(1, c.hi), 1e-12);
      expect(r.reason).toBeNull();
    }
  });

  it('is NULL with a reason for n = 0 or x outside 0..n', async () => {
    expect(await one('SELECT wilson_ci95(0, 0)')).toEqual({ lo: null, hi: null, reason: 'no observations' });
    expect(await one('SELECT wilson_ci95(5, 3)')).toEqual({ lo: null, hi: null, reason: 'successes outside 0..n' });
  });
});

describe('paired_cluster_mean (clustered by user) and mde80', () => {
  const c = ref.clustered as { clusters: Record<string, number[]>; mean: number; se: number; se_unclustered: number; mde: number; mde_unclustered: number };
  const clusters = (cl: Record<string, number[]>) =>
    `[${Object.entries(cl)
      .map(([u, ds]) => `{'cluster': '${u}', 'sum': ${ds.reduce((a, b) => a + b, 0)}, 'n': ${ds.length}}`)
      .join(', ')}]`;

  it('gives the cluster-robust standard error and MDE of the reference script', async () => {
    const r = await one<{ n: number; n_clusters: number; mean: number; se: number; lo: number; hi: number; mde: number; reason: string | null }>(
      `SELECT paired_cluster_mean(${clusters(c.clusters)}, seed := 'hand')`,
    );
    expect([r.n, r.n_clusters, r.reason]).toEqual([14, 4, null]);
    close(r.mean, c.mean, 1e-12);
    close(r.se, c.se, 1e-12);
    close(r.mde, c.mde, 1e-12);
    // Users who agree with themselves: clustering almost doubles the standard error (0.4996 vs 0.2658),
    // and the bootstrap over users is correspondingly wider than the unclustered normal interval.
    expect(c.se / c.se_unclustered).toBeGreaterThan(1.8);
    expect(r.hi - r.lo).toBeGreaterThan(2 * 1.96 * c.se_unclustered * 1.3);
    expect(r.lo).toBeLessThan(c.mean);
    expect(r.hi).toBeGreaterThan(c.mean);
  });

  it('with one scenario per user the clustered se is the paired-t s / sqrt(n)', async () => {
    // d = 1, 2, 3, 6: mean 3, s^2 = (4 + 1 + 0 + 9) / 3 = 14/3, se = sqrt(14/3 / 4).
    const r = await one<{ se: number; mde: number }>(`SELECT paired_cluster_mean(${clusters({ a: [1], b: [2], c: [3], d: [6] })})`);
    close(r.se, Math.sqrt(14 / 3 / 4), 1e-14);
    close(r.mde, (ref.z.z_975 + ref.z.z_80) * Math.sqrt(14 / 3 / 4), 1e-13);
    close(await one<number>('SELECT mde80(1.0)'), ref.z.z_975 + ref.z.z_80, 1e-15);
  });

  it('is seeded and deterministic; one user gives a mean without an interval', async () => {
    const q = `SELECT paired_cluster_mean(${clusters(c.clusters)}, seed := 's1')`;
    expect(await one(q)).toEqual(await one(q));
    expect(await one(q)).not.toEqual(await one(`SELECT paired_cluster_mean(${clusters(c.clusters)}, seed := 's2')`));
    const single = await one<{ mean: number; lo: number | null; se: number | null; reason: string }>(
      `SELECT paired_cluster_mean(${clusters({ a: [1, 2, 3] })})`,
    );
    expect(single).toMatchObject({ mean: 2, lo: null, se: null, reason: 'fewer than 2 users: no clustered interval' });
    expect(await one('SELECT paired_cluster_mean([]::STRUCT(cluster VARCHAR, sum DOUBLE, n BIGINT)[])')).toMatchObject({
      n: 0,
      mean: null,
      reason: 'no pairs',
    });
  });
});

describe('krippendorff_alpha', () => {
  const units = (us: Array<Array<number | null>>) => `[${us.map((u) => `[${u.map((v) => (v === null ? 'NULL' : v)).join(', ')}]`).join(', ')}]`;

  it('matches the coincidence-matrix reference (nominal, ordinal, interval), incl. Krippendorff 2011', async () => {
    for (const c of ref.krippendorff as Array<{ units: Array<Array<number | null>>; level: string; alpha: number }>) {
      const r = await one<{ alpha: number; reason: string | null }>(`SELECT krippendorff_alpha(${units(c.units)}, level := '${c.level}')`);
      expect(r.reason).toBeNull();
      close(r.alpha, c.alpha, 1e-12);
    }
    // The published values of the worked example, to their 3 decimals.
    const pub = ref.krippendorff.slice(0, 3).map((c: { alpha: number }) => Math.round(c.alpha * 1000) / 1000);
    expect(pub).toEqual([0.743, 0.815, 0.849]);
  });

  it('bootstraps over units when given a seed: deterministic and around alpha', async () => {
    const ex = ref.krippendorff[2] as { units: Array<Array<number | null>>; alpha: number };
    const q = `SELECT krippendorff_alpha(${units(ex.units)}, level := 'interval', seed := 'k')`;
    const r = await one<{ alpha: number; lo: number; hi: number }>(q);
    expect(await one(q)).toEqual(r);
    expect(r.lo).toBeLessThan(r.alpha);
    expect(r.hi).toBeGreaterThan(r.alpha);
    expect(r.hi).toBeLessThanOrEqual(1);
  });

  it('is NULL with a reason for a single category, no pairable unit or an unknown level', async () => {
    expect(await one('SELECT krippendorff_alpha([[2, 2], [2, 2, NULL]])')).toMatchObject({
      alpha: null,
      n_units: 2,
      k: 1,
      reason: 'a single category: expected disagreement is 0, alpha undefined',
    });
    expect(await one('SELECT krippendorff_alpha([[1], [2, NULL]])')).toMatchObject({ alpha: null, n_units: 0, reason: 'no unit has 2 or more ratings' });
    expect(await one("SELECT krippendorff_alpha([[1, 2], [2, 2]], level := 'ratio')")).toMatchObject({
      alpha: null,
      reason: 'unknown level: ratio (use nominal, ordinal or interval)',
    });
    // Perfect agreement with variation: alpha = 1 (D_o = 0).
    expect(await one('SELECT krippendorff_alpha([[1, 1], [2, 2], [3, 3]]).alpha')).toBe(1);
  });
});

describe('ppi_mean (prediction-powered inference)', () => {
  it('matches the numpy worked example', async () => {
    const p = ref.ppi as {
      labeled: Array<{ y: number; yhat: number }>;
      unlabeled: number[];
      estimate: number;
      se: number;
      lo: number;
      hi: number;
      raw: number;
      rectifier: number;
    };
    const lab = `[${p.labeled.map((l) => `{'y': ${l.y}::DOUBLE, 'yhat': ${l.yhat}::DOUBLE}`).join(', ')}]`;
    const r = await one<Record<string, number | null>>(`SELECT ppi_mean(${lab}, [${p.unlabeled.join(', ')}])`);
    for (const k of ['estimate', 'se', 'lo', 'hi', 'raw', 'rectifier'] as const) close(r[k] as number, p[k], 1e-12);
    expect([r['n_labeled'], r['n_unlabeled'], r['reason']]).toEqual([15, 60, null]);
  });

  it('by hand: the judge says 1 on all four, people say 1, 0: estimate 1 + (0 - 1) / 2 = 0.5', async () => {
    // yhat = 1, 1, 1, 1 (s^2 = 0); y - yhat = 0, -1 (mean -0.5, s^2 = 0.5): se = sqrt(0.5 / 2) = 0.5.
    const r = await one<Record<string, number>>(`SELECT ppi_mean([{'y': 1, 'yhat': 1}, {'y': 0, 'yhat': 1}], [1, 1, 1, 1])`);
    expect([r['estimate'], r['se'], r['raw'], r['rectifier']]).toEqual([0.5, 0.5, 1, -0.5]);
    expect((await one<Record<string, unknown>>(`SELECT ppi_mean([{'y': 1, 'yhat': 1}], [1, 1])`))['reason']).toBe('fewer than 2 labeled items');
    expect((await one<Record<string, unknown>>(`SELECT ppi_mean([{'y': 1, 'yhat': 1}, {'y': 1, 'yhat': 0}], [1])`))['reason']).toBe(
      'fewer than 2 judged items',
    );
  });
});

describe('shannon_entropy', () => {
  it('counts 0 ln 0 as 0 (padded category lists) and gives NULL without counts', async () => {
    close(await one<number>('SELECT shannon_entropy([2, 0, 2])'), Math.log(2), 1e-15);
    // Evenness over 3 categories of which one is empty: ln 2 / ln 3.
    close(await one<number>('SELECT shannon_evenness([2, 0, 2])'), Math.log(2) / Math.log(3), 1e-15);
    expect(await one('SELECT shannon_entropy([5, 0])')).toBe(0);
    expect(await one('SELECT shannon_entropy([0, 0])')).toBeNull();
    expect(await one('SELECT shannon_entropy([]::INTEGER[])')).toBeNull();
  });
});
