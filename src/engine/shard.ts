import { createHash } from 'node:crypto';
import { usageError } from '../core/errors.js';

export interface Shard {
  index: number;
  count: number;
}

/** Parses "i/n" (0-based i). */
export function parseShard(spec: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(spec.trim());
  if (!m) throw usageError(`--shard "${spec}": expected i/n, e.g. 0/4`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || index >= count) throw usageError(`--shard "${spec}": need 0 <= i < n`);
  return { index, count };
}

/** Work belongs to the shard its key hashes to, so shards partition any input with nothing lost or doubled. */
export function inShard(key: string, shard: Shard | undefined): boolean {
  if (!shard || shard.count === 1) return true;
  return createHash('sha256').update(key).digest().readUInt32BE(0) % shard.count === shard.index;
}

export function shardSuffix(shard: Shard | undefined): string {
  return shard && shard.count > 1 ? `.shard-${shard.index}-of-${shard.count}` : '';
}
