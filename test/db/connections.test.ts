import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { tempDir } from '../helpers/cli.js';

/** A query still running when the next line of the test runs (a fraction of a second). */
const SLOW = `SELECT count(DISTINCT hash(i * 7919)) AS n FROM range(3000000) t(i)`;
/** A query that would run for minutes: only ever interrupted. */
const ENDLESS = `SELECT count(DISTINCT hash(i * 7919)) AS n FROM range(10000000000) t(i)`;

describe('Database.connect(): a second connection to the same database', () => {
  it('sees what the first committed, keeps its own temp objects, and runs beside it', async () => {
    const db = await Database.open(join(tempDir(), 'two.duckdb'));
    const other = await db.connect();
    await db.run('CREATE TABLE shared AS SELECT 42 AS v');
    expect(await other.all('SELECT v FROM shared')).toEqual([{ v: 42 }]);
    await other.run('CREATE TEMP TABLE mine AS SELECT 1 AS x; CREATE TABLE made_by_other AS SELECT 7 AS w');
    // Temp tables belong to their connection; persistent ones are the database's.
    await expect(db.all('SELECT * FROM mine')).rejects.toMatchObject({ code: 'E_SQL' });
    expect(await db.all('SELECT w FROM made_by_other')).toEqual([{ w: 7 }]);
    // Both connections at once: each gets its own answer.
    const [a, b] = await Promise.all([db.all('SELECT sum(i)::BIGINT AS s FROM range(1000000) t(i)'), other.all('SELECT count(*)::BIGINT AS n FROM shared')]);
    expect(a).toEqual([{ s: 499999500000 }]);
    expect(b).toEqual([{ n: 1 }]);
    await other.close();
    // Closing the second connection leaves the database open.
    expect(await db.all('SELECT v FROM shared')).toEqual([{ v: 42 }]);
    await db.close();
  });

  it('closing the database waits for the second connection’s query, then closes it too', async () => {
    const db = await Database.open(':memory:');
    const other = await db.connect();
    const running = other.all<{ n: number }>(SLOW);
    await db.close();
    // The query finished with its result (not "connection disconnected"), and nothing runs afterwards.
    expect((await running)[0]!.n).toBeGreaterThan(0);
    await expect(other.all('SELECT 1')).rejects.toThrow(/used after close/);
    await expect(db.connect()).rejects.toThrow(/used after close/);
  });

  it('interrupt() stops the running query with an error and the connection stays usable', async () => {
    const db = await Database.open(':memory:');
    const other = await db.connect();
    const running = other.all(ENDLESS);
    const settled = running.then(
      () => 'finished',
      (error: unknown) => error,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    other.interrupt();
    const outcome = await settled;
    expect(outcome).toMatchObject({ code: 'E_SQL' });
    expect(String((outcome as Error).message)).toMatch(/interrupt/i);
    expect(await other.all('SELECT 2 AS two')).toEqual([{ two: 2 }]);
    await db.close();
  });

  it('a connection made from a second connection belongs to the database', async () => {
    const db = await Database.open(':memory:');
    const second = await db.connect();
    const third = await second.connect();
    await second.close();
    expect(await third.all('SELECT 3 AS three')).toEqual([{ three: 3 }]);
    await db.close();
    await expect(third.all('SELECT 3')).rejects.toThrow(/used after close/);
  });
});
