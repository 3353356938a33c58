import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { tempSibling } from '../../core/atomic.js';
import { storageError } from '../../core/errors.js';
import { Database, sqlString } from '../../db/database.js';
import { completeLength } from '../../engine/jsonl-log.js';
import { checkLogRecord } from '../../engine/record-check.js';
import { readJsonlLines } from '../../engine/jsonl-log.js';
import { writeRecordWinners } from '../../engine/record-winners.js';
import { EVENTS_FILE, listLogs, RECORDS_FILE } from '../../engine/stage-runner.js';

/** Column types of the JSONL records, so DuckDB never guesses (and an empty field stays typed). */
export const DIALOGUE_COLUMNS: Record<string, string> = {
  key: 'VARCHAR',
  try: 'INTEGER',
  status: 'VARCHAR',
  error: 'STRUCT(kind VARCHAR, message VARCHAR, status INTEGER, turn INTEGER)',
  scenario_id: 'VARCHAR',
  user_id: 'VARCHAR',
  task_id: 'VARCHAR',
  kind: 'VARCHAR',
  setting: 'VARCHAR',
  replicate: 'INTEGER',
  assistant_model: 'VARCHAR',
  assistant_temperature: 'DOUBLE',
  assistant_max_tokens: 'INTEGER',
  user_model: 'VARCHAR',
  user_temperature: 'DOUBLE',
  user_max_tokens: 'INTEGER',
  prompt_version: 'VARCHAR',
  simulated: 'BOOLEAN',
  end_reason: 'VARCHAR',
  rounds: 'INTEGER',
  messages: 'STRUCT(role VARCHAR, content VARCHAR, input_tokens INTEGER, output_tokens INTEGER, latency_ms INTEGER, finish_reason VARCHAR)[]',
  input_tokens: 'BIGINT',
  output_tokens: 'BIGINT',
  cost_usd: 'DOUBLE',
};

export const CALL_COLUMNS: Record<string, string> = {
  run_id: 'VARCHAR',
  key: 'VARCHAR',
  turn: 'INTEGER',
  role: 'VARCHAR',
  model: 'VARCHAR',
  status: 'VARCHAR',
  error_kind: 'VARCHAR',
  cached: 'BOOLEAN',
  attempts: 'INTEGER',
  latency_ms: 'INTEGER',
  input_tokens: 'INTEGER',
  output_tokens: 'INTEGER',
  cost_usd: 'DOUBLE',
  at: 'TIMESTAMP',
};

/** The `columns` argument of read_json for a column-type map. */
export function columnsLiteral(columns: Record<string, string>): string {
  return `{${Object.entries(columns).map(([k, v]) => `${sqlString(k)}: ${sqlString(v)}`).join(', ')}}`;
}

/**
 * Compacts a partition's append-only logs into Parquet: one row per key (a result beats a
 * failure; among failures the latest try), sorted by key so the file is the same whatever order
 * the work finished in; and every LLM call, in log order. Written to a temp file and renamed.
 * Memory grows with the number of keys, not with the data: the winners are picked from a small
 * index in TypeScript, and DuckDB only streams JSONL into Parquet.
 */
export async function compactPartition(dir: string, outputName: string, columns: Record<string, string>): Promise<{ rows: number }> {
  // Shards finishing together compact at once, and the last rename wins: one that read the logs
  // before another shard's last appends would leave a stale file. So compact again until the logs
  // are as read; the last rename then holds everything (the logs only grow).
  for (;;) {
    const read = logLengths(dir);
    const result = await compactOnce(dir, outputName, columns, read);
    if (JSON.stringify(logLengths(dir)) === JSON.stringify(read)) return result;
  }
}

/** The complete length of every log in a partition, by file name. */
function logLengths(dir: string): Record<string, number> {
  return Object.fromEntries([...listLogs(dir, RECORDS_FILE), ...listLogs(dir, EVENTS_FILE)].map((f) => [f, completeLength(join(dir, f))]));
}

