import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Database, sqlString } from '../../src/db/database.js';
import { repoRoot } from '../helpers/cli.js';

// Expected values are worked by hand (arithmetic in the comments, as exact fractions) or come from
// test/expected/agreement.json, made once by test/expected/agreement_reference.py (scikit-learn's
// cohen_kappa_score and a plain-Python Fleiss), which never reads our SQL.

type Rating = number | string | null;
interface Cohen {
  kappa: number | null;
  observed: number | null;
  expected: number | null;
  n: number;
  k: number;
  reason: string | null;
}
interface Fleiss {
  kappa: number | null;
  observed: number | null;
  expected: number | null;
  n_subjects: number;
  n_raters: number | null;
  k: number;
  reason: string | null;
}

let db: Database;
beforeAll(async () => {
  db = await Database.open(':memory:', { threads: 1 });
  for (const f of ['00_macros.sql', '01_agreement.sql']) await db.run(readFileSync(join(repoRoot, 'warehouse', f), 'utf8'), { file: f });
});
afterAll(() => db.close());

const lit = (v: Rating): string => (v === null ? 'NULL' : typeof v === 'string' ? sqlString(v) : String(v));
const list = (xs: Rating[]): string => `[${xs.map(lit).join(', ')}]`;
const pairs = (ps: Array<[Rating, Rating]>): string => `[${ps.map(([a, b]) => `{'a': ${lit(a)}, 'b': ${lit(b)}}`).join(', ')}]`;
/** n copies of a pair. */
const times = (n: number, p: [Rating, Rating]): Array<[Rating, Rating]> => Array.from({ length: n }, () => p);
const one = async <T>(sql: string): Promise<T> => Object.values((await db.all(sql))[0]!)[0] as T;
const cohen = (ps: string, args = ''): Promise<Cohen> => one<Cohen>(`SELECT cohen_kappa(${ps}${args ? `, ${args}` : ''})`);
const fleiss = (subjects: string, args = ''): Promise<Fleiss> => one<Fleiss>(`SELECT fleiss_kappa(${subjects}${args ? `, ${args}` : ''})`);

/** kappa, p_o and p_e against exact fractions, to 1e-12. */
function expectStats(
  r: { kappa: number | null; observed: number | null; expected: number | null; reason: string | null },
  kappa: number,
  observed: number,
  expected: number,
): void {
  expect(r.reason).toBeNull();
  expect(Math.abs(r.kappa! - kappa)).toBeLessThan(1e-12);
  expect(Math.abs(r.observed! - observed)).toBeLessThan(1e-12);
  expect(Math.abs(r.expected! - expected)).toBeLessThan(1e-12);
}

// 50 subjects, rater A by rows: yes/yes 20, yes/no 5, no/yes 10, no/no 15.
const TEXTBOOK: Array<[Rating, Rating]> = [...times(20, ['yes', 'yes']), ...times(5, ['yes', 'no']), ...times(10, ['no', 'yes']), ...times(15, ['no', 'no'])];

// Ten 1-5 scores. nA (1..5) = [2, 2, 3, 1, 2], nB = [2, 1, 3, 2, 2]; |i - j| per pair 0 1 1 0 1 0 2 0 2 1.
const ORDINAL: Array<[Rating, Rating]> = [
  [1, 1],
  [2, 1],
  [2, 3],
  [3, 3],
  [3, 4],
  [4, 4],
  [3, 5],
  [5, 5],
  [5, 3],
  [1, 2],
];

