import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { JsonlLog, readJsonl, readJsonlLines } from '../../src/engine/jsonl-log.js';
import { WriterLock } from '../../src/engine/lock.js';
import { inShard, parseShard } from '../../src/engine/shard.js';
import { tempDir } from '../helpers/cli.js';

async function all<T>(path: string): Promise<T[]> {
  const out: T[] = [];
  for await (const r of readJsonl<T>(path)) out.push(r);
  return out;
}

describe('JsonlLog', () => {
  it('appends one line per record', async () => {
    const file = join(tempDir(), 'r.jsonl');
    const log = JsonlLog.open(file);
    log.append({ a: 1 });
    log.append({ a: 2 });
    log.close();
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":2}\n');
  });

  it('a deferred log writes the lines of one event-loop turn together, in order, and the rest at close', async () => {
    const file = join(tempDir(), 'r.jsonl');
    const log = JsonlLog.open(file, { deferred: true });
    log.append({ a: 1 });
    log.append({ a: 2, key: 'sk-abcdefghijkl' });
    log.append({ a: 3 });
    // Nothing written within the turn...
    expect(readFileSync(file, 'utf8')).toBe('');
    await new Promise((r) => setImmediate(r));
    // ...all of it right after, redacted as ever.
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":2,"key":"[REDACTED]"}\n{"a":3}\n');
    log.append({ a: 4 });
    log.close();
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean)).toHaveLength(4);
  });

  it('a deferred write that fails (a full disk) is thrown by the next append and by close, as a storage error', async () => {
    const log = JsonlLog.open('/dev/full', { deferred: true });
    log.append({ a: 1 });
    await new Promise((r) => setImmediate(r));
    expect(() => log.append({ a: 2 })).toThrow(expect.objectContaining({ code: 'E_STORAGE' }));
    expect(() => log.close()).toThrow(expect.objectContaining({ code: 'E_STORAGE' }));
  });

  it('cuts a torn last line on open, then appends cleanly', async () => {
    const file = join(tempDir(), 'r.jsonl');
    writeFileSync(file, '{"a":1}\n{"a":2}\n{"a":3, "b": "half');
    const log = JsonlLog.open(file);
    expect(log.repairedBytes).toBe('{"a":3, "b": "half'.length);
    log.append({ a: 4 });
    log.close();
    expect(await all(file)).toEqual([{ a: 1 }, { a: 2 }, { a: 4 }]);
  });

  it('a file that is one torn line becomes empty', () => {
    const file = join(tempDir(), 'r.jsonl');
    writeFileSync(file, '{"a":');
    expect(JsonlLog.open(file).repairedBytes).toBe(5);
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it('reading skips an unterminated last line (a write in progress), but not a complete one', async () => {
    const file = join(tempDir(), 'r.jsonl');
    writeFileSync(file, '{"a":1}\n{"a":2}\n{"a":3, "b": "hal');
    expect(await all(file)).toEqual([{ a: 1 }, { a: 2 }]);
    writeFileSync(file, '{"a":1}\n{"a":2}');
    expect(await all(file)).toEqual([{ a: 1 }]);
  });

  it('a corrupt line in the middle is an error naming the line', async () => {
    const file = join(tempDir(), 'r.jsonl');
    writeFileSync(file, '{"a":1}\nnot json\n{"a":2}\n');
    await expect(all(file)).rejects.toMatchObject({ code: 'E_INPUT_JSON', location: { file, line: 2 } });
  });
});

describe('readJsonlLines', () => {
  it('gives each record its line number and byte offset and length, and stops at the given end', async () => {
    const file = join(tempDir(), 'r.jsonl');
    // "é" is 2 bytes and "😀" 4, so byte offsets differ from string offsets; line 2 is blank.
    writeFileSync(file, '{"a":"é"}\n\n{"a":"😀"}\n{"a":3}\n');
    const lines = async (end?: number) => {
      const out = [];
      for await (const l of readJsonlLines(file, end)) out.push(l);
      return out;
    };
    expect(await lines()).toEqual([
      { value: { a: 'é' }, line: 1, offset: 0, length: 10 },
      { value: { a: '😀' }, line: 3, offset: 12, length: 12 },
      { value: { a: 3 }, line: 4, offset: 25, length: 7 },
    ]);
    expect(await lines(25)).toEqual([
      { value: { a: 'é' }, line: 1, offset: 0, length: 10 },
      { value: { a: '😀' }, line: 3, offset: 12, length: 12 },
    ]);
    expect(await lines(0)).toEqual([]);
  });
});

