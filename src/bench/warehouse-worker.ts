import { cp, readdir, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { DATASET_MARKER, recordDataset } from '../benchmarks/personalens/dataset-identity.js';
import { Workspace } from '../core/workspace.js';
import { runImport } from '../benchmarks/personalens/dataset/import.js';
import { runScenarios } from '../benchmarks/personalens/scenarios/stage.js';
import { tableCatalog } from '../registry/registry.js';
import { collectTables } from '../tables/tables.js';
import { buildWarehouse } from '../warehouse/build.js';
import { stageTimer } from './report.js';

/**
 * One run in a fresh process (so its peak RSS is its own):
 *   node dist/bench/warehouse-worker.js <data dir> <demo workspace> <root>
 * The full-data pipeline (import, scenarios, warehouse, tables) with the demo's dialogues and
 * judgments present, then a warehouse build with nothing changed (up to date: nothing to do) and a
 * forced one. Prints one JSON line.
 */
const [dataDir, demoWorkspace, root] = process.argv.slice(2) as [string, string, string];
const workspace = new Workspace(join(root, 'out'));
const dbPath = join(root, 'plens.duckdb');
const { stages, time } = stageTimer();
const load = loadavg();
const imported = await time('import', () => runImport({ from: dataDir, workspace, progress: false }));
const selected = await time('scenarios --kind all', () => runScenarios(workspace, { kind: 'all' }));
// The demo's finished stages, as a run on the released data would leave them: each folder is
// re-marked as made on this import (the mixing guard would rightly refuse the sample's marker).
for (const stage of ['dialogues', 'judgments']) {
  await cp(join(demoWorkspace, stage), join(workspace.root, stage), { recursive: true });
  for (const folder of await readdir(join(workspace.root, stage))) {
    await rm(join(workspace.root, stage, folder, DATASET_MARKER), { force: true });
    await recordDataset(join(workspace.root, stage, folder), workspace);
  }
}
const first = await time('warehouse (step cache cold)', () => buildWarehouse({ workspace, dbPath }));
await time('tables (md + tex files)', () =>
  collectTables({ dbPath, catalog: tableCatalog(), format: 'md', formats: ['md', 'tex'], outDir: join(root, 'tables') }),
);
const pipelineRssMiB = process.resourceUsage().maxRSS / 1024;
const t0 = performance.now();
const again = await buildWarehouse({ workspace, dbPath });
const rebuildS = (performance.now() - t0) / 1000;
// What `--force` costs with nothing changed: every file runs again, Table 10 comes from the step cache.
const t1 = performance.now();
const forced = await buildWarehouse({ workspace, dbPath, force: true });
const forcedS = (performance.now() - t1) / 1000;
const turns = first.relations.find((r) => r.name === 'turns')?.rows ?? 0;
process.stdout.write(
  JSON.stringify({
    users: imported.users,
    scenarios: selected.scenarios.total,
    turns,
    stages,
    pipeline_rss_mib: pipelineRssMiB,
    rebuild_s: rebuildS,
    rebuild_up_to_date: again.up_to_date,
    forced_s: forcedS,
    load,
    forced_steps: forced.steps.map((s) => `${s.step} ${s.status}`),
    // The cold build's computed steps (Table 10's lexical diversity), so the breakdown shows what is left.
    cold_steps: first.steps.map((s) => [s.step, s.elapsed_ms / 1000]),
    rss_mib: process.resourceUsage().maxRSS / 1024,
  }) + '\n',
);
