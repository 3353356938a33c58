import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleDataDir } from '../core/paths.js';
import { Workspace } from '../core/workspace.js';
import { runImport } from '../benchmarks/personalens/dataset/import.js';
import { Database } from '../db/database.js';
import { runScenarios } from '../benchmarks/personalens/scenarios/stage.js';
import { tableCatalog } from '../registry/registry.js';
import { buildWarehouse } from '../warehouse/build.js';
import type { BenchResult } from './report.js';

const DIALOGUES = 100_000;
/** The result views the bench times (every view of 61_results.sql and the paired, validity and audit views). */
const RESULT_VIEWS =
  /^(table3|table4|table12|table13|figure4|figure5|paired_differences|judgment_status|paired_lift|paired_comparisons|judge_validity|ppi_estimates|judge_swap|judge_repeatability|simulator_audit_counts|result_coverage)$/;

/**
 * Every result view over 1M synthetic judgments: 100k dialogues (4,167 scenarios of 50 users, each in all
 * 24 cells of 4 assistants x 6 settings, so that paired views pair; SD and MD, 2-6 rounds, random domains)
 * with 10 judgments each (6 dialogue-level, 4 turn-level), random scores; two annotators label TC and P of
 * 200 dialogues (judge validity and PPI).
 * Times the warehouse build plus materialising each result view (CREATE TABLE AS SELECT * FROM view).
 */
