import { afterEach, describe, expect, it, vi } from 'vitest';
import { AimdController, isOverloadStatus, type AimdSlot } from '../../src/llm/aimd.js';
import { RateLimiter, TokenBucket } from '../../src/llm/token-bucket.js';

/** Takes n slots that are granted at once (the controller is synchronous when it has room). */
async function takeAll(c: AimdController, n: number): Promise<AimdSlot[]> {
  const slots: AimdSlot[] = [];
  for (let i = 0; i < n; i++) slots.push(await c.acquire());
  return slots;
}

/** Whether a promise has settled, after letting pending callbacks run. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await new Promise((r) => setImmediate(r));
  return done;
}

describe('AimdController', () => {
  it('starts at the configured concurrency and queues the next call until a slot is released', async () => {
    const c = new AimdController({ max: 4 });
    const slots = await takeAll(c, 4);
    expect(c.stats).toMatchObject({ limit: 4, inFlight: 4 });
    const fifth = c.acquire();
    expect(await settled(fifth)).toBe(false);
    slots[0]!.release('ok');
    expect(await settled(fifth)).toBe(true);
    expect(c.stats.inFlight).toBe(4);
  });

  it('cuts once per round trip: a burst of 16 overloads started together halves the limit once', async () => {
    const c = new AimdController({ max: 16 });
    const slots = await takeAll(c, 16);
    for (const s of slots) s.release('overload');
    expect(c.stats).toMatchObject({ limit: 8, cuts: 1, overloads: 16, inFlight: 0 });
  });

  it('calls started after a cut cut again: 16 -> 8 -> 4 -> 2 -> 1, and never below min', async () => {
    const c = new AimdController({ max: 16 });
    const seen: number[] = [];
    for (let round = 0; round < 6; round++) {
      const slots = await takeAll(c, c.limit);
      for (const s of slots) s.release('overload');
      seen.push(c.limit);
    }
    expect(seen).toEqual([8, 4, 2, 1, 1, 1]);
    expect(c.stats).toMatchObject({ cuts: 6, lowest: 1 });
    const floor = new AimdController({ max: 16, min: 3 });
    for (let round = 0; round < 4; round++) for (const s of await takeAll(floor, floor.limit)) s.release('overload');
    expect(floor.limit).toBe(3);
  });

  it('halves what was in flight, not an unused limit', async () => {
    const c = new AimdController({ max: 16 });
    const [a, b] = await takeAll(c, 2);
    a!.release('overload');
    // Two calls were in flight when the overload came back: the limit becomes 1, not 8.
    expect(c.limit).toBe(1);
    b!.release('ok');
  });

  it('recovers additively: one slot per window of successes, up to max', async () => {
    const c = new AimdController({ max: 6 });
    for (const s of await takeAll(c, 6)) s.release('overload');
    for (const s of await takeAll(c, 3)) s.release('overload');
    // Window 1.5 -> limit 1 after two cuts from 6 (6 * 0.5 = 3, 3 * 0.5 = 1.5).
    expect(c.limit).toBe(1);
    const limits: number[] = [];
    for (let i = 0; i < 12; i++) {
      (await c.acquire()).release('ok');
      limits.push(c.limit);
    }
    // Window by hand: 1.5, +1/1.5 = 2.1667, +1/2.1667 = 2.6282, +0.3805 = 3.0087, +0.3324 = 3.3411,
    // +0.2993 = 3.6404, +0.2747 = 3.9151, +0.2554 = 4.1705, +0.2398 = 4.4103, +0.2267 = 4.6370,
    // +0.2157 = 4.8527, +0.2061 = 5.0588, +0.1977 = 5.2565.
    expect(limits).toEqual([2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5]);
    for (let i = 0; i < 50; i++) (await c.acquire()).release('ok');
    expect(c.limit).toBe(6);
  });

  it('other failures (400, network) neither cut nor grow the limit', async () => {
    const c = new AimdController({ max: 8 });
    for (const s of await takeAll(c, 8)) s.release('overload');
    for (const s of await takeAll(c, 4)) s.release('other');
    expect(c.stats).toMatchObject({ limit: 4, cuts: 1, successes: 0 });
  });

  it('a slot released twice counts once', async () => {
    const c = new AimdController({ max: 2 });
    const s = await c.acquire();
    s.release('ok');
    s.release('overload');
    expect(c.stats).toMatchObject({ inFlight: 0, overloads: 0, successes: 1, limit: 2 });
  });

  it('serves waiters in order, and an aborted waiter leaves the queue', async () => {
    const c = new AimdController({ max: 1 });
    const first = await c.acquire();
    const order: string[] = [];
    const controller = new AbortController();
    const a = c.acquire().then((s) => {
      order.push('a');
      return s;
    });
    const b = c.acquire(controller.signal).then((s) => {
      order.push('b');
      return s;
    });
    const d = c.acquire().then((s) => {
      order.push('d');
      return s;
    });
    controller.abort(new Error('cancelled'));
    await expect(b).rejects.toThrow('cancelled');
    first.release('ok');
    (await a).release('ok');
    (await d).release('ok');
    expect(order).toEqual(['a', 'd']);
    expect(c.stats.inFlight).toBe(0);
  });

  it('knows the overload statuses and refuses nonsense settings', () => {
    expect([429, 503, 529, 500, 400, undefined].map(isOverloadStatus)).toEqual([true, true, true, false, false, false]);
    expect(() => new AimdController({ max: 0 })).toThrow(RangeError);
    expect(() => new AimdController({ max: 4, decrease: 1 })).toThrow(RangeError);
  });
});

describe('an overload empties the RPM bucket (fake clock)', () => {
  afterEach(() => vi.useRealTimers());

  it('a full bucket drained by a 429 serves only the refill rate: one token a second at 60 rpm', async () => {
    vi.useFakeTimers();
    let now = 0;
    const b = new TokenBucket(60, () => now);
    expect(b.available).toBe(60);
    b.drain();
    expect(b.available).toBe(0);
    let got = 0;
    for (let i = 0; i < 3; i++) void b.take(1).then(() => got++);
    const advance = async (ms: number) => {
      now += ms;
      await vi.advanceTimersByTimeAsync(ms);
    };
    await advance(999);
    expect(got).toBe(0);
    await advance(1);
    expect(got).toBe(1);
    await advance(2000);
    expect(got).toBe(3);
  });

  it('RateLimiter.overloaded drains RPM only, and is a no-op without one', async () => {
    const limiter = new RateLimiter({ tpm: 1000 });
    limiter.overloaded();
    // No RPM bucket; the TPM bucket is untouched: a 1,000-token reservation is granted at once.
    await expect(limiter.acquire(1000)).resolves.toBe(1000);
  });
});