describe('cohen_kappa: hand-worked cases', () => {
  it('returns the documented struct type', async () => {
    expect(await one(`SELECT typeof(cohen_kappa([{'a': 1, 'b': 2}]))`)).toBe(
      'STRUCT(kappa DOUBLE, observed DOUBLE, expected DOUBLE, n BIGINT, k BIGINT, reason VARCHAR)',
    );
  });

  it('textbook 2 x 2: p_o = 0.70, p_e = 0.50, kappa = 0.40', async () => {
    // p_o = (20 + 15) / 50 = 0.7; A: yes 25, no 25 -> 0.5 / 0.5; B: yes 30, no 20 -> 0.6 / 0.4;
    // p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4.
    const r = await cohen(pairs(TEXTBOOK));
    expectStats(r, 0.4, 0.7, 0.5);
    expect([r.n, r.k]).toEqual([50, 2]);
    // Each value is one correctly rounded division of integers (35/50, 1250/2500, 500/1250), so exact:
    expect([r.kappa, r.observed, r.expected]).toEqual([0.4, 0.7, 0.5]);
    // Two categories: linear and quadratic weights are both the identity matrix.
    expectStats(await cohen(pairs(TEXTBOOK), "'linear'"), 0.4, 0.7, 0.5);
    expectStats(await cohen(pairs(TEXTBOOK), "weights := 'quadratic'"), 0.4, 0.7, 0.5);
  });

  it('three categories', async () => {
    // Confusion matrix (rows A, columns B), categories 1, 2, 3:
    //   [8 1 1] 10      p_o = (8 + 9 + 4) / 30 = 21/30 = 0.7
    //   [2 9 1] 12      p_e = (10*11 + 12*13 + 8*6) / 900 = (110 + 156 + 48) / 900 = 314/900 = 157/450
    //   [1 3 4]  8      kappa = (315/450 - 157/450) / (293/450) = 158/293 = 0.5392...
    //   11 13 6
    const m = [
      [8, 1, 1],
      [2, 9, 1],
      [1, 3, 4],
    ];
    const ps = m.flatMap((row, i) => row.flatMap((c, j) => times(c, [i + 1, j + 1])));
    const r = await cohen(pairs(ps));
    expectStats(r, 158 / 293, 0.7, 157 / 450);
    expect([r.n, r.k]).toEqual([30, 3]);
  });

  it('linear and quadratic weights on 1-5 scores', async () => {
    // Unweighted: 4 agreements -> p_o = 0.4; p_e = (2*2 + 2*1 + 3*3 + 1*2 + 2*2) / 100 = 21/100;
    //   kappa = 0.19 / 0.79 = 19/79.
    expectStats(await cohen(pairs(ORDINAL)), 19 / 79, 0.4, 0.21);
    // Linear, k = 5: w_ij = 1 - |i - j| / 4, the matrix
    //   [1    .75  .5   .25  0  ]
    //   [.75  1    .75  .5   .25]
    //   [.5   .75  1    .75  .5 ]
    //   [.25  .5   .75  1    .75]
    //   [0    .25  .5   .75  1  ]
    //   p_o = 1 - (sum |i - j| = 8) / (10 * 4) = 0.8.
    //   sum_j nB_j |i - j| for i = 1..5: 21, 15, 11, 13, 19; weighted by nA: 2*21 + 2*15 + 3*11 + 1*13 + 2*19 = 156;
    //   p_e = 1 - 156 / (100 * 4) = 0.61; kappa = (0.8 - 0.61) / 0.39 = 19/39.
    expectStats(await cohen(pairs(ORDINAL), "'linear'"), 19 / 39, 0.8, 0.61);
    // Quadratic: w_ij = 1 - (i - j)^2 / 16, the matrix
    //   [1      15/16  12/16  7/16   0    ]
    //   [15/16  1      15/16  12/16  7/16 ]
    //   [12/16  15/16  1      15/16  12/16]
    //   [7/16   12/16  15/16  1      15/16]
    //   [0      7/16   12/16  15/16  1    ]
    //   p_o = 1 - (sum (i - j)^2 = 12) / (10 * 16) = 0.925.
    //   sum_j nB_j (i - j)^2 for i = 1..5: 63, 31, 19, 27, 55; weighted by nA: 126 + 62 + 57 + 27 + 110 = 382;
    //   p_e = 1 - 382 / 1600 = 0.76125; kappa = (0.925 - 0.76125) / 0.23875 = 131/191.
    expectStats(await cohen(pairs(ORDINAL), "'quadratic'"), 131 / 191, 0.925, 0.76125);
    // The same with the categories given: all five are used, so nothing changes.
    expectStats(await cohen(pairs(ORDINAL), "'quadratic', [1, 2, 3, 4, 5]"), 131 / 191, 0.925, 0.76125);
  });

  it('explicit categories: an unused middle category changes weighted kappa, not unweighted', async () => {
    // Pairs (1,1) (2,2) (4,4) (1,2) (2,4) (4,2); A: 1:2, 2:2, 4:2; B: 1:1, 2:3, 4:2; nobody uses 3.
    const ps: Array<[Rating, Rating]> = [
      [1, 1],
      [2, 2],
      [4, 4],
      [1, 2],
      [2, 4],
      [4, 2],
    ];
    // Unweighted, either way: p_o = 3/6; p_e = (2*1 + 2*3 + 0*0 + 2*2) / 36 = 1/3; kappa = (1/6) / (2/3) = 1/4.
    const observedCats = await cohen(pairs(ps));
    expectStats(observedCats, 1 / 4, 1 / 2, 1 / 3);
    expect(observedCats.k).toBe(3);
    const explicitCats = await cohen(pairs(ps), "'none', [1, 2, 3, 4]");
    expectStats(explicitCats, 1 / 4, 1 / 2, 1 / 3);
    expect(explicitCats.k).toBe(4);
    // Linear, observed categories [1, 2, 4] at positions 1, 2, 3 (k - 1 = 2): |i - j| = 0 0 0 1 1 1, D = 3;
    //   p_o = 1 - 3 / 12 = 3/4. nA = [2, 2, 2], nB = [1, 3, 2]; sum_j nB_j |i - j| = 7, 3, 5;
    //   E = 2 * (7 + 3 + 5) = 30; p_e = 1 - 30 / 72 = 7/12; kappa = (9/12 - 7/12) / (5/12) = 2/5.
    expectStats(await cohen(pairs(ps), "'linear'"), 2 / 5, 3 / 4, 7 / 12);
    // Linear, categories [1, 2, 3, 4]: 1, 2, 4 at positions 1, 2, 4 (k - 1 = 3): |i - j| = 0 0 0 1 2 2, D = 5;
    //   p_o = 1 - 5 / 18 = 13/18. nA = [2, 2, 0, 2], nB = [1, 3, 0, 2]; sum_j nB_j |i - j| for i = 1, 2, 4: 9, 5, 9;
    //   E = 2 * (9 + 5 + 9) = 46; p_e = 1 - 46 / 108 = 31/54; kappa = (39/54 - 31/54) / (23/54) = 8/23.
    expectStats(await cohen(pairs(ps), "'linear', [1, 2, 3, 4]"), 8 / 23, 13 / 18, 31 / 54);
    // Unused categories only at the ends keep the distances, so kappa stays 2/5 while p_o, p_e change:
    //   [0, 1, 2, 4, 5]: positions 2, 3, 4, k - 1 = 4: p_o = 1 - 3 / 24 = 7/8, p_e = 1 - 30 / 144 = 19/24,
    //   kappa = (21/24 - 19/24) / (5/24) = 2/5.
    expectStats(await cohen(pairs(ps), "'linear', [0, 1, 2, 4, 5]"), 2 / 5, 7 / 8, 19 / 24);
  });

  it('string categories: observed ones are sorted; an explicit list sets the order', async () => {
    // Textbook example with strings: categories 'no' < 'yes' (checked above). Ordinal strings:
    // (low,low) (low,medium) (medium,medium) (high,medium) (high,high) (medium,high) (low,high).
    const ps: Array<[Rating, Rating]> = [
      ['low', 'low'],
      ['low', 'medium'],
      ['medium', 'medium'],
      ['high', 'medium'],
      ['high', 'high'],
      ['medium', 'high'],
      ['low', 'high'],
    ];
    // Order low, medium, high (k - 1 = 2): |i - j| = 0 1 0 1 0 1 2, D = 5, p_o = 1 - 5/14 = 9/14.
    //   nA = [3, 2, 2], nB = [1, 3, 3]; sum_j nB_j |i - j| = 9, 4, 5; E = 27 + 8 + 10 = 45;
    //   p_e = 1 - 45 / 98 = 53/98; kappa = 1 - 7 * 5 / 45 = 2/9.
    expectStats(await cohen(pairs(ps), `'linear', ${list(['low', 'medium', 'high'])}`), 2 / 9, 9 / 14, 53 / 98);
    // Observed order is alphabetical, high, low, medium: |i - j| = 0 1 0 2 0 2 1, D = 6, p_o = 1 - 6/14 = 4/7.
    //   nA = [2, 3, 2], nB = [3, 1, 3]; sum_j nB_j |i - j| = 7, 6, 7; E = 14 + 18 + 14 = 46;
    //   p_e = 1 - 46 / 98 = 26/49; kappa = 1 - 7 * 6 / 46 = 2/23.
    expectStats(await cohen(pairs(ps), "'linear'"), 2 / 23, 4 / 7, 26 / 49);
    // Unweighted, order does not matter: p_o = 3/7; p_e = (3*1 + 2*3 + 2*3) / 49 = 15/49; kappa = (21 - 15) / (49 - 15) = 3/17.
    expectStats(await cohen(pairs(ps)), 3 / 17, 3 / 7, 15 / 49);
  });

  it('ignores pairs with a NULL rating (and NULL elements)', async () => {
    const withNulls: Array<[Rating, Rating]> = [['yes', null], ...TEXTBOOK.slice(0, 30), [null, 'no'], [null, null], ...TEXTBOOK.slice(30)];
    const r = await cohen(pairs(withNulls));
    expectStats(r, 0.4, 0.7, 0.5);
    expect(r.n).toBe(50);
    const r2 = await cohen(`list_concat(${pairs(TEXTBOOK)}, [NULL])`);
    expectStats(r2, 0.4, 0.7, 0.5);
    expect(r2.n).toBe(50);
  });
});

