import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { PlensError, usageError } from '../core/errors.js';
import { redact } from '../core/redact.js';
import { plensVersion } from '../core/version.js';
import type { Database } from '../db/database.js';
import { requireWarehouse } from '../warehouse/build.js';
import { openAnalystConnection } from '../warehouse/query.js';
import type { ExportCell, ExportPart } from './cells.js';
import { inspectFileName, inspectLog, inspectTime, type RunProvenance } from './inspect.js';

/**
 * `plens export`: a run's results from the warehouse, one log file per cell (a task and a model
 * under test), in a format an existing eval viewer opens. The benchmarks say what their cells and
 * samples are (their `export` part); this module reads the run's provenance, asks each benchmark
 * for its cells and writes the files. Nothing is written over a file that exists unless asked.
 */

export const EXPORT_FORMATS = ['inspect'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A benchmark's export part, with its id and title. */
export interface ExportPartEntry {
  id: string;
  title: string;
  part: ExportPart;
}

/** Keeps the cells whose field has this value: task, model, benchmark, or one of the cell's args (setting, form ...). */
export type CellMatch = Array<{ key: string; value: string }>;

export interface ExportOptions {
  /** The warehouse file. */
  dbPath: string;
  format: ExportFormat;
  /** The registered benchmarks' export parts. */
  parts: readonly ExportPartEntry[];
  /**
   * A folder for the logs (default: export/<format> in the workspace the warehouse was built from),
   * or a file ending in .json when exactly one cell is exported.
   */
  out?: string;
  /** Replace log files that exist (a file whose content would not change is left as it is). */
  force?: boolean;
  where?: CellMatch;
}

export interface ExportedLog {
  file: string;
  benchmark: string;
  task: string;
  model: string;
  args: Record<string, string | number>;
  samples: number;
  /** written, or unchanged (the file already held this log). */
  status: 'written' | 'unchanged';
}

export interface ExportResult {
  format: ExportFormat;
  warehouse: string;
  dir: string;
  logs: ExportedLog[];
}

/** `task=personalens,setting=base` -> the matches (`--where`). */
export function parseCellMatch(text: string): CellMatch {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq <= 0) throw usageError(`--where: "${pair}" is not key=value`, 'e.g. --where task=personalens,setting=base');
      return { key: pair.slice(0, eq).trim(), value: pair.slice(eq + 1).trim() };
    });
}

/** A cell's fields as --where sees them. */
function fieldsOf(entry: ExportPartEntry, cell: ExportCell): Record<string, string> {
  return {
    benchmark: entry.id,
    task: cell.task,
    model: cell.model,
    ...Object.fromEntries(Object.entries(cell.roles).map(([k, v]) => [k, v])),
    ...Object.fromEntries(Object.entries(cell.args).map(([k, v]) => [k, String(v)])),
  };
}

export async function exportRun(options: ExportOptions): Promise<ExportResult> {
  if (!(EXPORT_FORMATS as readonly string[]).includes(options.format))
    throw usageError(`unknown export format "${options.format}"`, `formats: ${EXPORT_FORMATS.join(', ')}`);
  requireWarehouse(options.dbPath);
  const db = await openAnalystConnection(options.dbPath);
  try {
    const relations = new Set((await db.all<{ name: string }>('SELECT table_name AS name FROM information_schema.tables')).map((r) => r.name));
    const build = await buildOf(db, relations);
    const found: Array<{ entry: ExportPartEntry; cell: ExportCell; fields: Record<string, string> }> = [];
    for (const entry of options.parts) {
      if (!entry.part.requires.every((r) => relations.has(r))) continue;
      for (const cell of await entry.part.cells({ db, relations, workspace: build.workspace })) found.push({ entry, cell, fields: fieldsOf(entry, cell) });
    }
    if (found.length === 0)
      throw new PlensError('E_PREREQUISITE', `the warehouse holds no results to export`, {
        location: { file: options.dbPath },
        hint: 'build the warehouse of a run first: plens make warehouse -p PIPELINE, then plens export --db WAREHOUSE',
      });
    const where = options.where ?? [];
    const known = new Set(found.flatMap((f) => Object.keys(f.fields)));
    for (const w of where) if (!known.has(w.key)) throw usageError(`--where: no cell has a field "${w.key}"`, `fields: ${[...known].join(', ')}`);
    const chosen = found.filter((f) => where.every((w) => f.fields[w.key] === w.value));
    if (chosen.length === 0)
      throw usageError(
        `--where: no cell matches ${where.map((w) => `${w.key}=${w.value}`).join(',')}`,
        `the cells: ${found
          .slice(0, 8)
          .map((f) =>
            Object.entries(f.fields)
              .map(([k, v]) => `${k}=${v}`)
              .join(','),
          )
          .join('; ')}${found.length > 8 ? '; ...' : ''}`,
      );

    const single = options.out !== undefined && /\.json$/i.test(options.out);
    if (single && chosen.length > 1)
      throw usageError(
        `-o ${options.out}: one file holds one cell, and ${chosen.length} cells match`,
        'give a folder (-o logs/), or pick one cell with --where, e.g. --where task=...,model=...',
      );
    const dir = single ? dirname(options.out!) : (options.out ?? join(build.workspace ?? dirname(options.dbPath), 'export', options.format));

    // Every log's run provenance, read once per benchmark.
    const provenance = new Map<string, RunProvenance>();
    const provenanceOf = async (entry: ExportPartEntry) => {
      let p = provenance.get(entry.id);
      if (!p) provenance.set(entry.id, (p = await runProvenance(db, relations, entry, options.dbPath, build)));
      return p;
    };
    // The names first (they do not depend on the samples): refuse before writing anything.
    const planned: Array<{ entry: ExportPartEntry; cell: ExportCell; file: string }> = [];
    for (const { entry, cell } of chosen) {
      const head = inspectLog(cell, { samples: [], scores: [] }, await provenanceOf(entry)) as { eval: { created: string; task: string; task_id: string } };
      planned.push({ entry, cell, file: single ? options.out! : join(dir, inspectFileName(head)) });
    }
    const render = async (p: (typeof planned)[number]) => {
      const content = await p.cell.read();
      // Redacted as the file will be (writeFileAtomic redacts too), so an unchanged file compares equal.
      return { samples: content.samples.length, text: redact(`${JSON.stringify(inspectLog(p.cell, content, await provenanceOf(p.entry)))}\n`) };
    };
    // A file that would change is a user's to give up: refused unless --force (one that would not is left as it is).
    if (!options.force) {
      const changing: string[] = [];
      for (const p of planned) if (existsSync(p.file) && readFileSync(p.file, 'utf8') !== (await render(p)).text) changing.push(p.file);
      if (changing.length > 0)
        throw new PlensError('E_USAGE', `${changing.length} of the ${planned.length} log files exist with other content; nothing was written`, {
          location: { file: changing[0]! },
          hint: 'pass --force to replace them (they then hold the results as the warehouse has them now), or -o another folder',
        });
    }

    const logs: ExportedLog[] = [];
    for (const p of planned) {
      const { samples, text } = await render(p);
      const same = existsSync(p.file) && readFileSync(p.file, 'utf8') === text;
      if (!same) await writeFileAtomic(p.file, text);
      logs.push({
        file: p.file,
        benchmark: p.entry.id,
        task: p.cell.task,
        model: p.cell.model,
        args: p.cell.args,
        samples,
        status: same ? 'unchanged' : 'written',
      });
    }
    return { format: options.format, warehouse: options.dbPath, dir, logs };
  } finally {
    await db.close();
  }
}

