import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { runImport } from '../../../../src/benchmarks/personalens/dataset/import.js';
import { DATASET_TABLE_NAMES } from '../../../../src/benchmarks/personalens/dataset/tables.js';
import { locateUpstream } from '../../../../src/benchmarks/personalens/dataset/upstream/layout.js';
import { PlensError } from '../../../../src/core/errors.js';
import { Workspace } from '../../../../src/core/workspace.js';
import { repoRoot, sampleDir, tempDir } from '../../../helpers/cli.js';
import { datasetDir } from '../../../../src/benchmarks/personalens/dataset/workspace-files.js';

// The import reads users on worker threads beside this one when there are many (the released data); a
// small import reads them in this thread. Both must write the same tables, in the same order, and fail
// the same way.

async function parquetRows(dir: string, table: string): Promise<unknown[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll(`SELECT * FROM read_parquet('${join(dir, `${table}.parquet`)}')`);
    return [reader.columnNames(), reader.columnTypes().map(String), ...reader.getRowsJson()];
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

describe('plens import on reader threads', () => {
  it.each([2, 3])('%i readers write the same tables (rows, order, types) and manifest as a read in one thread', async (readers) => {
    const one = new Workspace(join(tempDir(), 'ws'));
    const threads = new Workspace(join(tempDir(), 'ws'));
    const a = await runImport({ from: sampleDir, workspace: one, workers: 0, progress: false });
    const b = await runImport({ from: sampleDir, workspace: threads, workers: readers, threadStartInUsers: 0, progress: false });
    expect(b.fingerprint).toBe(a.fingerprint);
    expect(b.scenarios).toEqual(a.scenarios);
    expect(b.scenarios.sd + b.scenarios.md).toBeGreaterThan(0);
    expect(b.normalisations).toEqual(a.normalisations);
    expect(b.warnings).toEqual(a.warnings);
    for (const table of DATASET_TABLE_NAMES) {
      const rows = await parquetRows(datasetDir(threads), table);
      expect(rows, table).toEqual(await parquetRows(datasetDir(one), table));
      expect(rows.length - 2, table).toBe(b.tables[table]!.rows);
    }
    const manifest = (ws: Workspace) => {
      const m = JSON.parse(readFileSync(join(datasetDir(ws), 'manifest.json'), 'utf8')) as Record<string, unknown>;
      return { ...m, created_at: undefined };
    };
    expect(manifest(threads)).toEqual(manifest(one));
  });

  it('reports the first invalid user in user order, whichever thread finds one first', async () => {
    // Three readers over the 8 sample users: this thread reads users 0-2, the threads 3-5 and 6-7.
    // Users 4 and 6 are broken; 6 is the first of its thread's run, so its error usually comes first.
    const data = join(tempDir(), 'data');
    cpSync(sampleDir, data, { recursive: true });
    const users = (await locateUpstream(data)).users;
    expect(users).toHaveLength(8);
    for (const u of [users[4]!, users[6]!]) writeFileSync(join(u.dir, 'profile.json'), '{"demographics": ');
    const ws = new Workspace(join(tempDir(), 'ws'));
    const error = await runImport({ from: data, workspace: ws, workers: 3, threadStartInUsers: 0, progress: false }).then(
      () => expect.fail('the import succeeded'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PlensError);
    expect((error as PlensError).location.file).toBe(join(users[4]!.dir, 'profile.json'));
    expect(existsSync(ws.root)).toBe(false);
  });

  // The broken-input corpus (test/fixtures/broken), run through the threads: the same typed error.
  // threadStartInUsers -1 leaves this thread one user short of an even split: a one-user case's user
  // goes to the thread.
  const corpus = join(repoRoot, 'test', 'fixtures', 'broken');
  const cases = JSON.parse(readFileSync(join(corpus, 'cases.json'), 'utf8')) as Array<{
    case: string;
    code: string;
    file: string;
    pointer?: string;
    line?: number;
  }>;
  it.each(cases.map((c) => [c.case, c] as const))('%s: the same typed error from a reader thread, nothing written', async (_name, c) => {
    const ws = new Workspace(join(tempDir(), 'ws'));
    const error = await runImport({ from: join(corpus, c.case, 'data'), workspace: ws, workers: 2, threadStartInUsers: -1, progress: false }).then(
      () => expect.fail('the import succeeded'),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PlensError);
    const e = error as PlensError;
    expect(e.code).toBe(c.code);
    expect(e.location.file).toBe(join(corpus, c.case, c.file));
    if (c.pointer !== undefined) expect(e.location.pointer).toBe(c.pointer);
    if (c.line !== undefined) expect(e.location.line).toBe(c.line);
    expect(existsSync(ws.root)).toBe(false);
  });
});