describe('cohen_kappa: edge cases', () => {
  it('no pairs', async () => {
    const none = { kappa: null, observed: null, expected: null, n: 0, k: 0, reason: 'no pairs' };
    expect(await cohen('[]::STRUCT(a INTEGER, b INTEGER)[]')).toEqual(none);
    expect(await cohen('NULL::STRUCT(a INTEGER, b INTEGER)[]')).toEqual(none);
    expect(
      await cohen(
        pairs([
          [1, null],
          [null, 2],
        ]),
      ),
    ).toEqual(none);
    expect(await cohen('[]::STRUCT(a INTEGER, b INTEGER)[]', "'linear', [1, 2, 3]")).toEqual({ ...none, k: 3 });
  });

  it('p_e = 1 (both raters constant on the same category): NULL with a reason', async () => {
    const reason = 'expected agreement is 1: kappa undefined';
    expect(await cohen(pairs(times(4, [3, 3])))).toEqual({ kappa: null, observed: 1, expected: 1, n: 4, k: 1, reason });
    // With more categories listed, weighted: every mass sits on category 3, so p_o = p_e = 1 still.
    expect(await cohen(pairs(times(4, [3, 3])), "'linear', [1, 2, 3]")).toEqual({ kappa: null, observed: 1, expected: 1, n: 4, k: 3, reason });
    expect(await cohen(pairs(times(4, ['x', 'x'])), "'none', ['x', 'y']")).toEqual({ kappa: null, observed: 1, expected: 1, n: 4, k: 2, reason });
  });

  it('one constant rater while the other varies: kappa = 0 exactly, for every weighting', async () => {
    // A always 2; B = 1, 2, 3, 2. Unweighted: p_o = 2/4; p_e = pA_2 pB_2 = 1 * 2/4; kappa = 0.
    const ps: Array<[Rating, Rating]> = [
      [2, 1],
      [2, 2],
      [2, 3],
      [2, 2],
    ];
    expectStats(await cohen(pairs(ps)), 0, 0.5, 0.5);
    // Linear (k - 1 = 2): |i - j| = 1 0 1 0, p_o = 1 - 2/8 = 0.75; E = nA_2 * (1*1 + 2*0 + 1*1) = 4 * 2 = 8,
    //   p_e = 1 - 8 / 32 = 0.75; kappa = 0.
    // Quadratic ((k - 1)^2 = 4): (i - j)^2 = 1 0 1 0, p_o = 1 - 2/16 = 0.875; E = 4 * (1*1 + 2*0 + 1*1) = 8,
    //   p_e = 1 - 8 / 64 = 0.875; kappa = 0.
    // (In general p_o = p_e whenever one rater is constant: kappa is 0 for any weights.)
    for (const [w, p] of [
      ['linear', 0.75],
      ['quadratic', 0.875],
    ] as const) {
      const r = await cohen(pairs(ps), `'${w}'`);
      expectStats(r, 0, p, p);
      expect(r.kappa).toBe(0);
    }
    expect((await cohen(pairs(ps))).kappa).toBe(0);
    // The constant rater as B, and a variance-free case with a category gap.
    expect((await cohen(pairs(ps.map(([a, b]) => [b, a] as [Rating, Rating])), "'quadratic', [1, 2, 3, 4, 5]")).kappa).toBe(0);
  });

  it('perfect agreement with variance: kappa = 1', async () => {
    // (1,1) (2,2) (3,3) (2,2): p_o = 1; unweighted p_e = (1*1 + 2*2 + 1*1) / 16 = 6/16.
    const ps: Array<[Rating, Rating]> = [
      [1, 1],
      [2, 2],
      [3, 3],
      [2, 2],
    ];
    expectStats(await cohen(pairs(ps)), 1, 1, 6 / 16);
    // Linear (k - 1 = 2): E = sum nA_i nB_j |i - j| = 1*2*1 + 1*1*2 + 2*1*1 + 2*1*1 + 1*1*2 + 1*2*1 = 12;
    //   p_e = 1 - 12 / 32 = 20/32.
    expectStats(await cohen(pairs(ps), "'linear'"), 1, 1, 20 / 32);
    expect((await cohen(pairs(ps), "'quadratic'")).kappa).toBe(1);
  });

  it('a rating outside the explicit categories: NULL naming the (smallest) value', async () => {
    expect(
      await cohen(
        pairs([
          [1, 1],
          [2, 7],
          [9, 2],
        ]),
        "'none', [1, 2, 3]",
      ),
    ).toEqual({ kappa: null, observed: null, expected: null, n: 3, k: 3, reason: 'value outside the categories: 7' });
    expect(
      (
        await cohen(
          pairs([
            ['yes', 'maybe'],
            ['no', 'no'],
          ]),
          `'linear', ${list(['no', 'yes'])}`,
        )
      ).reason,
    ).toBe('value outside the categories: maybe');
    // A NULL rating is never "outside": its pair is ignored.
    expectStats(await cohen(pairs([...TEXTBOOK, [null, 'maybe']]), `'none', ${list(['no', 'yes'])}`), 0.4, 0.7, 0.5);
  });

  it('weighted kappa with fewer than 2 categories, unknown weights, bad category lists', async () => {
    expect(await cohen(pairs(times(3, [4, 4])), "'linear'")).toEqual({
      kappa: null,
      observed: null,
      expected: null,
      n: 3,
      k: 1,
      reason: 'weighted kappa needs at least 2 categories',
    });
    expect((await cohen(pairs(times(3, ['x', 'x'])), `'quadratic', ['x']`)).reason).toBe('weighted kappa needs at least 2 categories');
    expect(await cohen(pairs(ORDINAL), "'cubic'")).toEqual({
      kappa: null,
      observed: null,
      expected: null,
      n: 10,
      k: 5,
      reason: 'unknown weights: cubic (use none, linear or quadratic)',
    });
    expect((await cohen(pairs(ORDINAL), 'NULL')).reason).toBe('unknown weights: NULL (use none, linear or quadratic)');
    expect((await cohen(pairs(ORDINAL), "'none', [1, 2, 2, 3, 4, 5]")).reason).toBe('categories contain duplicates or NULL');
    expect((await cohen(pairs(ORDINAL), "'none', [1, 2, NULL, 3, 4, 5]")).reason).toBe('categories contain duplicates or NULL');
  });
});

