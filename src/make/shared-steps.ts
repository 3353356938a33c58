import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileStamp } from '../core/file-stamps.js';
import type { StepContext, StepDef } from '../platform/benchmark.js';
import { hash, recordedBuild, type MakeState } from '../platform/make-state.js';
import type { Pipeline } from '../platform/pipeline.js';
import { warehouseInputs as buildInputs } from '../warehouse/build-record.js';
import { benchmarkFor, benchmarks, reportParts, sqlDirs, tableCatalog, warehouseSources } from '../registry/registry.js';
import { collectTables } from '../tables/tables.js';
import { ViewRows } from '../tables/view-rows.js';
import { buildWarehouse } from '../warehouse/build.js';

/** The state key of one rendered table. */
export const tableStateKey = (table: string) => `table:${table}`;

/** Everything the warehouse reads: the workspace's Parquet files, the SQL files, the statistics asked for. */
export function warehouseInputs(p: Pipeline): string {
  return buildInputs({ workspaceRoot: p.workspace, sqlDirs: sqlDirs(), dbPath: p.warehouse, lexical: p.lexical, lapsSpeakers: p.lapsSpeakers });
}

export function tablesInputs(p: Pipeline): string {
  return hash(['tables', fileStamp(p.warehouse), p.tables.formats, p.tables.outDir]);
}

export function reportInputs(p: Pipeline): string {
  return hash(['report', fileStamp(p.warehouse), p.report?.title, p.report?.out]);
}

/** The report file the last build wrote, when it is still there. */
export function reportFileOf(state: MakeState): string | null {
  const out = state['report']?.output;
  return out && existsSync(out) ? out : null;
}

/** The tables step's query results, for the report step that reads the same warehouse build. */
function viewRowsOf(ctx: StepContext): ViewRows {
  let rows = ctx.shared.get('viewRows') as ViewRows | undefined;
  if (!rows) {
    rows = new ViewRows();
    ctx.shared.set('viewRows', rows);
  }
  return rows;
}

/**
 * The SQL files a build skipped: the pipeline's own benchmark's (and the shared ones) by name;
 * another benchmark's are skipped by design where there is none of its data, so only counted.
 */
function skippedFiles(ctx: StepContext, skipped: Array<{ file: string }>): string {
  if (skipped.length === 0) return '';
  const own = benchmarkFor(ctx.p).sqlDir;
  const others = new Set(
    benchmarks()
      .filter((b) => b.id !== ctx.p.benchmark && b.sqlDir !== undefined && b.sqlDir !== own)
      .flatMap((b) => skipped.filter((s) => existsSync(join(b.sqlDir!, s.file))).map((s) => s.file)),
  );
  const mine = skipped.filter((s) => !others.has(s.file)).map((s) => s.file);
  return [
    mine.length ? `; skipped ${mine.join(', ')}` : '',
    others.size ? `; ${others.size} SQL file(s) of other benchmarks skipped (no data of theirs here)` : '',
  ].join('');
}

