import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { ThreadCpu } from '../../src/bench/thread-cpu.js';
import { tempDir } from '../helpers/cli.js';

/** A made-up /proc: `threads` maps a thread id to its schedstat line (ns on a core, ns waiting, slices). */
function fakeProc(root: string, pid: number, threads: Record<string, [number, number]>): void {
  for (const [tid, [run, wait]] of Object.entries(threads)) {
    mkdirSync(join(root, String(pid), 'task', tid), { recursive: true });
    writeFileSync(join(root, String(pid), 'task', tid, 'schedstat'), `${run} ${wait} 7\n`);
  }
}

describe("a process's threads' CPU and run-queue wait, from /proc/<pid>/task/*/schedstat", () => {
  it('counts each thread from open(), keeps an exited thread at its last sample, and a new one from zero', () => {
    const proc = tempDir('plens-proc-');
    fakeProc(proc, 42, { '42': [1_000_000_000, 50_000_000], '43': [200_000_000, 0] });
    const cpu = ThreadCpu.open(42, proc)!;
    expect(cpu).toBeDefined();
    // Thread 43 runs 30 ms more and waits 5 ms, is sampled, then exits; 44 starts after open().
    fakeProc(proc, 42, { '43': [230_000_000, 5_000_000] });
    cpu.sample();
    rmSync(join(proc, '42', 'task', '43'), { recursive: true });
    fakeProc(proc, 42, { '42': [1_100_000_000, 70_000_000], '44': [40_000_000, 1_000_000] });
    // 42: 100 ms and 20 ms; 43: 30 and 5; 44: 40 and 1.
    const totals = cpu.stop();
    expect(totals.runMs).toBeCloseTo(170, 9);
    expect(totals.waitMs).toBeCloseTo(26, 9);
  });

  it('is undefined where the process has no task folder (no such process, not Linux)', () => {
    expect(ThreadCpu.open(42, tempDir('plens-proc-'))).toBeUndefined();
  });

  it.runIf(process.platform === 'linux')("counts this process's worker thread, which has exited by stop()", async () => {
    const cpu = ThreadCpu.open('self')!.every(5);
    // A thread that spins for 300 ms of CPU and exits: sampled while it runs, it still counts after
    // (the process's other threads, mostly idle meanwhile, add what they took).
    const worker = new Worker('const t = process.cpuUsage(); while (process.cpuUsage(t).user < 300_000); setTimeout(() => {}, 20);', { eval: true });
    await new Promise((done) => worker.once('exit', done));
    const totals = cpu.stop();
    expect(totals.runMs).toBeGreaterThanOrEqual(290);
    expect(totals.waitMs).toBeGreaterThanOrEqual(0);
  });
});