export async function benchResults(): Promise<BenchResult> {
  const root = await mkdtemp(join(tmpdir(), 'plens-bench-results-'));
  try {
    const ws = new Workspace(join(root, 'out'));
    await runImport({ from: sampleDataDir, workspace: ws, progress: false });
    await runScenarios(ws, { kind: 'all' });
    await mkdir(join(ws.root, 'dialogues', 'synthetic'), { recursive: true });
    await mkdir(join(ws.root, 'judgments', 'synthetic'), { recursive: true });
    const gen = await Database.open(':memory:');
    const domains = `['Alarm','Books','Buses','Calendar','Events','Finance','Flights','Games','Hotels','Media','Messaging','Movies','Music','Rental Cars','Restaurants','Services','Shopping','Sports','Train','Travel']`;
    try {
      await gen.run(`SELECT setseed(0.42)`);
      await gen.run(`
        CREATE TABLE d AS SELECT
          'd' || i AS "key", 'ok' AS status, 'user' || (i // 24 % 50) || ':T' || (i // 24 // 50) AS scenario_id, 'user' || (i // 24 % 50) AS user_id, 'T' || (i // 24 // 50) AS task_id,
          CASE WHEN i // 24 % 5 = 0 THEN 'MD' ELSE 'SD' END AS kind,
          ['vanilla','base','base+d','base+i','base+s','base+all'][1 + i % 6] AS setting,
          'openai:assistant-' || (i // 6 % 4) AS assistant_model, 'openai:user' AS user_model, 0 AS replicate,
          0.0 AS assistant_temperature, 1024 AS assistant_max_tokens, 1.0 AS user_temperature, 512 AS user_max_tokens, 'dp-1' AS prompt_version, 'terminated' AS end_reason,
          2 + (i % 5) AS rounds,
          CASE WHEN i // 24 % 5 = 0 THEN [${domains}[1 + i // 24 % 20], ${domains}[1 + (i // 24 + 7) % 20], ${domains}[1 + (i // 24 + 13) % 20]] ELSE [${domains}[1 + i // 24 % 20]] END AS relevant_domains
        FROM range(${DIALOGUES}) t(i)`);
      await gen.run(
        `
        COPY (SELECT d.* EXCLUDE (relevant_domains),
          list_transform(range(2 * rounds), k -> {'role': CASE WHEN k % 2 = 0 THEN 'user' ELSE 'assistant' END, 'content': 'x', 'input_tokens': 100, 'output_tokens': 100 + k, 'latency_ms': 50, 'finish_reason': 'stop'}) AS messages
        FROM d) TO $1 (FORMAT parquet)`,
        undefined,
        [join(ws.root, 'dialogues', 'synthetic', 'dialogues.parquet')],
      );
      await gen.run(
        `
        COPY (
          SELECT 'j' || row_number() OVER () AS "key", 'ok' AS status, d."key" AS dialogue_id, d.scenario_id, d.kind, d.setting, d.assistant_model, d.user_model,
            d.replicate, d.relevant_domains, j.dimension, j.target, j.turn, 'openai:judge' AS judge_model,
            0.0 AS judge_temperature, 512 AS judge_max_tokens, 'jp-1' AS judge_prompt_version,
            CASE WHEN j.dimension = 'task_completion' THEN (random() < 0.9)::INTEGER
                 WHEN j.dimension = 'personalization' THEN 1 + floor(random() * 4)::INTEGER
                 ELSE 1 + floor(random() * 5)::INTEGER END AS score
          FROM d, (VALUES ('task_completion', 'dialogue', NULL), ('personalization', 'assistant', NULL), ('naturalness', 'assistant', NULL),
                          ('coherence', 'assistant', NULL), ('naturalness', 'user', NULL), ('coherence', 'user', NULL),
                          ('personalization', 'assistant', 1), ('personalization', 'assistant', 2), ('personalization', 'assistant', 3), ('personalization', 'assistant', 4)) j(dimension, target, turn)
        ) TO $1 (FORMAT parquet)`,
        undefined,
        [join(ws.root, 'judgments', 'synthetic', 'judgments.parquet')],
      );
      await mkdir(join(ws.root, 'annotation'), { recursive: true });
      await gen.run(
        `
        COPY (SELECT 'bench' AS sample, 'h' || a AS annotator, 'd' || i AS dialogue_id, x.dimension, x.target,
            CASE WHEN x.dimension = 'task_completion' THEN (random() < 0.85)::INTEGER ELSE 1 + floor(random() * 4)::INTEGER END AS score,
            'sheet.csv' AS source_file, now() AS imported_at
          FROM range(200) t(i), range(2) h(a), (VALUES ('task_completion', 'dialogue'), ('personalization', 'assistant')) x(dimension, target)
        ) TO $1 (FORMAT parquet)`,
        undefined,
        [join(ws.root, 'annotation', 'labels.parquet')],
      );
    } finally {
      gen.close();
    }
    const dbPath = join(root, 'plens.duckdb');
    const t0 = performance.now();
    await buildWarehouse({ workspace: ws, dbPath });
    const buildS = (performance.now() - t0) / 1000;
    const db = await Database.open(dbPath);
    const figures: BenchResult['figures'] = [{ name: '  warehouse build (load 1M judgments)', value: buildS, unit: 's' }];
    let viewsS = 0;
    let judgments = 0;
    try {
      judgments = (await db.all<{ n: number }>('SELECT count(*)::INTEGER AS n FROM judgments'))[0]!.n;
      for (const t of tableCatalog()
        .flatMap((g) => g.tables)
        .filter((x) => RESULT_VIEWS.test(x.name))) {
        const v0 = performance.now();
        await db.run(`CREATE TEMP TABLE m_${t.name} AS SELECT * FROM ${t.name}`);
        const s = (performance.now() - v0) / 1000;
        viewsS += s;
        figures.push({ name: `  ${t.name}`, value: s, unit: 's' });
      }
    } finally {
      db.close();
    }
    figures.push({ name: 'every result view (materialised)', value: viewsS, unit: 's', bound: 10 });
    figures.push({ name: 'build + every result view', value: buildS + viewsS, unit: 's' });
    return {
      name: 'results: the result views over 1M synthetic judgments',
      context: `${judgments.toLocaleString('en-US')} judgments of ${DIALOGUES.toLocaleString('en-US')} dialogues`,
      figures,
    };
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
