/**
 * A bit-exact re-implementation of the parts of CPython's `random.Random` (3.11) that the
 * LAPS lexical-diversity protocol depends on: MT19937 seeded like `random.seed(int)`,
 * `random()`, `getrandbits`, `_randbelow_with_getrandbits` and `sample`.
 *
 * Published values are reproducible only if every draw matches Python's, so each method
 * consumes exactly the 32-bit outputs CPython would, in the same order.
 */

const N = 624;
const M = 397;
const MATRIX_A = 0x9908b0df;
const UPPER_MASK = 0x80000000;
const LOWER_MASK = 0x7fffffff;
const TWO_POW_32 = 4294967296;

export class PythonRandom {
  private readonly mt = new Uint32Array(N);
  private mti = N + 1;

  /** Seeds like `random.seed(seed)` for an int: init_by_array over the 32-bit words of abs(seed). */
  constructor(seed: number | bigint) {
    this.seed(seed);
  }

  seed(seed: number | bigint): void {
    if (typeof seed === 'number' && !Number.isSafeInteger(seed)) {
      // Python hashes non-int seeds; only exact integers are supported here.
      throw new RangeError(`PythonRandom seed must be a safe integer or a bigint, got ${seed}`);
    }
    let v = BigInt(seed);
    if (v < 0n) v = -v;
    const key: number[] = [];
    while (v > 0n) {
      key.push(Number(v & 0xffffffffn));
      v >>= 32n;
    }
    // CPython uses at least one word, so seed 0 gives key [0].
    if (key.length === 0) key.push(0);
    this.initByArray(key);
  }

