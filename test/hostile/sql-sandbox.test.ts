import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli, sampleDir, tempDir } from '../helpers/cli.js';

// `plens sql` is the analyst's read-only door into the warehouse: it must not write files, read
// files outside the workspace, reach the network, or change its own configuration.
describe('plens sql sandbox', () => {
  const root = tempDir('plens-sql-sandbox-');
  const ws = join(root, 'out');
  const db = join(root, 'w.duckdb');
  const outside = join(root, 'outside');

  beforeAll(async () => {
    expect((await runCli(['import', '--from', sampleDir, '-w', ws])).code).toBe(0);
    expect((await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none'])).code).toBe(0);
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.csv'), 'a\n42\n');
    writeFileSync(join(ws, 'mine.csv'), 'b\n7\n');
  });

  const sql = (q: string, ...extra: string[]) => runCli(['sql', q, '--db', db, '-w', ws, '--format', 'csv', ...extra]);

  it('still answers queries over the warehouse', async () => {
    const r = await sql('select count(*) AS n from scenario_pool');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^n\n[1-9]\d*\n$/);
  });

  it.each([
    ['COPY ... TO a file outside', (o: string) => `COPY (select 1 AS x) TO '${join(o, 'copied.csv')}'`, 'copied.csv'],
    ['COPY ... TO a file inside the workspace', () => `COPY (select 1 AS x) TO '${join(ws, 'copied.csv')}'`, undefined],
    ['EXPORT DATABASE', (o: string) => `EXPORT DATABASE '${join(o, 'exported')}'`, 'exported'],
    ['ATTACH another database', (o: string) => `ATTACH '${join(o, 'other.duckdb')}' AS other`, 'other.duckdb'],
    ['read_text of /etc/passwd', () => `select * from read_text('/etc/passwd')`, undefined],
    ['read_csv outside the workspace', (o: string) => `select * from read_csv('${join(o, 'secret.csv')}')`, undefined],
    ['a bare file path outside', (o: string) => `select * from '${join(o, 'secret.csv')}'`, undefined],
    ['glob over /etc', () => `select * from glob('/etc/*')`, undefined],
    ['INSTALL httpfs', () => 'INSTALL httpfs', undefined],
    ['LOAD httpfs', () => 'LOAD httpfs', undefined],
    ['an https URL', () => `select * from read_csv('https://127.0.0.1:9/x.csv')`, undefined],
    ['SET enable_external_access back on', () => 'SET enable_external_access = true', undefined],
    ['SET allowed_directories wider', () => `SET allowed_directories = ['/']`, undefined],
    ['SET lock_configuration off', () => 'SET lock_configuration = false', undefined],
    ['a refused statement after an allowed one', (o: string) => `select 1; COPY (select 2) TO '${join(o, 'late.csv')}'`, 'late.csv'],
  ])('refuses %s with exit 5 and writes nothing', async (_what, query, created) => {
    const r = await sql(query(outside));
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.stderr).toMatch(/E_SQL/);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    if (created) expect(existsSync(join(outside, created))).toBe(false);
    expect(existsSync(join(ws, 'copied.csv'))).toBe(false);
  });

  // DuckDB's logging is switched by table functions, not by the locked settings: file logging to a
  // folder outside aborted the process (exit 134), and inside the workspace it wrote log files.
  // Run as real processes: an abort here must fail the test, not end the test worker.
  it.each([
    [
      'CALL enable_logging to a folder outside, then a query',
      (o: string) => `CALL enable_logging(storage='file', storage_path='${join(o, 'logs')}'); select 1`,
      'logs',
    ],
    [
      'enable_logging as a table function, quoted and qualified',
      (o: string) => `select * from main."ENABLE_LOGGING" (storage='file', storage_path='${join(o, 'logs2')}'); select 1`,
      'logs2',
    ],
    ['enable_logging into the workspace', () => `CALL enable_logging(storage='file', storage_path='${join(ws, 'logs')}'); select 1`, undefined],
    ['SQL built from a string (query())', () => `select * from query('CALL enable_' || 'logging()')`, undefined],
    ['write_log', () => `select write_log('x')`, undefined],
  ])('refuses %s (exit 5, no crash, no log files)', async (_what, query, created) => {
    const r = await runCli(['sql', query(outside), '--db', db, '-w', ws, '--format', 'csv'], { subprocess: true });
    expect(r.code, r.stdout + r.stderr).toBe(5);
    expect(r.stderr).toMatch(/E_SQL: \w+\(\) is not allowed here/);
    if (created) expect(existsSync(join(outside, created))).toBe(false);
    expect(existsSync(join(ws, 'logs'))).toBe(false);
  });

  it('the names may still appear as text and as column names', async () => {
    const r = await sql(`select 'CALL enable_logging()' AS query, 1 AS "write_log" -- enable_logging(`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('query,write_log\nCALL enable_logging(),1\n');
  });

  it('reads files under the workspace', async () => {
    const r = await sql(`select b from read_csv('${join(ws, 'mine.csv')}')`);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('b\n7\n');
  });

  it('--allow-files lifts the file lock for power users', async () => {
    const target = join(outside, 'allowed.csv');
    const r = await sql(`COPY (select 3 AS x) TO '${target}' (HEADER)`, '--allow-files');
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(target)).toBe(true);
    const read = await sql(`select a from read_csv('${join(outside, 'secret.csv')}')`, '--allow-files');
    expect(read.stdout).toBe('a\n42\n');
    // Still no configuration changes and no extension loading.
    expect((await sql('SET threads = 1', '--allow-files')).code).toBe(5);
  });

  // A notebook is SQL someone typed, too: the same locked-down connection, cell by cell.
  const notebook = (name: string, cells: string[]) => {
    const file = join(root, `${name}.md`);
    writeFileSync(file, `# ${name}\n\n${cells.map((c) => '```sql\n' + c + '\n```\n').join('\n')}`);
    return file;
  };
  const runNotebook = (file: string, ...extra: string[]) => runCli(['notebook', file, '--db', db, '-w', ws, '-o', '-', ...extra]);

  it('a notebook cell cannot write or read files outside the workspace; the other cells still run', async () => {
    const target = join(outside, 'from-notebook.csv');
    const file = notebook('hostile', [
      'select count(*) > 0 AS has_scenarios from scenario_pool',
      `COPY (select 1 AS x) TO '${target}'`,
      `select * from read_csv('${join(outside, 'secret.csv')}')`,
      `select 1; EXPORT DATABASE '${join(outside, 'nb-export')}'`,
      'INSTALL httpfs',
      `select b from read_csv('${join(ws, 'mine.csv')}')`,
    ]);
    const r = await runNotebook(file);
    expect(r.code, r.stderr).toBe(5);
    for (const cell of [2, 3, 4, 5]) expect(r.stderr).toContain(`cell ${cell}:`);
    for (const cell of [1, 6]) expect(r.stderr).not.toContain(`cell ${cell}:`);
    expect(r.stdout).not.toContain('42');
    expect(r.stdout).toMatch(/\| *7 *\|/);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(join(outside, 'nb-export'))).toBe(false);
  });

  it('a notebook with --allow-files may write where it is told', async () => {
    const target = join(outside, 'allowed-from-notebook.csv');
    const r = await runNotebook(notebook('allowed', [`COPY (select 5 AS x) TO '${target}' (HEADER)`]), '--allow-files');
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(target)).toBe(true);
  });
});