// Fleiss (1971) as on Wikipedia's "Fleiss' kappa" page: 10 subjects, 14 raters, categories 1..5.
const FLEISS_1971 = [
  [0, 0, 0, 0, 14],
  [0, 2, 6, 4, 2],
  [0, 0, 3, 5, 6],
  [0, 3, 9, 2, 0],
  [2, 2, 8, 1, 1],
  [7, 7, 0, 0, 0],
  [3, 2, 6, 3, 0],
  [2, 5, 3, 2, 2],
  [6, 5, 2, 1, 0],
  [0, 2, 2, 3, 7],
];
const expand = (counts: number[][]): number[][] => counts.map((row) => row.flatMap((c, j) => Array.from({ length: c }, () => j + 1)));
const subjects = (ss: Rating[][]): string => `[${ss.map(list).join(', ')}]`;

describe('fleiss_kappa', () => {
  it('returns the documented struct type', async () => {
    expect(await one(`SELECT typeof(fleiss_kappa([[1, 2]]))`)).toBe(
      'STRUCT(kappa DOUBLE, observed DOUBLE, expected DOUBLE, n_subjects BIGINT, n_raters BIGINT, k BIGINT, reason VARCHAR)',
    );
  });

  it('Fleiss (1971): P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210', async () => {
    // sum_j n_ij^2 per subject: 196, 60, 70, 94, 74, 98, 58, 46, 66, 66; minus n = 14 and over n (n - 1) = 182:
    //   P_i = 182, 46, 56, 80, 60, 84, 44, 32, 52, 52 (/182), sum 688; P-bar = 688 / 1820 = 172/455 = 0.378022.
    // Column totals 20, 28, 39, 21, 32 (of 140): P-bar_e = (400 + 784 + 1521 + 441 + 1024) / 19600 = 4170/19600
    //   = 417/1960 = 0.212755.
    // kappa = (172/455 - 417/1960) / (1543/1960) = (9632 - 5421)/25480 / (20059/25480) = 4211/20059 = 0.209931.
    const ss = expand(FLEISS_1971);
    expect(ss.every((s) => s.length === 14)).toBe(true);
    const r = await fleiss(subjects(ss));
    expectStats(r, 4211 / 20059, 172 / 455, 417 / 1960);
    expect([r.n_subjects, r.n_raters, r.k]).toEqual([10, 14, 5]);
    expect(r.kappa!.toFixed(3)).toBe('0.210');
    // Explicit categories, including unused ones, change k only.
    const r2 = await fleiss(subjects(ss), '[0, 1, 2, 3, 4, 5, 6]');
    expectStats(r2, 4211 / 20059, 172 / 455, 417 / 1960);
    expect(r2.k).toBe(7);
  });

  it('a small case by hand', async () => {
    // [1,1,2] [2,2,2] [1,3,3]: sum_j n_ij^2 = 5, 9, 5; P_i = (5-3)/6, (9-3)/6, (5-3)/6 = 1/3, 1, 1/3; P-bar = 5/9.
    // Totals 1: 3, 2: 4, 3: 2 of 9: P-bar_e = (9 + 16 + 4) / 81 = 29/81; kappa = (45/81 - 29/81) / (52/81) = 4/13.
    const r = await fleiss('[[1, 1, 2], [2, 2, 2], [1, 3, 3]]');
    expectStats(r, 4 / 13, 5 / 9, 29 / 81);
    expect([r.n_subjects, r.n_raters, r.k]).toEqual([3, 3, 3]);
    // Strings, NULL ratings dropped, a NULL subject ignored.
    const r2 = await fleiss("[['a', NULL, 'a', 'b'], NULL, ['b', 'b', 'b'], ['a', 'c', NULL, 'c']]");
    expectStats(r2, 4 / 13, 5 / 9, 29 / 81);
    expect([r2.n_subjects, r2.n_raters, r2.k]).toEqual([3, 3, 3]);
  });

  it('edge cases', async () => {
    const nulls = { kappa: null, observed: null, expected: null };
    expect(await fleiss('[]::INTEGER[][]')).toEqual({ ...nulls, n_subjects: 0, n_raters: null, k: 0, reason: 'no subjects' });
    expect(await fleiss('NULL::INTEGER[][]')).toEqual({ ...nulls, n_subjects: 0, n_raters: null, k: 0, reason: 'no subjects' });
    expect(await fleiss('[[1, 2], [1, 2, 3]]')).toEqual({
      ...nulls,
      n_subjects: 2,
      n_raters: null,
      k: 3,
      reason: 'subjects have different numbers of ratings',
    });
    expect((await fleiss('[[1, 2, NULL], [1, 2, 3]]')).reason).toBe('subjects have different numbers of ratings');
    expect(await fleiss('[[1], [2]]')).toEqual({ ...nulls, n_subjects: 2, n_raters: 1, k: 2, reason: 'fewer than 2 ratings per subject' });
    expect((await fleiss('[[1, NULL], [NULL, 2]]')).reason).toBe('fewer than 2 ratings per subject');
    // Everyone on one category: P-bar = 1, P-bar_e = 1.
    expect(await fleiss('[[1, 1], [1, 1], [1, 1]]')).toEqual({
      kappa: null,
      observed: 1,
      expected: 1,
      n_subjects: 3,
      n_raters: 2,
      k: 1,
      reason: 'expected agreement is 1: kappa undefined',
    });
    expect((await fleiss('[[1, 1], [1, 1]]', '[1, 2, 3]')).reason).toBe('expected agreement is 1: kappa undefined');
    expect(await fleiss('[[1, 2], [3, 4]]', '[1, 2, 3]')).toEqual({ ...nulls, n_subjects: 2, n_raters: 2, k: 3, reason: 'value outside the categories: 4' });
    expect((await fleiss("[['x', 'y']]", "['x', 'y', 'y']")).reason).toBe('categories contain duplicates or NULL');
    // Perfect agreement with variance: P_i = 1, P-bar_e = 0.5^2 + 0.5^2 = 0.5, kappa = 1.
    expectStats(await fleiss('[[1, 1, 1], [2, 2, 2]]'), 1, 1, 0.5);
    // No agreement at all, 2 raters: [1,2] [2,1]: P_i = 0, P-bar_e = 0.5; kappa = -0.5 / 0.5 = -1.
    expectStats(await fleiss('[[1, 2], [2, 1]]'), -1, 0, 0.5);
  });
});

