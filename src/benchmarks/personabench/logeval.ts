/**
 * The original's log-only evaluators, LLMEvaluators/LogEvaluator/LogEval3.{1,2,3}.py, over an
 * outputs file a user already has (one JSON object a line: `output`, `true_label`,
 * `subreddit`, ...; spec §4.2b.8, §5.5), rule for rule:
 * - 3.1: drop closed <think> blocks, take the last whole-word positive/negative; lines that are
 *   not JSON, records whose output is not text or whose label is not positive/negative are
 *   ignored; accuracy, weighted F1 (binary on the one class, MCC 0, when a group's true labels
 *   hold one class), MCC per domain (sorted) and ALL.
 * - 3.2: the last `-?\d+(\.\d+)?` after dropping <think> blocks; a label Python's float()
 *   cannot read is ignored; RMSE and MAE as pandas means (NaN skipped). The original stops
 *   with an exception on a line that is not JSON, a record that is not an object, an output
 *   that is not text, or when nothing is left; so does plens, unless asked to skip.
 * - 3.3: a missing/empty label or output is an output error without a row; a list output
 *   takes its first non-blank string (no <think> strip), other text drops closed <think>
 *   blocks and is stripped; an empty result or one containing `Error:` is an error row with
 *   N/A cells; the rest is scored (ROUGE-L/1 F, BLEU, METEOR; SBERT when given), zeros
 *   counted, sums added in file order; a label that is not text scores 0 everywhere.
 * A domain is `subreddit`, else `domain` (3.1/3.2), else UNKNOWN / Unknown_Domain; a null one
 * is left out of 3.1/3.2's per-domain rows but kept in ALL.
 */
import { pythonFloat, parseSign, stripThink } from './parse.js';
import { pyStrip } from './corpus.js';
import { matthewsCorrelation, accuracy, binaryF1, weightedF1 } from '../../metrics/classification.js';
import { numpyPairwiseSum } from '../../metrics/numpy-sum.js';
import type { GenerationScores } from '../../metrics/generation.js';
import { pythonStr } from '../../core/python-format.js';

export type LogEvalTask = '3.1' | '3.2' | '3.3';

/** One line of the file as Python's text-mode iteration gives it (universal newlines). */
export interface TextLine {
  line: number;
  text: string;
}

/** Splits text into lines as `for line in open(f)` does: at \n, \r\n and a lone \r. */
export function pythonFileLines(text: string): TextLine[] {
  const out: TextLine[] = [];
  const re = /\r\n|\r|\n/g;
  let start = 0;
  let n = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    out.push({ line: ++n, text: text.slice(start, m.index) });
    start = m.index + m[0].length;
  }
  if (start < text.length) out.push({ line: ++n, text: text.slice(start) });
  return out;
}

/** Where the original script stops with an exception, writing nothing. */
export interface LogEvalStop {
  line: number | null;
  reason: string;
}

