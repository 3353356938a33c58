import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs';
import { basename, join } from 'node:path';
import { hostname } from 'node:os';
import { PlensError } from '../core/errors.js';
import { pidRuns } from '../core/pid.js';

/**
 * One writer per output: a lock file created exclusively, holding pid@host, and kept fresh by its
 * holder (a heartbeat touches it every lease/6). A lock is taken over, by one process at a time,
 * when its owner is known to be gone: a pid that no longer runs on this host at once, and an
 * owner on another host (a pod rescheduled by its Job, a requeued Slurm task on another node)
 * once the lock has not been touched for a whole lease (PLENS_LOCK_LEASE_S, default 180 s).
 */
/** Locks this process holds, released at exit by one listener (one per lock would pass Node's listener limit). */
const held = new Set<WriterLock>();
let exitHook = false;
let heartbeat: { timer: NodeJS.Timeout; everyMs: number } | undefined;

/** How long a lock of another host's process stays valid without a heartbeat. */
export function lockLeaseMs(env: NodeJS.ProcessEnv = process.env): number {
  const s = Number(env['PLENS_LOCK_LEASE_S']);
  return Number.isFinite(s) && s > 0 ? s * 1000 : 180_000;
}

/**
 * Touches every held lock: the lease of each starts again. One timer for all, never keeping the
 * process alive. A lock that no longer names this process (taken over after this one stalled past
 * its lease: a suspended VM, SIGSTOP) stops the process at once: two writers must never append.
 */
function beat(): void {
  const now = new Date();
  const me = `${process.pid}@${hostname()}`;
  for (const l of held) {
    const owner = readOwner(l.path);
    // An unreadable file (a network file system's hiccup) is not a lost lock; a missing one or another owner is.
    const lost = owner ? `${owner.pid}@${owner.host}` !== me : !existsSync(l.path);
    if (lost) {
      process.stderr.write(
        `plens: error E_PREREQUISITE: ${l.path}: this process lost its writer's lock (${owner ? `taken over by pid ${owner.pid} on ${owner.host}` : 'removed'}, after it was not refreshed for ${Math.round(lockLeaseMs() / 1000)} s); stopping so that two processes never write the same output\n`,
      );
      process.exit(4);
    }
    try {
      utimesSync(l.path, now, now);
    } catch {
      // A failed touch is retried at the next beat; the owner check above decides.
    }
  }
}

function startHeartbeat(): void {
  const everyMs = Math.max(100, Math.floor(lockLeaseMs() / 6));
  if (heartbeat?.everyMs === everyMs) return;
  if (heartbeat) clearInterval(heartbeat.timer);
  heartbeat = { timer: setInterval(beat, everyMs), everyMs };
  heartbeat.timer.unref();
}

export class WriterLock {
  private constructor(readonly path: string) {}

