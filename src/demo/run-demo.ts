import { join } from 'node:path';
import { sampleDataDir } from '../core/paths.js';
import type { Workspace } from '../core/workspace.js';
import { runImport, type ImportSummary } from '../dataset/import.js';
import { runScenarios, type ScenariosSummary } from '../scenarios/stage.js';
import { collectTables, formatTables, type TablesResult } from '../tables/tables.js';
import { buildWarehouse, type WarehouseSummary } from '../warehouse/build.js';

export interface DemoResult {
  import: ImportSummary;
  scenarios: ScenariosSummary;
  warehouse: WarehouseSummary;
  tables: TablesResult;
  printed: string;
}

/** The main job on embedded defaults: the bundled sample through every stage built so far. */
export async function runDemo(workspace: Workspace, dbPath: string, progress: boolean): Promise<DemoResult> {
  const imported = await runImport({ from: sampleDataDir, workspace, progress });
  const scenarios = await runScenarios(workspace, { kind: 'all' });
  const warehouse = await buildWarehouse({ workspace, dbPath });
  const tablesDir = join(workspace.root, 'tables');
  const tables = await collectTables({ dbPath, format: 'md' });
  await collectTables({ dbPath, format: 'tex', outDir: tablesDir });
  const files = await collectTables({ dbPath, format: 'md', outDir: tablesDir });
  tables.files = files.files;
  return { import: imported, scenarios, warehouse, tables, printed: formatTables({ ...tables, files: [] }, 'md') };
}

export function formatDemo(r: DemoResult): string {
  return [
    r.printed,
    '',
    '== plens demo: the bundled synthetic sample (data/sample) through import -> scenarios -> warehouse -> tables',
    `imported   ${r.import.users} users, ${r.import.scenarios.sd + r.import.scenarios.md} scenarios -> ${r.import.dataset_dir}`,
    ...r.import.normalisations.map((n) => `           normalised "${n.from}" -> "${n.to}" (${n.file}#${n.pointer})`),
    `scenarios  ${r.scenarios.scenarios.total} selected (${r.scenarios.scenarios.sd} SD + ${r.scenarios.scenarios.md} MD) -> ${r.scenarios.file}`,
    `warehouse  ${r.warehouse.db} (views: ${r.warehouse.relations.filter((x) => x.type === 'view').map((x) => x.name).join(', ')})`,
    `tables     ${r.tables.files.join(', ')} (+ .tex next to each)`,
    '',
    'Next: plens sql "select * from table1"   |   plens tables --format tex   |   plens import --from ../shared/personalens/data',
  ].join('\n');
}
