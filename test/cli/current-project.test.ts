import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli, runCliJson, tempDir } from '../helpers/cli.js';

/*
 * One notion of the current project (docs/project.md): after `plens make` in a folder, the commands
 * that read a workspace or a warehouse find that run's with no flag; -w DIR finds the warehouse
 * built from DIR; plens.yaml in a folder is its project; a flag always wins; and every hint names a
 * command that works there.
 */

/** A small grid (users 0-1, multi-domain: 6 scenarios, one cell) whose paths are relative to the folder it runs in. */
const PIPELINE = `name: current
workspace: out/run
warehouse: warehouse/run.duckdb
data:
  from: sample
scenarios:
  kind: md
  users: "0-1"
dialogues:
  user: sim:default
  assistants: [sim:default]
  settings: [base]
judge:
  model: sim:default
  dimensions: [task_completion]
statistics:
  lexical: []
report: false
`;

/** The tests keep no state by default (PLENS_STATE_DIR=off in the helper); these turn it on. */
const state = { PLENS_STATE_DIR: '' };

describe('the current project', () => {
  const dir = tempDir('plens-project-');
  const run = (args: string[], cwd = dir) => runCli(args, { cwd, env: state });
  const runJson = <T>(args: string[], cwd = dir) => runCliJson<T>(args, { cwd, env: state });

  beforeAll(async () => {
    writeFileSync(join(dir, 'p.yaml'), PIPELINE);
    const r = await run(['make', '-p', 'p.yaml', '--no-progress', '-q']);
    expect(r.code, r.stderr).toBe(0);
  });

  it('make remembers itself in .plens/current.json and in its workspace', () => {
    const current = JSON.parse(readFileSync(join(dir, '.plens', 'current.json'), 'utf8'));
    expect(current).toMatchObject({ pipeline: 'p.yaml', workspace: 'out/run', warehouse: 'warehouse/run.duckdb' });
    const record = JSON.parse(readFileSync(join(dir, 'out', 'run', '.plens-project.json'), 'utf8'));
    expect(record.warehouse).toBe(join(dir, 'warehouse', 'run.duckdb'));
  });

  it('sql, tables, report, notebook, status and warehouse then work with no flag, on that run', async () => {
    const sql = await runJson<Array<{ n: number }>>(['sql', 'select count(*)::int as n from dialogues']);
    expect(sql.code, sql.stderr).toBe(0);
    expect(sql.json).toEqual([{ n: 6 }]);

    const tables = await runJson<{ tables: Array<{ name: string }> }>(['tables']);
    expect(tables.code, tables.stderr).toBe(0);
    expect(tables.json.tables.map((t) => t.name)).toContain('table3');

    const report = await run(['report']);
    expect(report.code, report.stderr).toBe(0);
    expect(existsSync(join(dir, 'out', 'run', 'report.html'))).toBe(true);
    // It says which project it used, on stderr.
    expect(report.stderr).toContain('plens: project of the last `plens make` here (p.yaml): workspace out/run, warehouse warehouse/run.duckdb');

    const nb = await runJson<{ failed: number; output: string }>(['notebook', join(repoRoot, 'notebooks', 'cost.md')]);
    expect(nb.code, nb.stderr).toBe(0);
    expect(nb.json.output).toBe(join(dir, 'out', 'run', 'notebooks', 'cost.md'));

    const status = await runJson<{ file: string; workspace: string }>(['status']);
    expect(status.code, status.stderr).toBe(0);
    expect([status.json.file, status.json.workspace]).toEqual([join(dir, 'p.yaml'), join(dir, 'out', 'run')]);

    const warehouse = await runJson<{ db?: string }>(['warehouse', '--dry-run']);
    expect(warehouse.code, warehouse.stderr).toBe(0);
    expect(JSON.stringify(warehouse.json)).toContain(join(dir, 'out', 'run'));
  });

  it('a flag wins, and names one of the pair only: the other is not taken from the last make', async () => {
    const missing = await run(['sql', 'select 1', '--db', 'elsewhere.duckdb']);
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain('no warehouse at elsewhere.duckdb');
    // --db alone: the report goes to out/, not into the last run's workspace.
    const report = await run(['report', '--db', 'warehouse/run.duckdb', '-q']);
    expect(report.code, report.stderr).toBe(0);
    expect(existsSync(join(dir, 'out', 'report.html'))).toBe(true);
    // -p: a pipeline's pair.
    const viaPipeline = await runJson<Array<{ n: number }>>(['sql', 'select count(*)::int as n from dialogues', '-p', 'p.yaml']);
    expect(viaPipeline.json).toEqual([{ n: 6 }]);
  });

  it('-w DIR alone, from any folder, reads the warehouse built from DIR; status and make find its pipeline', async () => {
    const elsewhere = tempDir('plens-elsewhere-');
    const ws = join(dir, 'out', 'run');
    const sql = await runJson<Array<{ n: number }>>(['sql', 'select count(*)::int as n from dialogues', '-w', ws], elsewhere);
    expect(sql.code, sql.stderr).toBe(0);
    expect(sql.json).toEqual([{ n: 6 }]);
    // In the folder the make ran in: its pipeline, whose relative paths hold there.
    const status = await run(['status', '-w', 'out/run']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).toContain(`plens: pipeline p.yaml (the pipeline that last built out/run)`);
    const make = await runJson<{ up_to_date: boolean }>(['make', '-w', 'out/run', '--dry-run']);
    expect(make.code, make.stderr).toBe(0);
    expect(make.json.up_to_date).toBe(true);
    // Elsewhere its relative paths would mean other folders: refused, with the command that works.
    const away = await run(['status', '-w', ws], elsewhere);
    expect(away.code).toBe(2);
    const hint = /run it from there: cd (\S+) && plens (status -p \S+)/.exec(away.stderr);
    expect(hint?.[1], away.stderr).toBe(dir);
    expect((await run(hint![2]!.split(' '), hint![1])).code).toBe(0);
  });

  it('make and status refuse a -w that is not their pipeline workspace', async () => {
    for (const command of ['make', 'status']) {
      const r = await run([command, '-p', 'p.yaml', '-w', 'out/other', ...(command === 'make' ? ['--dry-run'] : [])]);
      expect(r.code, command).toBe(2);
      expect(r.stderr).toContain('-w out/other is not the workspace of p.yaml (out/run): a pipeline names its own workspace');
    }
    // The same folder is no conflict.
    expect((await run(['status', '-p', 'p.yaml', '-w', 'out/run', '-q'])).code).toBe(0);
  });

  it('a missing warehouse of the last make: the hint is plens make warehouse -p FILE, and it works', async () => {
    const db = join(dir, 'warehouse', 'run.duckdb');
    renameSync(db, `${db}.away`);
    const r = await run(['tables']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('no warehouse at warehouse/run.duckdb (the warehouse of the last `plens make` here (p.yaml))');
    const hint = /`(plens make warehouse -p [^`]+)`/.exec(r.stderr)?.[1];
    expect(hint).toBe('plens make warehouse -p p.yaml');
    const built = await run([...hint!.split(' ').slice(1), '-q']);
    expect(built.code, built.stderr).toBe(0);
    expect((await run(['tables', '-q'])).code).toBe(0);
  });

  it('plens.yaml in a folder is its project when no make ran there; plens make runs it with no -p', async () => {
    const folder = tempDir('plens-config-');
    // Its paths: the run above.
    writeFileSync(
      join(folder, 'plens.yaml'),
      PIPELINE.replace('out/run', join(dir, 'out', 'run')).replace('warehouse/run.duckdb', join(dir, 'warehouse', 'run.duckdb')),
    );
    const sql = await runJson<Array<{ n: number }>>(['sql', 'select count(*)::int as n from dialogues'], folder);
    expect(sql.code, sql.stderr).toBe(0);
    expect(sql.json).toEqual([{ n: 6 }]);
    const make = await run(['make', '--dry-run'], folder);
    expect(make.code, make.stderr).toBe(0);
    expect(make.stderr).toContain('plens: pipeline plens.yaml (plens.yaml here)');
  });

  it('in a folder where nothing ran, each hint names a command that exists here (demo, make -p, warehouse)', async () => {
    const empty = tempDir('plens-empty-');
    for (const args of [['tables'], ['sql', 'select 1'], ['report'], ['compare', 'setting=a', 'setting=b']]) {
      const r = await run(args, empty);
      expect(r.code, args[0]).toBe(4);
      expect(r.stderr).toContain('nothing has run in out');
      expect(r.stderr).toContain('`plens demo` runs the bundled sample offline');
    }
    const warehouse = await run(['warehouse'], empty);
    expect(warehouse.code).toBe(4);
    expect(warehouse.stderr).toContain('hint: nothing has run in out: `plens demo` runs the bundled sample offline');
    expect(warehouse.stderr).toContain('`plens demo`');
    for (const command of ['make', 'status']) {
      const r = await run([command], empty);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`name the pipeline: plens ${command} -p FILE`);
      expect(r.stderr).toContain(`the shipped pipelines are in ${join(repoRoot, 'pipelines')}/`);
    }
    // The pipelines folder it names holds the demo pipeline a make -p can run.
    expect(existsSync(join(repoRoot, 'pipelines', 'demo.yaml'))).toBe(true);
  });

  it('a dry run is not remembered, and PLENS_STATE_DIR=off keeps no state', async () => {
    const folder = tempDir('plens-dry-');
    writeFileSync(join(folder, 'p.yaml'), PIPELINE);
    expect((await run(['make', '-p', 'p.yaml', '--dry-run', '-q'], folder)).code).toBe(0);
    expect(existsSync(join(folder, '.plens'))).toBe(false);
    const off = await runCli(['make', '-p', 'p.yaml', 'import', '-q'], { cwd: folder, env: { PLENS_STATE_DIR: 'off' } });
    expect(off.code, off.stderr).toBe(0);
    expect(existsSync(join(folder, '.plens'))).toBe(false);
  });
});
