import { existsSync, readdirSync } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { parse, CsvError as CsvParseError } from 'csv-parse/sync';
import { tempSibling } from '../../../core/atomic.js';
import { PlensError, usageError, type ErrorCode, type InputLocation } from '../../../core/errors.js';
import { readInputText, readJsonFile } from '../../../core/json-input.js';
import type { Workspace } from '../../../core/workspace.js';
import { Database, sqlList, type SqlParams } from '../../../db/database.js';
import { appendRow } from '../../../db/append-row.js';
import { ANNOTATION_DIR, LABEL_COLUMNS, SAMPLE_FILE, validateSampleName, type LabelColumn, type SampleManifest } from './export.js';

export const LABELS_FILE = 'labels.parquet';

export interface ImportOptions {
  workspace: Workspace;
  files: string[];
  sample?: string;
  /** The annotator's name when one file is given (default: the file name without extension). */
  annotator?: string;
}

export interface AnnotatorSummary {
  annotator: string;
  source_file: string;
  dialogues: number;
  labels: number;
  /** Empty cells per label column: not annotated, so not in labels.parquet. */
  blanks: Record<string, number>;
  /** Sample dialogues with no row in the sheet. */
  missing_rows: number;
  /** This annotator had labels for this sample before; they were replaced. */
  replaced: boolean;
}

export interface ImportSummary {
  sample: string;
  file: string;
  annotators: AnnotatorSummary[];
  /** Annotators of this sample whose labels were kept as they were. */
  kept_annotators: string[];
  total_labels: number;
  warnings: string[];
  elapsed_ms: number;
}

interface Label {
  annotator: string;
  dialogue_id: string;
  dimension: string;
  target: string;
  score: number;
  source_file: string;
}

/**
 * `plens annotate import`: people's filled sheets into <workspace>/annotation/labels.parquet (long
 * form). Every file is checked in full before anything is written; an annotator imported again
 * replaces only their own labels of that sample.
 */
export async function importLabels(options: ImportOptions): Promise<ImportSummary> {
  const started = performance.now();
  if (options.files.length === 0) throw usageError('name at least one filled sheet (CSV)');
  if (options.annotator !== undefined && options.files.length > 1) {
    throw usageError('--annotator names the annotator of a single file; with several files each is named after its file');
  }
  const root = join(options.workspace.root, ANNOTATION_DIR);
  const sample = await loadSample(root, options.sample);
  const itemOf = new Map(sample.dialogue_ids.map((id, i) => [id, i + 1]));

  const problems: PlensError[] = [];
  const labels: Label[] = [];
  const summaries: AnnotatorSummary[] = [];
  const named = new Map<string, string>();
  for (const file of options.files) {
    const annotator = (options.annotator ?? basename(file, extname(file))).trim();
    if (annotator === '') {
      problems.push(new PlensError('E_USAGE', 'the annotator name is empty', { location: { file } }));
      continue;
    }
    const first = named.get(annotator);
    if (first !== undefined) {
      problems.push(new PlensError('E_INPUT_DUPLICATE', `annotator "${annotator}" is named by two files (also ${first})`, { location: { file } }));
      continue;
    }
    named.set(annotator, file);
    const result = await readSheet(file, annotator, itemOf);
    problems.push(...result.problems);
    labels.push(...result.labels);
    summaries.push(result.summary);
  }
  if (problems.length > 0) throw withOthers(problems);

  const labelsFile = join(root, LABELS_FILE);
  const warnings: string[] = [];
  for (const s of summaries) if (s.labels === 0) warnings.push(`${s.source_file}: no labels at all (every cell is empty)`);
  const { replaced, kept, total } = await writeLabels(
    labelsFile,
    sample.name,
    labels,
    summaries.map((s) => s.annotator),
  );
  for (const s of summaries) s.replaced = replaced.includes(s.annotator);
  return {
    sample: sample.name,
    file: labelsFile,
    annotators: summaries,
    kept_annotators: kept,
    total_labels: total,
    warnings,
    elapsed_ms: Math.round(performance.now() - started),
  };
}

