import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CallCache, type CachedCall } from '../../src/llm/call-cache.js';
import { tempDir } from '../helpers/cli.js';

const answer = (i: number): CachedCall => ({
  response: { text: `answer ${i}`, usage: { inputTokens: 10, outputTokens: 2 }, finishReason: 'stop' },
  latencyMs: i,
});
const nextTurn = () => new Promise((r) => setImmediate(r));

/** Counts the LMDB write transactions a cache commits (lmdb-js calls `aftercommit` once per transaction). */
function countCommits(cache: CallCache): { n: number } {
  const commits = { n: 0 };
  (cache as unknown as { db: { on(event: string, cb: () => void): void } }).db.on('aftercommit', () => commits.n++);
  return commits;
}

describe('call cache writes gather and commit together', () => {
  it('writes from many event turns commit in one transaction, and are served before it', async () => {
    const dir = join(tempDir('plens-cache-batch-'), 'llm');
    const cache = CallCache.open(dir, 'on');
    const commits = countCommits(cache);
    // The first write also reports the environment's own first transaction: counted from the next.
    cache.put('warm-up', answer(-1));
    await cache.committed();
    expect(commits.n).toBeGreaterThan(0);
    commits.n = 0;
    for (let turn = 0; turn < 10; turn++) {
      for (let i = 0; i < 5; i++) cache.put(`k${turn * 5 + i}`, answer(turn * 5 + i));
      // A write is served at once, long before it is committed.
      expect(cache.get(`k${turn * 5}`)?.response.text).toBe(`answer ${turn * 5}`);
      await nextTurn();
    }
    await cache.committed();
    // One transaction per event turn would be ten.
    expect(commits.n).toBe(1);
    await cache.close();
    const again = CallCache.open(dir, 'read');
    for (let i = 0; i < 50; i++) expect(again.get(`k${i}`)?.latencyMs).toBe(i);
    await again.close();
  });

  it('committed() waits for queued writes to reach the disk; close() writes them without waiting for the batch', async () => {
    const dir = join(tempDir('plens-cache-batch-'), 'llm');
    const cache = CallCache.open(dir, 'on');
    const commits = countCommits(cache);
    cache.put('a', answer(1));
    // Not on disk before committed() resolves, and on disk after.
    expect(commits.n).toBe(0);
    await cache.committed();
    expect(commits.n).toBeGreaterThan(0);
    cache.put('b', answer(2));
    cache.reject('a');
    await cache.close();
    const again = CallCache.open(dir, 'replay');
    expect(again.get('b')?.latencyMs).toBe(2);
    expect(again.get('a')?.rejected).toBe(true);
    await again.close();
  });
});
