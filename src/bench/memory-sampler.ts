import { readFileSync } from 'node:fs';

export interface MemoryPeaks {
  /** Peak resident set (the kernel's high-water mark): what `ps` and `time -v` report. */
  rssMiB: number;
  /**
   * Peak anonymous resident memory (heap, native allocations): what the process itself holds.
   * Undefined where /proc is not available.
   */
  anonMiB: number | undefined;
  /** Peak file-backed resident pages (memory-mapped files such as the LMDB call cache): page cache the kernel can reclaim. */
  fileMiB: number | undefined;
}

/**
 * Samples /proc/self/status every few milliseconds, because the kernel keeps a high-water mark
 * for the whole resident set only; splitting it shows whether growth is the process's own memory
 * or mapped file pages.
 */
export class MemorySampler {
  private anon = 0;
  private file = 0;
  private readonly timer: NodeJS.Timeout | undefined;
  private readonly proc: boolean;

  constructor(intervalMs = 20) {
    this.proc = this.sample();
    this.timer = this.proc ? setInterval(() => this.sample(), intervalMs).unref() : undefined;
  }

  private sample(): boolean {
    let status: string;
    try {
      status = readFileSync('/proc/self/status', 'utf8');
    } catch {
      return false;
    }
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
    const anon = kib('RssAnon');
    const file = kib('RssFile');
    if (!Number.isFinite(anon) || !Number.isFinite(file)) return false;
    this.anon = Math.max(this.anon, anon);
    this.file = Math.max(this.file, file);
    return true;
  }

  /** Stops sampling (after one last sample) and returns the peaks. */
  stop(): MemoryPeaks {
    if (this.timer) clearInterval(this.timer);
    if (this.proc) this.sample();
    return {
      rssMiB: process.resourceUsage().maxRSS / 1024,
      anonMiB: this.proc ? this.anon / 1024 : undefined,
      fileMiB: this.proc ? this.file / 1024 : undefined,
    };
  }
}
