/**
 * `plens persona score --outputs FILE --task T`: scores an outputs file a user already has
 * (the Llama/DeepSeek batch evaluator's `{output, true_label, subreddit, ...}` lines, or any
 * file of that shape) as LogEval3.1/3.2/3.3 do, writes their CSVs with the same columns and
 * number formatting, and (3.1, 3.2) adds what the API evaluators' parsers and metrics make of
 * the same outputs.
 */
import { readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { writeFileAtomic } from '../../core/atomic.js';
import { PlensError } from '../../core/errors.js';
import { csvRow, pythonFloatRepr, pythonStr } from '../../core/python-format.js';
import { openEmbedder } from '../../llm/embedders.js';
import { groupBySubreddit } from './by-subreddit.js';
import { regressionScores, signScoresApi } from '../../metrics/classification.js';
import { GenerationScorer } from '../../metrics/generation.js';
import { scorePairs } from '../../metrics/parallel.js';
import { sbertSimilarities } from '../../metrics/sbert.js';
import {
  logEval31,
  logEval32,
  logEval33,
  pythonFileLines,
  type LogEval31Result,
  type LogEval32Result,
  type LogEval33Result,
  type LogEvalTask,
} from './logeval.js';
import { parseImpact, parseSign } from './parse.js';

export interface ScoreOutputsOptions {
  file: string;
  task: LogEvalTask;
  /** Folder for the CSVs; nothing is written without it. */
  out: string | null;
  /** Skip the lines at which the original script stops with an exception (a documented difference). */
  skipInvalid?: boolean;
  /** SBERT for 3.3, as `persona score --embeddings`. */
  embeddings?: string;
  cacheDir: string;
  env?: NodeJS.ProcessEnv;
}

export interface ApiRow {
  domain: string;
  count: number;
  [metric: string]: number | string;
}

export interface ScoreOutputsSummary {
  file: string;
  task: LogEvalTask;
  lines: number;
  logeval: LogEval31Result | LogEval32Result | LogEval33Result;
  /** 3.1 (3.1/GPT.py: strict parse, binary F1, domains lower-cased) and 3.2 (3.2/GPT.py: float, then the last number). */
  api: { script: string; parsed: number; unparsed: number; rows: ApiRow[] } | null;
  written: string[];
}

const f = pythonFloatRepr;

/** From this many 3.3 pairs on, the lexical metrics run on the worker pool. */
const PARALLEL_FROM = 2_000;

export async function runScoreOutputs(options: ScoreOutputsOptions): Promise<ScoreOutputsSummary> {
  let bytes: Buffer;
  try {
    bytes = await readFile(options.file);
  } catch (error) {
    throw new PlensError('E_INPUT_NOT_FOUND', `cannot read the outputs file: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, {
      location: { file: options.file },
      cause: error,
    });
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    throw new PlensError('E_INPUT_ENCODING', 'the outputs file is not UTF-8 (the original scripts read it as UTF-8 and stop)', {
      location: { file: options.file },
      cause: error,
    });
  }
  const lines = pythonFileLines(text);
  const stem = basename(options.file).replace(/\.jsonl?$/i, '');
  const written: string[] = [];
  const write = async (name: string, body: string): Promise<void> => {
    if (options.out === null) return;
    const path = join(options.out, name);
    await writeFileAtomic(path, body);
    written.push(path);
  };
  const stopped = (r: { stop: { line: number | null; reason: string } | null }): void => {
    if (!r.stop) return;
    throw new PlensError('E_INPUT_SCHEMA', `LogEval${options.task}.py stops here with an exception and writes nothing: ${r.stop.reason}`, {
      location: r.stop.line === null ? { file: options.file } : { file: options.file, line: r.stop.line },
      hint: '--skip-invalid scores the other lines (a difference from the original, reported as skipped)',
    });
  };

  if (options.task === '3.1') {
    const logeval = logEval31(lines);
    if (logeval.rows.length > 0)
      await write(
        `${stem}.LogEval3.1.csv`,
        csvRow(['domain', 'accuracy', 'f1_score', 'mcc', 'count'], '\n') +
          logeval.rows
            .map((r) => csvRow([r.domain, f(r.accuracy), f(r.f1_score), logeval.mcc_integers ? String(r.mcc) : f(r.mcc), String(r.count)], '\n'))
            .join(''),
      );
    return { file: options.file, task: '3.1', lines: lines.length, logeval, api: apiSign(lines), written };
  }
  if (options.task === '3.2') {
    const logeval = logEval32(lines, { skipInvalid: options.skipInvalid === true });
    stopped(logeval);
    await write(
      `${stem}.LogEval3.2.csv`,
      csvRow(['domain', 'rmse', 'mae', 'count'], '\n') +
        logeval.rows.map((r) => csvRow([r.domain, pandasFloat(r.rmse), pandasFloat(r.mae), String(r.count)], '\n')).join(''),
    );
    return { file: options.file, task: '3.2', lines: lines.length, logeval, api: apiImpact(lines), written };
  }

  const embedder =
    options.embeddings === undefined
      ? undefined
      : openEmbedder(options.embeddings, { cacheDir: options.cacheDir, ...(options.env ? { env: options.env } : {}) });
  try {
    const scorer = new GenerationScorer();
    const logeval = await logEval33(
      lines,
      async (items) => {
        // A label that is not text: every metric raises inside the script and counts 0.
        const texts = items.map((i) => (typeof i.trueLabel === 'string' ? i.trueLabel : null));
        const scoredBySbert = items.map((_, k) => k).filter((k) => texts[k] !== null);
        const similarities = embedder
          ? await sbertSimilarities(
              embedder,
              scoredBySbert.map((k) => ({ reference: texts[k]!, candidates: [items[k]!.candidate] })),
            )
          : [];
        const sbert = new Map(scoredBySbert.map((k, i) => [k, similarities[i]?.[0] ?? 0]));
        // Many pairs go to the worker pool (the same numbers as the scorer, in input order).
        const scored = items.map((_, k) => k).filter((k) => texts[k] !== null);
        const pairs = scored.map((k) => ({ reference: texts[k]!, candidate: items[k]!.candidate }));
        const lexical = new Map<number, { rouge1: number; rougeL: number; bleu: number; meteor: number }>();
        if (pairs.length >= PARALLEL_FROM) {
          const columns = await scorePairs(pairs);
          scored.forEach((k, i) =>
            lexical.set(k, { rouge1: columns.rouge1[i]!, rougeL: columns.rougeL[i]!, bleu: columns.bleu[i]!, meteor: columns.meteor[i]! }),
          );
        } else scored.forEach((k, i) => lexical.set(k, scorer.score(pairs[i]!.reference, pairs[i]!.candidate)));
        return items.map((_, k) => ({ ...(lexical.get(k) ?? { rouge1: 0, rougeL: 0, bleu: 0, meteor: 0 }), sbert: sbert.get(k) ?? 0 }));
      },
      { sbert: embedder !== undefined, skipInvalid: options.skipInvalid === true },
    );
    stopped(logeval);
    await writeLogEval33(logeval, stem, write);
    return { file: options.file, task: '3.3', lines: lines.length, logeval, api: null, written };
  } finally {
    await embedder?.close();
  }
}

/** pandas writes NaN as an empty field. */
const pandasFloat = (x: number): string => (Number.isNaN(x) ? '' : f(x));

/** LogEval3.3's two CSVs: UTF-8 with a BOM, CRLF rows (Python's csv module). */
async function writeLogEval33(r: LogEval33Result, stem: string, write: (name: string, body: string) => Promise<void>): Promise<void> {
  const BOM = '\ufeff';
  const cell = (v: unknown): string => (v === null || v === undefined ? '' : typeof v === 'number' ? f(v) : pythonStr(v));
  if (r.individual.length > 0) {
    const header = ['subreddit', 'prompt_preview', 'true_label', 'llm_output', 'sbert_score', 'rougeL_f1', 'rouge1_f1', 'bleu_score', 'meteor_score', 'error'];
    const rows = r.individual.map((row) => {
      const base = [row.subreddit === null ? '' : pythonStr(row.subreddit), row.prompt_preview, pythonStr(row.true_label), row.llm_output];
      const s = row.scores;
      // NLTK's sentence_bleu returns the int 0 when no unigram matches (the only way BLEU is 0 here);
      // a label that is not text makes the script's own except branch return 0.0.
      return csvRow(
        s
          ? [...base, f(s.sbert), f(s.rougeL), f(s.rouge1), s.bleu === 0 && typeof row.true_label === 'string' ? '0' : f(s.bleu), f(s.meteor), '']
          : [...base, 'N/A', 'N/A', 'N/A', 'N/A', 'N/A', 'Empty or Error Output'],
        '\r\n',
      );
    });
    await write(`${stem}.LogEval3.3.individual.csv`, BOM + csvRow(header, '\r\n') + rows.join(''));
  }
  const header = ['Scope', 'Identifier', 'count', 'output_errors'];
  if (r.sbert) header.push('avg_sbert', 'valid_evals_sbert');
  header.push('avg_rougeL', 'avg_rouge1', 'valid_evals_rouge', 'avg_bleu', 'valid_evals_bleu', 'avg_meteor', 'valid_evals_meteor');
  const rows = r.summary.map((s) => {
    const valid = s.valid_evals === null ? 'N/A' : String(s.valid_evals);
    const cells = [s.scope, s.identifier, String(s.count), String(s.output_errors)];
    if (r.sbert) cells.push(cell(s.avg_sbert), valid);
    cells.push(cell(s.avg_rougeL), cell(s.avg_rouge1), valid, cell(s.avg_bleu), valid, cell(s.avg_meteor), valid);
    return csvRow(cells, '\r\n');
  });
  await write(`${stem}.LogEval3.3.summary.csv`, BOM + csvRow(header, '\r\n') + rows.join(''));
}

/** Each line's object, or null where it is not one (the API evaluators never see such lines). */
function records(lines: ReturnType<typeof pythonFileLines>): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const { text } of lines) {
    try {
      const v = JSON.parse(text) as unknown;
      if (v !== null && typeof v === 'object' && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      // skipped: not a record
    }
  }
  return out;
}

const domainOf = (r: Record<string, unknown>): string | undefined => {
  const v = r['subreddit'] ?? r['domain'];
  return v === undefined || v === null ? undefined : String(v);
};

/**
 * What an API evaluator makes of these outputs: each line's label read by `truthOf` (lines
 * without one are left out), its reply by `parse` (failures counted and excluded, never
 * scored), then `score` per domain (grouped by `rule`) and over all.
 */
function apiFigures<T>(
  lines: ReturnType<typeof pythonFileLines>,
  o: {
    script: string;
    truthOf: (label: unknown) => T | null;
    parse: (reply: string) => { state: 'parsed'; value: T } | { state: 'unparsed' };
    rule: 'lowercase' | 'as-is';
    score: (truth: T[], predicted: T[]) => Record<string, number>;
  },
): ScoreOutputsSummary['api'] {
  const rows: Array<{ domain: string | undefined; truth: T; pred: T }> = [];
  let unparsed = 0;
  for (const r of records(lines)) {
    const truth = o.truthOf(r['true_label']);
    if (truth === null) continue;
    const parsed = typeof r['output'] === 'string' ? o.parse(r['output']) : null;
    if (parsed?.state !== 'parsed') {
      unparsed++;
      continue;
    }
    rows.push({ domain: domainOf(r), truth, pred: parsed.value });
  }
  const groups = groupBySubreddit(rows, (r) => r.domain, o.rule);
  const score = (domain: string, list: typeof rows): ApiRow => {
    const { count, ...metrics } = o.score(
      list.map((x) => x.truth),
      list.map((x) => x.pred),
    );
    return { domain, count: count!, ...metrics };
  };
  const out = [...groups.byDomain].map(([d, list]) => score(d, list));
  if (rows.length) out.push(score('ALL', rows));
  return { script: o.script, parsed: rows.length, unparsed, rows: out };
}

/** 3.1/GPT.py: the stripped, lower-cased reply must be the label; accuracy, binary F1, MCC; domains lower-cased. */
const apiSign = (lines: ReturnType<typeof pythonFileLines>) =>
  apiFigures<string>(lines, {
    script: '3.1/GPT.py',
    truthOf: (label) => {
      const t = typeof label === 'string' ? label.toLowerCase() : null;
      return t === 'positive' || t === 'negative' ? t : null;
    },
    parse: (reply) => parseSign(reply, 'strict'),
    rule: 'lowercase',
    score: (truth, predicted) => {
      const s = signScoresApi(truth, predicted);
      return { count: s.count, accuracy: s.accuracy, f1: s.f1, mcc: s.mcc };
    },
  });

/** 3.2/GPT.py: float(reply), else the last number standing as a word; MSE, RMSE, MAE. */
const apiImpact = (lines: ReturnType<typeof pythonFileLines>) =>
  apiFigures<number>(lines, {
    script: '3.2/GPT.py',
    truthOf: (label) => (typeof label === 'number' ? label : null),
    parse: (reply) => parseImpact(reply, 'float-then-last-number'),
    rule: 'as-is',
    score: (truth, predicted) => {
      const s = regressionScores(truth, predicted);
      return { count: s.count, mse: s.mse, rmse: s.rmse, mae: s.mae };
    },
  });