interface Reference {
  cohen: Array<{
    case: number;
    pairs: Array<[Rating, Rating]>;
    categories: Rating[] | null;
    n: number;
    k: number;
    results: Record<'none' | 'linear' | 'quadratic', { kappa: number; observed: number; expected: number }>;
  }>;
  fleiss: Array<{
    case: number;
    subjects: Rating[][];
    categories: Rating[] | null;
    n_subjects: number;
    n_raters: number;
    k: number;
    kappa: number;
    observed: number;
    expected: number;
  }>;
}
const reference = JSON.parse(readFileSync(join(repoRoot, 'test', 'expected', 'agreement.json'), 'utf8')) as Reference;

describe('random cases against scikit-learn and a plain-Python Fleiss (test/expected/agreement.json)', () => {
  it('has the cases', () => {
    expect(reference.cohen.length).toBe(10);
    expect(reference.fleiss.length).toBe(6);
  });

  it.each(reference.cohen.map((c) => [c.case, c] as const))('cohen case %i', async (_, c) => {
    for (const w of ['none', 'linear', 'quadratic'] as const) {
      const r = await cohen(pairs(c.pairs), `'${w}', ${c.categories ? list(c.categories) : 'NULL'}`);
      const e = c.results[w];
      expectStats(r, e.kappa, e.observed, e.expected);
      expect([r.n, r.k]).toEqual([c.n, c.k]);
    }
  });

  it.each(reference.fleiss.map((c) => [c.case, c] as const))('fleiss case %i', async (_, c) => {
    const r = await fleiss(subjects(c.subjects), c.categories ? list(c.categories) : '');
    expectStats(r, c.kappa, c.observed, c.expected);
    expect([r.n_subjects, r.n_raters, r.k]).toEqual([c.n_subjects, c.n_raters, c.k]);
  });
});