async function compactOnce(dir: string, outputName: string, columns: Record<string, string>, lengths: Record<string, number>): Promise<{ rows: number }> {
  // Another shard may be appending to its log right now: read each log only up to its last
  // complete line (DuckDB cannot stop at a byte, so it reads a copy of the events' prefix).
  const snapshots = join(dir, `.compact-${process.pid}`);
  await mkdir(snapshots, { recursive: true });
  const present = (kind: string) => listLogs(dir, kind).filter((f) => (lengths[f] ?? 0) > 0);
  const records = present(RECORDS_FILE).map((f) => ({ path: join(dir, f), length: lengths[f]! }));
  const events = await Promise.all(
    present(EVENTS_FILE).map(async (f, i) => {
      const to = join(snapshots, `${i}-${basename(f)}`);
      await pipeline(createReadStream(join(dir, f), { start: 0, end: lengths[f]! - 1 }), createWriteStream(to));
      return to;
    }),
  );
  // One thread keeps rows in the order read (files in list order, lines in file order), with no ORDER BY to hold them all.
  const db = await Database.open(':memory:', { threads: 1, memoryLimit: COMPACT_MEMORY_LIMIT });
  try {
    // Under memory pressure DuckDB spills to ./.tmp: keep that out of the user's working directory.
    await db.run(`SET temp_directory = ${sqlString(join(snapshots, 'duckdb.tmp'))}`);
    let rows = 0;
    if (records.length) {
      const winners = join(snapshots, 'winners.jsonl');
      rows = await writeRecordWinners(records, winners, (value, file, line) => checkLogRecord(value, columns, 'record', file, line));
      const out = join(dir, `${outputName}.parquet`);
      const tmp = tempSibling(out);
      await writeThenRename(db, `COPY (${jsonlQuery([winners], columns)}) TO ${sqlString(tmp)} (${PARQUET_OPTIONS})`, tmp, out);
    }
    const callsOut = join(dir, 'calls.parquet');
    // Events go to DuckDB as they are: check them first, naming the log (not its snapshot) and line.
    for (const [i, f] of present(EVENTS_FILE).entries()) {
      for await (const { value, line } of readJsonlLines(events[i]!)) checkLogRecord(value, CALL_COLUMNS, 'event', join(dir, f), line);
    }
    if (events.length) {
      // Each log is appended in time order by its one writer; nothing reads calls.parquet by row order.
      const tmp = tempSibling(callsOut);
      await writeThenRename(db, `COPY (${jsonlQuery(events, CALL_COLUMNS)}) TO ${sqlString(tmp)} (${PARQUET_OPTIONS})`, tmp, callsOut);
    } else if (existsSync(callsOut)) {
      await rm(callsOut);
    }
    return { rows };
  } finally {
    db.close();
    await rm(snapshots, { recursive: true, force: true });
  }
}

/** A failed write (a full disk) leaves the previous file and no temp file beside it. */
async function writeThenRename(db: Database, copy: string, tmp: string, out: string): Promise<void> {
  try {
    await db.run(copy);
    await rename(tmp, out);
  } catch (error) {
    await rm(tmp, { force: true });
    throw storageError(error, out) ?? error;
  }
}

/**
 * A ceiling, so a change that makes DuckDB hold all the data fails loudly instead of swelling the
 * process. Streaming needed about 100 MB with 3.6 KB dialogues, under 400 MB with 21 KB ones.
 */
const COMPACT_MEMORY_LIMIT = '1GB';
/**
 * DuckDB holds a whole row group before writing it, so bound it in rows: DuckDB 1.5 refuses
 * ROW_GROUP_SIZE_BYTES while preserve_insertion_order is on, and turning that off would lose the
 * rows' order. 4096 dialogues of 3.6 KB made the same file as 8192 rows with 30 MB less peak memory.
 */
const PARQUET_OPTIONS = 'FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE 4096';

/** Reads JSONL files with the given column types, so DuckDB never guesses. */
function jsonlQuery(files: string[], columns: Record<string, string>): string {
  return `SELECT * FROM read_json([${files.map(sqlString).join(', ')}], format = 'newline_delimited', columns = ${columnsLiteral(columns)})`;
}