async function loadSample(root: string, name: string | undefined): Promise<SampleManifest> {
  const available = existsSync(root)
    ? readdirSync(root, { withFileTypes: true })
        .filter((d) => d.isDirectory() && !d.name.startsWith('.') && existsSync(join(root, d.name, SAMPLE_FILE)))
        .map((d) => d.name)
        .sort()
    : [];
  if (name !== undefined) validateSampleName(name, '--sample');
  if (available.length === 0) {
    throw new PlensError('E_PREREQUISITE', `no annotation sample in ${root}`, {
      hint: 'run `plens annotate export --n 100 --seed S` first (or pass --workspace)',
    });
  }
  if (name === undefined && available.length > 1)
    throw usageError(`there are ${available.length} samples; name one with --sample`, `samples: ${available.join(', ')}`);
  const chosen = name ?? available[0]!;
  if (!available.includes(chosen)) throw usageError(`--sample "${chosen}" is not in ${root}`, `samples: ${available.join(', ')}`);
  const file = join(root, chosen, SAMPLE_FILE);
  const manifest = (await readJsonFile(file)) as Partial<SampleManifest>;
  if (!Array.isArray(manifest.dialogue_ids) || !manifest.dialogue_ids.every((d) => typeof d === 'string')) {
    throw new PlensError('E_INPUT_SCHEMA', 'dialogue_ids must be a list of strings', { location: { file, pointer: '/dialogue_ids' } });
  }
  return { ...(manifest as SampleManifest), name: chosen };
}

/** One annotator's sheet, checked cell by cell; every problem is collected, none thrown. */
async function readSheet(
  file: string,
  annotator: string,
  itemOf: Map<string, number>,
): Promise<{ labels: Label[]; problems: PlensError[]; summary: AnnotatorSummary }> {
  const source = basename(file);
  const summary: AnnotatorSummary = {
    annotator,
    source_file: source,
    dialogues: 0,
    labels: 0,
    blanks: Object.fromEntries(LABEL_COLUMNS.map((c) => [c.column, 0])),
    missing_rows: itemOf.size,
    replaced: false,
  };
  const problems: PlensError[] = [];
  const labels: Label[] = [];
  const problem = (code: ErrorCode, message: string, location: Omit<InputLocation, 'file'>) =>
    problems.push(new PlensError(code, message, { location: { file, ...location } }));
  let text: string;
  try {
    text = await readInputText(file);
  } catch (error) {
    if (!(error instanceof PlensError)) throw error;
    problems.push(error);
    return { labels, problems, summary };
  }
  let records: CsvRecord[];
  try {
    records = parseCsv(text);
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    problem('E_INPUT_SCHEMA', error.message, { line: error.line });
    return { labels, problems, summary };
  }
  const nonBlank = records.filter((r) => r.cells.some((c) => c.trim() !== ''));
  const header = nonBlank[0];
  if (!header) {
    problem('E_INPUT_SCHEMA', 'the file is empty (expected a header row)', { line: 1 });
    return { labels, problems, summary };
  }
  const names = header.cells.map((c) => c.trim().toLowerCase());
  const index = new Map<string, number>();
  names.forEach((name, i) => {
    if (name === '') return;
    if (index.has(name)) problem('E_INPUT_SCHEMA', `column "${name}" appears twice in the header`, { line: header.line, column: i + 1, pointer: `/${name}` });
    else index.set(name, i);
  });
  for (const required of ['dialogue_id', ...LABEL_COLUMNS.map((c) => c.column)]) {
    if (!index.has(required)) {
      problem('E_INPUT_SCHEMA', `missing column "${required}" (the header must name dialogue_id and ${LABEL_COLUMNS.map((c) => c.column).join(', ')})`, {
        line: header.line,
        pointer: `/${required}`,
      });
    }
  }
  if (problems.length > 0) return { labels, problems, summary };

  const cell = (r: CsvRecord, name: string) => (r.cells[index.get(name)!] ?? '').trim();
  const at = (r: CsvRecord, name: string) => ({ line: r.line, column: index.get(name)! + 1, pointer: `/${name}` });
  const seen = new Map<string, number>();
  for (const r of nonBlank.slice(1)) {
    const extra = r.cells.findIndex((c, i) => i >= names.length && c.trim() !== '');
    if (extra >= 0) problem('E_INPUT_SCHEMA', `a value beyond the header's ${names.length} columns (an unquoted comma?)`, { line: r.line, column: extra + 1 });
    const id = cell(r, 'dialogue_id');
    if (id === '') {
      problem('E_INPUT_SCHEMA', 'dialogue_id is empty', at(r, 'dialogue_id'));
      continue;
    }
    const item = itemOf.get(id);
    if (item === undefined) {
      problem('E_INPUT_REFERENCE', `dialogue_id "${id}" is not in the sample`, at(r, 'dialogue_id'));
      continue;
    }
    const firstLine = seen.get(id);
    if (firstLine !== undefined) {
      problem('E_INPUT_DUPLICATE', `dialogue_id "${id}" has a second row (first on line ${firstLine})`, at(r, 'dialogue_id'));
      continue;
    }
    seen.set(id, r.line);
    // The item number travels with its row; a mismatch means rows and ids were pulled apart (a partial sort).
    if (index.has('item')) {
      const given = cell(r, 'item');
      if (given !== '' && given !== String(item))
        problem('E_INPUT_SCHEMA', `item ${given} does not match dialogue_id "${id}", which is item ${item} of the sample`, at(r, 'item'));
    }
    summary.dialogues++;
    for (const c of LABEL_COLUMNS) {
      const raw = cell(r, c.column);
      if (raw === '') {
        summary.blanks[c.column]!++;
        continue;
      }
      const score = parseLabel(c, raw);
      if (typeof score === 'string') {
        problem('E_INPUT_SCHEMA', `${c.column}: ${score} (got "${raw}")`, at(r, c.column));
        continue;
      }
      labels.push({ annotator, dialogue_id: id, dimension: c.dimension, target: c.target, score, source_file: source });
      summary.labels++;
    }
  }
  summary.missing_rows = itemOf.size - seen.size;
  return { labels, problems, summary };
}

