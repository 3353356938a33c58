import type { Database } from '../db/database.js';
import type { ColumnSpec, RenderableTable } from '../tables/render.js';
import type { ComparisonSource } from './comparison.js';

/**
 * The run's metadata for the report: what was run (models, parameters, prompt versions), how much
 * (counts), what went wrong (failures) and what it cost, each from the warehouse view that holds it.
 * A view that is missing, or a query the warehouse cannot answer (an older layout), becomes a note.
 */

export interface MetadataResult {
  /** Key figures for the top of the page. */
  summary: Array<{ label: string; value: string }>;
  tables: RenderableTable[];
  notes: string[];
}

/** A table of the report's metadata: the view it needs and its query. */
export interface MetadataSection {
  name: string;
  title: string;
  caption: string;
  requires: string[];
  sql: string;
  columns: ColumnSpec[];
}

/** The sections every warehouse may have: the run records (05_runs.sql). */
const SECTIONS: MetadataSection[] = [
  {
    name: 'meta_run_records',
    title: 'Run records',
    caption:
      'Every run of a stage (and of make) that wrote to the workspace, from its run record (runs): the plens that ran it, its models and what its calls cost. result_stage_runs says which runs produced each result run.',
    requires: ['runs'],
    sql: `SELECT run_id, kind, name, status, plens_version, left(git_revision, 12) AS git_revision,
        array_to_string(list_transform(models, m -> m.role || ' ' || m.spec), ', ') AS models, cost_usd
      FROM runs ORDER BY started_at, run_id`,
    columns: [
      { key: 'run_id', label: 'Run id' },
      { key: 'kind', label: 'Kind' },
      { key: 'name', label: 'Name' },
      { key: 'status', label: 'Status' },
      { key: 'plens_version', label: 'plens' },
      { key: 'git_revision', label: 'Git revision', nullText: '-' },
      { key: 'models', label: 'Models', nullText: '' },
      { key: 'cost_usd', label: 'Cost (USD)', format: 'float4', nullText: '-' },
    ],
  },
];

/** A figure for the summary, from one relation; a missing relation leaves it out. */
export interface MetadataCount {
  label: string;
  requires: string;
  sql: string;
}

/**
 * A benchmark's part of the report beside its tables and charts: its metadata sections and summary
 * figures (before the shared ones), the comparison tables the page opens with, and which of its
 * tables describe the data rather than results (shown after the results).
 */
export interface MetadataPart {
  sections?: readonly MetadataSection[];
  counts?: readonly MetadataCount[];
  comparison?: readonly ComparisonSource[];
  datasetTables?: readonly string[];
}

/** The counts every warehouse has: when it was built, and from what. */
const COUNTS: MetadataCount[] = [
  {
    label: 'Warehouse built',
    requires: 'plens_build',
    sql: "SELECT strftime(built_at, '%Y-%m-%d %H:%M:%S') || ' by plens ' || plens_version AS v FROM plens_build",
  },
  { label: 'Workspace', requires: 'plens_build', sql: 'SELECT workspace AS v FROM plens_build' },
];

export async function collectMetadata(
  db: Database,
  relations: Set<string>,
  extra: Record<string, unknown> = {},
  parts: readonly MetadataPart[] = [],
): Promise<MetadataResult> {
  const notes: string[] = [];
  const summary: MetadataResult['summary'] = [];
  for (const c of [...parts.flatMap((p) => p.counts ?? []), ...COUNTS]) {
    if (!relations.has(c.requires)) continue;
    try {
      const [row] = await db.all<{ v: unknown }>(c.sql);
      if (row && row.v !== null && row.v !== undefined)
        summary.push({ label: c.label, value: typeof row.v === 'number' ? row.v.toLocaleString('en-US') : String(row.v) });
    } catch (error) {
      notes.push(`${c.label}: left out (${(error as Error).message.split('\n')[0]})`);
    }
  }

  const tables: RenderableTable[] = [];
  const extraEntries = Object.entries(extra);
  if (extraEntries.length > 0) {
    tables.push({
      name: 'meta_pipeline',
      title: 'Pipeline',
      caption: 'Given by the caller (e.g. plens make).',
      columns: [
        { key: 'key', label: 'Key' },
        { key: 'value', label: 'Value' },
      ],
      rows: extraEntries.map(([key, value]) => ({ key, value: typeof value === 'string' ? value : JSON.stringify(value) })),
    });
  }
  for (const s of [...parts.flatMap((p) => p.sections ?? []), ...SECTIONS]) {
    const missing = s.requires.filter((r) => !relations.has(r));
    if (missing.length > 0) {
      notes.push(`${s.title}: skipped, the warehouse has no ${missing.join(', ')}`);
      continue;
    }
    try {
      const rows = await db.all(s.sql);
      tables.push({ name: s.name, title: s.title, caption: s.caption, columns: s.columns, rows });
    } catch (error) {
      notes.push(`${s.title}: skipped (${(error as Error).message.split('\n')[0]})`);
    }
  }
  return { summary, tables, notes };
}
