import { usageError } from '../core/errors.js';
import { personaBench } from '../benchmarks/personabench/module.js';
import { personaLens } from '../benchmarks/personalens/module.js';
import { prefEval } from '../benchmarks/prefeval/module.js';
import type { ExportPartEntry } from '../export/export.js';
import type { Benchmark } from '../platform/benchmark.js';
import type { Pipeline } from '../platform/pipeline.js';
import type { ReportPart } from '../report/report.js';
import type { TableGroup } from '../tables/tables.js';
import type { WarehouseSource } from '../warehouse/build.js';
import { defaultSqlDir, sqlTree } from '../warehouse/sql-files.js';

/**
 * The benchmarks plens knows: one line each. The first is the default of a pipeline that names
 * none. Everything above this layer (make, status, warehouse, tables, report, the CLI) works from
 * this list and names no benchmark.
 */
// biome-ignore lint/suspicious/noExplicitAny: a registry holds modules of every pipeline type.
const BENCHMARKS: Array<Benchmark<any>> = [personaLens, personaBench, prefEval];

/** The names make uses for its own steps after every benchmark's: they belong to no benchmark. */
export const SHARED_STEPS = ['warehouse', 'tables', 'report'] as const;

/**
 * Adds a benchmark (a plug-in, or a test's): its id, sections, steps and tables must not clash
 * with those of the benchmarks already registered. Returns a function that removes it again.
 */
// biome-ignore lint/suspicious/noExplicitAny: see BENCHMARKS.
export function registerBenchmark(b: Benchmark<any>): () => void {
  const clash = (what: string, mine: readonly string[], theirs: (o: Benchmark) => readonly string[]) => {
    for (const o of BENCHMARKS) {
      const both = mine.filter((x) => theirs(o).includes(x));
      if (both.length) throw usageError(`benchmark ${b.id}: ${what} ${both.join(', ')} already belong to ${o.id}`);
    }
  };
  clash('id', [b.id], (o) => [o.id]);
  clash('sections', b.sections, (o) => o.sections);
  clash(
    'steps',
    b.steps.map((s) => s.name),
    (o) => o.steps.map((s) => s.name),
  );
  clash(
    'tables',
    b.tables.tables.map((t) => t.name),
    (o) => o.tables.tables.map((t) => t.name),
  );
  for (const s of b.steps) if ((SHARED_STEPS as readonly string[]).includes(s.name)) throw usageError(`benchmark ${b.id}: step ${s.name} is make's own`);
  BENCHMARKS.push(b);
  return () => {
    const i = BENCHMARKS.indexOf(b);
    if (i >= 0) BENCHMARKS.splice(i, 1);
  };
}

/** Every registered benchmark, in the order they are listed. */
export function benchmarks(): ReadonlyArray<Benchmark> {
  return BENCHMARKS;
}

/** The benchmark a pipeline names (the first registered when it names none). */
export function benchmarkOf(id: string | undefined): Benchmark {
  const b = id === undefined ? BENCHMARKS[0] : BENCHMARKS.find((x) => x.id === id);
  if (!b) throw usageError(`unknown benchmark "${id}"`, `registered: ${BENCHMARKS.map((x) => x.id).join(', ')}`);
  return b;
}

/** The benchmark of a resolved pipeline. */
export function benchmarkFor(p: Pipeline): Benchmark {
  return benchmarkOf(p.benchmark);
}

/** Every registered benchmark's tables, in order: what `plens tables` lists. */
export function tableCatalog(): TableGroup[] {
  return BENCHMARKS.map((b) => b.tables);
}

/** Every registered benchmark's tables and charts: what a report shows. */
export function reportParts(): ReportPart[] {
  return BENCHMARKS.map((b) => ({ tables: b.tables, charts: b.charts, ...(b.metadata ? { metadata: b.metadata } : {}) }));
}

/** Every registered benchmark's part of `plens export` (what its cells and samples are), with its id and title. */
export function exportParts(): ExportPartEntry[] {
  return BENCHMARKS.flatMap((b) => (b.export ? [{ id: b.id, title: b.title, part: b.export }] : []));
}

/** What each registered benchmark's outputs give a warehouse build (it needs one of them). */
export function warehouseSources(): WarehouseSource[] {
  return BENCHMARKS.map((b) => b.warehouse.source);
}

/** The relations a `Query it:` line may show, in the benchmarks' order. */
export function warehouseExamples(): string[] {
  return BENCHMARKS.flatMap((b) => (b.warehouse.source.example ? [b.warehouse.source.example] : []));
}

/** The SQL folders a warehouse build runs: the package's (shared files, a folder per built-in benchmark) and each plug-in's own. */
export function sqlDirs(): string[] {
  return [...new Set([...sqlTree(defaultSqlDir), ...BENCHMARKS.flatMap((b) => (b.sqlDir ? [b.sqlDir] : []))])];
}