describe('WriterLock', () => {
  it('refuses a second writer while the first holds the lock, and takes over a dead one', () => {
    const dir = tempDir();
    const path = join(dir, '.lock');
    const lock = WriterLock.acquire(path, 'out/x');
    expect(() => WriterLock.acquire(path, 'out/x')).toThrow(/being written by another plens process \(pid \d+/);
    lock.release();
    // A lock left by a process that is gone (pid 2^22+ is never a live pid here).
    writeFileSync(path, `4194999@${hostname()}\n`);
    const again = WriterLock.acquire(path, 'out/x');
    again.release();
  });
});

describe('WriterLock at exit', () => {
  it('many locks held at once add one exit listener, not one each (no MaxListenersExceededWarning)', () => {
    const dir = tempDir();
    const before = process.listenerCount('exit');
    const locks = Array.from({ length: 12 }, (_, i) => WriterLock.acquire(join(dir, `.lock-${i}`), `out/${i}`));
    expect(process.listenerCount('exit') - before).toBeLessThanOrEqual(1);
    for (const l of locks) l.release();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('WriterLock takeover', () => {
  it('takes over a dead lock only under the takeover guard, and clears a guard left by a crash', () => {
    const dir = tempDir();
    const path = join(dir, '.lock');
    const dead = `4194999@${hostname()}\n`;
    writeFileSync(path, dead);
    // Another live process (here: this one) is taking the dead lock over right now.
    writeFileSync(`${path}.takeover`, `${process.pid}@${hostname()}\n`);
    expect(() => WriterLock.acquire(path, 'out/x')).toThrow(/another plens process is taking over the lock left by pid 4194999/);
    expect(readFileSync(path, 'utf8')).toBe(dead);
    // The guard's holder died mid-takeover: the guard is cleared and the lock taken over.
    writeFileSync(`${path}.takeover`, `4194998@${hostname()}\n`);
    const lock = WriterLock.acquire(path, 'out/x');
    expect(readFileSync(path, 'utf8')).toBe(`${process.pid}@${hostname()}\n`);
    expect(readdirSync(dir)).toEqual(['.lock']);
    lock.release();
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('WriterLock layouts', () => {
  it('lets the shards of one count write side by side, and refuses a run of another layout while one lives', () => {
    const dir = tempDir();
    const shard0 = WriterLock.acquireLayout(dir, '.shard-0-of-2', 'out/x (shard 0-of-2)');
    const shard1 = WriterLock.acquireLayout(dir, '.shard-1-of-2', 'out/x (shard 1-of-2)');
    expect(() => WriterLock.acquireLayout(dir, '', 'out/x')).toThrow(
      /out\/x is being written by another plens process as shard 0\/2 .*this run would write it as one unsharded run/,
    );
    expect(() => WriterLock.acquireLayout(dir, '.shard-0-of-3', 'out/x (shard 0-of-3)')).toThrow(/as shard [01]\/2 .*as shard 0\/3/);
    // A refused run leaves no lock of its own behind.
    expect(readdirSync(dir).sort()).toEqual(['.lock.shard-0-of-2', '.lock.shard-1-of-2']);
    shard0.release();
    shard1.release();
    const whole = WriterLock.acquireLayout(dir, '', 'out/x');
    expect(() => WriterLock.acquireLayout(dir, '.shard-1-of-2', 'out/x (shard 1-of-2)')).toThrow(/as one unsharded run/);
    whole.release();
    // A lock left by a process that is gone blocks nobody.
    writeFileSync(join(dir, '.lock'), `4194999@${hostname()}\n`);
    WriterLock.acquireLayout(dir, '.shard-0-of-4', 'out/x (shard 0-of-4)').release();
  });
});

describe('shards', () => {
  it('parses i/n and partitions keys with nothing lost or doubled', () => {
    expect(parseShard('1/4')).toEqual({ index: 1, count: 4 });
    expect(() => parseShard('4/4')).toThrow();
    expect(() => parseShard('x')).toThrow();
    const keys = Array.from({ length: 1000 }, (_, i) => `k${i}`);
    const counts = [0, 1, 2, 3].map((i) => keys.filter((k) => inShard(k, { index: i, count: 4 })).length);
    expect(counts.reduce((a, b) => a + b)).toBe(1000);
    for (const c of counts) expect(c).toBeGreaterThan(200);
    for (const k of keys) expect([0, 1, 2, 3].filter((i) => inShard(k, { index: i, count: 4 }))).toHaveLength(1);
  });
});
