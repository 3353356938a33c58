import { readFile } from 'node:fs/promises';
import { basename, join, relative, resolve } from 'node:path';
import { writeFileAtomic } from '../core/atomic.js';
import { PlensError, usageError } from '../core/errors.js';
import { parseNotebook, resolveParams } from './parse.js';
import { renderNotebook, type NotebookFormat } from './render.js';
import { runNotebook, type NotebookRun } from './run.js';

export interface NotebookOptions {
  /** The notebook as the user named it (messages say this path). */
  file: string;
  /** The warehouse as the user named it. */
  db: string;
  cwd: string;
  workspace: string;
  format?: NotebookFormat;
  /** A file, '-' for stdout, or undefined for <workspace>/notebooks/<name>.<format>. */
  out?: string;
  params: string[];
  maxRows?: number;
  /** Lift the file and network lock (`--allow-files`). */
  allowFiles?: boolean;
}

export interface NotebookSummary {
  file: string;
  output: string;
  format: NotebookFormat;
  params: Record<string, string | number | boolean>;
  cells: Array<{ index: number; line: number; name?: string; status: string; rows: number; shown: number; ms: number; error?: string }>;
  failed: number;
  /** Parameters that match nothing in the warehouse. */
  warnings: string[];
  /** The rendered document, when written to stdout. */
  document?: string;
}

/** Reads, runs, renders and writes a notebook; returns the summary and, when cells failed, the error to raise. */
export async function notebookCommand(options: NotebookOptions): Promise<{ summary: NotebookSummary; error?: PlensError }> {
  const path = resolve(options.cwd, options.file);
  let source: string;
  try {
    source = await readFile(path, 'utf8');
  } catch (error) {
    throw new PlensError('E_INPUT_NOT_FOUND', `cannot read notebook: ${(error as NodeJS.ErrnoException).code}`, { location: { file: options.file } });
  }
  const notebook = parseNotebook(source, options.file);
  const { values, fromCli } = resolveParams(notebook.params, options.params, options.file);
  const format: NotebookFormat = options.format ?? (options.out && /\.html?$/i.test(options.out) ? 'html' : 'md');
  const out = options.out === '-' ? '-' : resolve(options.cwd, options.out ?? join(options.workspace, 'notebooks', `${stem(path)}.${format}`));
  if (out === path) throw usageError(`--out is the notebook itself (${options.file}): pick another file`);

  const run = await runNotebook(notebook, resolve(options.cwd, options.db), values, {
    ...(options.maxRows === undefined ? {} : { maxRows: options.maxRows }),
    workspace: resolve(options.cwd, options.workspace),
    allowFiles: options.allowFiles ?? false,
  });
  const document = renderNotebook(run, format, { db: options.db, fromCli });
  if (out !== '-') await writeFileAtomic(out, document);

  const summary: NotebookSummary = {
    file: options.file,
    output: out,
    format,
    params: values,
    cells: cellSummaries(run),
    failed: run.failures.length,
    warnings: run.warnings,
  };
  if (out === '-') summary.document = document;
  const rel = relative(options.cwd, out);
  const shown = out === '-' ? 'the output' : rel && !rel.startsWith('..') ? rel : out;
  return run.failures.length ? { summary, error: failureError(run, shown) } : { summary };
}

function stem(path: string): string {
  return basename(path).replace(/(\.sql)?\.(md|markdown)$/i, '');
}

function cellSummaries(run: NotebookRun): NotebookSummary['cells'] {
  return run.results.map((r) => ({
    index: r.cell.index,
    line: r.cell.line,
    ...(r.cell.options.name ? { name: r.cell.options.name } : {}),
    status: r.status,
    rows: r.total,
    shown: r.rows.length,
    ms: Math.round(r.ms),
    ...(r.error ? { error: r.error.message } : {}),
  }));
}

/** One error for the whole run: located at the first failing cell, listing every failure with its file:line. */
function failureError(run: NotebookRun, where: string): PlensError {
  const first = run.failures[0]!.error!;
  const total = run.results.length;
  const lines = run.failures.map((f) => `  ${f.error!.where}: ${f.error!.message.split('\n')[0]}`);
  // Every failure a missing view: the notebook is for another kind of run than this warehouse holds.
  const missingViews = run.failures.every((f) => /Catalog Error: Table with name \S+ does not exist/.test(f.error!.message));
  return new PlensError('E_SQL', `${run.failures.length} of ${total} cells failed; each error is shown under its cell in ${where}\n${lines.join('\n')}`, {
    location: first.location,
    hint: missingViews
      ? 'the warehouse lacks the views these cells read (a warehouse of another benchmark, or one built before those stages ran); `plens sql "show tables"` lists what it has'
      : 'fix the cells and run the notebook again',
  });
}
