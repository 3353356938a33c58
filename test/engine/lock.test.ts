import { existsSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { lockLeaseMs, WriterLock } from '../../src/engine/lock.js';
import { tempDir } from '../helpers/cli.js';

/*
 * A killed writer's lock must not block its successor, also when the successor runs on another
 * host (a Kubernetes pod rescheduled by its Job's backoffLimit, a requeued Slurm task): a holder
 * keeps its lock fresh, and another host's lock that has not been touched for a whole lease is
 * taken over. A live holder's lock is never taken.
 */
const locks: WriterLock[] = [];
afterEach(() => {
  for (const l of locks.splice(0)) l.release();
  vi.unstubAllEnvs();
});

const ago = (ms: number) => new Date(Date.now() - ms);

describe('writer locks across hosts', () => {
  it("refuses a fresh lock of another host's process, naming it", () => {
    const path = join(tempDir('plens-lock-'), '.lock');
    writeFileSync(path, '4242@pod-a-7f9c\n');
    expect(() => WriterLock.acquire(path, 'judgments')).toThrow(/being written by another plens process \(pid 4242 on pod-a-7f9c\)/);
    expect(readFileSync(path, 'utf8')).toBe('4242@pod-a-7f9c\n');
  });

  it("takes over another host's lock once it is older than the lease (its holder stopped beating)", () => {
    const path = join(tempDir('plens-lock-'), '.lock');
    writeFileSync(path, '4242@pod-a-7f9c\n');
    utimesSync(path, ago(lockLeaseMs() + 5_000), ago(lockLeaseMs() + 5_000));
    const lock = WriterLock.acquire(path, 'judgments');
    locks.push(lock);
    expect(readFileSync(path, 'utf8')).toBe(`${process.pid}@${hostname()}\n`);
    // The lease is configurable: a lock younger than it stays with its owner.
    vi.stubEnv('PLENS_LOCK_LEASE_S', '3600');
    const other = join(tempDir('plens-lock-'), '.lock');
    writeFileSync(other, '4243@pod-b\n');
    utimesSync(other, ago(600_000), ago(600_000));
    expect(() => WriterLock.acquire(other, 'judgments')).toThrow(/pod-b/);
  });

  it("a dead pid on this host is taken over at once, and a layout's other shard locks go by the same rule", () => {
    const dir = tempDir('plens-lock-');
    // A pid far above any this machine has given out.
    writeFileSync(join(dir, '.lock'), `999999999@${hostname()}\n`);
    const lock = WriterLock.acquire(join(dir, '.lock'), 'judgments');
    locks.push(lock);
    lock.release();
    // Another host's unsharded writer, gone for longer than the lease, does not block shard 0 of 2.
    writeFileSync(join(dir, '.lock'), '4244@node-17\n');
    utimesSync(join(dir, '.lock'), ago(lockLeaseMs() + 5_000), ago(lockLeaseMs() + 5_000));
    locks.push(WriterLock.acquireLayout(dir, '.shard-0-of-2', 'judgments'));
    // A live one does.
    locks.splice(0).forEach((l) => l.release());
    utimesSync(join(dir, '.lock'), new Date(), new Date());
    expect(() => WriterLock.acquireLayout(dir, '.shard-0-of-2', 'judgments')).toThrow(/one unsharded run \(pid 4244 on node-17\)/);
    expect(existsSync(join(dir, '.lock.shard-0-of-2'))).toBe(false);
  });

  it('a holder keeps its lock fresh while it runs', async () => {
    vi.stubEnv('PLENS_LOCK_LEASE_S', '0.6');
    const path = join(tempDir('plens-lock-'), '.lock');
    locks.push(WriterLock.acquire(path, 'judgments'));
    utimesSync(path, ago(60_000), ago(60_000));
    // The heartbeat runs every lease/6 (100 ms here): within a lease the lock is fresh again.
    await new Promise((r) => setTimeout(r, 600));
    expect(Date.now() - statSync(path).mtimeMs).toBeLessThan(60_000);
  });
});

describe('a holder that lost its lock', () => {
  it('stops at its next heartbeat, saying so (exit 4), when another process took the lock over', async () => {
    const { spawn } = await import('node:child_process');
    const path = join(tempDir('plens-lock-lost-'), '.lock');
    const lockModule = join(import.meta.dirname, '..', '..', 'dist', 'engine', 'lock.js');
    const child = spawn(
      process.execPath,
      [
        '-e',
        `import(${JSON.stringify(lockModule)}).then((m) => { m.WriterLock.acquire(${JSON.stringify(path)}, 'test'); console.log('held'); setInterval(() => {}, 1000); })`,
      ],
      { env: { ...process.env, PLENS_LOCK_LEASE_S: '0.6' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => void (stderr += c.toString()));
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    writeFileSync(path, '4245@pod-c\n');
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect(code).toBe(4);
    expect(stderr).toContain("this process lost its writer's lock (taken over by pid 4245 on pod-c");
  });
});
