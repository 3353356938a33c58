/**
 * JSON Lines written as a stream: one `JSON.stringify` record per line, gathered into ~1 MB
 * writes (one stream write per record costs more than the JSON), waiting for the file when its
 * buffer is full.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

/** Writes one JSON record per line to `file`; returns how many. */
export async function writeJsonl(file: string, records: Iterable<unknown>): Promise<number> {
  const out = createWriteStream(file);
  let count = 0;
  // Lines are gathered into ~1 MB writes: one stream write per record costs more than the JSON.
  let batch: string[] = [];
  let size = 0;
  const flush = async (): Promise<void> => {
    const text = batch.join('');
    batch = [];
    size = 0;
    if (!out.write(text)) await once(out, 'drain');
  };
  try {
    for (const record of records) {
      count++;
      const line = JSON.stringify(record) + '\n';
      batch.push(line);
      size += line.length;
      if (size >= 1 << 20) await flush();
    }
    if (batch.length) await flush();
  } finally {
    out.end();
    await once(out, 'close');
  }
  return count;
}
