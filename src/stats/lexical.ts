import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../core/paths.js';
import { appendRow } from '../db/append-row.js';
import { sqlList, type Database } from '../db/database.js';
import { LAPS_DEFAULTS, lapsSubsetIterator, pythonSplitCount, type LapsOptions, type LapsStream } from './laps-subsets.js';

export const LEXICAL_PROTOCOLS = ['laps', 'full'] as const;
export type LexicalProtocol = (typeof LEXICAL_PROTOCOLS)[number];

/** One row of results: a group of utterances under one protocol. */
export interface LexicalRow {
  grp: string;
  protocol: LexicalProtocol;
  /** Utterances in the group (full: also those with no word token, counted in n_empty). */
  n_utterances: number;
  n_empty: number | null;
  /** Word tokens (full) or whitespace tokens (laps, Python str.split) in the group. */
  n_tokens: number;
  iterations: number | null;
  dist_1: number | null;
  dist_2: number | null;
  ent_4: number | null;
  self_bleu: number | null;
}

export interface LexicalRunOptions {
  protocols: readonly LexicalProtocol[];
  laps?: LapsOptions;
  /** Characters of distinct texts measured per laps batch (default LAPS_BATCH_CHARS). */
  lapsBatchChars?: number;
  /** The groups the laps protocol measures (default: every group of the corpus). */
  lapsGroups?: readonly string[];
  /** Called after each laps group, for progress. */
  onGroup?: (done: number, total: number) => void;
}

export const LEXICAL_SQL = join(packageRoot, 'warehouse', '02_lexical.sql');

/** Loads the lexical macros (warehouse/02_lexical.sql) into a database that lacks them. */
export async function loadLexicalMacros(db: Database): Promise<void> {
  await db.run(readFileSync(LEXICAL_SQL, 'utf8'), { file: LEXICAL_SQL });
}

/**
 * Lexical diversity of every group of a corpus table (grp VARCHAR, utt BIGINT: corpus order, text
 * VARCHAR), written to `out` (one row per group and protocol). The statistics are the SQL macros; this
 * drives them: it interns the full protocol's word tokens as an ENUM (integer keys group several times
 * faster than strings) and draws the laps subsets with Python's random stream.
 */
export async function computeLexical(db: Database, corpus: string, out: string, options: LexicalRunOptions): Promise<LexicalRow[]> {
  const parts: string[] = [];
  if (options.protocols.includes('full')) {
    await internWords(db, corpus, 'lexical_ids_tmp', 'lexical_token_tmp');
    await db.run(`CREATE OR REPLACE TEMP TABLE lexical_full_tmp AS SELECT * FROM lexical_full_units(lexical_ids_tmp)`);
    await db.run(`DROP TABLE lexical_ids_tmp; DROP TYPE IF EXISTS lexical_token_tmp;`);
    parts.push('SELECT * FROM lexical_full_tmp');
  }
  if (options.protocols.includes('laps')) {
    await lapsPerIteration(db, corpus, 'lexical_laps_iterations_tmp', options);
    await db.run(`
      CREATE OR REPLACE TEMP TABLE lexical_laps_tmp AS
      SELECT l.* REPLACE (c.n_utterances AS n_utterances, c.n_tokens AS n_tokens)
      FROM lexical_laps_means(lexical_laps_iterations_tmp) l
        JOIN (SELECT grp, count(*) AS n_utterances, sum(len(python_split(text))) AS n_tokens FROM ${corpus} GROUP BY grp) c USING (grp);
      DROP TABLE lexical_laps_iterations_tmp;`);
    parts.push('SELECT * FROM lexical_laps_tmp');
  }
  await db.run(`CREATE OR REPLACE TABLE ${out} AS ${parts.join(' UNION ALL BY NAME ')}`);
  await db.run(`DROP TABLE IF EXISTS lexical_full_tmp; DROP TABLE IF EXISTS lexical_laps_tmp;`);
  return db.all<LexicalRow>(
    `SELECT grp, protocol, n_utterances, n_empty, n_tokens, iterations, dist_1, dist_2, ent_4, self_bleu FROM ${out} ORDER BY grp, protocol`,
  );
}

/**
 * The full protocol's word tokens of a corpus (grp, utt, text) as a table `out` (grp, utt, units), the
 * words interned as the ENUM type `type`: integer keys group several times faster than strings.
 */
