import { readFileSync, existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { Partition } from '../../src/engine/partition.js';
import { runStage, type StageOutput } from '../../src/engine/stage-runner.js';
import { tempDir } from '../helpers/cli.js';
import { UNITS_FORMAT, type UnitRecord } from '../helpers/units-partition.js';

const NO_COST = { calls: 1, cachedCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };

/** The keys in a partition's records log as it is on disk now. */
function recordedKeys(partition: Partition): string[] {
  const file = partition.file('records.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (JSON.parse(l) as UnitRecord).key);
}

/** A durability barrier the test opens by hand (as a cache commit that has not happened yet). */
function barrier() {
  let open!: () => void;
  let fail!: (e: unknown) => void;
  const promise = new Promise<void>((resolve, reject) => {
    open = resolve;
    fail = reject;
  });
  return { wait: () => promise, open: () => open(), fail: (e: unknown) => fail(e) };
}

const tick = () => new Promise((r) => setTimeout(r, 5));

/** The toy stage over items 0..count-1, each recorded only once `durable` resolves. */
function unitsStage(partition: Partition, count: number, durable: () => Promise<void>, run: (n: number) => void = () => undefined) {
  return {
    stage: 'units',
    items: async function* () {
      for (let n = 0; n < count; n++) yield n;
    },
    keyOf: (n: number) => ({ key: `k${n}`, partition }),
    run: async (n: number) => {
      run(n);
      const record: StageOutput = { status: 'ok', n };
      return { record, cost: NO_COST };
    },
    durable,
  };
}

describe('records wait for durability, worker slots do not', () => {
  it('a finished item frees its slot at once; its record is appended only once durable() resolves', async () => {
    const partition = Partition.in(tempDir('plens-durable-'), 'p', UNITS_FORMAT);
    const b = barrier();
    const started: number[] = [];
    const keysWhenStarted: string[][] = [];
    const run = runStage<number>(
      unitsStage(partition, 3, b.wait, (n) => {
        started.push(n);
        keysWhenStarted.push(recordedKeys(partition));
      }),
      { concurrency: 1, signal: new AbortController().signal },
    );
    // With one slot and no commit yet, every item still ran: none waited for an earlier one's commit.
    for (let i = 0; i < 20 && started.length < 3; i++) await tick();
    expect(started).toEqual([0, 1, 2]);
    expect(keysWhenStarted).toEqual([[], [], []]);
    await tick();
    // Nothing is recorded before its work is durable.
    expect(recordedKeys(partition)).toEqual([]);
    b.open();
    const summary = await run;
    expect(summary).toMatchObject({ ok: 3, failed: 0, calls: 3, interrupted: false });
    expect(recordedKeys(partition).sort()).toEqual(['k0', 'k1', 'k2']);
  });

  it('a durability failure fails the stage, and the record that waited on it is not written', async () => {
    const partition = Partition.in(tempDir('plens-durable-'), 'p', UNITS_FORMAT);
    const b = barrier();
    const run = runStage<number>(unitsStage(partition, 1, b.wait), { concurrency: 2, signal: new AbortController().signal });
    await tick();
    b.fail(new Error('commit failed: disk full'));
    await expect(run).rejects.toThrow('commit failed: disk full');
    expect(recordedKeys(partition)).toEqual([]);
  });

  it('a stop while records wait drops them (a rerun does them again) and reports the run interrupted', async () => {
    const partition = Partition.in(tempDir('plens-durable-'), 'p', UNITS_FORMAT);
    const b = barrier();
    const stop = new AbortController();
    let ran = 0;
    const run = runStage<number>(
      unitsStage(partition, 2, b.wait, () => {
        ran++;
      }),
      { concurrency: 2, signal: stop.signal },
    );
    for (let i = 0; i < 20 && ran < 2; i++) await tick();
    stop.abort();
    b.open();
    const summary = await run;
    expect(summary).toMatchObject({ ok: 0, interrupted: true });
    expect(recordedKeys(partition)).toEqual([]);
  });
});
