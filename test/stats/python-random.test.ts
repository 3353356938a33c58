import { describe, expect, it } from 'vitest';
import { PythonRandom, pythonSampleIndices, sampleSetSize } from '../../src/stats/python-random.js';

// Every expected value below was printed once by CPython 3.11.7 (and checked identical under
// Debian's 3.11.2), e.g. `python3 -c 'import random; r=random.Random(42); print([r.random() for _ in range(5)])'`.
// They are literals on purpose: never derive them from our own code.

const r42 = (): PythonRandom => new PythonRandom(42);

describe('PythonRandom, seed 42', () => {
  it('random() matches the first five doubles', () => {
    const r = r42();
    expect(Array.from({ length: 5 }, () => r.random())).toEqual([
      0.6394267984578837, 0.025010755222666936, 0.27502931836911926, 0.22321073814882275, 0.7364712141640124,
    ]);
  });

  it('nextUint32() matches getrandbits(32)', () => {
    const r = r42();
    expect(Array.from({ length: 5 }, () => r.nextUint32())).toEqual([2746317213, 478163327, 107420369, 3184935163, 1181241943]);
  });

  it.each([
    [1, [1, 0, 0, 1, 0, 0, 0, 0]],
    [7, [81, 14, 3, 94, 35, 31, 28, 17]],
    [31, [1373158606, 239081663, 53710184, 1592467581, 590620971, 525901256, 479341423, 299655412]],
    [32, [2746317213, 478163327, 107420369, 3184935163, 1181241943, 1051802512, 958682846, 599310825]],
  ])('getrandbits(%i) x 8', (k, expected) => {
    const r = r42();
    expect(Array.from({ length: 8 }, () => r.getrandbits(k))).toEqual(expected);
  });

  it('getrandbits with mixed widths, k = 0 consuming nothing and k > 32 low word first', () => {
    // [r.getrandbits(k) for k in (0, 1, 7, 31, 32, 33, 40, 53)]
    const r = r42();
    expect([0, 1, 7, 31, 32, 33, 40, 53].map((k) => r.getrandbits(k))).toEqual([0, 1, 14, 53710184, 3184935163, 1181241943, 151282538206, 923193498493097]);
  });

  it('getrandbitsBig for 64 and 100 bits', () => {
    const r = r42();
    expect([r.getrandbitsBig(64), r.getrandbitsBig(100)]).toEqual([2053695854357871005n, 259474555368124611114247330513n]);
  });

  it.each([
    [1, [0, 0, 0, 0, 0, 0]],
    [3, [2, 0, 0, 2, 1, 0]],
    [1000, [654, 114, 25, 759, 281, 250]],
    [2 ** 31 + 1, [478163327, 107420369, 1181241943, 1051802512, 958682846, 599310825]],
    [2 ** 32, [2746317213, 1181241943, 958682846, 3163119785, 1812140441, 127978094]],
    [2 ** 32 + 7, [2746317213, 1181241943, 958682846, 3163119785, 1812140441, 127978094]],
    [2 ** 53 - 1, [1002783120652701, 6679292727990993, 2205789010285143, 1256845828445918, 923193498493097, 6671341247540589]],
  ])('randrange(%i) x 6 (rejection sampling on bit_length(n))', (n, expected) => {
    const r = r42();
    expect(Array.from({ length: 6 }, () => r.randrange(n))).toEqual(expected);
  });

  it('sample(range(10), 10): pool branch; the stream continues where Python does', () => {
    const r = r42();
    expect(r.sample([0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 10)).toEqual([1, 0, 4, 9, 6, 5, 8, 2, 3, 7]);
    expect(r.random()).toBe(0.03178267948178359);
  });

  it('sample(range(100), 5): set branch (n = 100 > setsize 21)', () => {
    expect(sampleSetSize(5)).toBe(21);
    const r = r42();
    expect(Array.from(r.sampleIndices(100, 5))).toEqual([81, 14, 3, 94, 35]);
    expect(r.random()).toBe(0.24489185380347622);
  });

  it('sample(range(200), 6): set branch (setsize 21 + 4**3 = 85 < 200)', () => {
    expect(sampleSetSize(6)).toBe(85);
    const r = r42();
    expect(Array.from(r.sampleIndices(200, 6))).toEqual([163, 28, 6, 189, 70, 62]);
    expect(r.random()).toBe(0.22321073814882275);
  });

  it('sample(range(30), 10) and sample(range(100), 60): pool branch with k < n', () => {
    let r = r42();
    expect(Array.from(r.sampleIndices(30, 10))).toEqual([20, 3, 0, 23, 8, 7, 24, 4, 28, 17]);
    expect(r.random()).toBe(0.08693883262941615);
    r = r42();
    expect(Array.from(r.sampleIndices(100, 60).subarray(0, 20))).toEqual([81, 14, 3, 94, 35, 31, 28, 17, 13, 86, 69, 11, 75, 54, 4, 97, 88, 27, 29, 64]);
    expect(r.random()).toBe(0.1922885902566599);
  });

  it('sample of a non-numeric population, full and partial', () => {
    const r = r42();
    const letters = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    expect(r.sample(letters)).toEqual(['f', 'a', 'g', 'c', 'e', 'd', 'b']);
    expect(r.sample(letters, 3)).toEqual(['f', 'a', 'e']);
    expect(letters).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g']);
  });

  it('sample(range(50000), 50000) via pythonSampleIndices', () => {
    const r = r42();
    const x = pythonSampleIndices(r, 50000);
    expect(Array.from(x.subarray(0, 10))).toEqual([41905, 7296, 1639, 48598, 18024, 16049, 14628, 9144, 48265, 6717]);
    expect(Array.from(x.subarray(-5))).toEqual([23204, 36541, 27382, 35283, 9926]);
    // sum(i * v for i, v in enumerate(x)) % 1000000007 (exact in doubles: < 2**53)
    let s = 0;
    for (let i = 0; i < x.length; i++) s += i * x[i]!;
    expect(s % 1000000007).toBe(258749879);
    expect(r.random()).toBe(0.06363304428418903);
  });

  it('stays in step across many twists (after 1,400 outputs)', () => {
    const r = r42();
    for (let i = 0; i < 700; i++) r.random();
    expect(r.getrandbits(32)).toBe(2781569954);
    expect(r.random()).toBe(0.1489894010753292);
  });
});

describe('PythonRandom, other seeds', () => {
  it.each<[number | bigint, number[], number, number[]]>([
    [0, [3626764237, 1654615998, 3255389356], 0.890243920837131, [0, 4, 7, 3, 2, 6, 5, 8, 9, 1]],
    [1, [577090037, 2444712010, 3639700191], 0.8022650611681835, [1, 4, 9, 3, 6, 5, 8, 0, 2, 7]],
    // 2**40 + 5: a two-word key [5, 256]
    [2 ** 40 + 5, [2166296868, 2220160828, 1153647273], 0.6637982795073579, [0, 8, 9, 1, 7, 6, 4, 2, 5, 3]],
    [2n ** 40n + 5n, [2166296868, 2220160828, 1153647273], 0.6637982795073579, [0, 8, 9, 1, 7, 6, 4, 2, 5, 3]],
    // Python seeds with abs(seed)
    [-42, [2746317213, 478163327, 107420369], 0.7415504997598329, [3, 9, 2, 5, 0, 4, 6, 7, 1, 8]],
    // 2**100 + 3: a four-word key
    [2n ** 100n + 3n, [1532279558, 1283910471, 4172443581], 0.9674846223579953, [6, 7, 3, 5, 0, 2, 8, 1, 9, 4]],
  ])('seed %s: getrandbits(32) x 3, random(), sample(range(10), 10)', (seed, bits, rnd, perm) => {
    const r = new PythonRandom(seed);
    expect([r.getrandbits(32), r.getrandbits(32), r.getrandbits(32)]).toEqual(bits);
    expect(r.random()).toBe(rnd);
    expect(Array.from(r.sampleIndices(10))).toEqual(perm);
  });

  it('rejects seeds and arguments Python would treat differently or refuse', () => {
    expect(() => new PythonRandom(1.5)).toThrow(RangeError);
    const r = r42();
    expect(() => r.randbelow(0)).toThrow(RangeError);
    expect(() => r.sample([1, 2, 3], 4)).toThrow(RangeError);
    expect(() => r.getrandbits(54)).toThrow(RangeError);
  });
});