/** A label's score, or why the text is not one. */
export function parseLabel(c: LabelColumn, raw: string): number | string {
  const text = raw.trim().toLowerCase();
  const expected = c.dimension === 'task_completion' ? 'expected 1/0 (or true/false, yes/no)' : `expected a whole number ${c.min}-${c.max}`;
  if (c.dimension === 'task_completion') {
    if (text === 'true' || text === 'yes') return 1;
    if (text === 'false' || text === 'no') return 0;
  }
  // Spreadsheets may write whole numbers as 3.0.
  const m = /^\+?(\d+)(?:\.0+)?$/.exec(text);
  if (!m) return expected;
  const value = Number(m[1]);
  if (value < c.min || value > c.max) return `${value} is out of range ${c.min}-${c.max}`;
  return value;
}

/** The first problem, carrying a count and a short list of the others, so one run shows what to fix. */
function withOthers(problems: PlensError[]): PlensError {
  const [first, ...rest] = problems;
  if (rest.length === 0) return first!;
  const shown = rest.slice(0, 5).map((p) => `${p.where ? `${p.where}: ` : ''}${p.message}`);
  const more = rest.length > 5 ? `; and ${rest.length - 5} more` : '';
  return new PlensError(first!.code, `${first!.message} (and ${rest.length} more problem${rest.length === 1 ? '' : 's'})`, {
    location: first!.location,
    hint: `also: ${shown.join('; ')}${more}`,
  });
}

/**
 * Rewrites labels.parquet: the rows of other samples and other annotators kept, the imported
 * annotators' rows for this sample replaced. Written to a temp sibling and renamed into place.
 */
async function writeLabels(
  file: string,
  sample: string,
  labels: Label[],
  annotators: string[],
): Promise<{ replaced: string[]; kept: string[]; total: number }> {
  const db = await Database.open(':memory:', { threads: 1 });
  const tmp = tempSibling(file);
  try {
    await db.run(`CREATE TABLE new_labels (annotator VARCHAR, dialogue_id VARCHAR, dimension VARCHAR, target VARCHAR, score INTEGER, source_file VARCHAR)`);
    const appender = await db.appender('new_labels');
    for (const l of labels) appendRow(appender, [l.annotator, l.dialogue_id, l.dimension, l.target, l.score, l.source_file]);
    appender.closeSync();
    const mine = 'list_contains($annotators, annotator)';
    const who = { sample, annotators: sqlList(annotators) };
    let replaced: string[] = [];
    let kept: string[] = [];
    const fresh = 'SELECT $sample AS sample, annotator, dialogue_id, dimension, target, score, source_file, now() AS imported_at FROM new_labels';
    let rows = fresh;
    let rowsParams: SqlParams = { sample };
    if (existsSync(file)) {
      const old = 'read_parquet($old)';
      replaced = (
        await db.all<{ a: string }>(`SELECT DISTINCT annotator AS a FROM ${old} WHERE sample = $sample AND ${mine} ORDER BY 1`, undefined, {
          ...who,
          old: file,
        })
      ).map((r) => r.a);
      kept = (
        await db.all<{ a: string }>(`SELECT DISTINCT annotator AS a FROM ${old} WHERE sample = $sample AND NOT ${mine} ORDER BY 1`, undefined, {
          ...who,
          old: file,
        })
      ).map((r) => r.a);
      rows = `SELECT * FROM ${old} WHERE NOT (sample = $sample AND ${mine}) UNION ALL BY NAME ${fresh}`;
      rowsParams = { ...who, old: file };
    }
    await db.run(
      `COPY (SELECT * FROM (${rows}) ORDER BY sample, annotator, dialogue_id, dimension, target) TO $tmp (FORMAT parquet, COMPRESSION zstd)`,
      undefined,
      { ...rowsParams, tmp },
    );
    const [{ n }] = (await db.all<{ n: number }>('SELECT count(*)::BIGINT AS n FROM read_parquet($1) WHERE sample = $2', undefined, [tmp, sample])) as [
      { n: number },
    ];
    await rename(tmp, file);
    return { replaced, kept, total: n };
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  } finally {
    db.close();
  }
}