describe('use in GROUP BY queries', () => {
  it('one kappa per dimension, from rows of (dimension, judge, human)', async () => {
    const rows: Array<[string, number | null, number | null]> = [
      ...ORDINAL.map(([a, b]) => ['tone', a, b] as [string, number, number]),
      // accuracy: (5,5) (4,4) (5,5) (3,4), plus a row with no human score (ignored).
      // p_o = 3/4; A: 3:1, 4:1, 5:2; B: 4:2, 5:2; p_e = (1*2 + 2*2) / 16 = 6/16; kappa = (12 - 6) / (16 - 6) = 0.6.
      ['accuracy', 5, 5],
      ['accuracy', 4, 4],
      ['accuracy', 5, 5],
      ['accuracy', 3, 4],
      ['accuracy', 2, null],
      ['empty', 3, null],
    ];
    await db.run(
      `CREATE OR REPLACE TEMP TABLE ratings AS SELECT * FROM (VALUES ${rows.map((r) => `(${r.map(lit).join(', ')})`).join(', ')}) t(dimension, judge, human)`,
    );
    const got = await db.all<{ dimension: string; r: Cohen; q: number }>(`
      SELECT dimension, cohen_kappa(list({'a': judge, 'b': human}), 'none', [1, 2, 3, 4, 5]) AS r,
             cohen_kappa(list({'a': judge, 'b': human}), weights := 'quadratic', categories := [1, 2, 3, 4, 5]).kappa AS q
      FROM ratings GROUP BY dimension ORDER BY dimension`);
    expect(got.map((g) => g.dimension)).toEqual(['accuracy', 'empty', 'tone']);
    expectStats(got[0]!.r, 0.6, 0.75, 6 / 16);
    expect([got[0]!.r.n, got[0]!.r.k]).toEqual([4, 5]);
    // accuracy, quadratic (k - 1 = 4, /16): (i - j)^2 = 0 0 0 1, p_o = 1 - 1/64; nA (1..5) = [0, 0, 1, 1, 2],
    //   nB = [0, 0, 0, 2, 2]; E = 1*(2*1 + 2*4) + 1*(2*0 + 2*1) + 2*(2*1 + 2*0) = 10 + 2 + 4 = 16; kappa = 1 - 4*1/16 = 0.75.
    expect(Math.abs(got[0]!.q - 0.75)).toBeLessThan(1e-12);
    expect(got[1]!.r).toEqual({ kappa: null, observed: null, expected: null, n: 0, k: 5, reason: 'no pairs' });
    expect(got[1]!.q).toBeNull();
    expectStats(got[2]!.r, 19 / 79, 0.4, 0.21);
    expect(Math.abs(got[2]!.q - 131 / 191)).toBeLessThan(1e-12);
  });

  it('columns named like the macro parameters are not confused with them', async () => {
    // DuckDB expands macros by name; the arguments here reference columns called pairs, weights, categories.
    await db.run(`CREATE OR REPLACE TEMP TABLE odd AS SELECT judge AS weights, human AS pairs, 'linear' AS categories FROM ratings WHERE dimension = 'tone'`);
    const q = await one<number>(`SELECT cohen_kappa(list({'a': weights, 'b': pairs}), any_value(categories)).kappa FROM odd`);
    expect(Math.abs(q - 19 / 39)).toBeLessThan(1e-12);
  });
});