  static acquire(path: string, what: string): WriterLock {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        writeOwnerFile(path);
        const lock = new WriterLock(path);
        held.add(lock);
        startHeartbeat();
        if (!exitHook) {
          exitHook = true;
          process.once('exit', () => {
            for (const l of held) l.release();
          });
        }
        return lock;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        const owner = readOwner(path);
        if (owner && isDead(owner, path)) {
          if (removeStale(path, owner)) continue;
          throw new PlensError('E_PREREQUISITE', `${what}: another plens process is taking over the lock left by pid ${owner.pid}, which is gone`, {
            location: { file: path },
            hint: 'run again in a moment',
          });
        }
        throw new PlensError(
          'E_PREREQUISITE',
          `${what} is being written by another plens process (${owner ? `pid ${owner.pid} on ${owner.host}` : 'unknown owner'})`,
          {
            location: { file: path },
            hint: `wait for it, or use --shard i/n so each process writes its own part; a lock of a process on another host that is gone is taken over once it is ${Math.round(lockLeaseMs() / 1000)} s old (PLENS_LOCK_LEASE_S)`,
          },
        );
      }
    }
    throw new PlensError('E_INTERNAL', `cannot take the lock ${path}`);
  }

  /**
   * Takes `.lock<suffix>` in `dir` for one layout of the output: the whole of it (suffix '') or
   * shard i of n ('.shard-i-of-n'). Writers of different layouts would split the keys differently
   * and do the same work twice, so a live lock of another layout (the whole, or another n) refuses
   * this one. Two that start at the same instant may both refuse: safe, and a rerun settles it.
   */
  static acquireLayout(dir: string, suffix: string, what: string): WriterLock {
    const lock = WriterLock.acquire(join(dir, `.lock${suffix}`), what);
    const mine = layoutOf(suffix) ?? suffix;
    for (const name of readdirSync(dir)) {
      if (!name.startsWith('.lock') || name === basename(lock.path)) continue;
      const theirs = layoutOf(name.slice('.lock'.length));
      if (theirs === undefined || (mine !== 'whole' && theirs === mine)) continue;
      const owner = readOwner(join(dir, name));
      if (!owner || isDead(owner, join(dir, name))) continue;
      lock.release();
      throw new PlensError(
        'E_PREREQUISITE',
        `${what} is being written by another plens process as ${describe(theirs, name)} (pid ${owner.pid} on ${owner.host}); this run would write it as ${describe(mine, `.lock${suffix}`)}`,
        {
          location: { file: join(dir, name) },
          hint: 'run every process of one job with the same --shard count (or none), or wait for the other run to end',
        },
      );
    }
    return lock;
  }

  release(): void {
    held.delete(this);
    if (held.size === 0 && heartbeat) {
      clearInterval(heartbeat.timer);
      heartbeat = undefined;
    }
    try {
      const owner = readOwner(this.path);
      if (owner?.pid === process.pid) rmSync(this.path, { force: true });
    } catch {
      // already gone
    }
  }
}

/** 'whole', or 'of-n' for a shard of n; undefined for a name that is not a lock of ours. */
function layoutOf(suffix: string): string | undefined {
  if (suffix === '') return 'whole';
  return /^\.shard-\d+-(of-\d+)$/.exec(suffix)?.[1];
}

function describe(layout: string, name: string): string {
  return layout === 'whole' ? 'one unsharded run' : `shard ${name.replace(/^\.lock\.shard-/, '').replace('-of-', '/')}`;
}

/** Creates `path` exclusively (EEXIST if it is there) holding this process's pid@host. */
function writeOwnerFile(path: string): void {
  const fd = openSync(path, 'wx');
  try {
    writeSync(fd, `${process.pid}@${hostname()}\n`);
  } catch (error) {
    // A full disk leaves the file empty: an owner-less lock that would refuse every later run.
    closeSync(fd);
    rmSync(path, { force: true });
    throw error;
  }
  closeSync(fd);
}

/**
 * Removes a dead owner's lock, under a guard file: two processes that found the same dead lock
 * would otherwise both remove it, the second removing the first one's new lock, and both write.
 * Only the guard's holder removes, and only if the lock still names the dead owner. Returns
 * whether the caller should try again (the lock is gone, or a dead guard was cleared).
 */
function removeStale(path: string, dead: { pid: number; host: string }): boolean {
  const guard = `${path}.takeover`;
  try {
    writeOwnerFile(guard);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another process is taking over now; a guard left by a crash is cleared for the next try.
    const holder = readOwner(guard);
    if (holder && isDead(holder, guard)) {
      rmSync(guard, { force: true });
      return true;
    }
    return false;
  }
  try {
    // Under the guard, once more: the owner is the same and still gone (a late heartbeat keeps it).
    const now = readOwner(path);
    if (now?.pid === dead.pid && now.host === dead.host && isDead(now, path)) rmSync(path, { force: true });
  } finally {
    rmSync(guard, { force: true });
  }
  return true;
}

/**
 * A lock's owner that is known to be gone: a pid that no longer runs on this host, or, on another
 * host, a holder whose lock has not been touched for a whole lease (its heartbeat stopped).
 */
function isDead(owner: { pid: number; host: string }, path: string): boolean {
  if (owner.host === hostname()) return !pidRuns(owner.pid);
  try {
    return Date.now() - statSync(path).mtimeMs > lockLeaseMs();
  } catch {
    return false;
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
