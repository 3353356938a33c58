import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lapsSubsetIterator, lapsSubsets, pythonSplit, pythonSplitCount } from '../../src/stats/laps-subsets.js';

// Expected values are literals printed by CPython 3.11 or read from test/expected/lexical.json,
// which test/expected/lexical_reference.py writes without looking at our code.

const root = new URL('../../', import.meta.url);

interface SubsetDump {
  token_budget: number;
  iterations: number;
  seed: number;
  streams: { dist: string[][]; self_bleu: string[][] };
}
interface Expected {
  corpora: Record<string, { file: string; laps_subsets: Record<string, SubsetDump> }>;
}

const expected = JSON.parse(readFileSync(new URL('test/expected/lexical.json', root), 'utf8')) as Expected;

function corpusTexts(name: string): string[] {
  const file = expected.corpora[name]!.file;
  return readFileSync(new URL(file, root), 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as { text: string }).text);
}

describe('pythonSplit', () => {
  // [input, Python's s.split()], printed with json.dumps by python3.
  const cases: Array<[string, string[]]> = [
    ['', []],
    ['   ', []],
    ['a', ['a']],
    [' a b ', ['a', 'b']],
    ['a\tb\nc\rd\u000be\ff', ['a', 'b', 'c', 'd', 'e', 'f']],
    ['x\u001cy\u001dz\u001ew\u001fv', ['x', 'y', 'z', 'w', 'v']],
    ['p\u0085q\u00a0r', ['p', 'q', 'r']],
    ['s\u1680t\u2000u\u200av\u2028w\u2029x\u202fy\u205fz\u3000end', ['s', 't', 'u', 'v', 'w', 'x', 'y', 'z', 'end']],
    ['keep\ufeffbom', ['keep\ufeffbom']],
    ['zero\u200bwidth', ['zero\u200bwidth']],
    ['nel\u0085', ['nel']],
    ['  lead and trail\n\n', ['lead', 'and', 'trail']],
    ["don't  stop\t\tnow", ["don't", 'stop', 'now']],
    ['\ud83d\ude00 emoji\u3000\ud83d\ude00', ['\ud83d\ude00', 'emoji', '\ud83d\ude00']],
    ['a\u180eb', ['a\u180eb']],
    ['mixed \u001c\u001d  run', ['mixed', 'run']],
  ];
  it.each(cases)('split(%j)', (input, tokens) => {
    expect(pythonSplit(input)).toEqual(tokens);
    expect(pythonSplitCount(input)).toBe(tokens.length);
  });
});

describe('lapsSubsets against the Python reference dump', () => {
  const cases: Array<[string, string]> = [
    ['medium', 'budget7012'],
    ['small', 'budget7012'],
    ['small', 'budget60'],
  ];
  it.each(cases)('%s corpus, %s: both streams, string for string', (corpus, key) => {
    const dump = expected.corpora[corpus]!.laps_subsets[key]!;
    const texts = corpusTexts(corpus);
    for (const stream of ['dist', 'self_bleu'] as const) {
      const got = lapsSubsets(texts, stream, { iterations: dump.iterations, tokenBudget: dump.token_budget, seed: dump.seed });
      expect(got.map((s) => s.iteration)).toEqual([...Array(dump.iterations).keys()]);
      expect(got.map((s) => s.texts)).toEqual(dump.streams[stream]);
    }
  });

  it('the medium dump really truncates, and the streams part after the first iteration', () => {
    const dump = expected.corpora.medium!.laps_subsets.budget7012!;
    const texts = corpusTexts('medium');
    expect(dump.streams.dist[0]!.length).toBeLessThan(texts.length);
    // Same first subset up to the extra shuffle; later subsets differ because the shuffle consumed draws.
    expect([...dump.streams.self_bleu[0]!].sort()).toEqual([...dump.streams.dist[0]!].sort());
    expect([...dump.streams.self_bleu[1]!].sort()).not.toEqual([...dump.streams.dist[1]!].sort());
  });
});

