import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** What a process's threads took: time on a core, and time ready to run but waiting for one. */
export interface ThreadCpuTotals {
  /** Milliseconds on a core, all threads. */
  runMs: number;
  /** Milliseconds runnable but waiting in the run queue for a core, all threads. */
  waitMs: number;
}

/**
 * A process's threads' CPU and run-queue wait, from each thread's `schedstat` under
 * `/proc/<pid>/task` (nanoseconds on a core, nanoseconds waiting for one). The wait is what a
 * rate on a full machine is made of: every thread of the stage, the endpoint's and V8's helpers
 * share the same cores, and a call waits whenever one it needs is runnable but not running.
 *
 * `sample()` reads every thread's counters and keeps the last value of each, so a thread that
 * has exited since (the HTTP worker thread, stopped when its last pool closes) still counts with
 * what it had at the last sample. Undefined from `open()` where there is no such file (not Linux).
 */
export class ThreadCpu {
  private readonly last = new Map<string, { run: number; wait: number }>();
  private readonly first = new Map<string, { run: number; wait: number }>();
  private timer: NodeJS.Timeout | undefined;
  /** Whether the first sample (the baseline every thread alive at open() counts from) is taken. */
  private opened = false;

  private constructor(private readonly dir: string) {}

  /** `pid` a process id, or 'self'; `proc` the proc file system's root (tests give another). */
  static open(pid: number | 'self', proc = '/proc'): ThreadCpu | undefined {
    const sampler = new ThreadCpu(join(proc, String(pid), 'task'));
    return sampler.sample() ? sampler : undefined;
  }

  /** Reads every thread's counters now; false when none could be read. */
  sample(): boolean {
    let tids: string[];
    try {
      tids = readdirSync(this.dir);
    } catch {
      return false;
    }
    let read = false;
    for (const tid of tids) {
      let fields: number[];
      try {
        fields = readFileSync(join(this.dir, tid, 'schedstat'), 'utf8')
          .trim()
          .split(/\s+/)
          .map(Number);
      } catch {
        continue; // exited between the listing and the read: its last sample stands
      }
      if (fields.length < 2 || !Number.isFinite(fields[0]) || !Number.isFinite(fields[1])) continue;
      const now = { run: fields[0]!, wait: fields[1]! };
      // A thread first seen later counts from zero: it started after open().
      if (!this.first.has(tid)) this.first.set(tid, this.opened ? { run: 0, wait: 0 } : now);
      this.last.set(tid, now);
      read = true;
    }
    this.opened ||= read;
    return read;
  }

  /** Samples every `intervalMs` until stop(), so threads that exit in between are counted. */
  every(intervalMs: number): this {
    this.timer ??= setInterval(() => this.sample(), intervalMs).unref();
    return this;
  }

  /** A last sample; what every thread took since open(). */
  stop(): ThreadCpuTotals {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.sample();
    let run = 0;
    let wait = 0;
    for (const [tid, now] of this.last) {
      const from = this.first.get(tid)!;
      run += now.run - from.run;
      wait += now.wait - from.wait;
    }
    return { runMs: run / 1e6, waitMs: wait / 1e6 };
  }
}
