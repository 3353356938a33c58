import { join } from 'node:path';
import { sampleDataDir } from '../core/paths.js';
import type { Workspace } from '../core/workspace.js';
import { runImport, type ImportSummary } from '../dataset/import.js';
import { runDialogues, type DialoguesSummary } from '../personalens/dialogues-stage.js';
import { JUDGE_DIMENSIONS, runJudge, type JudgeSummary } from '../personalens/judge-stage.js';
import { SETTING_NAMES } from '../personalens/settings.js';
import { runScenarios, type ScenariosSummary } from '../scenarios/stage.js';
import { collectTables, formatTables, type TablesResult } from '../tables/tables.js';
import { buildWarehouse, type WarehouseSummary } from '../warehouse/build.js';

export interface DemoResult {
  import: ImportSummary;
  scenarios: ScenariosSummary;
  dialogues: DialoguesSummary;
  judgments: JudgeSummary;
  warehouse: WarehouseSummary;
  tables: TablesResult;
  printed: string;
}

/** The main job on embedded defaults: the bundled sample through every stage built so far. */
export async function runDemo(workspace: Workspace, dbPath: string, progress: boolean, signal: AbortSignal): Promise<DemoResult> {
  const imported = await runImport({ from: sampleDataDir, workspace, progress });
  const scenarios = await runScenarios(workspace, { kind: 'all' });
  // The offline simulator plays both agents: the chain runs with no endpoint and no key.
  const dialogues = await runDialogues({
    workspace,
    assistants: ['sim:default'],
    settings: SETTING_NAMES,
    cache: 'on',
    concurrency: 8,
    progress,
    signal,
  });
  const judgments = await runJudge({ workspace, judge: 'sim:default', dimensions: [...JUDGE_DIMENSIONS], cache: 'on', concurrency: 8, progress, signal });
  const warehouse = await buildWarehouse({ workspace, dbPath });
  const tablesDir = join(workspace.root, 'tables');
  const tables = await collectTables({ dbPath, format: 'md' });
  await collectTables({ dbPath, format: 'tex', outDir: tablesDir });
  const files = await collectTables({ dbPath, format: 'md', outDir: tablesDir });
  tables.files = files.files;
  return { import: imported, scenarios, dialogues, judgments, warehouse, tables, printed: formatTables({ ...tables, files: [] }, 'md') };
}

export function formatDemo(r: DemoResult): string {
  return [
    r.printed,
    '',
    '== plens demo: the bundled synthetic sample (data/sample) through import -> scenarios -> dialogues -> judge -> warehouse -> tables',
    `imported   ${r.import.users} users, ${r.import.scenarios.sd + r.import.scenarios.md} scenarios -> ${r.import.dataset_dir}`,
    ...r.import.normalisations.map((n) => `           normalised "${n.from}" -> "${n.to}" (${n.file}#${n.pointer})`),
    `scenarios  ${r.scenarios.scenarios.total} selected (${r.scenarios.scenarios.sd} SD + ${r.scenarios.scenarios.md} MD) -> ${r.scenarios.file}`,
    `dialogues  ${r.dialogues.ok} new + ${r.dialogues.already_done} kept, ${SETTING_NAMES.length} settings x sim:default (an offline simulator, not a model) -> ${join(r.import.dataset_dir, '..', 'dialogues')}`,
    `judgments  ${r.judgments.ok} new + ${r.judgments.already_done} kept (${r.judgments.failed} failed or unparsed), judge sim:default (a simulator) -> ${r.judgments.dir}`,
    `warehouse  ${r.warehouse.db} (views: ${r.warehouse.relations.filter((x) => x.type === 'view').map((x) => x.name).join(', ')})`,
    `tables     ${r.tables.files.length} tables as .md and .tex in ${join(r.import.dataset_dir, '..', 'tables')}`,
    'NOTE: every model in this demo is sim:default, an offline simulator: the result tables show the pipeline working, not any assistant\'s quality.',
    '',
    'Next: plens sql "select setting, count(*) from dialogues group by 1"   |   plens tables --format tex   |   plens import --from ../shared/personalens/data',
  ].join('\n');
}
