import { readFileSync } from 'node:fs';

/**
 * The share of CPU time the hypervisor gave to other guests while a measurement ran (the "steal"
 * column of /proc/stat). On a shared virtual machine that is the noise in every rate: a run with
 * steal well above zero measured the neighbours as much as the code.
 */
export class CpuSteal {
  private constructor(private readonly start: number[]) {}

  /** Undefined where /proc/stat is not available (not Linux). */
  static start(): CpuSteal | undefined {
    const now = readCpuLine();
    return now ? new CpuSteal(now) : undefined;
  }

  /** Percent of all CPU time since start() that was stolen. */
  percent(): number {
    const now = readCpuLine() ?? this.start;
    // user nice system idle iowait irq softirq steal: the first eight columns are all the time there is.
    const delta = now.slice(0, 8).map((v, i) => v - this.start[i]!);
    const total = delta.reduce((a, b) => a + b, 0);
    return total > 0 ? (100 * delta[7]!) / total : 0;
  }
}

function readCpuLine(): number[] | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
    const values = line.trim().split(/\s+/).slice(1).map(Number);
    return values.length >= 8 && values.every(Number.isFinite) ? values : undefined;
  } catch {
    return undefined;
  }
}
