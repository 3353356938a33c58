import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { answerTimes, steadyFigures, steadyRate } from '../../src/bench/steady-rate.js';
import { Database, sqlString } from '../../src/db/database.js';
import { tempDir } from '../helpers/cli.js';

describe('the steady rate of a bench run', () => {
  it('counts the answers between the 10% and 90% marks over the time between them, in any order', () => {
    // 100 answers: a slow start (10 over 1 s), 80 at 100/s, a slow end (10 over 1 s).
    const start = Array.from({ length: 10 }, (_, i) => i * 100);
    const middle = Array.from({ length: 80 }, (_, i) => 1000 + i * 10);
    const end = Array.from({ length: 10 }, (_, i) => 1790 + (i + 1) * 100);
    const times = [...end, ...middle.reverse(), ...start];
    // Answers 10..89 (the 11th to the 90th): 79 intervals of 10 ms.
    expect(steadyRate(times)).toBeCloseTo(79 / 0.79, 6);
  });

  it('is null with too few answers or no time between them', () => {
    expect(steadyRate([])).toBeNull();
    expect(steadyRate([1, 2, 3, 4, 5, 6, 7, 8, 9])).toBeNull();
    expect(steadyRate([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toBeCloseTo(7 / 0.007, 6);
    expect(steadyRate(Array.from({ length: 50 }, () => 7))).toBeNull();
  });

  it("reads when a stage's calls that reached the endpoint were answered, from its partitions' calls.parquet", async () => {
    const root = tempDir('plens-steady-');
    const dirs = [join(root, 'a'), join(root, 'b'), join(root, 'none')];
    for (const d of dirs) mkdirSync(d, { recursive: true });
    const db = await Database.open(':memory:');
    try {
      const write = (dir: string, rows: string) =>
        db.run(`COPY (SELECT * FROM (VALUES ${rows}) t("at", cached)) TO ${sqlString(join(dir, 'calls.parquet'))} (FORMAT parquet)`);
      await write(dirs[0]!, `(TIMESTAMP '2026-01-01 00:00:00.250', false), (TIMESTAMP '2026-01-01 00:00:01.000', true)`);
      await write(dirs[1]!, `(TIMESTAMP '2026-01-01 00:00:02.500', false)`);
    } finally {
      await db.close();
    }
    const t0 = Date.UTC(2026, 0, 1);
    expect((await answerTimes(dirs)).sort()).toEqual([t0 + 250, t0 + 2500]);
    expect(await answerTimes([dirs[2]!])).toEqual([]);
  });

  it('puts the stage beside the ceiling, or nothing when either could not be read', () => {
    expect(steadyFigures(256, 4000, 5000).map((f) => [f.name, Math.round(f.value)])).toEqual([
      ['c=256: calls/s, middle 80% of answers', 4000],
      ['c=256: same-body ceiling, middle 80% of answers', 5000],
      ["c=256: stage's share of same-body ceiling, middle 80%", 80],
    ]);
    expect(steadyFigures(256, null, 5000)).toEqual([]);
  });
});
