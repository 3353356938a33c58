import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { shuffleOptions } from '../../../src/benchmarks/prefeval/shuffle.js';
import { PythonRandom } from '../../../src/stats/python-random.js';

/**
 * The options of PrefEval's classification task are shuffled as the original shuffles them:
 * `random.seed(41)` once, then `random.sample(options, len(options))` per record. Checked here
 * against CPython itself (Debian's python3) draw for draw, from several seeds.
 */
const PYTHON = '/usr/bin/python3';
const hasPython = existsSync(PYTHON);

const SEEDS = ['41', '0', '1', '123456789', String(2 ** 32 + 5), '-41', String(2n ** 100n + 7n)];
const BELOW = [1, 2, 3, 4, 5, 7, 8, 1000, 2 ** 31, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 3, Number.MAX_SAFE_INTEGER];
const BITS = [0, 1, 7, 31, 32, 33, 40, 53];
// (n, k): the pool branch, and the set branch past its thresholds (21 for k <= 5; 21 + 64 for k = 6).
const SAMPLES: Array<[number, number]> = [
  [10, 3],
  [4, 2],
  [1, 1],
  [4, 0],
  [21, 5],
  [22, 5],
  [22, 1],
  [85, 6],
  [86, 6],
  [100, 3],
  [1000, 40],
  [30, 30],
];

interface Draws {
  bits32: number[];
  bits: number[];
  below: number[];
  records: number[][];
  samples: number[][];
}

const script = `
import json, random, sys
spec = json.load(sys.stdin)
out = []
for s in spec["seeds"]:
    seed = int(s)
    row = {}
    random.seed(seed)
    row["bits32"] = [random.getrandbits(32) for _ in range(50)]
    random.seed(seed)
    row["bits"] = [random.getrandbits(k) for k in spec["bits"]]
    random.seed(seed)
    row["below"] = [random._inst._randbelow(n) for n in spec["below"] for _ in range(5)]
    random.seed(seed)
    row["records"] = [random.sample(list(range(4)), 4) for _ in range(300)]
    random.seed(seed)
    row["samples"] = [random.sample(list(range(n)), k) for n, k in spec["samples"]]
    out.append(row)
print(json.dumps(out))
`;

function draws(seed: string): Draws {
  const rng = () => new PythonRandom(BigInt(seed));
  let r = rng();
  const bits32 = Array.from({ length: 50 }, () => r.getrandbits(32));
  r = rng();
  const bits = BITS.map((k) => r.getrandbits(k));
  r = rng();
  const below = BELOW.flatMap((n) => Array.from({ length: 5 }, () => r.randbelow(n)));
  r = rng();
  const records = Array.from({ length: 300 }, () => r.sample([0, 1, 2, 3], 4));
  r = rng();
  const samples = SAMPLES.map(([n, k]) => r.sample([...Array(n).keys()], k));
  return { bits32, bits, below, records, samples };
}

describe.skipIf(!hasPython && !process.env['CI'])('PythonRandom against CPython', () => {
  it('draws what random.seed / getrandbits / _randbelow / sample draw', () => {
    const r = spawnSync(PYTHON, ['-c', script], { input: JSON.stringify({ seeds: SEEDS, bits: BITS, below: BELOW, samples: SAMPLES }), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const want = JSON.parse(r.stdout) as Draws[];
    expect(want).toHaveLength(SEEDS.length);
    SEEDS.forEach((seed, i) => {
      const got = draws(seed);
      const exp = want[i]!;
      expect(got.bits32, `seed ${seed}: getrandbits(32)`).toEqual(exp.bits32);
      expect(got.bits, `seed ${seed}: getrandbits(k)`).toEqual(exp.bits);
      expect(got.below, `seed ${seed}: _randbelow`).toEqual(exp.below);
      expect(got.records, `seed ${seed}: sample(range(4), 4) per record`).toEqual(exp.records);
      expect(got.samples, `seed ${seed}: sample(range(n), k)`).toEqual(exp.samples);
    });
  });

  it('takes a number seed as the same int', () => {
    const a = new PythonRandom(2 ** 32 + 5);
    const b = new PythonRandom(BigInt(2 ** 32 + 5));
    expect(Array.from({ length: 10 }, () => a.getrandbits(32))).toEqual(Array.from({ length: 10 }, () => b.getrandbits(32)));
  });
});

describe('shuffleOptions (utils_mcq.shuffle_options)', () => {
  it('puts the correct option where the first equal string lands', () => {
    // From random.seed(41), CPython 3.11 gives these two records (options as below) the orders
    // [3, 1, 0, 2] and [3, 2, 1, 0]. In the second, the duplicate 'right' (index 2) lands before the
    // correct one (index 0), and list.index, so shuffleOptions, answers with the duplicate's position.
    const rng = new PythonRandom(41);
    const options = ['right', 'wrong', 'right', 'other'];
    expect(shuffleOptions(options, rng)).toEqual({ shuffled: ['other', 'wrong', 'right', 'right'], correctIndex: 2 });
    expect(shuffleOptions(options, rng)).toEqual({ shuffled: ['other', 'right', 'wrong', 'right'], correctIndex: 1 });
  });

  it('shuffles record after record from one generator', () => {
    const rng = new PythonRandom(41);
    const check = new PythonRandom(41);
    for (let i = 0; i < 20; i++) {
      const options = ['a' + i, 'b', 'c', 'd'];
      const { shuffled, correctIndex } = shuffleOptions(options, rng);
      const order = check.sample([0, 1, 2, 3], 4);
      expect(shuffled).toEqual(order.map((j) => options[j]));
      expect(correctIndex).toBe(order.indexOf(0));
    }
  });

  it('rejects what Python rejects', () => {
    expect(() => new PythonRandom(1).sample([1, 2], 3)).toThrow(RangeError);
    expect(() => new PythonRandom(1).randbelow(0)).toThrow(RangeError);
    expect(() => new PythonRandom(0.5)).toThrow(RangeError);
  });
});
