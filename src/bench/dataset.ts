import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Workspace } from '../core/workspace.js';
import { runImport } from '../benchmarks/personalens/dataset/import.js';
import { runScenarios } from '../benchmarks/personalens/scenarios/stage.js';
import { tableCatalog } from '../registry/registry.js';
import { collectTables } from '../tables/tables.js';
import { buildWarehouse } from '../warehouse/build.js';
import { stageTimer, type BenchResult } from './report.js';

/**
 * Import, scenarios, warehouse and tables of a dataset, in one process, one after the other.
 * One process makes the peak RSS the worst of all four stages (a stricter figure than per stage).
 */
export async function benchDataset(dataDir: string): Promise<BenchResult> {
  if (!existsSync(join(dataDir, 'profile'))) throw new Error(`bench data not found at ${dataDir} (set PLENS_BENCH_DATA)`);
  const root = await mkdtemp(join(tmpdir(), 'plens-bench-'));
  const workspace = new Workspace(join(root, 'out'));
  const dbPath = join(root, 'plens.duckdb');
  const { stages, time } = stageTimer();
  try {
    const imported = await time('import', () => runImport({ from: dataDir, workspace, progress: false }));
    const selected = await time('scenarios --kind all', () => runScenarios(workspace, { kind: 'all' }));
    await time('warehouse', () => buildWarehouse({ workspace, dbPath }));
    await time('tables (md + tex files)', () =>
      collectTables({ dbPath, catalog: tableCatalog(), format: 'md', formats: ['md', 'tex'], outDir: join(root, 'tables') }),
    );
    const total = stages.reduce((s, [, t]) => s + t, 0);
    const peakMiB = process.resourceUsage().maxRSS / 1024;
    return {
      name: 'dataset: import + scenarios + warehouse + tables',
      context: `${imported.users} users, ${selected.scenarios.total} scenarios from ${dataDir}`,
      figures: [
        ...stages.map(([name, seconds, cpu]) => ({ name: `  ${name}, CPU ${cpu.toFixed(1)} s`, value: seconds, unit: 's' })),
        { name: 'total wall time', value: total, unit: 's', bound: 20 },
        { name: 'peak RSS (whole process)', value: peakMiB, unit: 'MiB', bound: 1024 },
      ],
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
