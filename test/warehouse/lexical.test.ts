import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendRow } from '../../src/db/append-row.js';
import { Database } from '../../src/db/database.js';
import { computeLexical } from '../../src/stats/lexical.js';
import { lapsSubsets, type LapsStream } from '../../src/stats/laps-subsets.js';
import { repoRoot } from '../helpers/cli.js';

/**
 * The lexical-diversity SQL (warehouse/02_lexical.sql) against values from outside our code:
 * test/expected/lexical.json (NLTK 3.8 and the LAPS reference procedure in Python, see
 * test/expected/lexical_reference.py), a five-sentence Self-BLEU worked by hand, and a
 * brute-force pairwise Self-BLEU written here from NLTK's definition.
 */

let db: Database;
beforeAll(async () => {
  db = await Database.open(':memory:');
  await db.run(readFileSync(join(repoRoot, 'warehouse', '02_lexical.sql'), 'utf8'));
});
afterAll(() => db.close());

interface Line {
  dialogue_id: string;
  turn: number;
  speaker: string;
  text: string;
}
const expected = JSON.parse(readFileSync(join(repoRoot, 'test', 'expected', 'lexical.json'), 'utf8'));
const corpus = (name: string): Line[] =>
  readFileSync(join(repoRoot, 'test', 'fixtures', 'lexical', `${name}.jsonl`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
const groups = (lines: Line[]): Record<string, Line[]> => ({
  both: lines,
  user: lines.filter((l) => l.speaker === 'user'),
  assistant: lines.filter((l) => l.speaker === 'assistant'),
});
const sqlString = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** Close to a reference value: relative 1e-12 (the sums run in another order than Python's). */
const close = (actual: number | null, want: number, tol = 1e-12) => {
  expect(actual).not.toBeNull();
  expect(Math.abs(actual! - want)).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(want)));
};

/** A table of utterances: grp, utt, text (utt = position in the corpus). */
async function loadUtterances(table: string, byGroup: Record<string, Line[]>): Promise<void> {
  await db.run(`CREATE OR REPLACE TABLE ${table} (grp VARCHAR, utt INTEGER, text VARCHAR)`);
  const app = await db.appender(table);
  for (const [g, lines] of Object.entries(byGroup)) lines.forEach((l, i) => appendRow(app, [g, i, l.text]));
  app.closeSync();
}

/** Units lists given directly: grp, utt, units. */
async function loadUnits(table: string, byGroup: Record<string, string[][]>): Promise<void> {
  const rows = Object.entries(byGroup).flatMap(([g, us]) => us.map((u, i) => `(${sqlString(g)}, ${i}, [${u.map(sqlString).join(', ')}]::VARCHAR[])`));
  await db.run(`CREATE OR REPLACE TABLE ${table} AS SELECT * FROM (VALUES ${rows.join(', ')}) t(grp, utt, units)`);
}

async function loadSubsets(
  table: string,
  byGroup: Record<string, Line[]>,
  params: Record<LapsStream, { iterations: number; token_budget: number }>,
): Promise<void> {
  await db.run(`CREATE OR REPLACE TABLE ${table} (grp VARCHAR, stream VARCHAR, iteration INTEGER, pos INTEGER, text VARCHAR)`);
  const app = await db.appender(table);
  for (const [g, lines] of Object.entries(byGroup)) {
    for (const stream of ['dist', 'self_bleu'] as const) {
      const p = params[stream];
      for (const s of lapsSubsets(
        lines.map((l) => l.text),
        stream,
        { iterations: p.iterations, tokenBudget: p.token_budget },
      )) {
        s.texts.forEach((t, i) => appendRow(app, [g, stream, s.iteration, i, t]));
      }
    }
  }
  app.closeSync();
}

type Row = Record<string, number | string | null>;

describe('Self-BLEU (exact, linear in the corpus)', () => {
  it('five sentences worked by hand', async () => {
    // Word level; each sentence against the other four (NLTK sentence_bleu, weights 1/4, method1):
    // "a b c d": p = 4/4, 3/3, 1/2 (abc yes, bcd no), 0/1 -> 0.1; closest ref length 4, BP 1 -> 0.05^(1/4)
    // "a b c e": p = 4/4, 2/3 (ce no), 1/2, 0.1; BP 1 -> (1/30)^(1/4)
    // "a b":     p = 2/2, 1/1, no trigram -> 0.1/1, 0.1; refs 4,4,4,1: closest 1 < 2, BP 1 -> 0.01^(1/4)
    // "c d a b": p = 4/4, 2/3 (da no), 0/2 -> 0.1/2, 0.1; BP 1 -> (1/300)^(1/4)
    // "e":       p = 1/1 (e in "a b c e"), 0.1, 0.1, 0.1; refs 4,4,2,4: closest 2, BP = exp(1 - 2/1) -> e^-1 * 0.001^(1/4)
    const hand = [0.05 ** 0.25, (1 / 30) ** 0.25, 0.01 ** 0.25, (1 / 300) ** 0.25, Math.exp(-1) * 0.001 ** 0.25];
    await loadUnits('five', { g: ['a b c d', 'a b c e', 'a b', 'c d a b', 'e'].map((s) => s.split(' ')) });
    const scores = await db.all<{ bleu: number }>(`SELECT bleu FROM self_bleu_scores(five) ORDER BY utt`);
    scores.forEach((s, i) => close(s.bleu, hand[i]!));
    const [mean] = await db.all<{ self_bleu: number; n_utterances: number }>(`SELECT * FROM self_bleu(five)`);
    close(mean!.self_bleu, hand.reduce((a, b) => a + b) / 5); // 0.3044171923778631, as NLTK 3.8 prints it
    expect(mean!.n_utterances).toBe(5);
  });

  it('equals a brute-force pairwise computation on random corpora (to 1e-12)', async () => {
    // Small vocabularies and lengths 0-12 give many repeated n-grams, ties and clipping by a second holder.
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const corpora: Record<string, string[][]> = {};
    for (let c = 0; c < 12; c++) {
      const vocab = 2 + (c % 5);
      const n = 2 + Math.floor(rand() * 30);
      corpora[`c${c}`] = Array.from({ length: n }, () => Array.from({ length: Math.floor(rand() * 13) }, () => `t${Math.floor(rand() * vocab)}`));
    }
    await loadUnits('random_corpora', corpora);
    const got = await db.all<{ grp: string; utt: number; bleu: number }>(`SELECT grp, utt, bleu FROM self_bleu_scores(random_corpora) ORDER BY grp, utt`);
    let compared = 0;
    for (const r of got) {
      const us = corpora[r.grp]!;
      close(
        r.bleu,
        bruteForceBleu(
          us[r.utt]!,
          us.filter((_, j) => j !== r.utt),
        ),
      );
      compared++;
    }
    expect(compared).toBe(Object.values(corpora).reduce((a, c) => a + c.length, 0));
  });

  it('from shared texts (self_bleu_shared_scores, as the laps subsets use it) equals the brute force too', async () => {
    // A pool of 25 texts; 10 grps draw 2-20 of them (the same text may appear twice in a grp, as two
    // messages with equal text can), so most texts serve several grps. Empty texts included.
    let seed = 777;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pool = Array.from({ length: 25 }, () => Array.from({ length: Math.floor(rand() * 11) }, () => `t${Math.floor(rand() * 3)}`));
    const members: Record<string, number[]> = {};
    for (let g = 0; g < 10; g++) members[`g${g}`] = Array.from({ length: 2 + Math.floor(rand() * 19) }, () => Math.floor(rand() * pool.length));
    await db.run(
      `CREATE OR REPLACE TABLE shared_texts AS SELECT * FROM (VALUES ${pool.map((u, tid) => `(${tid}, [${u.map(sqlString).join(', ')}]::VARCHAR[])`).join(', ')}) t(tid, units)`,
    );
    await db.run(
      `CREATE OR REPLACE TABLE shared_members AS SELECT * FROM (VALUES ${Object.entries(members)
        .flatMap(([g, ts]) => ts.map((tid, utt) => `(${sqlString(g)}, ${utt}, ${tid})`))
        .join(', ')}) t(grp, utt, tid)`,
    );
    const got = await db.all<{ grp: string; utt: number; bleu: number }>(
      `SELECT grp, utt, bleu FROM self_bleu_shared_scores(shared_members, shared_texts) ORDER BY grp, utt`,
    );
    expect(got.length).toBe(Object.values(members).reduce((a, m) => a + m.length, 0));
    for (const r of got) {
      const us = members[r.grp]!.map((tid) => pool[tid]!);
      close(
        r.bleu,
        bruteForceBleu(
          us[r.utt]!,
          us.filter((_, j) => j !== r.utt),
        ),
      );
    }
  });

  it('from counted texts (self_bleu_counted_scores: a text held k times, as the laps subsets give them) equals the brute force', async () => {
    // 12 grps draw texts from a pool of 20 with multiplicities 1-4 (a text held k >= 2 times finds itself in
    // another copy); tiny vocabularies give ties, clipping by a second holder and empty texts.
    let seed = 4242;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const pool = Array.from({ length: 20 }, () => Array.from({ length: Math.floor(rand() * 9) }, () => `t${Math.floor(rand() * 3)}`));
    const held: Record<string, Map<number, number>> = {};
    for (let g = 0; g < 12; g++) {
      const m = new Map<number, number>();
      const distinct = 1 + Math.floor(rand() * 6);
      while (m.size < distinct) m.set(Math.floor(rand() * pool.length), 1 + Math.floor(rand() * (g % 3 === 0 ? 1 : 4)));
      held[`g${g}`] = m;
    }
    await db.run(
      `CREATE OR REPLACE TABLE counted_texts AS SELECT * FROM (VALUES ${pool.map((u, tid) => `(${tid}, [${u.map(sqlString).join(', ')}]::VARCHAR[])`).join(', ')}) t(tid, units)`,
    );
    await db.run(
      `CREATE OR REPLACE TABLE counted_members AS SELECT * FROM (VALUES ${Object.entries(held)
        .flatMap(([g, m]) => [...m].map(([tid, k]) => `(${sqlString(g)}, ${tid}, ${k})`))
        .join(', ')}) t(grp, tid, k)`,
    );
    const got = await db.all<{ grp: string; utt: number; k: number; bleu: number | null }>(
      `SELECT grp, utt, k, bleu FROM self_bleu_counted_scores(counted_members, counted_texts) ORDER BY grp, utt`,
    );
    expect(got.length).toBe(Object.values(held).reduce((a, m) => a + m.size, 0));
    let compared = 0;
    for (const r of got) {
      const utterances = [...held[r.grp]!].flatMap(([tid, k]) => Array.from({ length: k }, () => tid));
      expect(held[r.grp]!.get(r.utt)).toBe(r.k);
      const self = utterances.indexOf(r.utt);
      const refs = utterances.filter((_, j) => j !== self).map((tid) => pool[tid]!);
      if (refs.length === 0) {
        expect(r.bleu).toBeNull();
      } else {
        close(r.bleu, bruteForceBleu(pool[r.utt]!, refs));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(20);
  });

  it('the code-point form (self_bleu_counted_char_scores, n-grams packed into integers) equals the struct-keyed one', async () => {
    const texts = ['abcab', 'héllo wörld', 'ab', '', 'abcabcabc', '\u{1F600}a\u{1F600}a', 'zzzz'];
    await db.run(
      `CREATE OR REPLACE TABLE char_texts AS SELECT tid, laps_chars(text) AS units FROM (VALUES ${texts.map((t, i) => `(${i}, ${sqlString(t)})`).join(', ')}) t(tid, text)`,
    );
    await db.run(`CREATE OR REPLACE TABLE char_members AS SELECT * FROM (VALUES ('a', 0, 1), ('a', 1, 2), ('a', 2, 1), ('a', 4, 1), ('a', 5, 1),
      ('b', 3, 1), ('b', 4, 3), ('b', 6, 1), ('c', 5, 1)) t(grp, tid, k)`);
    const q = (macro: string) =>
      db.all<Row>(`SELECT grp, utt, k, hyp_len, ref_len, m1, m2, m3, m4, bleu FROM ${macro}(char_members, char_texts) ORDER BY grp, utt`);
    const packed = await q('self_bleu_counted_char_scores');
    expect(packed).toHaveLength(9);
    expect(packed).toEqual(await q('self_bleu_counted_scores'));
  });

  it('edge cases: one utterance has no references (NULL); an empty hypothesis scores 0; the closest length ties to the shorter', async () => {
    await loadUnits('edges', {
      alone: [['x', 'y']],
      empty: [[], ['a', 'b'], ['a', 'b']],
      // hypothesis of length 3; other lengths 2 and 4 are equally close -> 2 (the shorter), so BP = 1 (3 > 2).
      tie: [
        ['a', 'b', 'c'],
        ['a', 'b'],
        ['a', 'b', 'c', 'd'],
      ],
    });
    const rows = await db.all<{ grp: string; utt: number; ref_len: number | null; bleu: number | null }>(
      `SELECT grp, utt, ref_len, bleu FROM self_bleu_scores(edges) ORDER BY grp, utt`,
    );
    const by = (g: string, u: number) => rows.find((r) => r.grp === g && r.utt === u)!;
    expect(by('alone', 0).bleu).toBeNull();
    expect(by('empty', 0).bleu).toBe(0);
    expect(by('tie', 0).ref_len).toBe(2);
    // "a b c" vs ["a b", "a b c d"]: p = 3/3, 2/2, 1/1, 0 -> 0.1/1 (no 4-gram in the hypothesis); BP 1.
    close(by('tie', 0).bleu, 0.1 ** 0.25);
    const [alone] = await db.all<{ self_bleu: number | null }>(`SELECT self_bleu FROM self_bleu(edges) WHERE grp = 'alone'`);
    expect(alone!.self_bleu).toBeNull();
  });
});

describe('Dist-n and Ent-n for any n', () => {
  it('match hand counts', async () => {
    // "a b a b a" and "b a b": trigrams aba, bab, aba | bab -> 4 trigrams, 2 distinct: Dist-3 = 0.5.
    // 5-grams: only "a b a b a" has one -> Dist-5 = 1. Bigrams: ab ba ab ba | ba ab -> counts ab 3, ba 3:
    // Ent-2 = -2 * (3/6) ln(3/6) = ln 2.
    await loadUnits('hand', {
      g: [
        ['a', 'b', 'a', 'b', 'a'],
        ['b', 'a', 'b'],
      ],
    });
    const [d3] = await db.all<Row>(`SELECT * FROM dist_n(hand, 3)`);
    expect(d3).toMatchObject({ n_ngrams: 4, n_distinct: 2, dist: 0.5 });
    const [d5] = await db.all<Row>(`SELECT * FROM dist_n(hand, 5)`);
    expect(d5).toMatchObject({ n_ngrams: 1, n_distinct: 1, dist: 1 });
    const [e2] = await db.all<Row>(`SELECT * FROM ent_n(hand, 2)`);
    close(e2!.ent as number, Math.log(2));
    // T + 1e-10 as the reference code does: -(2 * (3/T) (ln 3 - ln T)) with T = 6 + 1e-10.
    const [e2eps] = await db.all<Row>(`SELECT * FROM ent_n(hand, 2, 1e-10)`);
    const T = 6 + 1e-10;
    close(e2eps!.ent as number, -2 * (3 / T) * (Math.log(3) - Math.log(T)));
    // No n-gram at all: NULL, not 0 and not an error.
    const [none] = await db.all<Row>(`SELECT * FROM dist_n(hand, 9)`);
    expect(none).toBeUndefined();
  });
});

describe('tokenisers', () => {
  it('python_split splits like str.split() (values from Python)', async () => {
    // Python: 'a\x1cb\x85c\xa0d\u3000e\ufefff  g'.split() -> ['a', 'b', 'c', 'd', 'e\ufefff', 'g']
    const [r] = await db.all<{ t: string[] }>(
      `SELECT python_split('a' || chr(28) || 'b' || chr(133) || 'c' || chr(160) || 'd' || chr(12288) || 'e' || chr(65279) || 'f  g') AS t`,
    );
    expect(r!.t).toEqual(['a', 'b', 'c', 'd', 'e\ufefff', 'g']);
  });

  it('lexical_words keeps inner apostrophes and drops punctuation', async () => {
    const [r] = await db.all<{ t: string[] }>(`SELECT lexical_words('Don''t stop, O''Clock! ''quoted'' Café 3.5x_y') AS t`);
    // Python: re.findall(r"[^\W_]+(?:'[^\W_]+)*", text.lower())
    expect(r!.t).toEqual(["don't", 'stop', "o'clock", 'quoted', 'café', '3', '5x', 'y']);
  });

  it('laps_chars of an empty string is empty (not one empty character)', async () => {
    const [r] = await db.all<{ a: number[]; b: number[] }>(`SELECT laps_chars('') AS a, laps_chars('Ab é') AS b`);
    expect(r!.a).toEqual([]);
    expect(r!.b).toEqual([97, 98, 32, 233]); // code points of 'a', 'b', ' ', 'é'
  });
});

describe('protocols against the Python reference (test/expected/lexical.json)', () => {
  for (const name of ['small', 'medium']) {
    it(`full: ${name}`, async () => {
      const want = expected.corpora[name].full;
      await loadUtterances(`full_${name}`, groups(corpus(name)));
      const rows = await db.all<Row>(`SELECT * FROM lexical_full(full_${name}) ORDER BY grp`);
      expect(rows.map((r) => r.grp)).toEqual(['assistant', 'both', 'user']);
      for (const r of rows) {
        const w = want[r.grp as string];
        expect(r).toMatchObject({ protocol: 'full', n_utterances: w.n_utterances, n_empty: w.n_empty_utterances, n_tokens: w.n_tokens });
        close(r.dist_1 as number, w.dist_1);
        close(r.dist_2 as number, w.dist_2);
        close(r.ent_4 as number, w.ent_4);
        if (w.self_bleu_nonempty.scope.startsWith('all utterances')) close(r.self_bleu as number, w.self_bleu_nonempty.value);
      }
    });

    it(`laps: ${name}`, async () => {
      const want = expected.corpora[name].laps;
      const byGroup = groups(corpus(name));
      // Self-BLEU with NLTK is slow, so the reference ran it with fewer iterations or a smaller budget; the same here.
      for (const g of Object.keys(byGroup)) {
        await loadSubsets(`laps_${name}`, { [g]: byGroup[g]! }, { dist: want[g].dist_1, self_bleu: want[g].self_bleu });
        const [r] = await db.all<Row>(`SELECT * FROM lexical_laps(laps_${name})`);
        expect(r).toMatchObject({ grp: g, protocol: 'laps', iterations: want[g].dist_1.iterations });
        close(r!.dist_1 as number, want[g].dist_1.value);
        close(r!.dist_2 as number, want[g].dist_2.value);
        close(r!.ent_4 as number, want[g].ent_4.value);
        close(r!.self_bleu as number, want[g].self_bleu.value);
      }
    });
  }

  it('full Self-BLEU on the first 400 utterances of each medium group (the scope the reference used)', async () => {
    const want = expected.corpora.medium.full;
    const byGroup = groups(corpus('medium'));
    await loadUtterances('medium400', Object.fromEntries(Object.entries(byGroup).map(([g, ls]) => [g, ls.slice(0, 400)])));
    const rows = await db.all<Row>(
      `WITH w AS (SELECT grp, utt, lexical_words(text) AS units FROM medium400 WHERE len(lexical_words(text)) > 0) SELECT grp, self_bleu FROM self_bleu(w) ORDER BY grp`,
    );
    expect(rows).toHaveLength(3);
    for (const r of rows) {
      expect(want[r.grp as string].self_bleu_nonempty.scope).toMatch(/^first 400 utterances/);
      close(r.self_bleu as number, want[r.grp as string].self_bleu_nonempty.value);
    }
  });

  it('laps at the real budget: character Self-BLEU on two 7,012-token subsets of the medium corpus', async () => {
    const want = expected.corpora.medium.laps_extra.both_budget7012_self_bleu_2_iterations;
    await loadSubsets(
      'laps_real',
      { both: corpus('medium') },
      { dist: { iterations: 1, token_budget: 7012 }, self_bleu: { iterations: want.iterations, token_budget: want.token_budget } },
    );
    const [r] = await db.all<Row>(`SELECT * FROM lexical_laps(laps_real)`);
    close(r!.self_bleu as number, want.value);
  });

  it('laps from counted subsets (lexical_laps_counted_iterations) gives the per-iteration rows of lexical_laps_iterations', async () => {
    // Every group of the medium corpus with a 300-token budget: many cut subsets, texts drawn many times.
    const byGroup = groups(corpus('medium'));
    const params = { iterations: 6, token_budget: 300 };
    await loadSubsets('laps_plain', byGroup, { dist: params, self_bleu: params });
    await db.run(`CREATE OR REPLACE TABLE laps_text_ids AS SELECT text, row_number() OVER (ORDER BY text)::INTEGER AS tid FROM (SELECT DISTINCT text FROM laps_plain);
      CREATE OR REPLACE TABLE laps_counted AS SELECT grp, stream, iteration, tid, count(*)::INTEGER AS k FROM laps_plain JOIN laps_text_ids USING (text) GROUP BY ALL;`);
    const plain = await db.all<Row>(`SELECT * FROM lexical_laps_iterations(laps_plain) ORDER BY grp, iteration`);
    const counted = await db.all<Row>(`SELECT * FROM lexical_laps_counted_iterations(laps_counted, laps_text_ids) ORDER BY grp, iteration`);
    expect(counted).toHaveLength(18);
    expect(counted.map((r) => [r.grp, r.iteration])).toEqual(plain.map((r) => [r.grp, r.iteration]));
    counted.forEach((r, i) => {
      for (const m of ['dist_1', 'dist_2', 'ent_4', 'self_bleu']) close(r[m] as number, plain[i]![m] as number);
    });
  });

  it('computeLexical (subsets counted, in batches; a group within the budget measured once) equals the per-message macros', async () => {
    // The budget is the smaller one-speaker group's size: that group fits (every iteration is the whole
    // group), the other two are cut.
    const byGroup = groups(corpus('medium'));
    const sizes = Object.fromEntries(Object.entries(byGroup).map(([g, ls]) => [g, ls.reduce((n, l) => n + l.text.split(/\s+/).filter(Boolean).length, 0)]));
    const budget = Math.min(sizes['user']!, sizes['assistant']!);
    expect(Math.max(sizes['user']!, sizes['assistant']!)).toBeGreaterThan(budget);
    await loadUtterances('laps_corpus_medium', byGroup);
    const params = { iterations: 4, token_budget: budget };
    await loadSubsets('laps_medium_plain', byGroup, { dist: params, self_bleu: params });
    const want = await db.all<Row>(`SELECT * FROM lexical_laps(laps_medium_plain) ORDER BY grp`);
    for (const lapsBatchChars of [1_000, 10_000_000]) {
      const rows = await computeLexical(db, 'laps_corpus_medium', 'laps_medium_out', {
        protocols: ['laps'],
        laps: { iterations: params.iterations, tokenBudget: budget },
        lapsBatchChars,
      });
      expect(rows.map((r) => r.grp)).toEqual(['assistant', 'both', 'user']);
      rows.forEach((r, i) => {
        expect(r.iterations).toBe(4);
        for (const m of ['dist_1', 'dist_2', 'ent_4', 'self_bleu'] as const) close(r[m], want[i]![m] as number);
      });
    }
  });

  it('laps on the small corpus with a 60-token budget (every subset is cut)', async () => {
    const want = expected.corpora.small.laps_extra;
    const p = want.both_budget60_dist_1;
    await loadSubsets('laps_cut', { both: corpus('small') }, { dist: p, self_bleu: want.both_budget60_self_bleu });
    const [r] = await db.all<Row>(`SELECT * FROM lexical_laps(laps_cut)`);
    close(r!.dist_1 as number, want.both_budget60_dist_1.value);
    close(r!.dist_2 as number, want.both_budget60_dist_2.value);
    close(r!.ent_4 as number, want.both_budget60_ent_4.value);
    close(r!.self_bleu as number, want.both_budget60_self_bleu.value);
  });
});

/** NLTK 3.8 sentence_bleu (weights 1/4 each, method1), written from its definition, pairwise. */
function bruteForceBleu(hyp: string[], refs: string[][]): number {
  const grams = (u: string[], n: number) => {
    const m = new Map<string, number>();
    for (let i = 0; i + n <= u.length; i++) {
      const k = u.slice(i, i + n).join('\u0000');
      m.set(k, (m.get(k) ?? 0) + 1);
    }
    return m;
  };
  const p: Array<[number, number]> = [];
  for (let n = 1; n <= 4; n++) {
    const h = grams(hyp, n);
    const rs = refs.map((r) => grams(r, n));
    let num = 0;
    let den = 0;
    for (const [k, c] of h) {
      num += Math.min(c, Math.max(0, ...rs.map((r) => r.get(k) ?? 0)));
      den += c;
    }
    p.push([num, Math.max(1, den)]);
  }
  if (p[0]![0] === 0) return 0;
  const c = hyp.length;
  const r = refs
    .map((x) => x.length)
    .reduce((best, len) => (Math.abs(len - c) < Math.abs(best - c) || (Math.abs(len - c) === Math.abs(best - c) && len < best) ? len : best));
  const bp = c > r ? 1 : c === 0 ? 0 : Math.exp(1 - r / c);
  return bp * Math.exp(p.reduce((s, [num, den]) => s + 0.25 * Math.log(num === 0 ? 0.1 / den : num / den), 0));
}
