/**
 * CPython's `random` module, as far as PrefEval's classification task uses it, so that a run here
 * presents each multiple-choice question with its options in the same order as the original.
 *
 * The original (PrefEval's utils_mcq.shuffle_options) calls `random.seed(41)` once per run, then,
 * for each record in file order, `random.sample(options, len(options))`, and finds the correct
 * option (always the first one in the file) in the shuffled list. Which letter is correct therefore
 * depends on CPython's exact generator and on how many draws every earlier record took; any other
 * shuffle would change the answer key, and with it the scores of models with a position bias.
 *
 * Reproduced here, bit for bit (checked against Debian's python3, 3.11, in
 * test/benchmarks/prefeval/python-random.test.ts):
 * - the Mersenne Twister MT19937 and its seeding by an integer (Modules/_randommodule.c): the
 *   seed's absolute value is cut into 32-bit words, least significant first (0 gives one word, 0),
 *   and fed to the reference `init_by_array`;
 * - `getrandbits(k)`: the top k bits of one 32-bit output for k <= 32; for 32 < k <= 53, whole
 *   32-bit words least significant first, the last one cut to its top bits, as CPython does;
 * - `_randbelow_with_getrandbits(n)` (Lib/random.py): k = n.bit_length() bits, redrawn until below n;
 * - `sample(population, k)` without `counts`, both its branches: the pool (a list that the draws
 *   shrink) when the population is small against k, and otherwise the set of drawn positions.
 */

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;
const TWO_32 = 0x1_0000_0000;

/** Python's `int.bit_length()` for a non-negative safe integer. */
function bitLength(n: number): number {
  return n < TWO_32 ? 32 - Math.clz32(n) : 32 + bitLength(Math.floor(n / TWO_32));
}

/** A `random.Random(seed)`: the generator behind Python's module-level functions after `random.seed(seed)`. */
export class PythonRandom {
  private readonly mt = new Uint32Array(N);
  private index = N;

  /**
   * Seeds as `random.seed(seed)` does for an int: a negative seed counts as its absolute value.
   * A number must be a safe integer; a bigint of any size is taken, as Python takes any int.
   */
  constructor(seed: number | bigint) {
    if (typeof seed === 'number' && !Number.isSafeInteger(seed)) {
      throw new RangeError(`PythonRandom: the seed must be an integer (a safe one, or a bigint), not ${seed}`);
    }
    let rest = BigInt(seed);
    if (rest < 0n) rest = -rest;
    const key: number[] = [];
    while (rest > 0n) {
      key.push(Number(rest & 0xffffffffn));
      rest >>= 32n;
    }
    if (key.length === 0) key.push(0);
    this.initByArray(key);
  }

  /** The reference `init_genrand`: fills the state from one 32-bit value. */
  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1]!;
      mt[i] = (Math.imul(1812433253, (prev ^ (prev >>> 30)) >>> 0) + i) >>> 0;
    }
    this.index = N;
  }

  /** The reference `init_by_array`: mixes the key words into a state first set by `init_genrand(19650218)`. */
  private initByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, key.length); k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = (((mt[i]! ^ Math.imul((prev ^ (prev >>> 30)) >>> 0, 1664525)) >>> 0) + key[j]! + j) >>> 0;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
      if (j >= key.length) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = (((mt[i]! ^ Math.imul((prev ^ (prev >>> 30)) >>> 0, 1566083941)) >>> 0) - i) >>> 0;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
    }
    // The most significant bit set: the state is never all zero.
    mt[0] = 0x80000000;
  }

  /** Regenerates all 624 state words (the reference "generate N words at one time"). */
  private twist(): void {
    const mt = this.mt;
    for (let kk = 0; kk < N; kk++) {
      const y = (mt[kk]! & UPPER_MASK) | (mt[(kk + 1) % N]! & LOWER_MASK);
      mt[kk] = (mt[(kk + M) % N]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0)) >>> 0;
    }
    this.index = 0;
  }

  /** The reference `genrand_uint32`: the next tempered 32-bit output. */
  private nextUint32(): number {
    if (this.index >= N) this.twist();
    let y = this.mt[this.index++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /**
   * `random.getrandbits(k)`: an integer of k random bits. k = 0 gives 0 and draws nothing; k up to
   * 53 is taken here (Python takes any k, but larger results do not fit a number exactly).
   */
  getrandbits(k: number): number {
    if (!Number.isInteger(k) || k < 0 || k > 53) throw new RangeError(`PythonRandom.getrandbits: k must be an integer in 0..53, not ${k}`);
    if (k === 0) return 0;
    if (k <= 32) return this.nextUint32() >>> (32 - k);
    // Two words, least significant first; the second keeps only its top k - 32 bits.
    const low = this.nextUint32();
    const high = this.nextUint32() >>> (64 - k);
    return high * TWO_32 + low;
  }

  /**
   * `random.Random._randbelow(n)` (its getrandbits form, the one CPython's Random uses): a uniform
   * integer in [0, n), for a safe integer n >= 1, by drawing n.bit_length() bits until below n.
   */
  randbelow(n: number): number {
    if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`PythonRandom.randbelow: n must be a safe integer >= 1, not ${n}`);
    const k = bitLength(n);
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /**
   * `random.sample(population, k)` (without `counts`): k distinct positions of the population, in
   * the order drawn; repeated values in the population are distinct positions, as in Python.
   *
   * Python picks one of two methods by the population's size n, and they consume the generator
   * differently, so both are here. When n <= 21, plus 4 ** ceil(log(3k, 4)) if k > 5 (the memory of a
   * list against that of a k-element set), it keeps a pool of the unchosen items, draws
   * randbelow(n - i) and moves the pool's last item into the vacancy. Otherwise it draws randbelow(n)
   * and redraws positions already chosen. ceil(log(3k, 4)) is computed exactly here, as the least m
   * with 4 ** m >= 3k; Python's float log gives the same m, since 3k is never a power of 4 and
   * stays far from one against float error for any k an array can hold.
   */
  sample<T>(population: readonly T[], k: number): T[] {
    const n = population.length;
    if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError(`PythonRandom.sample: sample larger than population or is negative (k ${k}, n ${n})`);
    let setsize = 21;
    if (k > 5) {
      let power = 1;
      while (power < 3 * k) power *= 4;
      setsize += power;
    }
    const result: T[] = [];
    if (n <= setsize) {
      const pool = population.slice();
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        result.push(pool[j]!);
        pool[j] = pool[n - i - 1]!;
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result.push(population[j]!);
      }
    }
    return result;
  }
}

/**
 * PrefEval's utils_mcq.shuffle_options: the first option is the correct one; the options are
 * shuffled with `random.sample(options, len(options))`, and the correct one's new position is
 * `shuffled.index(options[0])`, the first equal string (so if a wrong option repeats the correct
 * one's text and lands before it, that earlier position counts as correct, as in the original).
 * Call it with one PythonRandom seeded with 41 for a whole run, record by record in file order.
 */
export function shuffleOptions(options: readonly string[], rng: PythonRandom): { shuffled: string[]; correctIndex: number } {
  if (options.length === 0) throw new RangeError('shuffleOptions: no options');
  const shuffled = rng.sample(options, options.length);
  return { shuffled, correctIndex: shuffled.indexOf(options[0]!) };
}
