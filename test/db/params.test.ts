import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database, sqlIdentifier, sqlList } from '../../src/db/database.js';
import { tempDir } from '../helpers/cli.js';

// Values travel as bound parameters, never as SQL text: a path or id full of quotes is data.
const HOSTILE = `it's "a" path'); DROP TABLE t; --`;

describe('bound parameters', () => {
  let db: Database;
  let dir: string;
  beforeAll(async () => {
    db = await Database.open(':memory:');
    dir = join(tempDir(), HOSTILE.replaceAll('/', '_'));
    await db.run('CREATE TABLE t AS SELECT * FROM (VALUES (1, $1), (2, $2)) v(i, s)', undefined, [HOSTILE, 'plain']);
  });
  afterAll(() => db.close());

  it('binds by position and by name, in every query method', async () => {
    expect(await db.all('SELECT i FROM t WHERE s = $1', undefined, [HOSTILE])).toEqual([{ i: 1 }]);
    expect(await db.all('SELECT i FROM t WHERE s = $s', undefined, { s: 'plain' })).toEqual([{ i: 2 }]);
    const streamed: unknown[] = [];
    for await (const row of db.stream('SELECT i FROM t WHERE i > $1 ORDER BY i', [0])) streamed.push(row);
    expect(streamed).toEqual([{ i: 1 }, { i: 2 }]);
    expect((await db.head('SELECT s FROM t WHERE i = $1', 5, [1])).rows).toEqual([[HOSTILE]]);
    expect(await db.all('SELECT count(*)::INTEGER AS n FROM t')).toEqual([{ n: 2 }]);
  });

  it('writes to and reads from a path with quotes in it: COPY TO $1, read_parquet($1)', async () => {
    const file = `${dir}.parquet`;
    await db.run('COPY t TO $1 (FORMAT parquet)', undefined, [file]);
    expect(existsSync(file)).toBe(true);
    expect(await db.all('SELECT i, s FROM read_parquet($1) ORDER BY i', undefined, [file])).toEqual([
      { i: 1, s: HOSTILE },
      { i: 2, s: 'plain' },
    ]);
  });

  it('a list of strings is one value; an empty list is a typed VARCHAR[] (DuckDB cannot infer it)', async () => {
    expect(await db.all('SELECT i FROM t WHERE list_contains($1, s) ORDER BY i', undefined, [sqlList(['plain', HOSTILE])])).toEqual([{ i: 1 }, { i: 2 }]);
    expect(await db.all('SELECT i FROM t WHERE list_contains($names, s)', undefined, { names: sqlList([]) })).toEqual([]);
    expect(await db.all('SELECT count(*)::INTEGER AS n FROM t WHERE NOT list_contains($1, s)', undefined, [sqlList([])])).toEqual([{ n: 2 }]);
  });

  it('an identifier from input is quoted whole, quotes doubled', async () => {
    expect(sqlIdentifier('a"b')).toBe('"a""b"');
    await db.run(`CREATE TABLE ${sqlIdentifier(HOSTILE)} AS SELECT 1 AS x`);
    expect(await db.all(`SELECT x FROM ${sqlIdentifier(HOSTILE)}`)).toEqual([{ x: 1 }]);
    expect(await db.all('SELECT count(*)::INTEGER AS n FROM t')).toEqual([{ n: 2 }]);
  });
});