interface BuildInfo {
  workspace: string | null;
  builtAt: string | null;
}

async function buildOf(db: Database, relations: ReadonlySet<string>): Promise<BuildInfo> {
  if (!relations.has('plens_build')) return { workspace: null, builtAt: null };
  const row = (await db.all<{ workspace: string | null; built_at: string | null }>('SELECT workspace, built_at FROM plens_build LIMIT 1'))[0];
  return { workspace: row?.workspace || null, builtAt: row?.built_at ? inspectTime(row.built_at) : null };
}

/** The run records of one benchmark's runs, and the run's span from them. */
async function runProvenance(db: Database, relations: ReadonlySet<string>, entry: ExportPartEntry, dbPath: string, build: BuildInfo): Promise<RunProvenance> {
  let runs: Array<Record<string, unknown>> = [];
  if (relations.has('runs')) {
    runs = await db
      .all(
        `SELECT run_id, kind, name, parent_run_id, status, started_at, ended_at, plens_version, git_revision, pipeline_name, pipeline_file,
           pipeline_sha256, prompts_sha256, dataset_fingerprint, cost_usd
         FROM runs WHERE benchmark = $1 OR benchmark IS NULL ORDER BY started_at, run_id`,
        undefined,
        [entry.id],
      )
      // A warehouse of an older layout: the logs go without run records.
      .catch(() => []);
  }
  const times = (key: string) =>
    runs
      .map((r) => r[key])
      .filter((t): t is string => typeof t === 'string')
      .sort();
  const started = times('started_at')[0];
  const ended = times('ended_at').at(-1);
  const created = started ? inspectTime(started) : (build.builtAt ?? inspectTime(new Date(0).toISOString()));
  return {
    plensVersion,
    benchmark: entry.id,
    benchmarkTitle: entry.title,
    warehouse: dbPath,
    workspace: build.workspace,
    builtAt: build.builtAt,
    created,
    startedAt: started ? inspectTime(started) : null,
    // A make still running when it built the warehouse has no end yet: its results are as of the build.
    completedAt: ended ? inspectTime(ended) : build.builtAt,
    runs,
  };
}

/** The lines `plens export` prints. */
export function formatExport(r: ExportResult): string {
  const written = r.logs.filter((l) => l.status === 'written').length;
  const lines = [
    `exported ${r.logs.length} ${r.format} log${r.logs.length === 1 ? '' : 's'} to ${r.dir} (${written} written, ${r.logs.length - written} unchanged)`,
  ];
  for (const l of r.logs)
    lines.push(`  ${l.task} ${Object.values(l.args).join(' ')} ${l.model}: ${l.samples} samples -> ${l.file.slice(r.dir.length + 1) || l.file}`);
  if (r.format === 'inspect') {
    lines.push(`Open them: inspect view --log-dir ${r.dir}  (pip install inspect-ai)`);
    // Inspect lists a folder's .json logs by their names: a time first, as its own are named.
    const unlisted = r.logs.filter((l) => !/^\d{4}-\d{2}-\d{2}T\d{2}[:-]\d{2}[:-]\d{2}/.test(basename(l.file)));
    if (unlisted.length > 0)
      lines.push(
        `Note: inspect view lists only logs named {time}_{task}_{id}.json, so not ${basename(unlisted[0]!.file)}; Python reads it with inspect_ai.log.read_eval_log`,
      );
  }
  return lines.join('\n');
}
