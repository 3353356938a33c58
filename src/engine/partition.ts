import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tempSibling } from '../core/atomic.js';
import { storageError } from '../core/errors.js';
import { Database, sqlString } from '../db/database.js';
import { completeLength, JsonlLog, readJsonl, readJsonlLines } from './jsonl-log.js';
import { WriterLock } from './lock.js';
import { checkLogRecord } from './record-check.js';
import { JsonlChunks } from './jsonl-chunks.js';
import { writeRecordWinners } from './record-winners.js';
import { shardSuffix, type Shard } from './shard.js';

/** DuckDB column types by field name. */
export type Columns = Readonly<Record<string, string>>;

/**
 * A column map typed against its record: every field of `T` has exactly one column, so adding a
 * field to the record type without its column (or the reverse) is a compile error.
 */
export type ColumnsOf<T> = { readonly [K in keyof Required<T>]: string };

/** What a stage's partitions hold: the compacted file's name and the columns of both logs. */
export interface PartitionFormat {
  /** The compacted records are `<output>.parquet`. */
  output: string;
  records: Columns;
  events: Columns;
  /** Fields every `ok` record of the stage has carried from the start: a line without them is not plens's. */
  required?: readonly string[];
}

/** The two logs of a partition: one record per finished key, and one event per LLM call. */
export type LogKind = 'records' | 'events';

/** Where a key stands in a partition's logs. */
export interface KeyState {
  ok: boolean;
  tries: number;
}

/**
 * One stage output folder and its on-disk format, owned here and nowhere else: append-only JSONL
 * logs per writer (`records.jsonl`, `records.shard-i-of-n.jsonl`, the same for `events`), the
 * writer's lock, and the compacted `<output>.parquet` (one row per key) and `calls.parquet`.
 */
export class Partition {
  constructor(
    readonly dir: string,
    readonly format: PartitionFormat,
  ) {}

  /** The partition `name` under a stage's root folder. */
  static in(root: string, name: string, format: PartitionFormat): Partition {
    return new Partition(join(root, name), format);
  }