describe('lapsSubsets on hand-made corpora', () => {
  // Token counts 3, 2, 4, 1 (total 10). The third message uses mixed whitespace, so a cut
  // shows the single-space join.
  const A = ['a b c', 'd e', 'f\tg  h\ni', 'j'];
  // With seed 42, Python's [r.sample(range(4), 4) for _ in range(4)] is
  // [[0, 3, 1, 2], [1, 0, 2, 3], [3, 0, 2, 1], [1, 0, 2, 3]]: the 'dist' stream's orders.

  it("budget 5, 'dist' stream (worked by hand)", () => {
    // it 0: order 0,3,1,2: 'a b c' (3) + 'j' (4); 'd e' needs 6 > 5 -> cut to 1 token: 'd'.
    // it 1: order 1,0,2,3: 'd e' (2) + 'a b c' (5); 'f g h i' -> 0 tokens left -> '' (appended).
    // it 2: order 3,0,2,1: 'j' (1) + 'a b c' (4); 'f g h i' cut to 1 -> 'f'.
    // it 3: same order as it 1.
    expect(lapsSubsets(A, 'dist', { iterations: 4, tokenBudget: 5 }).map((s) => s.texts)).toEqual([
      ['a b c', 'j', 'd'],
      ['d e', 'a b c', ''],
      ['j', 'a b c', 'f'],
      ['d e', 'a b c', ''],
    ]);
  });

  it("budget 6, 'dist' stream: an exactly full subset gets '' and a cut joins with single spaces", () => {
    // it 0: 'a b c' + 'j' + 'd e' = 6 exactly; next message has 0 tokens left -> ''.
    // it 1: 'd e' + 'a b c' = 5; 'f g h i' cut to 1 -> 'f'.
    // it 2: 'j' + 'a b c' = 4; 'f\tg  h\ni' cut to 2 -> 'f g'.
    expect(lapsSubsets(A, 'dist', { iterations: 4, tokenBudget: 6 }).map((s) => s.texts)).toEqual([
      ['a b c', 'j', 'd e', ''],
      ['d e', 'a b c', 'f'],
      ['j', 'a b c', 'f g'],
      ['d e', 'a b c', 'f'],
    ]);
  });

  it("'self_bleu' stream: extra shuffle, and the later orders shift (literals from the Python procedure)", () => {
    // Iteration 0 holds the same texts as the 'dist' stream, reordered; from iteration 1 on the
    // subsets differ because the extra sample() consumed draws.
    expect(lapsSubsets(A, 'self_bleu', { iterations: 4, tokenBudget: 5 }).map((s) => s.texts)).toEqual([
      ['a b c', 'd', 'j'],
      ['a b c', 'f g'],
      ['', 'a b c', 'd e'],
      ['j', 'f\tg  h\ni', ''],
    ]);
    expect(lapsSubsets(A, 'self_bleu', { iterations: 4, tokenBudget: 6 }).map((s) => s.texts)).toEqual([
      ['j', 'a b c', 'd e', ''],
      ['j', 'f g', 'a b c'],
      ['f\tg  h\ni', '', 'd e'],
      ['f\tg  h\ni', 'd e', ''],
    ]);
  });

  it("budget 0: every subset is the first message cut to nothing, ['']", () => {
    for (const stream of ['dist', 'self_bleu'] as const) {
      expect(lapsSubsets(A, stream, { iterations: 4, tokenBudget: 0 }).map((s) => s.texts)).toEqual([[''], [''], [''], ['']]);
    }
  });

  it("a 0-token message still fits when the budget is used up; the next one is cut to ''", () => {
    // Python's [r.sample(range(3), 3) for _ in range(4)] with seed 42: [[2,0,1], [2,1,0], [0,2,1], [2,0,1]].
    // Budget 2, it 1: 'z w' (2, full), '' (0 <= 0 left, kept), 'x y' -> cut to 0 -> ''.
    const B = ['x y', '', 'z w'];
    expect(lapsSubsets(B, 'dist', { iterations: 4, tokenBudget: 2 }).map((s) => s.texts)).toEqual([
      ['z w', ''],
      ['z w', '', ''],
      ['x y', ''],
      ['z w', ''],
    ]);
    expect(lapsSubsets(B, 'self_bleu', { iterations: 4, tokenBudget: 2 }).map((s) => s.texts)).toEqual([
      ['', 'z w'],
      ['x y', ''],
      ['x y', ''],
      ['', 'z w'],
    ]);
  });

  it('a corpus within the budget yields every message each iteration (as a permutation)', () => {
    for (const budget of [10, 100, 7012]) {
      const dist = lapsSubsets(A, 'dist', { iterations: 4, tokenBudget: budget }).map((s) => s.texts);
      // Python: the orders above applied to A.
      expect(dist).toEqual([
        ['a b c', 'j', 'd e', 'f\tg  h\ni'],
        ['d e', 'a b c', 'f\tg  h\ni', 'j'],
        ['j', 'a b c', 'f\tg  h\ni', 'd e'],
        ['d e', 'a b c', 'f\tg  h\ni', 'j'],
      ]);
      const sb = lapsSubsets(A, 'self_bleu', { iterations: 4, tokenBudget: budget }).map((s) => s.texts);
      expect(sb).toEqual([
        ['j', 'a b c', 'd e', 'f\tg  h\ni'],
        ['a b c', 'j', 'f\tg  h\ni', 'd e'],
        ['j', 'f\tg  h\ni', 'a b c', 'd e'],
        ['f\tg  h\ni', 'd e', 'a b c', 'j'],
      ]);
    }
  });

  it('the user group of medium (under 7,012 tokens) gives all its messages every iteration', () => {
    const rows = readFileSync(new URL('test/fixtures/lexical/medium.jsonl', root), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { speaker: string; text: string });
    const user = rows.filter((r) => r.speaker === 'user').map((r) => r.text);
    expect(user.reduce((n, t) => n + pythonSplitCount(t), 0)).toBeLessThan(7012);
    const sorted = [...user].sort();
    for (const s of lapsSubsets(user, 'dist', { iterations: 5 })) expect([...s.texts].sort()).toEqual(sorted);
  });

  it('one message: no extra shuffle, cut each iteration', () => {
    expect(lapsSubsets(['p q r'], 'self_bleu', { iterations: 3, tokenBudget: 2 }).map((s) => s.texts)).toEqual([['p q'], ['p q'], ['p q']]);
  });

  it('empty corpus, defaults, validation, and the lazy iterator', () => {
    expect(lapsSubsets([], 'dist', { iterations: 2 })).toEqual([
      { iteration: 0, texts: [] },
      { iteration: 1, texts: [] },
    ]);
    expect(lapsSubsets(A, 'dist')).toHaveLength(100);
    expect(() => lapsSubsetIterator(A, 'dist', { tokenBudget: -1 })).toThrow(RangeError);
    expect(() => lapsSubsetIterator(A, 'dist', { iterations: 1.5 })).toThrow(RangeError);
    const it0 = lapsSubsetIterator(A, 'dist', { tokenBudget: 5 }).next();
    expect(it0.value).toEqual({ iteration: 0, texts: ['a b c', 'j', 'd'] });
  });

  it("different seed gives Python's orders for that seed", () => {
    // Python: r = random.Random(7); [r.sample(range(4), 4) for _ in range(2)] -> [[2,0,1,3], [0,2,3,1]]
    expect(lapsSubsets(A, 'dist', { iterations: 2, tokenBudget: 100, seed: 7 }).map((s) => s.texts)).toEqual([
      ['f\tg  h\ni', 'a b c', 'd e', 'j'],
      ['a b c', 'f\tg  h\ni', 'j', 'd e'],
    ]);
  });
});