  private initGenrand(s: number): void {
    const mt = this.mt;
    mt[0] = s >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1]!;
      // Uint32Array stores modulo 2**32, which is the C unsigned arithmetic.
      mt[i] = Math.imul(1812433253, prev ^ (prev >>> 30)) + i;
    }
    this.mti = N;
  }

  private initByArray(key: readonly number[]): void {
    const mt = this.mt;
    this.initGenrand(19650218);
    const len = key.length;
    let i = 1;
    let j = 0;
    for (let k = Math.max(N, len); k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = (mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1664525)) + key[j]! + j;
      i++;
      j++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
      if (j >= len) j = 0;
    }
    for (let k = N - 1; k > 0; k--) {
      const prev = mt[i - 1]!;
      mt[i] = (mt[i]! ^ Math.imul(prev ^ (prev >>> 30), 1566083941)) - i;
      i++;
      if (i >= N) {
        mt[0] = mt[N - 1]!;
        i = 1;
      }
    }
    mt[0] = 0x80000000; // MSB is 1, assuring a non-zero initial array
    this.mti = N;
  }

  private twist(): void {
    const mt = this.mt;
    let kk = 0;
    let y: number;
    for (; kk < N - M; kk++) {
      y = (mt[kk]! & UPPER_MASK) | (mt[kk + 1]! & LOWER_MASK);
      mt[kk] = mt[kk + M]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    for (; kk < N - 1; kk++) {
      y = (mt[kk]! & UPPER_MASK) | (mt[kk + 1]! & LOWER_MASK);
      mt[kk] = mt[kk + (M - N)]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    }
    y = (mt[N - 1]! & UPPER_MASK) | (mt[0]! & LOWER_MASK);
    mt[N - 1] = mt[M - 1]! ^ (y >>> 1) ^ (y & 1 ? MATRIX_A : 0);
    this.mti = 0;
  }

  /** genrand_uint32: the next raw 32-bit output, as a non-negative number. */
  nextUint32(): number {
    if (this.mti >= N) this.twist();
    let y = this.mt[this.mti++]!;
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /** `random.random()`: 53 bits from two outputs, (a >> 5) * 2**26 + (b >> 6), scaled to [0, 1). */
  random(): number {
    const a = this.nextUint32() >>> 5;
    const b = this.nextUint32() >>> 6;
    return (a * 67108864 + b) / 9007199254740992;
  }

  /**
   * `random.getrandbits(k)` for 0 <= k <= 53, as an exact number. k = 0 returns 0 without a draw
   * (CPython >= 3.9). For k > 32 the first output is the least significant word, as in CPython.
   */
  getrandbits(k: number): number {
    if (!Number.isInteger(k) || k < 0 || k > 53) {
      throw new RangeError(`getrandbits(k) supports integer 0 <= k <= 53 (use getrandbitsBig), got ${k}`);
    }
    if (k === 0) return 0;
    if (k <= 32) return this.nextUint32() >>> (32 - k);
    const lo = this.nextUint32();
    const hi = this.nextUint32() >>> (64 - k);
    return hi * TWO_POW_32 + lo;
  }

  /** `random.getrandbits(k)` for any k >= 0, as a bigint (words least significant first). */
  getrandbitsBig(k: number): bigint {
    if (!Number.isInteger(k) || k < 0) throw new RangeError(`getrandbitsBig(k) needs an integer k >= 0, got ${k}`);
    let result = 0n;
    let shift = 0n;
    for (let left = k; left > 0; left -= 32) {
      let r = this.nextUint32();
      if (left < 32) r >>>= 32 - left;
      result |= BigInt(r) << shift;
      shift += 32n;
    }
    return result;
  }

  /**
   * `_randbelow_with_getrandbits(n)`: k = n.bit_length(), draw getrandbits(k) until < n.
   * Note k is the bit length of n, not n - 1, so powers of two reject about half the draws;
   * that waste is part of Python's stream and must be kept.
   */
  randbelow(n: number): number {
    if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`randbelow(n) needs a safe integer n > 0, got ${n}`);
    if (n < TWO_POW_32) {
      const shift = Math.clz32(n); // 32 - bit_length(n)
      let r = this.nextUint32() >>> shift;
      while (r >= n) r = this.nextUint32() >>> shift;
      return r;
    }
    const k = 64 - Math.clz32(Math.floor(n / TWO_POW_32));
    let r = this.getrandbits(k);
    while (r >= n) r = this.getrandbits(k);
    return r;
  }

  /** `random.randrange(stop)` (single argument form): `_randbelow(stop)`. */
  randrange(stop: number): number {
    return this.randbelow(stop);
  }

  /**
   * The indices `sample(range(n), k)` would return, with CPython 3.11's branch choice:
   * pool-based when n <= setsize, else rejection against a set of chosen indices.
   */
  sampleIndices(n: number, k: number = n): Int32Array {
    if (!Number.isInteger(n) || n < 0 || n > 0x7fffffff) throw new RangeError(`sample: bad population size ${n}`);
    if (!Number.isInteger(k) || k < 0 || k > n) throw new RangeError('Sample larger than population or is negative');
    const result = new Int32Array(k);
    if (n <= sampleSetSize(k)) {
      // Invariant: the not-yet-selected indices are pool[0 : n - i].
      const pool = new Int32Array(n);
      for (let i = 0; i < n; i++) pool[i] = i;
      for (let i = 0; i < k; i++) {
        const j = this.randbelow(n - i);
        result[i] = pool[j]!;
        pool[j] = pool[n - i - 1]!;
      }
    } else {
      const selected = new Set<number>();
      for (let i = 0; i < k; i++) {
        let j = this.randbelow(n);
        while (selected.has(j)) j = this.randbelow(n);
        selected.add(j);
        result[i] = j;
      }
    }
    return result;
  }

  /** `random.sample(population, k)` (CPython 3.11, no `counts`). */
  sample<T>(population: readonly T[], k: number = population.length): T[] {
    const idx = this.sampleIndices(population.length, k);
    const out = new Array<T>(idx.length);
    for (let i = 0; i < idx.length; i++) out[i] = population[idx[i]!]!;
    return out;
  }
}

/**
 * CPython 3.11's threshold: 21, plus 4 ** ceil(log(3k, 4)) when k > 5. math.log(x, 4) is
 * log(x) / log(4) in doubles; 3k is never a power of 4, and for any k a double can hold the
 * quotient is far enough from an integer that libm differences cannot change the ceiling.
 */
export function sampleSetSize(k: number): number {
  let setsize = 21;
  if (k > 5) setsize += 4 ** Math.ceil(Math.log(k * 3) / Math.log(4));
  return setsize;
}

/** Fast path: the permutation `sample(range(n), n)` draws (always the pool branch), as indices. */
export function pythonSampleIndices(rng: PythonRandom, n: number, k: number = n): Int32Array {
  return rng.sampleIndices(n, k);
}