  /** Every partition folder under a stage's root, by name; those with their compacted file only when asked. */
  static list(root: string, format: PartitionFormat, compactedOnly = false): Partition[] {
    let names: string[];
    try {
      names = readdirSync(root, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
    } catch {
      return [];
    }
    return names.map((n) => Partition.in(root, n, format)).filter((p) => !compactedOnly || p.isCompacted());
  }

  /** The glob DuckDB reads every compacted partition under a root with. */
  static outputGlob(root: string, format: PartitionFormat): string {
    return join(root, '*', `${format.output}.parquet`);
  }

  get outputFile(): string {
    return join(this.dir, `${this.format.output}.parquet`);
  }

  get callsFile(): string {
    return join(this.dir, 'calls.parquet');
  }

  /** A file beside the logs that describes the partition (cell.json, judge.json, legacy.json). */
  file(name: string): string {
    return join(this.dir, name);
  }

  exists(): boolean {
    return existsSync(this.dir);
  }

  isCompacted(): boolean {
    return existsSync(this.outputFile);
  }

  /** The log one writer (the whole run, or one shard) appends to. */
  logPath(kind: LogKind, shard?: Shard): string {
    return join(this.dir, `${kind}${shardSuffix(shard)}.jsonl`);
  }

  /** The batch ledger of one writer (batch mode, engine/batch-ledger.ts). */
  ledgerPath(shard?: Shard): string {
    return join(this.dir, `batches${shardSuffix(shard)}.jsonl`);
  }

  /** Every writer's log of one kind, sorted by name. */
  logs(kind: LogKind): string[] {
    try {
      return readdirSync(this.dir)
        .filter((f) => f.startsWith(kind) && f.endsWith('.jsonl'))
        .sort()
        .map((f) => join(this.dir, f));
    } catch {
      return [];
    }
  }

  /**
   * Takes the writer's lock for this layout (whole, or shard i of n), creating the folder. Taken
   * before the state is read, so what is done cannot change under the writer.
   */
  lock(shard: Shard | undefined): WriterLock {
    mkdirSync(this.dir, { recursive: true });
    const suffix = shardSuffix(shard);
    return WriterLock.acquireLayout(this.dir, suffix, `${this.dir}${suffix ? ` (shard ${suffix.slice(7)})` : ''}`);
  }

  /** Opens (repairing a torn tail) both logs of one writer; each writes a turn's lines together (JsonlLog's `deferred`). */
  openLogs(shard: Shard | undefined): { records: JsonlLog; events: JsonlLog } {
    return {
      records: JsonlLog.open(this.logPath('records', shard), { deferred: true }),
      events: JsonlLog.open(this.logPath('events', shard), { deferred: true }),
    };
  }

  /** Every complete line of every log of a kind, logs in name order, lines in file order. */
  /** The check every record line passes: plens's shape, and the stage's required fields on an `ok` record. */
  private recordCheck(): (value: unknown, file: string, line: number) => void {
    const { records, required } = this.format;
    return (value, file, line) => checkLogRecord(value, records, 'record', file, line, required);
  }

  async *read<T>(kind: LogKind): AsyncGenerator<T> {
    for (const file of this.logs(kind)) yield* readJsonl<T>(file);
  }

  /** How many tries each key has had and whether one succeeded. */
  async keyStates(): Promise<Map<string, KeyState>> {
    const states = new Map<string, KeyState>();
    // Each line is checked before it counts: a line plens did not write (an `ok` with nothing in it)
    // is refused with its file and line, never taken for done work.
    const check = this.recordCheck();
    for (const file of this.logs('records')) {
      for await (const { value, line } of readJsonlLines<{ key: string; status: string }>(file)) {
        check(value, file, line);
        const r = value;
        const s = states.get(r.key) ?? { ok: false, tries: 0 };
        s.tries++;
        s.ok ||= r.status === 'ok';
        states.set(r.key, s);
      }
    }
    return states;
  }

  /** Each key's record that counts now: a result beats any failure; among failures the latest try. */
  async latest<T extends { key: string; status: string }>(): Promise<Map<string, T>> {
    const latest = new Map<string, T>();
    for await (const r of this.read<T>('records')) {
      const before = latest.get(r.key);
      if (before?.status !== 'ok') latest.set(r.key, r);
    }
    return latest;
  }

  /** Logs newer than the compacted file (e.g. a run was killed before it compacted). */
  needsCompaction(): boolean {
    const logs = [...this.logs('records'), ...this.logs('events')];
    if (logs.length === 0) return false;
    const parquet = statSync(this.outputFile, { throwIfNoEntry: false });
    if (!parquet) return true;
    return logs.some((f) => (statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0) > parquet.mtimeMs);
  }

  /**
   * Compacts the logs into Parquet: one row per key (a result beats a failure; among failures the
   * latest try), sorted by key so the file is the same whatever order the work finished in; and
   * every LLM call, in log order. Written to a temp file and renamed. Memory grows with the number
   * of keys, not with the data: the winners are picked from a small index in TypeScript, and
   * DuckDB only streams JSONL into Parquet.
   */
  async compact(): Promise<{ rows: number }> {
    // Shards finishing together compact at once, and the last rename wins: one that read the logs
    // before another shard's last appends would leave a stale file. So compact again until the logs
    // are as read; the last rename then holds everything (the logs only grow).
    for (;;) {
      const read = this.logLengths();
      const result = await this.compactOnce(read);
      if (JSON.stringify(this.logLengths()) === JSON.stringify(read)) return result;
    }
  }

  /** The complete length of every log, by path. */
  private logLengths(): Record<string, number> {
    return Object.fromEntries([...this.logs('records'), ...this.logs('events')].map((f) => [f, completeLength(f)]));
  }

  private async compactOnce(lengths: Record<string, number>): Promise<{ rows: number }> {
    const { records: recordColumns, events: eventColumns } = this.format;
    // Another shard may be appending to its log right now: read each log only up to its last
    // complete line (DuckDB cannot stop at a byte, so it reads a copy of the events' prefix).
    const snapshots = join(this.dir, `.compact-${process.pid}`);
    await mkdir(snapshots, { recursive: true });
    const present = (kind: LogKind) => this.logs(kind).filter((f) => (lengths[f] ?? 0) > 0);
    const records = present('records').map((f) => ({ path: f, length: lengths[f]! }));
    const eventLogs = present('events');
    // One thread keeps rows in the order read (files in list order, lines in file order), with no ORDER BY to hold them all.
    const db = await Database.open(':memory:', { threads: 1, memoryLimit: COMPACT_MEMORY_LIMIT });
    try {
      // Under memory pressure DuckDB spills to ./.tmp: keep that out of the user's working directory.
      await db.run(`SET temp_directory = ${sqlString(join(snapshots, 'duckdb.tmp'))}`);
      let rows = 0;
      if (records.length) {
        const winners = new JsonlChunks(join(snapshots, 'winners'));
        rows = await writeRecordWinners(records, winners, this.recordCheck());
        const tmp = tempSibling(this.outputFile);
        await writeThenRename(db, `COPY (${jsonlQuery(winners.files, recordColumns)}) TO ${sqlString(tmp)} (${PARQUET_OPTIONS})`, tmp, this.outputFile);
      }
      // Events go to DuckDB as they are: check them first, naming the log and line.
      for (const f of eventLogs) {
        for await (const { value, line } of readJsonlLines(f, lengths[f]!)) checkLogRecord(value, eventColumns, 'event', f, line);
      }
      if (eventLogs.length) {
        // Copied, up to each log's snapshot length, as files of a few MiB of whole lines: DuckDB's
        // JSON reader buffers up to 32 MiB of each file it reads, whatever the file's size.
        const events = new JsonlChunks(join(snapshots, 'events'));
        try {
          for (const f of eventLogs) events.copyLines(f, lengths[f]!);
        } finally {
          events.close();
        }
        // Each log is appended in time order by its one writer; nothing reads calls.parquet by row order.
        const tmp = tempSibling(this.callsFile);
        await writeThenRename(db, `COPY (${jsonlQuery(events.files, eventColumns)}) TO ${sqlString(tmp)} (${PARQUET_OPTIONS})`, tmp, this.callsFile);
      } else if (existsSync(this.callsFile)) {
        await rm(this.callsFile);
      }
      return { rows };
    } finally {
      db.close();
      await rm(snapshots, { recursive: true, force: true });
    }
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

/** The `columns` argument of read_json for a column-type map. */
export function columnsLiteral(columns: Columns): string {
  return `{${Object.entries(columns)
    .map(([k, v]) => `${sqlString(k)}: ${sqlString(v)}`)
    .join(', ')}}`;
}

/** Reads JSONL files with the given column types, so DuckDB never guesses (and an empty field stays typed). */
export function jsonlQuery(files: string[], columns: Columns): string {
  return `SELECT * FROM read_json([${files.map(sqlString).join(', ')}], format = 'newline_delimited', columns = ${columnsLiteral(columns)})`;
}
