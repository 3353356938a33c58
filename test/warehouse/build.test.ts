import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, runCli, runCliJson, sampleDir, tempDir } from '../helpers/cli.js';

type Summary = { ran: string[]; skipped: Array<{ file: string; reason: string }>; relations: Array<{ name: string; type: string; rows: number | null }> };

describe('plens warehouse', () => {
  const root = tempDir();
  const ws = join(root, 'out');

  beforeAll(async () => {
    expect((await runCli(['import', '--from', sampleDir, '-w', ws])).code).toBe(0);
  });

  it('skips files whose inputs are missing and says why (no scenarios selected yet)', async () => {
    const r = await runCliJson<Summary>(['warehouse', '-w', ws, '--db', join(root, 'a.duckdb')]);
    expect(r.code).toBe(0);
    expect(r.json.skipped).toEqual([
      { file: '05_runs.sql', reason: 'needs runs/*.json in the workspace' },
      { file: '09_dialogues.sql', reason: 'needs dialogues/*/dialogues.parquet in the workspace' },
      { file: '20_scenarios.sql', reason: 'needs scenarios/scenarios.parquet in the workspace' },
      { file: '46_build_validation.sql', reason: 'needs build/reference/dataset/manifest.json in the workspace' },
      { file: '47_build_records.sql', reason: 'needs build/*/*/records.parquet in the workspace' },
      { file: '51_llm_calls.sql', reason: 'needs dialogues/*/calls.parquet in the workspace' },
      { file: '52_llm_calls_judge.sql', reason: 'needs judgments/*/calls.parquet in the workspace' },
      { file: '60_judgments.sql', reason: 'needs judgments/*/judgments.parquet in the workspace' },
      { file: '61_results.sql', reason: 'needs judgments' },
      { file: '62_table13.sql', reason: 'needs dialogues' },
      { file: '63_original_scoring.sql', reason: 'needs judgment_configs' },
      { file: '64_result_runs.sql', reason: 'needs judgment_configs' },
      { file: '65_annotations.sql', reason: 'needs annotation/labels.parquet in the workspace' },
      { file: '66_table5.sql', reason: 'needs annotations' },
      { file: '70_paired.sql', reason: 'needs dialogue_scores' },
      { file: '71_judge_validity.sql', reason: 'needs annotations' },
      { file: '72_judge_consistency.sql', reason: 'needs judgments' },
      { file: '73_simulator_audit.sql', reason: 'needs dialogues' },
      { file: '74_coverage.sql', reason: 'needs paired_scores' },
      { file: '80_persona_load.sql', reason: 'needs persona/scores/metrics.parquet in the workspace' },
      { file: '81_persona_predictions.sql', reason: 'needs persona/predictions/*/predictions.parquet in the workspace' },
      { file: '85_prefeval_load.sql', reason: 'needs prefeval/responses/*/responses.parquet in the workspace' },
      { file: '86_prefeval_checks.sql', reason: 'needs prefeval/checks/*/checks.parquet in the workspace' },
      { file: '87_prefeval_paired.sql', reason: 'needs prefeval_checks' },
      { file: '88_prefeval_leaderboard.sql', reason: 'needs prefeval/published.json in the workspace' },
      { file: '89_prefeval_mcq.sql', reason: 'needs prefeval/mcq/*/mcq.parquet in the workspace' },
      { file: '90_table10.sql', reason: 'needs turns' },
    ]);
    expect(r.json.relations.find((x) => x.name === 'table1')).toEqual({ name: 'table1', type: 'view', rows: null });
    expect(r.json.relations.find((x) => x.name === 'users')).toEqual({ name: 'users', type: 'table', rows: 8 });
  });

  it("runs an analyst's extra .sql file from --sql-dir, and skips one whose relation is missing", async () => {
    const dir = join(root, 'sql');
    mkdirSync(dir);
    // The package's SQL: the shared files and a folder per benchmark.
    for (const sub of ['', 'personalens', 'personabench']) {
      mkdirSync(join(dir, sub), { recursive: true });
      for (const f of readdirSync(join(repoRoot, 'warehouse', sub)).filter((f) => f.endsWith('.sql')))
        copyFileSync(join(repoRoot, 'warehouse', sub, f), join(dir, sub, f));
    }
    writeFileSync(
      join(dir, '90_masked.sql'),
      '-- requires: interests\nCREATE VIEW masked_per_user AS SELECT user_id, count(*) FILTER (NOT interested) AS masked FROM interests GROUP BY 1 ORDER BY 1;\n',
    );
    writeFileSync(join(dir, '91_needs_judgments.sql'), '-- requires: judgments\nCREATE VIEW x AS SELECT * FROM judgments;\n');
    const db = join(root, 'b.duckdb');
    const r = await runCliJson<Summary>(['warehouse', '-w', ws, '--db', db, '--sql-dir', dir]);
    expect(r.json.ran).toContain('90_masked.sql');
    expect(r.json.skipped).toContainEqual({ file: '91_needs_judgments.sql', reason: 'needs judgments' });
    // Masked domains per user, from data/sample/README.md: user0 has 3 (Buses, Games, Sports).
    const rows = (await runCliJson<Array<{ user_id: string; masked: number }>>(['sql', "select * from masked_per_user where user_id = 'user0'", '--db', db]))
      .json;
    expect(rows).toEqual([{ user_id: 'user0', masked: 3 }]);
  });

  it('a failing SQL file is an error naming the file, and the previous warehouse stays as it was', async () => {
    const db = join(root, 'c.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db])).code).toBe(0);
    const before = statSync(db).mtimeMs;
    const dir = join(root, 'badsql');
    mkdirSync(dir);
    copyFileSync(join(repoRoot, 'warehouse', 'personalens', '10_dataset.sql'), join(dir, '10_dataset.sql'));
    writeFileSync(join(dir, '50_broken.sql'), 'CREATE VIEW broken AS SELEC 1;\n');
    const r = await runCli(['warehouse', '-w', ws, '--db', db, '--sql-dir', dir]);
    expect(r.code).toBe(5);
    expect(r.stderr).toContain('50_broken.sql');
    expect(statSync(db).mtimeMs).toBe(before);
    expect(readdirSync(root).filter((f) => f.includes('.tmp-'))).toEqual([]);
    expect((await runCli(['sql', 'select count(*) from table1', '--db', db, '--format', 'csv'])).stdout).toBe('count_star()\n20\n');
  });

  it('--dry-run checks every file and writes no database', async () => {
    const db = join(root, 'dry.duckdb');
    const r = await runCliJson<Summary & { dry_run: boolean }>(['warehouse', '-w', ws, '--db', db, '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.json.dry_run).toBe(true);
    expect(r.json.ran).toContain('42_table8_9.sql');
    expect(existsSync(db)).toBe(false);
  });

  it('needs an imported dataset (exit 4)', async () => {
    expect((await runCli(['warehouse', '-w', join(root, 'nothing'), '--db', join(root, 'd.duckdb')])).code).toBe(4);
  });
});
