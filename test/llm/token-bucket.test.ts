import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter, TokenBucket } from '../../src/llm/token-bucket.js';

describe('TokenBucket (fake clock)', () => {
  let now = 0;
  beforeEach(() => {
    vi.useFakeTimers();
    now = 0;
  });
  afterEach(() => vi.useRealTimers());
  const clock = () => now;
  const advance = async (ms: number) => {
    now += ms;
    await vi.advanceTimersByTimeAsync(ms);
  };

  it('starts full, then refills continuously at perMinute', async () => {
    const b = new TokenBucket(60, clock);
    for (let i = 0; i < 60; i++) await b.take(1);
    let got = false;
    void b.take(1).then(() => (got = true));
    await advance(999);
    expect(got).toBe(false);
    await advance(1);
    expect(got).toBe(true);
  });

  it('serves waiters first-in first-out, a big one before later small ones', async () => {
    const b = new TokenBucket(60, clock);
    await b.take(60);
    const order: string[] = [];
    void b.take(10).then(() => order.push('big'));
    void b.take(1).then(() => order.push('small'));
    await advance(10_000);
    expect(order).toEqual(['big']);
    await advance(1_000);
    expect(order).toEqual(['big', 'small']);
  });

  it('refunds unused reservations', async () => {
    const b = new TokenBucket(100, clock);
    await b.take(100);
    b.refund(40);
    expect(Math.round(b.available)).toBe(40);
  });

  it('an aborted waiter leaves the queue', async () => {
    const b = new TokenBucket(60, clock);
    await b.take(60);
    const ac = new AbortController();
    const p = b.take(5, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
  });

  it('RateLimiter reserves prompt + max tokens and refunds from usage', async () => {
    const r = new RateLimiter({ rpm: 10, tpm: 1000 });
    const reserved = await r.acquire(900);
    let second = false;
    void r.acquire(500).then(() => (second = true));
    await advance(1);
    expect(second).toBe(false);
    r.settle(reserved, 300); // used 300 of 900: 600 come back
    await advance(1);
    expect(second).toBe(true);
  });
});