type Parsed = { ok: true; value: unknown } | { ok: false };
function parseJson(text: string): Parsed {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `rec.get('subreddit', rec.get('domain', 'UNKNOWN'))`: null stays null (no domain row). */
function domainOf(record: Record<string, unknown>): unknown {
  if ('subreddit' in record) return record['subreddit'];
  if ('domain' in record) return record['domain'];
  return 'UNKNOWN';
}

/** pandas groupby's sort of the keys: numbers first (ascending), then text by code point. */
function pandasKeyOrder(a: unknown, b: unknown): number {
  const an = typeof a === 'number' || typeof a === 'boolean';
  const bn = typeof b === 'number' || typeof b === 'boolean';
  if (an && bn) return Number(a) - Number(b);
  if (an !== bn) return an ? -1 : 1;
  return codePointCompare(String(a), String(b));
}

export function codePointCompare(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const d = x[i]!.codePointAt(0)! - y[i]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return x.length - y.length;
}

/** Rows grouped by domain key (null keys dropped), keys in pandas order. */
function groupByDomain<T extends { domain: unknown }>(records: readonly T[]): Array<[unknown, T[]]> {
  const groups = new Map<string, { key: unknown; rows: T[] }>();
  for (const r of records) {
    if (r.domain === null) continue;
    const id = `${typeof r.domain}:${String(r.domain)}`;
    const g = groups.get(id) ?? { key: r.domain, rows: [] };
    g.rows.push(r);
    groups.set(id, g);
  }
  return [...groups.values()].sort((a, b) => pandasKeyOrder(a.key, b.key)).map((g) => [g.key, g.rows]);
}

// ---------------------------------------------------------------------------------------
// 3.1

export interface LogEval31Row {
  domain: string;
  accuracy: number;
  f1_score: number;
  mcc: number;
  count: number;
}

export interface LogEval31Result {
  task: '3.1';
  rows: LogEval31Row[];
  /** pandas prints the mcc column as integers when every row's MCC is the literal 0 of the one-class rule. */
  mcc_integers: boolean;
  processed: number;
  ignored: number;
}

export function logEval31(lines: readonly TextLine[]): LogEval31Result {
  const records: Array<{ domain: unknown; pred: string; truth: string }> = [];
  let ignored = 0;
  for (const { text } of lines) {
    const parsed = parseJson(text);
    // A line that is not JSON, or a record the script cannot read, is ignored.
    if (!parsed.ok || !isObject(parsed.value)) {
      ignored++;
      continue;
    }
    const rec = parsed.value;
    const output = 'output' in rec ? rec['output'] : '';
    const truthRaw = 'true_label' in rec ? rec['true_label'] : '';
    if (typeof output !== 'string' || typeof truthRaw !== 'string') {
      ignored++;
      continue;
    }
    const pred = parseSign(output, 'last-match');
    const truth = truthRaw.toLowerCase();
    if (pred.state !== 'parsed' || (truth !== 'positive' && truth !== 'negative')) {
      ignored++;
      continue;
    }
    records.push({ domain: domainOf(rec), pred: pred.value, truth });
  }
  const rows: LogEval31Row[] = [];
  let integers = true;
  const score = (domain: string, group: ReadonlyArray<{ pred: string; truth: string }>): void => {
    const truth = group.map((r) => r.truth);
    const pred = group.map((r) => r.pred);
    const classes = new Set(truth);
    if (classes.size < 2) {
      rows.push({ domain, accuracy: accuracy(truth, pred), f1_score: binaryF1(truth, pred, [...classes][0]!), mcc: 0, count: group.length });
    } else {
      integers = false;
      rows.push({ domain, accuracy: accuracy(truth, pred), f1_score: weightedF1(truth, pred), mcc: matthewsCorrelation(truth, pred), count: group.length });
    }
  };
  if (records.length > 0) {
    for (const [key, group] of groupByDomain(records)) score(pythonStr(key), group);
    score('ALL', records);
  }
  return { task: '3.1', rows, mcc_integers: integers, processed: records.length, ignored };
}

// ---------------------------------------------------------------------------------------
// 3.2

export interface LogEval32Row {
  domain: string;
  rmse: number;
  mae: number;
  count: number;
}

export interface LogEval32Result {
  task: '3.2';
  rows: LogEval32Row[];
  processed: number;
  ignored: number;
  /** Lines the original would have stopped at, skipped because the caller asked. */
  skipped: LogEvalStop[];
  /** Set when the original stops with an exception (and the caller did not ask to skip). */
  stop: LogEvalStop | null;
}

const LOG_NUMBER = /-?\p{Nd}+(?:\.\p{Nd}+)?/gu;

/** pandas `Series.mean()`: NaN skipped (summed as 0 by numpy's pairwise sum, not counted). */
export function pandasMean(values: readonly number[]): number {
  const filled = new Float64Array(values.length);
  let count = 0;
  values.forEach((v, i) => {
    if (Number.isNaN(v)) return;
    filled[i] = v;
    count++;
  });
  return count === 0 ? Number.NaN : numpyPairwiseSum(filled) / count;
}

/** Python `float(value)` for a JSON value; null where it raises. */
function pythonFloatOf(value: unknown): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string') return pythonFloat(value);
  return null;
}

