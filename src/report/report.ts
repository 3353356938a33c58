import { resolve } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { plensVersion } from '../core/version.js';
import { Database } from '../db/database.js';
import { collectTables, type TableGroup } from '../tables/tables.js';
import type { ViewRows } from '../tables/view-rows.js';
import { renderChart, type ChartSpec, type RenderedChart } from './charts.js';
import type { ComparisonTable } from './comparison.js';
import { renderPage } from './html.js';
import { collectMetadata, type MetadataPart } from './metadata.js';

export interface ReportOptions {
  dbPath: string;
  out: string;
  title?: string;
  /** Extra key/values from a pipeline, shown with the run's metadata. */
  metadata?: Record<string, unknown>;
  /** The views' rows from an earlier reader of the same warehouse build (make's tables step). */
  viewRows?: ViewRows;
  /** The registered benchmarks' tables and charts, in the order they are shown. */
  parts: readonly ReportPart[];
}

/**
 * A chart: the view it reads, the spec builder (null when there is nothing to draw), and its
 * query when the view is not one of the paper tables already read (the bootstrap views are slow).
 */
export interface ChartEntry {
  label: string;
  view: string;
  sql?: string;
  build: (rows: Row[]) => ChartSpec | null;
}

/** A benchmark's part of the report: its tables and its charts. */
export interface ReportPart {
  tables: TableGroup;
  charts: readonly ChartEntry[];
  metadata?: MetadataPart;
}

type Row = Record<string, unknown>;

/**
 * Writes one self-contained HTML report of a warehouse: the benchmarks' comparison tables first
 * (a row per model), their charts (SVG rendered here), their result tables, then the tables that
 * describe the data, and the run's metadata. Whatever the warehouse lacks is listed as skipped,
 * never an error.
 */
export async function writeReport(options: ReportOptions): Promise<{ file: string; charts: number; tables: number }> {
  const file = resolve(options.out);
  const skipped: string[] = [];
  const warnings: string[] = [];

  const catalog = options.parts.map((p) => p.tables);
  const collected = await collectTables({ dbPath: options.dbPath, format: 'md', catalog, ...(options.viewRows ? { viewRows: options.viewRows } : {}) });
  const tables = collected.tables.filter((t) => t.rows.length > 0);
  for (const t of collected.tables) if (t.rows.length === 0) skipped.push(`${t.title ?? t.name}: skipped, the view ${t.name} has no rows`);
  for (const m of collected.missing) skipped.push(`${m.name}: skipped, ${m.reason}`);

  const db = await Database.open(options.dbPath, { readOnly: true });
  let charts: RenderedChart[];
  let metadata: Awaited<ReturnType<typeof collectMetadata>>;
  const comparisons: ComparisonTable[] = [];
  try {
    const relations = new Set((await db.all<{ name: string }>('SELECT table_name AS name FROM information_schema.tables')).map((r) => r.name));
    // The comparison tables read the rows the report already has (the result views are slow to query twice).
    for (const source of options.parts.flatMap((p) => (p.metadata && p.tables.holds(relations) ? (p.metadata.comparison ?? []) : []))) {
      const rows = collected.tables.find((t) => t.name === source.view)?.rows;
      if (!rows) continue;
      const query = (source.requires ?? []).every((r) => relations.has(r)) ? (sql: string) => db.all(sql) : null;
      try {
        const table = await source.build(rows, query);
        if (table) comparisons.push(table);
      } catch (error) {
        skipped.push(`the comparison of ${source.view}: skipped (${(error as Error).message.split('\n')[0]})`);
      }
    }
    const specs: ChartSpec[] = [];
    // A benchmark whose results the warehouse does not hold has its charts passed over without a
    // note (one whose empty views mean no results: when none of its tables has rows).
    const shown = (part: ReportPart) =>
      part.tables.holds(relations) &&
      (part.tables.emptyIsMissing === undefined || collected.tables.some((t) => part.tables.tables.some((x) => x.name === t.name)));
    for (const c of options.parts.filter(shown).flatMap((part) => part.charts)) {
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
    metadata = await collectMetadata(
      db,
      relations,
      options.metadata ?? {},
      // The metadata of the benchmarks whose results the warehouse holds: another's absence is by design.
      options.parts.flatMap((p) => (p.metadata && p.tables.holds(relations) ? [p.metadata] : [])),
    );
    skipped.push(...metadata.notes);
    charts = [];
    // One at a time: each view holds its scenegraph until finalized, and order keeps the page stable.
    for (const spec of specs) charts.push(await renderChart(spec, warnings));
  } finally {
    db.close();
  }

  // Tables that describe the data come after the results.
  const dataset = new Set(options.parts.flatMap((p) => p.metadata?.datasetTables ?? []));
  const html = renderPage({
    title: options.title ?? 'plens report',
    generatedAt: new Date().toISOString(),
    plensVersion,
    warehouse: resolve(options.dbPath),
    summary: metadata.summary,
    comparisons,
    charts,
    tables: tables.filter((t) => !dataset.has(t.name)),
    datasetTables: tables.filter((t) => dataset.has(t.name)),
    metadata: metadata.tables,
    skipped,
    warnings: [...new Set(warnings)],
  });
  await writeFileAtomic(file, html);
  return { file, charts: charts.length, tables: tables.length };
}