export function formatImportSummary(s: ImportSummary): string {
  const lines = [`Imported labels for sample ${s.sample} into ${s.file}`];
  for (const a of s.annotators) {
    const blanks = Object.entries(a.blanks).filter(([, n]) => n > 0);
    lines.push(
      `  ${a.annotator} (${a.source_file}): ${a.labels} labels on ${a.dialogues} dialogues` +
        (blanks.length ? `; empty: ${blanks.map(([c, n]) => `${c} ${n}`).join(', ')}` : '') +
        (a.missing_rows ? `; ${a.missing_rows} dialogues of the sample have no row` : '') +
        (a.replaced ? "; replaced this annotator's earlier labels" : ''),
    );
  }
  if (s.kept_annotators.length) lines.push(`  kept as they were: ${s.kept_annotators.join(', ')}`);
  lines.push(`  ${s.total_labels} labels for this sample in all`);
  for (const w of s.warnings) lines.push(`  warning: ${w}`);
  lines.push('Then: plens warehouse && plens tables --only table5');
  return lines.join('\n');
}

export class CsvError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(message);
  }
}

export interface CsvRecord {
  /** 1-based line where the record starts (a quoted cell may span lines). */
  line: number;
  cells: string[];
}

/**
 * CSV as spreadsheets save it, read by csv-parse: quoted cells (with "" for a quote, and newlines
 * inside), CRLF, LF or CR line ends, a UTF-8 byte order mark, spaces around cells (and around
 * quotes), rows of any length. The delimiter is the header line's: ',' or else ';' (locales where
 * ',' is the decimal mark) or a tab. Blank lines are kept as records of one empty cell, so that
 * every line belongs to a record.
 */
export function parseCsv(input: string): CsvRecord[] {
  // One line end, so that line numbers are exact: csv-parse counts a CRLF inside a quoted cell as
  // two lines. Cells are trimmed and only notes hold line breaks, so nothing read here changes.
  const text = input.replace(/\r\n?/g, '\n');
  const header = text.split('\n', 1)[0] ?? '';
  const delimiter = header.includes(',') ? ',' : header.includes(';') ? ';' : header.includes('\t') ? '\t' : ',';
  const records: CsvRecord[] = [];
  // The line where the next record starts: one past where the last one ended (`lines` in the
  // record's info is the line of its end).
  let next = 1;
  try {
    parse(text, {
      bom: true,
      delimiter,
      record_delimiter: '\n',
      relax_column_count: true,
      relax_quotes: true,
      trim: true,
      on_record: (cells, info) => {
        records.push({ line: next, cells });
        next = info.lines + 1;
        return null;
      },
    });
  } catch (error) {
    if (!(error instanceof CsvParseError)) throw error;
    // A quote left open runs to the end of the file: name the line where its record starts.
    if (error.code === 'CSV_QUOTE_NOT_CLOSED') throw new CsvError('a quoted cell is never closed (a missing ")', next);
    const line = typeof error.lines === 'number' ? error.lines : next;
    if (error.code === 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE') {
      throw new CsvError('text after the closing quote of a quoted cell (a quote inside a quoted cell is written twice: "")', line);
    }
    throw new CsvError(error.message, line);
  }
  return records;
}
