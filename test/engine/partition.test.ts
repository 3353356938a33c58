import { mkdirSync, utimesSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { llmStageFormat } from '../../src/engine/llm-stage.js';
import { Partition } from '../../src/engine/partition.js';
import { tempDir } from '../helpers/cli.js';

const FORMAT = llmStageFormat('things', { key: 'VARCHAR', try: 'INTEGER', status: 'VARCHAR', error: 'STRUCT(kind VARCHAR, message VARCHAR)', n: 'INTEGER' });
const jsonl = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';

describe('Partition', () => {
  it('names every file of a partition, per writer', () => {
    const p = Partition.in('/ws/things', 'cell__ab12cd34', FORMAT);
    expect(p.dir).toBe('/ws/things/cell__ab12cd34');
    expect(p.outputFile).toBe('/ws/things/cell__ab12cd34/things.parquet');
    expect(p.callsFile).toBe('/ws/things/cell__ab12cd34/calls.parquet');
    expect(p.logPath('records')).toBe('/ws/things/cell__ab12cd34/records.jsonl');
    expect(p.logPath('events', { index: 2, count: 4 })).toBe('/ws/things/cell__ab12cd34/events.shard-2-of-4.jsonl');
    expect(Partition.outputGlob('/ws/things', FORMAT)).toBe('/ws/things/*/things.parquet');
  });

  it('reads what each key has come to across writers: tries, done, and the record that counts', async () => {
    const root = tempDir();
    const p = Partition.in(root, 'one', FORMAT);
    mkdirSync(p.dir);
    writeFileSync(
      p.logPath('records'),
      jsonl([
        { key: 'a', try: 1, status: 'failed', error: { kind: 'timeout', message: 't' } },
        { key: 'b', try: 1, status: 'ok', n: 1 },
        { key: 'a', try: 2, status: 'parse_error', error: { kind: 'parse_error', message: 'p' } },
      ]),
    );
    // A second writer; its torn last line is no record yet.
    writeFileSync(
      p.logPath('records', { index: 0, count: 2 }),
      jsonl([
        { key: 'c', try: 1, status: 'ok', n: 3 },
        { key: 'b', try: 2, status: 'failed' },
      ]) + '{"key":"d"',
    );
    expect(await p.keyStates()).toEqual(
      new Map([
        ['a', { ok: false, tries: 2 }],
        ['b', { ok: true, tries: 2 }],
        ['c', { ok: true, tries: 1 }],
      ]),
    );
    const latest = await p.latest<{ key: string; status: string; try: number }>();
    expect([...latest.values()].map((r) => [r.key, r.status, r.try])).toEqual([
      ['a', 'parse_error', 2],
      ['b', 'ok', 1],
      ['c', 'ok', 1],
    ]);
  });

  it('needs compaction when a log is newer than the compacted file, and lists compacted partitions', async () => {
    const root = tempDir();
    const p = Partition.in(root, 'one', FORMAT);
    expect(p.needsCompaction()).toBe(false);
    mkdirSync(p.dir);
    writeFileSync(p.logPath('records'), jsonl([{ key: 'a', try: 1, status: 'ok', n: 1 }]));
    expect(p.needsCompaction()).toBe(true);
    expect(Partition.list(root, FORMAT, true)).toEqual([]);
    expect(await p.compact()).toEqual({ rows: 1 });
    expect(p.needsCompaction()).toBe(false);
    expect(Partition.list(root, FORMAT, true).map((x) => x.dir)).toEqual([p.dir]);
    // An append after compaction (a run killed before it compacted again): the compacted file is older than a log.
    writeFileSync(
      p.logPath('events'),
      jsonl([{ run_id: 'r', key: 'a', turn: null, role: 'x', model: 'm', status: 'ok', cached: false, attempts: 1, at: new Date().toISOString() }]),
    );
    const earlier = new Date(Date.now() - 60_000);
    utimesSync(p.outputFile, earlier, earlier);
    expect(p.needsCompaction()).toBe(true);
    await p.compact();
    expect(p.needsCompaction()).toBe(false);
  });

  it('takes one writer per layout: a second whole-partition writer is refused while the first holds it', () => {
    const p = Partition.in(tempDir(), 'one', FORMAT);
    const lock = p.lock(undefined);
    try {
      expect(() => new Partition(p.dir, FORMAT).lock(undefined)).toThrow(/another plens process/);
      expect(() => new Partition(p.dir, FORMAT).lock({ index: 0, count: 2 })).toThrow(/another plens process/);
    } finally {
      lock.release();
    }
  });
});
