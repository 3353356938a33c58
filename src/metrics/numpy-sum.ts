/**
 * numpy's pairwise summation (umath `pairwise_sum`), so means over float arrays round
 * exactly as `np.mean` / sklearn's `np.average` do: blocks under 8 add in order, blocks up
 * to 128 use eight interleaved accumulators, larger ones split in two at a multiple of 8.
 */
export function numpyPairwiseSum(values: ArrayLike<number>, start = 0, n = values.length - start): number {
  if (n < 8) {
    // numpy starts from -0.0 so an all -0.0 input keeps its sign; 0 + -0 would not.
    let res = -0;
    for (let i = 0; i < n; i++) res += values[start + i]!;
    return res;
  }
  if (n <= 128) {
    const r = new Float64Array(8);
    for (let j = 0; j < 8; j++) r[j] = values[start + j]!;
    let i = 8;
    for (; i < n - (n % 8); i += 8) {
      for (let j = 0; j < 8; j++) r[j]! += values[start + i + j]!;
    }
    let res = r[0]! + r[1]! + (r[2]! + r[3]!) + (r[4]! + r[5]! + (r[6]! + r[7]!));
    for (; i < n; i++) res += values[start + i]!;
    return res;
  }
  let n2 = Math.floor(n / 2);
  n2 -= n2 % 8;
  return numpyPairwiseSum(values, start, n2) + numpyPairwiseSum(values, start + n2, n - n2);
}

export function numpyMean(values: ArrayLike<number>): number {
  return numpyPairwiseSum(values) / values.length;
}
