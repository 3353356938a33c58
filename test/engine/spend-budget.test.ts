import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Partition } from '../../src/engine/partition.js';
import { addCallSpend, addSpend, emptySpend, SpendBudget, spendRole } from '../../src/engine/spend-budget.js';
import { runStage, type StageOutput } from '../../src/engine/stage-runner.js';
import { tempDir } from '../helpers/cli.js';
import { UNITS_FORMAT } from '../helpers/units-partition.js';

/** Resolves once the microtask queue has drained (a waiter that could go on has gone on). */
const settle = () => new Promise((r) => setImmediate(r));

describe('a spend budget', () => {
  it('commits spent + reserved; a call charges its reservation, closing releases what was not used', async () => {
    const b = new SpendBudget(10);
    const r = (await b.reserve(4))!;
    expect(r).toBeDefined();
    expect({ spent: b.spent, reserved: b.reserved, committed: b.committed, inFlight: b.inFlight }).toEqual({
      spent: 0,
      reserved: 4,
      committed: 4,
      inFlight: 1,
    });
    r.charge(1.5);
    expect({ spent: b.spent, reserved: b.reserved, committed: b.committed }).toEqual({ spent: 1.5, reserved: 2.5, committed: 4 });
    // A unit that spends more than it reserved holds nothing more and commits what it spent.
    r.charge(3);
    expect({ spent: b.spent, reserved: b.reserved, committed: b.committed }).toEqual({ spent: 4.5, reserved: 0, committed: 4.5 });
    r.close();
    r.close();
    expect({ spent: b.spent, reserved: b.reserved, inFlight: b.inFlight }).toEqual({ spent: 4.5, reserved: 0, inFlight: 0 });
    // Cache answers (0) and negative or NaN amounts charge nothing.
    const z = (await b.reserve(0))!;
    z.charge(0);
    z.charge(Number.NaN);
    z.close();
    expect(b.spent).toBe(4.5);
  });

  it('a reservation that fits exactly is taken; one that does not, with nothing in flight, caps the budget for good', async () => {
    const b = new SpendBudget(1);
    const a = (await b.reserve(0.1 + 0.2))!;
    const c = (await b.reserve(0.7))!;
    expect(b.committed).toBeCloseTo(1, 12);
    a.charge(0.3);
    c.charge(0.7);
    a.close();
    c.close();
    expect(b.capped).toBe(false);
    expect(await b.reserve(0.01)).toBeUndefined();
    expect(b.capped).toBe(true);
    // Capped is final: not even a free (cached) unit starts.
    expect(await b.reserve(0)).toBeUndefined();
  });

  it('a unit that does not fit waits for the units in flight, then starts in the room they leave', async () => {
    const b = new SpendBudget(10);
    const first = (await b.reserve(6))!;
    const second = (await b.reserve(3))!;
    let third: Awaited<ReturnType<SpendBudget['reserve']>> | 'waiting' = 'waiting';
    void b.reserve(5).then((r) => (third = r));
    await settle();
    expect(third).toBe('waiting');
    // The first unit spends 2 of its 6: 2 + 3 reserved + 5 = 10 fits once it ends.
    first.charge(2);
    await settle();
    expect(third).toBe('waiting');
    first.close();
    await settle();
    expect(third).not.toBe('waiting');
    expect(third).toBeDefined();
    expect(b.committed).toBe(10);
    second.close();
    (third as unknown as { close(): void }).close();
    expect(b.capped).toBe(false);
  });

  it('waiters that cannot fit once nothing is in flight all stop, and the budget is capped', async () => {
    const b = new SpendBudget(5);
    const r = (await b.reserve(4))!;
    const waiting = [b.reserve(3), b.reserve(2), b.reserve(4)];
    await settle();
    r.charge(4);
    r.close();
    // 4 spent: only a unit of at most 1 could start; none of these can.
    expect(await Promise.all(waiting)).toEqual([undefined, undefined, undefined]);
    expect(b.capped).toBe(true);
    expect(b.spent).toBe(4);
  });

  it('an abort wakes a waiter with no reservation, and leaves the budget uncapped', async () => {
    const b = new SpendBudget(1);
    const r = (await b.reserve(1))!;
    const stop = new AbortController();
    const waiting = b.reserve(1, stop.signal);
    await settle();
    stop.abort();
    expect(await waiting).toBeUndefined();
    expect(b.capped).toBe(false);
    r.close();
    expect(await b.reserve(1)).toBeDefined();
  });

  it('refuses a cap that is not a number >= 0', () => {
    expect(() => new SpendBudget(-1)).toThrow(RangeError);
    expect(() => new SpendBudget(Number.NaN)).toThrow(RangeError);
  });

  it('splits spend by role and by model; cached calls count as calls that cost nothing', () => {
    expect(['user', 'assistant', 'judge:personalization', 'persona:3.1', 'predict'].map(spendRole)).toEqual([
      'user agent',
      'assistant',
      'judge',
      'predictor',
      'predict',
    ]);
    const s = emptySpend();
    addCallSpend(s, { role: 'user', model: 'openai:u', cached: false, cost_usd: 0.5 });
    addCallSpend(s, { role: 'assistant', model: 'openai:a', cached: false, cost_usd: 1 });
    addCallSpend(s, { role: 'assistant', model: 'openai:a', cached: true, cost_usd: 1 });
    const t = emptySpend();
    addSpend(t, s);
    addSpend(t, s);
    expect(t).toEqual({
      by_role: { 'user agent': { calls: 2, cached_calls: 0, cost_usd: 1 }, assistant: { calls: 4, cached_calls: 2, cost_usd: 2 } },
      by_model: { 'openai:u': { calls: 2, cached_calls: 0, cost_usd: 1 }, 'openai:a': { calls: 4, cached_calls: 2, cost_usd: 2 } },
    });
  });
});