export async function internWords(db: Database, corpus: string, out: string, type: string): Promise<void> {
  await db.run(`
    CREATE OR REPLACE TEMP TABLE lexical_words_tmp AS SELECT grp, utt, lexical_words(text) AS units FROM ${corpus};
    DROP TABLE IF EXISTS ${out}; DROP TYPE IF EXISTS ${type};`);
  const [{ n }] = (await db.all<{ n: number }>(`SELECT count(*)::BIGINT AS n FROM (SELECT unnest(units) FROM lexical_words_tmp LIMIT 1)`)) as [{ n: number }];
  // An ENUM needs at least one value: a corpus without any word keeps its (empty) string lists.
  await db.run(
    n > 0
      ? `CREATE TYPE ${type} AS ENUM (SELECT DISTINCT unnest(units) FROM lexical_words_tmp ORDER BY 1);
         CREATE TEMP TABLE ${out} AS SELECT grp, utt, units::${type}[] AS units FROM lexical_words_tmp;`
      : `CREATE TEMP TABLE ${out} AS SELECT * FROM lexical_words_tmp`,
  );
  await db.run('DROP TABLE lexical_words_tmp');
}

/**
 * Characters of distinct texts per batch of laps subsets (a text counts once per subset that holds it).
 * The subsets of all groups at once held about 4 GB (each is a 7,012-token sample, 100 per group and
 * stream, Self-BLEU over its characters); batches of 6 million characters keep the demo's Table 10 under
 * 350 MB RSS, and small groups share one batch.
 */
export const LAPS_BATCH_CHARS = 6_000_000;

/**
 * The laps metrics of every subset of every group into `table` (grp, iteration, dist_1, dist_2, ent_4,
 * self_bleu). The subsets are drawn here (both streams of an iteration together) and measured in SQL a
 * batch at a time, so memory stays bounded whatever the number of groups; the next batch is drawn while
 * SQL measures the last one (drawing is JavaScript, measuring is DuckDB's threads). A subset goes to SQL
 * as counts of its distinct texts (lexical_laps_counted_iterations): the metrics do not depend on the
 * order of the messages, and the subsets redraw the same texts again and again. A group whose messages
 * all fit in the token budget is the same whole set in every iteration: it is measured once and its row
 * repeated.
 */
async function lapsPerIteration(db: Database, corpus: string, table: string, options: LexicalRunOptions): Promise<void> {
  const laps = { ...LAPS_DEFAULTS, ...options.laps };
  const members = 'lexical_laps_members_tmp';
  const texts = 'lexical_laps_texts_tmp';
  await db.run(`CREATE OR REPLACE TEMP TABLE ${table} (grp VARCHAR, iteration INTEGER, dist_1 DOUBLE, dist_2 DOUBLE, ent_4 DOUBLE, self_bleu DOUBLE);
    CREATE OR REPLACE TEMP TABLE ${members} (grp VARCHAR, stream VARCHAR, iteration INTEGER, tid INTEGER, k INTEGER);
    CREATE OR REPLACE TEMP TABLE ${texts} (tid INTEGER, text VARCHAR)`);
  const groups = (await db.all<{ grp: string }>(`SELECT DISTINCT grp FROM ${corpus} ORDER BY grp`))
    .map((r) => r.grp)
    .filter((grp) => options.lapsGroups?.includes(grp) ?? true);
  let measuring: Promise<void> = Promise.resolve();
  // One group's texts at a time, in corpus order (the random stream depends on the order), read once the
  // connection is free of the last batch's SQL.
  const messagesOf = async (grp: string): Promise<string[]> => {
    await measuring.catch(() => undefined);
    return (await db.all<{ text: string }>(`SELECT text FROM ${corpus} WHERE grp = $1 ORDER BY utt`, undefined, [grp])).map((r) => r.text);
  };
  const drawn = drawLapsBatches(groups, messagesOf, laps, options.lapsBatchChars ?? LAPS_BATCH_CHARS, options.onGroup);
  const whole: string[] = [];
  try {
    // Each step of the generator draws one batch (JavaScript) while the previous batch's SQL runs.
    for (let next = await drawn.next(); !next.done; next = await drawn.next()) {
      await measuring;
      const batch = next.value;
      whole.push(...batch.whole);
      await db.run(`DELETE FROM ${members}`);
      const memberRows = await db.appender(members);
      const textRows = await db.appender(texts);
      try {
        for (const row of batch.members) appendRow(memberRows, row);
        for (const row of batch.texts) appendRow(textRows, row);
      } finally {
        memberRows.closeSync();
        textRows.closeSync();
      }
      measuring = db.run(`INSERT INTO ${table} SELECT * FROM lexical_laps_counted_iterations(${members}, ${texts})`);
      // Handled now (awaited in the next step or below): a failure while the next batch is drawn is no unhandled rejection.
      measuring.catch(() => undefined);
    }
    await measuring;
  } finally {
    // Settled before anything else runs on the connection (or the caller closes it), on a failure too.
    await measuring.catch(() => undefined);
  }
  if (whole.length > 0) {
    await db.run(
      `INSERT INTO ${table} SELECT t.grp, r.range::INTEGER, t.dist_1, t.dist_2, t.ent_4, t.self_bleu
       FROM ${table} t, range(1, ${laps.iterations}) r WHERE t.iteration = 0 AND list_contains($1, t.grp)`,
      undefined,
      [sqlList(whole)],
    );
  }
  await db.run(`DROP TABLE ${members}; DROP TABLE ${texts};`);
}

