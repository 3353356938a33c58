import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { dirname } from 'node:path';
import { PlensError, storageError } from '../core/errors.js';
import { redact } from '../core/redact.js';

/**
 * An append-only JSON Lines file. Lines are written whole, so a killed process leaves at most one
 * torn last line, which `open` cuts off before appending again.
 *
 * By default each record is its own write(2). A `deferred` log (a stage's records and call events)
 * gathers the lines appended in one turn of the event loop and writes them together right after it
 * (or at 1 MiB, or at close): the same bytes in the same order with one system call instead of
 * dozens, at the price of losing that one turn's lines to a kill, as a kill a moment earlier
 * would. A write that fails there (a full disk) is thrown by the next append or by close.
 */
export class JsonlLog {
  private pending: string[] = [];
  private pendingBytes = 0;
  private scheduled = false;
  private failure: unknown;

  private constructor(
    readonly path: string,
    private fd: number,
    /** Bytes cut from a torn tail when the log was opened. */
    readonly repairedBytes: number,
    private readonly deferred: boolean,
  ) {}

  static open(path: string, options: { deferred?: boolean } = {}): JsonlLog {
    let fd: number;
    try {
      mkdirSync(dirname(path), { recursive: true });
      fd = openSync(path, 'a+');
    } catch (error) {
      throw storageError(error) ?? error;
    }
    const repaired = repairTornTail(fd);
    return new JsonlLog(path, fd, repaired, options.deferred ?? false);
  }

  append(record: unknown): void {
    if (this.failure !== undefined) throw this.failure;
    // Every stage record and call event passes the shared redactor: no key reaches a log, hence
    // no Parquet, warehouse or report.
    const line = `${redact(JSON.stringify(record))}\n`;
    if (!this.deferred) {
      this.write(line);
      return;
    }
    this.pending.push(line);
    this.pendingBytes += line.length;
    if (this.pendingBytes >= 1 << 20) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        try {
          this.flush();
        } catch (error) {
          this.failure = error;
        }
      });
    }
  }

  /** Writes what a deferred log has gathered. */
  flush(): void {
    if (this.pending.length === 0 || this.fd < 0) return;
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = [];
    this.pendingBytes = 0;
    this.write(text);
  }

  private write(text: string): void {
    try {
      writeSync(this.fd, text);
    } catch (error) {
      // A full disk may leave part of the line: the next open cuts it, as after a kill.
      throw storageError(error, this.path) ?? error;
    }
  }

  close(): void {
    if (this.fd < 0) return;
    try {
      this.flush();
    } finally {
      closeSync(this.fd);
      this.fd = -1;
    }
    if (this.failure !== undefined) throw this.failure;
  }
}

/** Cuts everything after the last newline; returns how many bytes were cut. */
function repairTornTail(fd: number): number {
  const size = fstatSync(fd).size;
  const keep = completeLengthOf(fd, size);
  if (keep < size) ftruncateSync(fd, keep);
  return size - keep;
}

/** The offset just past the last newline in the first `size` bytes (0 when there is none), scanning backwards. */
function completeLengthOf(fd: number, size: number): number {
  const chunk = Buffer.alloc(Math.min(size, 1 << 20));
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - chunk.length);
    const n = readSync(fd, chunk, 0, end - start, start);
    const i = chunk.subarray(0, n).lastIndexOf(10);
    if (i >= 0) return start + i + 1;
    end = start;
  }
  return 0;
}

/**
 * Reads every complete record of a log. A last line with no newline is a write in progress (another
 * shard's) or a torn tail, and is not a record yet; a complete line that does not parse is an error
 * naming file and line.
 */
export async function* readJsonl<T>(path: string): AsyncGenerator<T> {
  for await (const { value } of readJsonlLines<T>(path)) yield value;
}

/** A record of a log, with its line number and where its bytes lie (the newline not counted). */
export interface JsonlLine<T> {
  value: T;
  line: number;
  offset: number;
  length: number;
}

/**
 * `readJsonl` with each record's position, so a caller can index a log and read a line back later.
 * `end` stops at that byte (a complete length captured earlier): what was appended since is not read.
 */
export async function* readJsonlLines<T>(path: string, end?: number): AsyncGenerator<JsonlLine<T>> {
  if (!existsSync(path) || end === 0) return;
  // Split bytes, not text: offsets must be byte offsets, and a 0x0A byte is never part of a multi-byte UTF-8 character.
  let rest: Buffer = Buffer.alloc(0);
  let restAt = 0;
  let n = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 20, ...(end === undefined ? {} : { end: end - 1 }) })) {
    const bytes = rest.length ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
    let start = 0;
    for (let nl = bytes.indexOf(10); nl >= 0; start = nl + 1, nl = bytes.indexOf(10, start)) {
      n++;
      const line = bytes.toString('utf8', start, nl);
      if (line.trim() === '') continue;
      let value: T;
      try {
        value = JSON.parse(line) as T;
      } catch (error) {
        throw new PlensError('E_INPUT_JSON', 'a record in this log is not valid JSON (edited by hand?)', { location: { file: path, line: n }, cause: error });
      }
      yield { value, line: n, offset: restAt + start, length: nl - start };
    }
    rest = bytes.subarray(start);
    restAt += start;
  }
}

/** The byte length of a log's complete lines (up to and including its last newline). */
export function completeLength(path: string): number {
  const fd = openSync(path, 'r');
  try {
    return completeLengthOf(fd, fstatSync(fd).size);
  } finally {
    closeSync(fd);
  }
}