export function logEval32(lines: readonly TextLine[], options: { skipInvalid?: boolean } = {}): LogEval32Result {
  const records: Array<{ domain: unknown; pred: number; truth: number }> = [];
  const skipped: LogEvalStop[] = [];
  let ignored = 0;
  const result = (stop: LogEvalStop | null): LogEval32Result => ({ task: '3.2', rows: [], processed: records.length, ignored, skipped, stop });
  for (const { line, text } of lines) {
    const parsed = parseJson(text);
    let stop: string | null = null;
    if (!parsed.ok) stop = text.trim() === '' ? 'a blank line (json.loads raises)' : 'a line that is not JSON (json.loads raises)';
    else if (!isObject(parsed.value)) stop = 'a line that is not a JSON object (rec.get raises)';
    else if ('output' in parsed.value && typeof parsed.value['output'] !== 'string') stop = 'an output that is not text (re.sub raises)';
    if (stop !== null) {
      if (!options.skipInvalid) return result({ line, reason: stop });
      skipped.push({ line, reason: stop });
      continue;
    }
    const rec = parsed.ok ? (parsed.value as Record<string, unknown>) : {};
    const output = (rec['output'] as string | undefined) ?? '';
    const numbers = stripThink(output).match(LOG_NUMBER);
    if (!numbers) {
      ignored++;
      continue;
    }
    const truth = pythonFloatOf(rec['true_label']);
    if (truth === null) {
      ignored++;
      continue;
    }
    records.push({ domain: domainOf(rec), pred: pythonFloat(numbers[numbers.length - 1]!)!, truth });
  }
  // pandas: an empty frame has no 'domain' column and groupby raises.
  if (records.length === 0)
    return result({ line: null, reason: 'no record has a number in its output and a numeric label (the script raises on the empty table)' });
  const score = (domain: string, group: ReadonlyArray<{ pred: number; truth: number }>): LogEval32Row => ({
    domain,
    rmse: Math.sqrt(pandasMean(group.map((r) => (r.pred - r.truth) ** 2))),
    mae: pandasMean(group.map((r) => Math.abs(r.pred - r.truth))),
    count: group.length,
  });
  const rows = groupByDomain(records).map(([key, group]) => score(pythonStr(key), group));
  rows.push(score('ALL', records));
  return { ...result(null), rows };
}

// ---------------------------------------------------------------------------------------
// 3.3

/** One line LogEval3.3 scores: the label and the one candidate it takes. */
export interface LogEval33Item {
  line: number;
  domain: unknown;
  trueLabel: unknown;
  candidate: string;
  promptPreview: string;
}

export interface LogEval33IndividualRow {
  subreddit: unknown;
  prompt_preview: string;
  true_label: unknown;
  llm_output: string;
  scores: (GenerationScores & { sbert: number }) | null;
}

export interface LogEval33Aggregate {
  count: number;
  output_errors: number;
  sums: { sbert: number; rougeL: number; rouge1: number; bleu: number; meteor: number };
  valid: number;
}

export interface LogEval33SummaryRow {
  scope: 'Domain' | 'Overall';
  identifier: string;
  count: number;
  output_errors: number;
  avg_sbert: number;
  avg_rougeL: number;
  avg_rouge1: number;
  avg_bleu: number;
  avg_meteor: number;
  /** Null where the script leaves the field out (an empty file: "N/A"). */
  valid_evals: number | null;
}

export interface LogEval33Result {
  task: '3.3';
  summary: LogEval33SummaryRow[];
  individual: LogEval33IndividualRow[];
  sbert: boolean;
  skipped: LogEvalStop[];
  stop: LogEvalStop | null;
}

/** Python `text[:100] + "..."` (code points). */
const preview = (text: string): string => `${[...text].slice(0, 100).join('')}...`;

/** A JSON value's truth as Python's `not value` reads it. */
const falsy = (v: unknown): boolean =>
  v === null || v === undefined || v === false || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

/**
 * LogEval3.3's rules: which lines are errors, which candidate each line is scored on. The
 * scores themselves come from `score` (plens's ROUGE, BLEU, METEOR and SBERT).
 */
