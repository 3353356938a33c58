import { appendFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PER_USER_TABLES, type PerUserTable } from './user-rows.js';

/**
 * One reader's per-user table rows, buffered a few MB at a time and appended to one newline-delimited
 * JSON file per table: `<dir>/<table>.<part>.ndjson`. Each reader (the main thread, or one thread per
 * contiguous run of users) writes its own part, so the parts in order hold the rows in user order.
 */
export class RowFiles {
  private readonly buffers = new Map<PerUserTable, string[]>(PER_USER_TABLES.map((t) => [t, []]));
  private buffered = 0;
  private created = false;

  constructor(
    private readonly dir: string,
    private readonly part: number,
  ) {}

  async add(rows: Record<PerUserTable, string>): Promise<void> {
    for (const t of PER_USER_TABLES) {
      this.buffers.get(t)!.push(rows[t]);
      this.buffered += rows[t].length;
    }
    if (this.buffered > 8 * 1024 * 1024) await this.flush();
  }

  /** Writes what is buffered; every table's file exists afterwards, empty or not. */
  async flush(): Promise<void> {
    for (const [t, chunks] of this.buffers) {
      const file = partFile(this.dir, t, this.part);
      await (this.created ? appendFile(file, chunks.join('')) : writeFile(file, chunks.join('')));
      chunks.length = 0;
    }
    this.created = true;
    this.buffered = 0;
  }

  /** A table's part files in `dir`, in user order. */
  static parts(dir: string, table: PerUserTable): string[] {
    const files: string[] = [];
    for (let part = 0; existsSync(partFile(dir, table, part)); part++) files.push(partFile(dir, table, part));
    return files;
  }
}

const partFile = (dir: string, table: PerUserTable, part: number) => join(dir, `${table}.${part}.ndjson`);
