/**
 * plens as a library: `import { loadPipeline, make, query, tables, exportRun } from 'plens'`.
 *
 * The main operations of the CLI, for scripts and notebooks: load a pipeline, make its targets (a
 * whole run or one step), read its status, query the warehouse, render the tables, compare two
 * cells and export the run to an eval viewer's format. Each is a function the CLI itself calls;
 * the few wrappers here only fill in defaults. docs/api.md describes them; what is not exported
 * here is internal and may change.
 */
import type { Database } from './db/database.js';
import { type CellMatch, type ExportFormat, type ExportResult, exportRun as exportWith, parseCellMatch } from './export/export.js';
import { type MakeOptions, type MakeResult, make as makeWith } from './make/make.js';
import { loadPipeline, type Pipeline } from './make/pipeline.js';
import { pipelineStatus, type StatusResult } from './make/status.js';
import { exportParts, tableCatalog } from './registry/registry.js';
import type { TableFormat } from './tables/render.js';
import { collectTables, type TablesResult } from './tables/tables.js';
import { openAnalystConnection } from './warehouse/query.js';

export { ExitCode, PlensError } from './core/errors.js';
export { plensVersion as version } from './core/version.js';
export type { Database } from './db/database.js';
export type { CellContent, ExportCell, ExportPart, ExportSample, ExportScore } from './export/cells.js';
export type { CellMatch, ExportedLog, ExportFormat, ExportResult } from './export/export.js';
export type { MakeResult, StepResult } from './make/make.js';
export type { Pipeline, PipelineOverrides } from './make/pipeline.js';
export type { StatusResult } from './make/status.js';
export type { Benchmark } from './platform/benchmark.js';
export { benchmarks, registerBenchmark } from './registry/registry.js';
export type { RenderableTable, TableFormat } from './tables/render.js';
export type { TablesResult } from './tables/tables.js';
export { compareCells, parseCell } from './compare/compare.js';
export type { CompareOptions, CompareResult } from './compare/compare.js';
export { loadPipeline, parseCellMatch };

/** What `make` takes; every field has a default. */
export interface MakeCall extends Partial<MakeOptions> {
  /** The targets (default all): a step (`dialogues`, `predictions` ...), `warehouse`, `tables`, a table, `report` or `all`. */
  targets?: string[];
}

/**
 * `plens make`: builds the targets of a pipeline (a loaded one, or its file), running only what is
 * missing or out of date. Defaults: targets all, no dry run, stop at the first failure, no
 * progress bars, nothing logged (pass `log` to see a line per step).
 */
export async function make(pipeline: Pipeline | string, options: MakeCall = {}): Promise<MakeResult> {
  const p = typeof pipeline === 'string' ? loadPipeline(pipeline) : pipeline;
  return makeWith(p, {
    dryRun: false,
    keepGoing: false,
    retryFailed: false,
    progress: false,
    signal: new AbortController().signal,
    log: () => {},
    ...options,
    targets: options.targets ?? ['all'],
  });
}

/** `plens status`: per step what is done, pending and failed, and the spend so far. Runs nothing. */
export async function status(pipeline: Pipeline | string, options: { signal?: AbortSignal } = {}): Promise<StatusResult> {
  const p = typeof pipeline === 'string' ? loadPipeline(pipeline) : pipeline;
  return pipelineStatus(p, options.signal ?? new AbortController().signal);
}

/**
 * Opens a warehouse read-only, as `plens sql` does (files under its workspace can be read too).
 * Query it with `db.all(sql, undefined, params)`; close it with `db.close()`.
 */
export function openWarehouse(path: string, options: { workspace?: string; allowFiles?: boolean } = {}): Promise<Database> {
  return openAnalystConnection(path, options);
}

/** One query against a warehouse (read-only): its rows as plain objects. Bind values with `$1` or `$name`. */
export async function query<T = Record<string, unknown>>(path: string, sql: string, params?: unknown[] | Record<string, unknown>): Promise<T[]> {
  const db = await openAnalystConnection(path);
  try {
    return await db.all<T>(sql, undefined, params as Parameters<Database['all']>[2]);
  } finally {
    await db.close();
  }
}

/** `plens tables`: the tables a warehouse can give, rendered (and written to `outDir` when given). */
export function tables(path: string, options: { only?: string[]; format?: TableFormat; outDir?: string } = {}): Promise<TablesResult> {
  return collectTables({
    catalog: tableCatalog(),
    dbPath: path,
    format: options.format ?? 'md',
    ...(options.only ? { only: options.only } : {}),
    ...(options.outDir ? { outDir: options.outDir } : {}),
  });
}

/** `plens export`: one eval log per cell of the run in a warehouse (default format inspect, into export/inspect in its workspace). */
export function exportRun(
  path: string,
  options: { format?: ExportFormat; out?: string; force?: boolean; where?: CellMatch | string } = {},
): Promise<ExportResult> {
  return exportWith({
    dbPath: path,
    format: options.format ?? 'inspect',
    parts: exportParts(),
    ...(options.out !== undefined ? { out: options.out } : {}),
    ...(options.force !== undefined ? { force: options.force } : {}),
    ...(options.where !== undefined ? { where: typeof options.where === 'string' ? parseCellMatch(options.where) : options.where } : {}),
  });
}
