import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { tempSibling } from '../core/atomic.js';
import { Database, sqlString } from '../db/database.js';
import { completeLength } from '../engine/jsonl-log.js';
import { EVENTS_FILE, listLogs, RECORDS_FILE } from '../engine/stage-runner.js';

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
 * the work finished in. Written to a temp file and renamed.
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
  // complete line, from a snapshot of that prefix.
  const snapshots = join(dir, `.compact-${process.pid}`);
  await mkdir(snapshots, { recursive: true });
  const snapshot = async (files: string[]) =>
    Promise.all(
      files.map(async (f, i) => {
        const to = join(snapshots, `${i}-${basename(f)}`);
        await pipeline(createReadStream(join(dir, f), { start: 0, end: lengths[f]! - 1 }), createWriteStream(to));
        return to;
      }),
    );
  const records = await snapshot(listLogs(dir, RECORDS_FILE).filter((f) => (lengths[f] ?? 0) > 0));
  const events = await snapshot(listLogs(dir, EVENTS_FILE).filter((f) => (lengths[f] ?? 0) > 0));
  const db = await Database.open(':memory:', { threads: 1 });
  try {
    let rows = 0;
    if (records.length) {
      const out = join(dir, `${outputName}.parquet`);
      const tmp = tempSibling(out);
      await db.run(`
        COPY (
          SELECT * FROM read_json([${records.map(sqlString).join(', ')}], format = 'newline_delimited', columns = ${columnsLiteral(columns)})
          QUALIFY row_number() OVER (PARTITION BY "key" ORDER BY status = 'ok' DESC, "try" DESC) = 1
          ORDER BY "key"
        ) TO ${sqlString(tmp)} (FORMAT parquet, COMPRESSION zstd)`);
      rows = (await db.all<{ n: number }>(`SELECT count(*)::INTEGER AS n FROM read_parquet(${sqlString(tmp)})`))[0]!.n;
      await rename(tmp, out);
    }
    const callsOut = join(dir, 'calls.parquet');
    if (events.length) {
      const tmp = tempSibling(callsOut);
      await db.run(`
        COPY (SELECT * FROM read_json([${events.map(sqlString).join(', ')}], format = 'newline_delimited', columns = ${columnsLiteral(CALL_COLUMNS)}) ORDER BY "at", "key", "turn")
        TO ${sqlString(tmp)} (FORMAT parquet, COMPRESSION zstd)`);
      await rename(tmp, callsOut);
    } else if (existsSync(callsOut)) {
      await rm(callsOut);
    }
    return { rows };
  } finally {
    db.close();
    await rm(snapshots, { recursive: true, force: true });
  }
}
