import { closeSync, openSync, readSync, writeSync } from 'node:fs';

/**
 * How large each file of whole JSONL lines that compaction hands to DuckDB grows before the next
 * one starts. DuckDB's JSON reader holds a buffer of up to 32 MiB per file it reads (whatever
 * `maximum_object_size` says): a 36 MB events log of 20k dialogues took ~36 MiB of anonymous
 * memory to read, the same log in files of ~2 MB ~6 MiB. The rows and their order are the same.
 */
export const COMPACT_CHUNK_BYTES = 4 << 20;

/**
 * Writes whole JSONL lines into numbered files `<prefix>-<n>.jsonl`, starting the next file once
 * the current one holds `chunkBytes` or more; `files` lists them in order. Each write is of whole
 * lines, so no line is ever split between two files. The first file is made at once, so there is
 * always one to read, if an empty one (DuckDB reads an empty file as no rows, an empty list not at all).
 */
export class JsonlChunks {
  readonly files: string[] = [];
  private fd: number | undefined;
  private size = 0;

  constructor(
    private readonly prefix: string,
    private readonly chunkBytes = COMPACT_CHUNK_BYTES,
  ) {
    this.next();
  }

  /** Appends the first `length` bytes of `buffer`, which end with a newline. */
  writeLines(buffer: Uint8Array, length: number): void {
    if (length === 0) return;
    if (this.size >= this.chunkBytes) this.next();
    for (let at = 0; at < length; ) at += writeSync(this.fd!, buffer, at, length - at);
    this.size += length;
  }

  /** Appends the first `length` bytes of the file at `path` (complete lines), a line boundary at a time. */
  copyLines(path: string, length: number): void {
    const input = openSync(path, 'r');
    try {
      // Read at most a chunk at a time (and at most 1 MiB), so a file ends within a read of its size.
      let buffer = Buffer.allocUnsafe(Math.max(4096, Math.min(1 << 20, this.chunkBytes)));
      // Bytes in `buffer` not written yet: the start of a line whose end is still to be read.
      let held = 0;
      for (let offset = 0; offset < length; ) {
        if (held === buffer.length) buffer = Buffer.concat([buffer, Buffer.allocUnsafe(buffer.length)]);
        const read = readSync(input, buffer, held, Math.min(buffer.length - held, length - offset), offset);
        if (read === 0) throw new Error(`${path} ended at ${offset} bytes, before the ${length} asked for`);
        offset += read;
        held += read;
        const end = buffer.lastIndexOf(10, held - 1) + 1;
        this.writeLines(buffer, end);
        buffer.copy(buffer, 0, end, held);
        held -= end;
      }
      if (held > 0) throw new Error(`${path}: its first ${length} bytes do not end with a newline`);
    } finally {
      closeSync(input);
    }
  }

  /** Closes the file being written. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private next(): void {
    this.close();
    const file = `${this.prefix}-${this.files.length}.jsonl`;
    this.fd = openSync(file, 'w');
    this.files.push(file);
    this.size = 0;
  }
}
