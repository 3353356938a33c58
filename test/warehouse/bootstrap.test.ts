import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database } from '../../src/db/database.js';
import { repoRoot } from '../helpers/cli.js';

let db: Database;
beforeAll(async () => {
  db = await Database.open(':memory:');
  await db.run(readFileSync(join(repoRoot, 'warehouse', '00_macros.sql'), 'utf8'));
});
afterAll(() => db.close());

const hist = (counts: Record<number, number>) =>
  `[${Object.entries(counts)
    .map(([k, v]) => `{'key': ${k}, 'value': ${v}}`)
    .join(', ')}]`;
const one = async <T>(sql: string): Promise<T> => Object.values((await db.all(sql))[0]!)[0] as T;

describe('bootstrap_ci95 (Bayesian bootstrap over score histograms)', () => {
  it('draws Gamma variates with the right mean and variance (exact path and Wilson-Hilferty path)', async () => {
    for (const shape of [1, 6, 16, 17, 60, 5000]) {
      const [row] = await db.all<{ m: number; v: number }>(
        `SELECT avg(g) AS m, var_samp(g) AS v FROM (SELECT gamma_draw(${shape}, 't', x, 1) AS g FROM range(20000) t(x))`,
      );
      // Gamma(k, 1): mean k, variance k. 20k draws: the sample mean is within ~4 sd of k.
      expect(Math.abs(row!.m - shape)).toBeLessThan(4 * Math.sqrt(shape / 20000));
      expect(row!.v / shape).toBeGreaterThan(0.9);
      expect(row!.v / shape).toBeLessThan(1.1);
    }
  });

  it('draws uniform, independent numbers from integer hashes (key_uniform)', async () => {
    // 200 resample keys x 500 draw indices = 100,000 draws; the bounds are about 4 standard errors.
    const [r] = await db.all<{ m: number; v: number; lo: number; hi: number; lag: number; across: number; chi2: number; distinct: number }>(`
      WITH u AS (SELECT k, i, key_uniform(resample_key('u', k), i) AS u FROM range(200) a(k), range(500) b(i)),
      n AS (SELECT u, lead(u) OVER (PARTITION BY k ORDER BY i) AS next_draw, lead(u) OVER (PARTITION BY i ORDER BY k) AS next_key FROM u),
      bins AS (SELECT floor(u * 20) AS bin, count(*) AS c FROM u GROUP BY bin)
      SELECT avg(u) AS m, var_pop(u) AS v, min(u) AS lo, max(u) AS hi, corr(u, next_draw) AS lag, corr(u, next_key) AS across,
        (SELECT sum(pow(c - 5000, 2) / 5000) FROM bins) AS chi2, count(DISTINCT u) AS distinct FROM n`);
    expect(Math.abs(r!.m - 0.5)).toBeLessThan(4 * Math.sqrt(1 / 12 / 100_000));
    expect(r!.v * 12).toBeGreaterThan(0.98);
    expect(r!.v * 12).toBeLessThan(1.02);
    expect(r!.lo).toBeGreaterThan(0);
    expect(r!.hi).toBeLessThan(1);
    // Neighbouring draws of one resample, and the same draw of neighbouring resamples, are uncorrelated.
    expect(Math.abs(r!.lag)).toBeLessThan(4 / Math.sqrt(100_000));
    expect(Math.abs(r!.across)).toBeLessThan(4 / Math.sqrt(100_000));
    // 20 equal bins: chi-square with 19 degrees of freedom, 99.9th percentile 43.8.
    expect(r!.chi2).toBeLessThan(43.8);
    expect(r!.distinct).toBe(100_000);
  });

  it('matches the normal-theory width for a hand-computed case', async () => {
    // 19 scores: six 3s, six 4s, seven 5s: mean 77/19 = 4.0526, population sd 0.8252;
    // se = 0.8252 / sqrt(19) = 0.1893, so a 95% interval is about mean +- 0.371.
    const ci = await one<{ lo: number; hi: number }>(`SELECT bootstrap_ci95(${hist({ 3: 6, 4: 6, 5: 7 })}, 'hand')`);
    const mean = 77 / 19;
    expect(ci.lo).toBeLessThan(mean);
    expect(ci.hi).toBeGreaterThan(mean);
    expect((ci.hi - ci.lo) / 2).toBeGreaterThan(0.371 * 0.8);
    expect((ci.hi - ci.lo) / 2).toBeLessThan(0.371 * 1.2);
  });

  it('narrows with n (as 1/sqrt(n)) and always contains the mean', async () => {
    const small = await one<{ lo: number; hi: number }>(`SELECT bootstrap_ci95(${hist({ 0: 4, 1: 16 })}, 'n')`);
    const large = await one<{ lo: number; hi: number }>(`SELECT bootstrap_ci95(${hist({ 0: 400, 1: 1600 })}, 'n')`);
    for (const ci of [small, large]) {
      expect(ci.lo).toBeLessThan(0.8);
      expect(ci.hi).toBeGreaterThan(0.8);
    }
    const ratio = (small.hi - small.lo) / (large.hi - large.lo);
    expect(ratio).toBeGreaterThan(7); // sqrt(100) = 10
    expect(ratio).toBeLessThan(14);
  });

  it('is deterministic for a seed and changes with it', async () => {
    const a = await one<{ lo: number }>(`SELECT bootstrap_ci95(${hist({ 1: 5, 2: 9, 3: 7, 4: 2 })}, 's1')`);
    const b = await one<{ lo: number }>(`SELECT bootstrap_ci95(${hist({ 1: 5, 2: 9, 3: 7, 4: 2 })}, 's1')`);
    const c = await one<{ lo: number }>(`SELECT bootstrap_ci95(${hist({ 1: 5, 2: 9, 3: 7, 4: 2 })}, 's2')`);
    expect(a).toEqual(b);
    expect(c).not.toEqual(a);
  });

  it("histogram_ci95: the views' interval, the same for the same scores, independent draws for different ones", async () => {
    const a = await one<{ lo: number; hi: number }>(`SELECT histogram_ci95(${hist({ 0: 1, 1: 1 })})`);
    expect(await one(`SELECT histogram_ci95(${hist({ 0: 1, 1: 1 })})`)).toEqual(a);
    expect(await one(`SELECT bootstrap_ci95(${hist({ 0: 1, 1: 1 })}, 'plens:' || hash(${hist({ 0: 1, 1: 1 })}))`)).toEqual(a);
    // The same counts at other values: with shared draws the interval would be a's shifted by 3.
    const b = await one<{ lo: number; hi: number }>(`SELECT histogram_ci95(${hist({ 3: 1, 4: 1 })})`);
    expect(b.lo - 3).not.toBeCloseTo(a.lo, 6);
    expect(b.hi - 3).not.toBeCloseTo(a.hi, 6);
  });

  it('gives NULL below n = 2 and a point interval when every score is the same', async () => {
    expect(await one(`SELECT bootstrap_ci95(${hist({ 3: 1 })}, 'x')`)).toBeNull();
    expect(await one(`SELECT bootstrap_ci95(NULL::STRUCT(key INTEGER, value UBIGINT)[], 'x')`)).toBeNull();
    expect(await one(`SELECT bootstrap_ci95(${hist({ 4: 50 })}, 'x')`)).toEqual({ lo: 4, hi: 4 });
    expect(await one(`SELECT histogram_n(NULL::STRUCT(key INTEGER, value UBIGINT)[])`)).toBe(0);
    expect(await one(`SELECT histogram_mean(${hist({ 1: 1, 4: 3 })})`)).toBeCloseTo(13 / 4, 12);
  });
});