/** One batch of laps subsets: member rows (grp, stream, iteration, tid, k), the texts first seen in it (tid, text), and the groups measured whole. */
interface LapsBatch {
  members: Array<[string, LapsStream, number, number, number]>;
  texts: Array<[number, string]>;
  whole: string[];
}

/**
 * The laps subsets of every group, cut into batches of about `batchLimit` characters of distinct texts
 * (a text counts once per subset that holds it). Text ids run on across batches, so a text is stored
 * once per group.
 */
async function* drawLapsBatches(
  groups: readonly string[],
  messagesOf: (grp: string) => Promise<readonly string[]>,
  laps: Required<LapsOptions>,
  batchLimit: number,
  onGroup?: (done: number, total: number) => void,
): AsyncGenerator<LapsBatch, void, undefined> {
  let batch: LapsBatch = { members: [], texts: [], whole: [] };
  let batchChars = 0;
  /** The batch so far, and a new one begun. */
  const take = (): LapsBatch => {
    const full = batch;
    batch = { members: [], texts: [], whole: [] };
    batchChars = 0;
    return full;
  };
  let nextTid = 0;
  let done = 0;
  for (const grp of groups) {
    const messages = await messagesOf(grp);
    // Text ids per group, so only the group's drawn texts are held.
    const tids = new Map<string, number>();
    const tidOf = (text: string): number => {
      let tid = tids.get(text);
      if (tid === undefined) {
        tid = nextTid++;
        tids.set(text, tid);
        batch.texts.push([tid, text]);
      }
      return tid;
    };
    const add = (stream: LapsStream, iteration: number, subset: readonly string[]) => {
      const counts = new Map<number, number>();
      for (const text of subset) {
        const tid = tidOf(text);
        const k = counts.get(tid);
        if (k === undefined) batchChars += text.length + 1;
        counts.set(tid, (k ?? 0) + 1);
      }
      for (const [tid, k] of counts) batch.members.push([grp, stream, iteration, tid, k]);
    };
    const withinBudget = messages.reduce((sum, text) => sum + pythonSplitCount(text), 0) <= laps.tokenBudget;
    if (withinBudget && laps.iterations > 0) {
      // Every subset keeps every message: the metrics are those of the whole group, in every iteration.
      add('dist', 0, messages);
      add('self_bleu', 0, messages);
      batch.whole.push(grp);
    } else {
      const dist = lapsSubsetIterator(messages, 'dist', laps);
      const selfBleu = lapsSubsetIterator(messages, 'self_bleu', laps);
      for (let d = dist.next(), b = selfBleu.next(); !d.done && !b.done; d = dist.next(), b = selfBleu.next()) {
        add('dist', d.value.iteration, d.value.texts);
        add('self_bleu', b.value.iteration, b.value.texts);
        if (batchChars >= batchLimit) yield take();
      }
    }
    if (batchChars >= batchLimit) yield take();
    onGroup?.(++done, groups.length);
  }
  if (batch.members.length > 0) yield batch;
}
