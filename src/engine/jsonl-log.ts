import { closeSync, existsSync, fstatSync, ftruncateSync, mkdirSync, openSync, readSync, writeSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { dirname } from 'node:path';
import { PlensError } from '../core/errors.js';

/**
 * An append-only JSON Lines file. Each record is one write(2) of one whole line, so a killed
 * process leaves at most one torn last line, which `open` cuts off before appending again.
 */
export class JsonlLog {
  private constructor(
    readonly path: string,
    private fd: number,
    /** Bytes cut from a torn tail when the log was opened. */
    readonly repairedBytes: number,
  ) {}

  static open(path: string): JsonlLog {
    mkdirSync(dirname(path), { recursive: true });
    const fd = openSync(path, 'a+');
    const repaired = repairTornTail(fd);
    return new JsonlLog(path, fd, repaired);
  }

  append(record: unknown): void {
    writeSync(this.fd, JSON.stringify(record) + '\n');
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
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
  if (!existsSync(path)) return;
  let rest = '';
  let n = 0;
  for await (const chunk of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    const lines = (rest + (chunk as string)).split('\n');
    rest = lines.pop()!;
    for (const line of lines) {
      n++;
      if (line.trim() === '') continue;
      try {
        yield JSON.parse(line) as T;
      } catch (error) {
        throw new PlensError('E_INPUT_JSON', 'a record in this log is not valid JSON (edited by hand?)', { location: { file: path, line: n }, cause: error });
      }
    }
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
