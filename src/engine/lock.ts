import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { PlensError } from '../core/errors.js';

/**
 * One writer per output: a lock file created exclusively, holding pid@host. A lock left by a
 * process that no longer runs (on this host) is taken over.
 */
export class WriterLock {
  private constructor(private readonly path: string) {}

  static acquire(path: string, what: string): WriterLock {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx');
        writeSync(fd, `${process.pid}@${hostname()}\n`);
        closeSync(fd);
        const lock = new WriterLock(path);
        process.once('exit', () => lock.release());
        return lock;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const owner = readOwner(path);
        if (owner && owner.host === hostname() && !isAlive(owner.pid)) {
          rmSync(path, { force: true });
          continue;
        }
        throw new PlensError('E_PREREQUISITE', `${what} is being written by another plens process (${owner ? `pid ${owner.pid} on ${owner.host}` : 'unknown owner'})`, {
          location: { file: path },
          hint: 'wait for it, or use --shard i/n so each process writes its own part; remove the lock file if that process is gone',
        });
      }
    }
    throw new PlensError('E_INTERNAL', `cannot take the lock ${path}`);
  }

  release(): void {
    try {
      const owner = readOwner(this.path);
      if (owner?.pid === process.pid) rmSync(this.path, { force: true });
    } catch {
      // already gone
    }
  }
}

function readOwner(path: string): { pid: number; host: string } | undefined {
  try {
    const m = /^(\d+)@(.*)$/.exec(readFileSync(path, 'utf8').trim());
    return m ? { pid: Number(m[1]), host: m[2]! } : undefined;
  } catch {
    return undefined;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