export async function logEval33(
  lines: readonly TextLine[],
  score: (items: readonly LogEval33Item[]) => Promise<Array<GenerationScores & { sbert: number }>>,
  options: { sbert: boolean; skipInvalid?: boolean },
): Promise<LogEval33Result> {
  const domains = new Map<string, { key: unknown; agg: LogEval33Aggregate }>();
  const overall = newAggregate();
  const skipped: LogEvalStop[] = [];
  // Rows in file order; a scored row's metrics are filled in after scoring.
  const individual: LogEval33IndividualRow[] = [];
  const items: Array<{ item: LogEval33Item; row: LogEval33IndividualRow }> = [];
  const fail = (stop: LogEvalStop): LogEval33Result => ({ task: '3.3', summary: [], individual: [], sbert: options.sbert, skipped, stop });
  const domainAgg = (key: unknown): LogEval33Aggregate => {
    const id = `${typeof key}:${String(key)}`;
    const d = domains.get(id) ?? { key, agg: newAggregate() };
    domains.set(id, d);
    return d.agg;
  };
  const order: Array<{ agg: LogEval33Aggregate; error: boolean; index: number }> = [];
  for (const { line, text } of lines) {
    const parsed = parseJson(text.trim());
    // A line that is not JSON is skipped with a warning, as the script does.
    if (!parsed.ok) continue;
    let stop: string | null = null;
    if (!isObject(parsed.value)) stop = 'a line that is not a JSON object (data.get raises; the script writes no summary)';
    else {
      const sub = 'subreddit' in parsed.value ? parsed.value['subreddit'] : 'Unknown_Domain';
      if (sub !== null && typeof sub === 'object') stop = 'a subreddit that is a list or an object (unhashable; the script writes no summary)';
      else if ('original_prompt' in parsed.value && typeof parsed.value['original_prompt'] !== 'string')
        stop = 'an original_prompt that is not text (slicing raises; the script writes no summary)';
    }
    if (stop !== null) {
      if (!options.skipInvalid) return fail({ line, reason: stop });
      skipped.push({ line, reason: stop });
      continue;
    }
    const data = parsed.value as Record<string, unknown>;
    const trueLabel = data['true_label'];
    const raw = data['output'];
    const subreddit = 'subreddit' in data ? data['subreddit'] : 'Unknown_Domain';
    const promptText = typeof data['original_prompt'] === 'string' ? data['original_prompt'] : '';
    const agg = domainAgg(subreddit);
    if (falsy(trueLabel) || falsy(raw)) {
      agg.output_errors++;
      overall.output_errors++;
      agg.count++;
      overall.count++;
      continue;
    }
    let best: string;
    if (Array.isArray(raw)) best = raw.filter((c): c is string => typeof c === 'string' && pyStrip(c) !== '')[0] ?? '';
    else if (typeof raw === 'string') best = pyStrip(stripThink(raw));
    else best = '';
    if (pyStrip(best) === '' || best.includes('Error:')) {
      agg.output_errors++;
      overall.output_errors++;
      agg.count++;
      overall.count++;
      individual.push({ subreddit, prompt_preview: preview(promptText), true_label: trueLabel, llm_output: best, scores: null });
      continue;
    }
    const row: LogEval33IndividualRow = { subreddit, prompt_preview: preview(promptText), true_label: trueLabel, llm_output: best, scores: null };
    individual.push(row);
    items.push({ item: { line, domain: subreddit, trueLabel, candidate: best, promptPreview: row.prompt_preview }, row });
    order.push({ agg, error: false, index: items.length - 1 });
  }
  // The script sorts the domains: text and None (or numbers) cannot be sorted together.
  const keys = [...domains.values()].map((d) => d.key);
  const kinds = new Set(keys.map((k) => (k === null ? 'null' : typeof k === 'string' ? 'string' : 'number')));
  if (kinds.size > 1)
    return fail({ line: null, reason: 'subreddits of mixed kinds (text with null or numbers): sorted() raises and the script writes no summary' });

  const scores = await score(items.map((i) => i.item));
  // Sums are added in file order, as the script adds them.
  for (const o of order) {
    const s = scores[o.index]!;
    items[o.index]!.row.scores = s;
    for (const agg of [o.agg, overall]) {
      agg.count++;
      agg.valid++;
      agg.sums.sbert += s.sbert;
      agg.sums.rougeL += s.rougeL;
      agg.sums.rouge1 += s.rouge1;
      agg.sums.bleu += s.bleu;
      agg.sums.meteor += s.meteor;
    }
  }
  const summary: LogEval33SummaryRow[] = [...domains.values()]
    .sort((a, b) => (typeof a.key === 'number' && typeof b.key === 'number' ? a.key - b.key : codePointCompare(String(a.key), String(b.key))))
    .map((d) => average('Domain', d.key === null ? '' : pythonStr(d.key), d.agg));
  summary.push(average('Overall', 'All Data', overall));
  return { task: '3.3', summary, individual, sbert: options.sbert, skipped, stop: null };
}

function newAggregate(): LogEval33Aggregate {
  return { count: 0, output_errors: 0, sums: { sbert: 0, rougeL: 0, rouge1: 0, bleu: 0, meteor: 0 }, valid: 0 };
}

/** calculate_average_metrics: sum / valid count, 0.0 where nothing was valid. */
function average(scope: 'Domain' | 'Overall', identifier: string, agg: LogEval33Aggregate): LogEval33SummaryRow {
  const avg = (sum: number): number => (agg.valid > 0 ? sum / agg.valid : 0);
  return {
    scope,
    identifier,
    count: agg.count,
    output_errors: agg.output_errors,
    avg_sbert: avg(agg.sums.sbert),
    avg_rougeL: avg(agg.sums.rougeL),
    avg_rouge1: avg(agg.sums.rouge1),
    avg_bleu: avg(agg.sums.bleu),
    avg_meteor: avg(agg.sums.meteor),
    valid_evals: agg.count === 0 ? null : agg.valid,
  };
}
