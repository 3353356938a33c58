import { resolve } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { plensVersion } from '../core/version.js';
import { Database } from '../db/database.js';
import { collectTables } from '../tables/tables.js';
import type { ViewRows } from '../tables/view-rows.js';
import {
  figure4Chart,
  figure5Chart,
  renderChart,
  SCORE_DIMENSIONS,
  scoreDistributionChart,
  table4Chart,
  type ChartSpec,
  type RenderedChart,
} from './charts.js';
import { renderPage } from './html.js';
import { liftChart } from './lift-chart.js';
import { personaResultsChart, personaSettingChart } from './persona-charts.js';
import { collectMetadata } from './metadata.js';

export interface ReportOptions {
  dbPath: string;
  out: string;
  title?: string;
  /** Extra key/values from a pipeline, shown with the run's metadata. */
  metadata?: Record<string, unknown>;
  /** The views' rows from an earlier reader of the same warehouse build (make's tables step). */
  viewRows?: ViewRows;
}

type Row = Record<string, unknown>;

/**
 * Each chart: the view it reads, the spec builder (null when there is nothing to draw), and its
 * query when the view is not one of the paper tables already read (the bootstrap views are slow).
 */
const CHARTS: Array<{ view: string; sql?: string; build: (rows: Row[]) => ChartSpec | null; label: string; persona?: true }> = [
  { label: 'Figure 4', view: 'figure4', build: figure4Chart },
  { label: 'Figure 5', view: 'figure5', build: figure5Chart },
  { label: 'Table 4', view: 'table4', build: table4Chart },
  { label: 'Personalization lift', view: 'paired_lift', build: liftChart },
  {
    label: 'Score distributions',
    view: 'dialogue_scores',
    // UNPIVOT drops NULLs, so dimensions a dialogue was not (or not successfully) judged on count nowhere.
    sql: `SELECT judge_model, run, assistant_model, dimension, score, count(*) AS n
      FROM (UNPIVOT (SELECT judge_model, run, assistant_model, ${SCORE_DIMENSIONS.map((d) => d.key).join(', ')} FROM dialogue_scores)
        ON ${SCORE_DIMENSIONS.map((d) => d.key).join(', ')} INTO NAME dimension VALUE score)
      GROUP BY ALL ORDER BY ALL`,
    build: scoreDistributionChart,
  },
  { label: 'PERSONA-bench results', view: 'persona_results', build: personaResultsChart, persona: true },
  { label: 'PERSONA-bench settings', view: 'persona_setting_comparison', build: personaSettingChart, persona: true },
];

/**
 * Writes one self-contained HTML report of a warehouse: every paper table it has, the charts of
 * Figures 4 and 5, Table 4 and the score distributions (SVG rendered here), and the run's metadata.
 * Whatever the warehouse lacks is listed as skipped, never an error.
 */
export async function writeReport(options: ReportOptions): Promise<{ file: string; charts: number; tables: number }> {
  const file = resolve(options.out);
  const skipped: string[] = [];
  const warnings: string[] = [];

  const collected = await collectTables({ dbPath: options.dbPath, format: 'md', viewRows: options.viewRows });
  const tables = collected.tables.filter((t) => t.rows.length > 0);
  for (const t of collected.tables) if (t.rows.length === 0) skipped.push(`${t.title ?? t.name}: skipped, the view ${t.name} has no rows`);
  for (const m of collected.missing) skipped.push(`${m.name}: skipped, ${m.reason}`);

  const db = await Database.open(options.dbPath, { readOnly: true });
  let charts: RenderedChart[];
  let metadata: Awaited<ReturnType<typeof collectMetadata>>;
  try {
    const relations = new Set((await db.all<{ name: string }>('SELECT table_name AS name FROM information_schema.tables')).map((r) => r.name));
    const specs: ChartSpec[] = [];
    // A warehouse holds PersonaLens results (its dataset is there), PERSONA-bench results, or both:
    // the other benchmark's charts are passed over without a note.
    const personaLens = relations.has('domains');
    const personaBench = collected.tables.some((t) => t.name === 'persona_results' && t.rows.length > 0);
    for (const c of CHARTS) {
      if (c.persona ? !personaBench : !personaLens) continue;
      if (!relations.has(c.view)) {
        skipped.push(`${c.label} chart: skipped, the warehouse has no ${c.view}`);
        continue;
      }
      let rows: Row[];
      try {
        rows = collected.tables.find((t) => t.name === c.view)?.rows ?? (await db.all(c.sql ?? `SELECT * FROM ${c.view}`));
      } catch (error) {
        skipped.push(`${c.label} chart: skipped (${(error as Error).message.split('\n')[0]})`);
        continue;
      }
      const spec = rows.length ? c.build(rows) : null;
      if (spec) specs.push(spec);
      else skipped.push(`${c.label} chart: skipped, ${c.view} has no ${rows.length ? 'values to plot' : 'rows'}`);
    }
    metadata = await collectMetadata(db, relations, options.metadata ?? {});
    // The PersonaLens run sections are absent from a PERSONA-bench-only warehouse by design.
    skipped.push(...(personaLens ? metadata.notes : metadata.notes.filter((n) => !/: skipped, the warehouse has no /.test(n))));
    charts = [];
    // One at a time: each view holds its scenegraph until finalized, and order keeps the page stable.
    for (const spec of specs) charts.push(await renderChart(spec, warnings));
  } finally {
    db.close();
  }

  const html = renderPage({
    title: options.title ?? 'plens report',
    generatedAt: new Date().toISOString(),
    plensVersion,
    warehouse: resolve(options.dbPath),
    summary: metadata.summary,
    charts,
    tables,
    metadata: metadata.tables,
    skipped,
    warnings: [...new Set(warnings)],
  });
  await writeFileAtomic(file, html);
  return { file, charts: charts.length, tables: tables.length };
}