/** make's own steps after every benchmark's: the warehouse, the tables and the report. */
export const sharedSteps: StepDef[] = [
  {
    name: 'warehouse',
    needs: (p) => benchmarkFor(p).warehouse.needs(p),
    available: () => true,
    fingerprint: {
      inputs: warehouseInputs,
      current: (p, state, o) => recordedBuild(state, 'warehouse', o.inputs, fileStamp(p.warehouse)),
      exists: (p) => fileStamp(p.warehouse) !== null,
      after: (p) => benchmarkFor(p).warehouse.after(p),
    },
    async run(ctx) {
      const { p } = ctx;
      const inputs = ctx.inputs();
      if (!ctx.upstreamChanged && ctx.isCurrent(inputs)) return { step: 'warehouse', status: 'up-to-date', work: 0, detail: `up to date (${p.warehouse})` };
      if (ctx.dryRun) return { step: 'warehouse', status: 'would-run', work: 1, detail: `would build ${p.warehouse}` };
      const r = await buildWarehouse({
        workspace: ctx.ws,
        dbPath: p.warehouse,
        sqlDirs: sqlDirs(),
        sources: warehouseSources(),
        lexical: p.lexical,
        lapsSpeakers: p.lapsSpeakers,
      });
      // Fingerprinted after the build: the inputs are what this build read.
      await ctx.save(inputs, fileStamp(p.warehouse)!);
      // The build itself found nothing it reads changed (e.g. a step before it ran and rewrote nothing).
      if (r.up_to_date) return { step: 'warehouse', status: 'up-to-date', work: 0, detail: `up to date (${p.warehouse})` };
      return {
        step: 'warehouse',
        status: 'ran',
        work: 1,
        detail: `built ${r.db} (${r.relations.filter((x) => x.type === 'view').length} views${skippedFiles(ctx, r.skipped)})`,
      };
    },
  },
  {
    name: 'tables',
    needs: () => ['warehouse'],
    available: () => true,
    fingerprint: {
      inputs: tablesInputs,
      // Each table is recorded on its own: `make table3` renders only table 3.
      current: (_p, state, o) => o.tables.every((t) => state[tableStateKey(t)]?.inputs === o.inputs),
      exists: (p, state) => Boolean(state[tableStateKey(p.tables.only[0]!)]),
      after: () => 'warehouse',
    },
    async run(ctx) {
      const { p } = ctx;
      if (!ctx.upstreamChanged && ctx.isCurrent()) return { step: 'tables', status: 'up-to-date', work: 0, detail: `up to date (${p.tables.outDir})` };
      if (ctx.dryRun)
        return {
          step: 'tables',
          status: 'would-run',
          work: 1,
          detail: `would render ${ctx.tables.length} table(s) as ${p.tables.formats.join(', ')} in ${p.tables.outDir}`,
        };
      // One pass over the views for every format (each result view is computed once).
      const r = await collectTables({
        dbPath: p.warehouse,
        catalog: tableCatalog(),
        format: p.tables.formats[0] ?? 'md',
        formats: p.tables.formats,
        outDir: p.tables.outDir,
        only: [...ctx.tables],
        viewRows: viewRowsOf(ctx),
      });
      const missing = new Set(r.missing.map((m) => m.name));
      const now = tablesInputs(p);
      for (const t of ctx.tables) ctx.state[tableStateKey(t)] = { inputs: now };
      await ctx.writeState();
      return {
        step: 'tables',
        status: 'ran',
        work: 1,
        detail: `wrote ${r.files.length} file(s) to ${p.tables.outDir}${missing.size ? ` (not in the warehouse: ${[...missing].join(', ')})` : ''}`,
      };
    },
  },
  {
    name: 'report',
    needs: () => ['warehouse'],
    available: (p) => Boolean(p.report),
    fingerprint: {
      inputs: reportInputs,
      current: (p, state, o) => p.report !== undefined && state['report']?.inputs === o.inputs && reportFileOf(state) !== null,
      exists: (_p, state) => reportFileOf(state) !== null,
      after: () => 'warehouse',
    },
    async run(ctx) {
      const { p } = ctx;
      const r = p.report!;
      const inputs = ctx.inputs();
      if (!ctx.upstreamChanged && ctx.isCurrent(inputs))
        return { step: 'report', status: 'up-to-date', work: 0, detail: `up to date (${reportFileOf(ctx.state)})` };
      if (ctx.dryRun) return { step: 'report', status: 'would-run', work: 1, detail: `would write the report to ${r.out}` };
      // Imported only when a report is written: it is the heaviest module and most targets need none.
      const { writeReport } = await import('../report/report.js');
      const w = await writeReport({
        dbPath: p.warehouse,
        out: r.out,
        title: r.title,
        metadata: benchmarkFor(p).reportMetadata(p),
        viewRows: viewRowsOf(ctx),
        parts: reportParts(),
      });
      await ctx.save(inputs, w.file);
      return {
        step: 'report',
        status: 'ran',
        work: 1,
        detail: `wrote ${w.file} (${w.tables} table${w.tables === 1 ? '' : 's'}, ${w.charts} chart${w.charts === 1 ? '' : 's'})`,
      };
    },
  },
];
