import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli, runCliJson, sampleDir, tempDir } from '../helpers/cli.js';

describe('plens CLI', () => {
  it('--help lists every command with what it does, and the exit codes', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const command of ['import', 'scenarios', 'warehouse', 'sql', 'tables', 'demo']) expect(r.stdout).toMatch(new RegExp(`plens ${command}`));
    expect(r.stdout).toContain('Exit codes');
  });

  it('each command explains its options and shows examples', async () => {
    const r = await runCli(['import', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--from');
    expect(r.stdout).toContain('--dry-run');
    expect(r.stdout).toContain('Examples:');
  });

  it('an unknown command or option is a usage error (exit 2) that names it', async () => {
    const a = await runCli(['imprt']);
    expect(a.code).toBe(2);
    expect(a.stderr).toMatch(/Unknown argument: imprt|Did you mean import/);
    const b = await runCli(['import', '--from', sampleDir, '--bogus']);
    expect(b.code).toBe(2);
    expect(b.stderr).toContain('bogus');
  });

  it('no command at all is a usage error', async () => {
    expect((await runCli([])).code).toBe(2);
  });

  it('a missing required option is a usage error', async () => {
    const r = await runCli(['import']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('from');
  });

  it('a zero timeout for an LLM stage is a usage error', async () => {
    for (const flag of ['--call-timeout', '--connect-timeout']) {
      const r = await runCli(['dialogues', '--assistant', 'sim:default', flag, '0', '-w', join(tempDir(), 'out')]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${flag} must be more than 0 seconds`);
    }
  });

  it('errors come as JSON on stdout with --json', async () => {
    const r = await runCliJson<{ ok: boolean; error: { code: string } }>(['sql', 'select 1', '--db', join(tempDir(), 'none.duckdb')]);
    expect(r.code).toBe(4);
    expect(r.json).toMatchObject({ ok: false, error: { code: 'E_PREREQUISITE' } });
  });
});

describe('plens sql', () => {
  const root = tempDir();
  const ws = join(root, 'out');
  const db = join(root, 'w.duckdb');

  beforeAll(async () => {
    expect((await runCli(['import', '--from', sampleDir, '-w', ws])).code).toBe(0);
    expect((await runCli(['warehouse', '-w', ws, '--db', db])).code).toBe(0);
  });

  it('prints a table, CSV, Markdown or JSON', async () => {
    const q = "select domain, n_tasks from table1 where domain in ('Alarm', 'Rental Cars') order by domain";
    expect((await runCli(['sql', q, '--db', db, '--format', 'csv'])).stdout).toBe('domain,n_tasks\nAlarm,2\nRental Cars,2\n');
    expect((await runCli(['sql', q, '--db', db, '--format', 'md'])).stdout).toContain('| Rental Cars |       2 |');
    expect((await runCliJson(['sql', q, '--db', db])).json).toEqual([
      { domain: 'Alarm', n_tasks: 2 },
      { domain: 'Rental Cars', n_tasks: 2 },
    ]);
    const table = await runCli(['sql', q, '--db', db]);
    expect(table.stdout).toContain('(2 rows)');
  });

  it('runs a file with several statements and prints the last result', async () => {
    const file = join(root, 'q.sql');
    writeFileSync(file, 'create temp table t as select 41 as x;\nselect x + 1 as answer from t;\n');
    expect((await runCli(['sql', '-f', file, '--db', db, '--format', 'csv'])).stdout).toBe('answer\n42\n');
  });

  it("a SQL error exits 5 with DuckDB's message", async () => {
    const r = await runCli(['sql', 'select * from no_such_table', '--db', db]);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('E_SQL');
    expect(r.stderr).toContain('no_such_table');
  });

  it('opens the warehouse read-only: writes are refused', async () => {
    const r = await runCli(['sql', 'drop table users', '--db', db]);
    expect(r.code).toBe(5);
    expect((await runCli(['sql', 'select count(*) from users', '--db', db, '--format', 'csv'])).stdout).toBe('count_star()\n8\n');
  });

  it('a query and --file together, or neither, is a usage error', async () => {
    expect((await runCli(['sql', '--db', db])).code).toBe(2);
    expect((await runCli(['sql', 'select 1', '-f', 'x.sql', '--db', db])).code).toBe(2);
  });
});

describe('one CLI for every benchmark', () => {
  it("lists both benchmarks; each benchmark's stages run under its name as under the old ones", async () => {
    const help = await runCli(['--help']);
    expect(help.stdout).toMatch(/Benchmarks: personalens \(PersonaLens;/);
    expect(help.stdout).toContain('persona-bench (PERSONA-bench;');
    // Every exit code the commands use is listed.
    expect(help.stdout.replace(/\s+/g, ' ')).toMatch(/5 SQL error, 6 stopped at the spend cap .*, 130 stopped by Ctrl-C/);
    const lens = await runCli(['personalens', 'scenarios', '--help']);
    expect(lens.code, lens.stderr).toBe(0);
    expect(lens.stdout).toContain('plens personalens scenarios');
    const sample = join(repoRoot, 'data', 'personabench-sample', 'raw.json');
    const viaBench = await runCli(['persona-bench', 'select', '--from', sample, '--dry-run', '--json']);
    const viaPersona = await runCli(['persona', 'select', '--from', sample, '--dry-run', '--json']);
    expect(viaBench.code, viaBench.stderr).toBe(0);
    expect(JSON.parse(viaBench.stdout)).toEqual(JSON.parse(viaPersona.stdout));
  });
});

describe('the package', () => {
  it('ships the licence package.json names, and the notebooks the README points to', () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { license: string; files: string[] };
    expect(pkg.license).toBe('Apache-2.0');
    expect(readFileSync(join(repoRoot, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0, January 2004/);
    expect(pkg.files).toContain('notebooks');
  });
});

describe('the pipeline as an argument', () => {
  it('make takes -p FILE or a YAML argument among the targets, once; status takes it as its argument', async () => {
    const { pipelineAndTargets } = await import('../../src/cli/commands/make.js');
    expect(pipelineAndTargets(undefined, ['pipelines/demo.yaml'])).toEqual({ file: 'pipelines/demo.yaml', targets: ['all'] });
    expect(pipelineAndTargets(undefined, ['tables', 'p.yml', 'report'])).toEqual({ file: 'p.yml', targets: ['tables', 'report'] });
    expect(pipelineAndTargets('p.yaml', ['all'])).toEqual({ file: 'p.yaml', targets: ['all'] });
    expect(() => pipelineAndTargets('a.yaml', ['b.yaml'])).toThrow(/more than one pipeline: a.yaml, b.yaml/);
    expect(() => pipelineAndTargets(undefined, ['all'])).toThrow(/name the pipeline/);
    const bare = await runCli(['make']);
    expect(bare.code).toBe(2);
    const viaArg = await runCliJson<{ pipeline: string }>(['status', join(repoRoot, 'pipelines', 'persona-demo.yaml')]);
    const viaFlag = await runCliJson<{ pipeline: string }>(['status', '-p', join(repoRoot, 'pipelines', 'persona-demo.yaml')]);
    expect(viaArg.code, viaArg.stderr).toBe(0);
    expect(viaArg.json).toEqual(viaFlag.json);
  });
});