describe('the stage engine under a spend cap', () => {
  /** 20 units of $1 each (reserved $1.5 each) at concurrency 4; `seen` counts how many ran at once. */
  async function run(budget: SpendBudget, dir: string, seen = { now: 0, max: 0, ran: [] as number[] }) {
    const partition = Partition.in(dir, 'p', UNITS_FORMAT);
    const summary = await runStage<number>(
      {
        stage: 'units',
        items: async function* () {
          for (let n = 0; n < 20; n++) yield n;
        },
        keyOf: (n) => ({ key: `k${n}`, partition }),
        estimate: () => ({ calls: 1, cachedCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 1.5 }),
        run: async (n, ctx) => {
          seen.now++;
          seen.max = Math.max(seen.max, seen.now);
          seen.ran.push(n);
          await new Promise((r) => setTimeout(r, 2));
          ctx.reservation?.charge(1);
          seen.now--;
          const record: StageOutput = { status: 'ok', n };
          return { record, cost: { calls: 1, cachedCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 1 } };
        },
      },
      { concurrency: 4, signal: new AbortController().signal, budget },
    );
    return { summary, seen, partition };
  }

  it('stops starting units within one unit of the cap, records what finished, and a rerun with a higher cap does only the rest', async () => {
    const dir = tempDir('plens-budget-');
    const budget = new SpendBudget(7.2);
    const first = await run(budget, dir);
    // Units reserve 1.5 and spend 1: the cap stops the run once 1.5 no longer fits with nothing in flight.
    expect(first.summary).toMatchObject({ planned: 20, ok: 6, failed: 0, spend_capped: true, max_cost_usd: 7.2, interrupted: false });
    expect(budget.spent).toBe(6);
    expect(budget.spent).toBeLessThanOrEqual(7.2);
    expect(budget.spent).toBeGreaterThan(7.2 - 1.5);
    expect(budget.inFlight).toBe(0);
    // Four reservations fit at first: the units ran concurrently, never more than the cap allows.
    expect(first.seen.max).toBeGreaterThan(1);
    expect(first.seen.max).toBeLessThanOrEqual(4);

    const second = await run(new SpendBudget(100), dir);
    expect(second.summary).toMatchObject({ planned: 14, ok: 14, already_done: 6, spend_capped: false, max_cost_usd: 100 });
    // Nothing done is done again.
    expect(new Set([...first.seen.ran, ...second.seen.ran]).size).toBe(20);
    expect(first.seen.ran.length + second.seen.ran.length).toBe(20);
    expect((await first.partition.keyStates()).size).toBe(20);
  });

  it('a budget another stage has capped starts nothing here, and says so', async () => {
    const budget = new SpendBudget(1);
    expect(await budget.reserve(2)).toBeUndefined();
    const r = await run(budget, join(tempDir('plens-budget-'), 'x'));
    expect(r.summary).toMatchObject({ planned: 20, ok: 0, spend_capped: true });
    expect(r.seen.ran).toEqual([]);
  });
});
