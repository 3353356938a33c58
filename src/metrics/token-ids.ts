/**
 * Tokens as small integers local to one pair (the same string gets the same id in both texts), so
 * the metrics compare and hash numbers instead of strings.
 */
export function pairTokenIds(a: readonly string[], b: readonly string[]): { a: Int32Array; b: Int32Array; distinct: number } {
  const ids = new Map<string, number>();
  const encode = (tokens: readonly string[]): Int32Array => {
    const out = new Int32Array(tokens.length);
    for (let i = 0; i < tokens.length; i++) {
      let id = ids.get(tokens[i]!);
      if (id === undefined) ids.set(tokens[i]!, (id = ids.size));
      out[i] = id;
    }
    return out;
  };
  const encodedA = encode(a);
  const encodedB = encode(b);
  return { a: encodedA, b: encodedB, distinct: ids.size };
}
