import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlChunks } from '../../src/engine/jsonl-chunks.js';
import { tempDir } from '../helpers/cli.js';

const lines = (n: number, width: number) => Array.from({ length: n }, (_, i) => `{"i":${i},"pad":"${'x'.repeat((i * 37) % width)}"}\n`).join('');

describe('JsonlChunks: whole lines in files of about a given size', () => {
  it('copies a prefix of a log as several files that together are that prefix, each ending a line', () => {
    const dir = tempDir('plens-chunks-');
    const log = join(dir, 'events.jsonl');
    const text = lines(5000, 300);
    // A last line still being written (no newline yet) is not part of the snapshot.
    writeFileSync(log, `${text}{"i":5000,"pa`);
    const chunks = new JsonlChunks(join(dir, 'snap'), 64 << 10);
    chunks.copyLines(log, Buffer.byteLength(text));
    chunks.close();
    expect(chunks.files.length).toBeGreaterThan(5);
    const parts = chunks.files.map((f) => readFileSync(f, 'utf8'));
    expect(parts.join('')).toBe(text);
    for (const p of parts) {
      expect(p.endsWith('\n')).toBe(true);
      // A file stops within one read (of the chunk's size) past the size.
      expect(Buffer.byteLength(p)).toBeLessThanOrEqual(2 * (64 << 10));
    }
  });

  it('keeps a line longer than its read buffer whole, and refuses a prefix that ends inside a line', () => {
    const dir = tempDir('plens-chunks-');
    const log = join(dir, 'events.jsonl');
    const long = `{"big":"${'y'.repeat(3 << 20)}"}\n`;
    const text = `${lines(10, 50)}${long}${lines(10, 50)}`;
    writeFileSync(log, text);
    const chunks = new JsonlChunks(join(dir, 'snap'), 1024);
    chunks.copyLines(log, Buffer.byteLength(text));
    chunks.close();
    const parts = chunks.files.map((f) => readFileSync(f, 'utf8'));
    expect(parts.join('')).toBe(text);
    expect(parts.some((p) => p.includes(long))).toBe(true);
    const cut = new JsonlChunks(join(dir, 'cut'));
    expect(() => cut.copyLines(log, Buffer.byteLength(text) - 5)).toThrow(/do not end with a newline/);
    cut.close();
  });

  it('starts the next file only between writes of whole lines', () => {
    const dir = tempDir('plens-chunks-');
    const chunks = new JsonlChunks(join(dir, 'w'), 10);
    for (const s of ['{"a":1}\n{"b":2}\n', '{"c":3}\n', '{"d":4}\n']) chunks.writeLines(Buffer.from(s), Buffer.byteLength(s));
    chunks.close();
    expect(chunks.files.map((f) => readFileSync(f, 'utf8'))).toEqual(['{"a":1}\n{"b":2}\n', '{"c":3}\n{"d":4}\n']);
  });
});
