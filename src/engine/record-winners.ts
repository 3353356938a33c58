import { closeSync, openSync, readSync } from 'node:fs';
import { PlensError } from '../core/errors.js';
import type { JsonlChunks } from './jsonl-chunks.js';
import { readJsonlLines } from './jsonl-log.js';

/** A log to read, up to `length` bytes (its complete lines when the snapshot was taken). */
export interface LogPrefix {
  path: string;
  length: number;
}

/** Where a key's best record so far lies, and what a later one must beat. */
interface Winner {
  ok: boolean;
  try: number;
  file: number;
  offset: number;
  length: number;
}

/**
 * Writes one record per key of a stage's records logs to `to` as JSONL, sorted by key: a result
 * beats a failure, then the higher try, then the one read later (logs in the given order, lines in
 * file order). Only a small index entry per key is held, never the records themselves, so memory
 * grows with the number of keys, not with the size of the records. Returns how many lines it wrote.
 */
export async function writeRecordWinners(logs: LogPrefix[], to: JsonlChunks, check?: (value: unknown, file: string, line: number) => void): Promise<number> {
  const winners = new Map<string, Winner>();
  for (const [file, log] of logs.entries()) {
    for await (const { value, line, offset, length } of readJsonlLines<{ key?: unknown; status?: unknown; try?: unknown } | null>(log.path, log.length)) {
      check?.(value, log.path, line);
      if (typeof value?.key !== 'string') throw new PlensError('E_INPUT_SCHEMA', 'a record in this log has no key', { location: { file: log.path, line } });
      // A missing try ranks below every try, as NULLs did in the SQL this replaces.
      const entry: Winner = { ok: value.status === 'ok', try: typeof value.try === 'number' ? value.try : -Infinity, file, offset, length };
      const best = winners.get(value.key);
      if (!best || (entry.ok !== best.ok ? entry.ok : entry.try >= best.try)) winners.set(value.key, entry);
    }
  }
  // Keys are hex hashes: UTF-16 order (the default sort) is their byte order, as DuckDB sorts them.
  const keys = [...winners.keys()].sort();
  // Positional reads, synchronous: one per key in random order, and through the thread pool they
  // cost ten times as much (4.8 s for 100k keys against 0.5 s).
  const fds: number[] = [];
  try {
    for (const log of logs) fds.push(openSync(log.path, 'r'));
    // Each winning line is read straight into a 1 MiB output buffer, written when full.
    let buffer = Buffer.allocUnsafe(1 << 20);
    let used = 0;
    for (const key of keys) {
      const w = winners.get(key)!;
      if (used + w.length + 1 > buffer.length) {
        to.writeLines(buffer, used);
        used = 0;
        if (w.length + 1 > buffer.length) buffer = Buffer.allocUnsafe(w.length + 1);
      }
      const read = readSync(fds[w.file]!, buffer, used, w.length, w.offset);
      if (read !== w.length)
        throw new PlensError('E_INTERNAL', `a log shrank while it was compacted (${w.length} bytes expected at ${w.offset}, ${read} read)`, {
          location: { file: logs[w.file]!.path },
        });
      buffer[used + w.length] = 10;
      used += w.length + 1;
    }
    to.writeLines(buffer, used);
  } finally {
    to.close();
    for (const fd of fds) closeSync(fd);
  }
  return keys.length;
}
