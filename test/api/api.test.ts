import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot, tempDir } from '../helpers/cli.js';

/**
 * The programmatic API as a user's script sees it: `import ... from 'plens'` resolves through
 * package.json's exports to the built dist/index.js (npm test builds first), and a tiny offline
 * pipeline (the PrefEval demo, simulated models) runs end to end through it: one step, then the
 * warehouse, its status, a query, a table and the export.
 */
describe("import { ... } from 'plens'", () => {
  it('loads a pipeline, makes a step and the warehouse, reads status, queries a view, renders a table and exports', { timeout: 180_000 }, async () => {
    const plens = await import('plens');
    const dir = tempDir('plens-api-');
    const env = { ...process.env, PLENS_PREFEVAL_WORKSPACE: join(dir, 'out'), PLENS_PREFEVAL_WAREHOUSE: join(dir, 'w.duckdb') };
    const p = plens.loadPipeline(join(repoRoot, 'pipelines', 'prefeval-demo.yaml'), env);
    expect([p.name, p.benchmark, p.warehouse]).toEqual(['prefeval-demo', 'prefeval', join(dir, 'w.duckdb')]);

    // One step, with options: its line comes through `log`.
    const lines: string[] = [];
    const step = await plens.make(p, { targets: ['prefeval-mcq'], log: (l) => lines.push(l) });
    expect(step.failed).toEqual([]);
    expect(step.steps.map((s) => `${s.step}:${s.status}`)).toEqual(['prefeval-mcq:ran']);
    expect(lines.join('\n')).toContain('prefeval-mcq');

    // A dry run of the rest plans without running.
    const plan = await plens.make(p, { targets: ['warehouse'], dryRun: true });
    expect(plan.dry_run).toBe(true);
    expect(plan.steps.find((s) => s.step === 'prefeval-mcq')?.status).toBe('up-to-date');
    expect(existsSync(p.warehouse)).toBe(false);

    const built = await plens.make(p, { targets: ['warehouse'] });
    expect(built.failed).toEqual([]);
    const status = await plens.status(p);
    expect(status.stages['warehouse']).toBe('done');

    const rows = await plens.query<{ n: number; accuracy: number }>(
      p.warehouse,
      'SELECT n::INT AS n, accuracy FROM prefeval_mcq_results WHERE form = $form AND baseline = $baseline AND inter_turns = 0',
      { form: 'explicit', baseline: 'zero-shot' },
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.n).toBe(8);

    const t = await plens.tables(p.warehouse, { only: ['prefeval_mcq_results'], format: 'csv' });
    expect(t.tables.map((x) => x.name)).toEqual(['prefeval_mcq_results']);
    expect(t.tables[0]!.rows).toHaveLength(18);

    const exported = await plens.exportRun(p.warehouse, { out: join(dir, 'logs'), where: 'task=prefeval-classification,form=explicit' });
    expect(exported.logs).toHaveLength(6);
    const log = JSON.parse(readFileSync(exported.logs[0]!.file, 'utf8')) as { eval: { task: string }; samples: unknown[] };
    expect(log.eval.task).toBe('prefeval-classification');
    expect(log.samples).toHaveLength(8);

    // Errors are the CLI's typed errors, with their exit codes.
    await expect(plens.query(join(dir, 'none.duckdb'), 'SELECT 1')).rejects.toThrow();
    const failure = await plens.exportRun(join(dir, 'none.duckdb')).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(plens.PlensError);
    expect((failure as InstanceType<typeof plens.PlensError>).exitCode).toBe(plens.ExitCode.missingPrerequisite);
  });

  it('ships its types: package.json names dist/index.d.ts, which declares every function the entry exports', async () => {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>>; types: string };
    expect(pkg.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
    const dts = readFileSync(join(repoRoot, pkg.types), 'utf8');
    const plens = (await import('plens')) as Record<string, unknown>;
    const functions = Object.keys(plens).filter((k) => typeof plens[k] === 'function');
    expect(functions.length).toBeGreaterThan(8);
    for (const name of functions) expect(dts, name).toMatch(new RegExp(`\\b${name}\\b`));
  });
});
