/**
 * A benchmark's measured figures; a figure passes when value <= bound (an upper bound) or value >= min.
 * `baseline`: compared with its recorded value in src/bench/baseline.json (baseline.ts).
 */
export interface BenchResult {
  name: string;
  context: string;
  figures: Array<{ name: string; value: number; unit: string; bound?: number; min?: number; baseline?: boolean }>;
}

export function formatBench(result: BenchResult): { text: string; passed: boolean } {
  let passed = true;
  const lines = [`== ${result.name}`, `   ${result.context}`];
  for (const f of result.figures) {
    const value = `${f.value.toFixed(f.unit === 's' || f.unit === 'ms' ? 2 : 0)} ${f.unit}`;
    if (f.bound === undefined && f.min === undefined) {
      lines.push(`   ${f.name.padEnd(40)} ${value.padStart(14)}`);
    } else {
      const ok = f.bound !== undefined ? f.value <= f.bound : f.value >= f.min!;
      passed &&= ok;
      const against = f.bound !== undefined ? `bound <= ${f.bound} ${f.unit}` : `target >= ${f.min} ${f.unit}`;
      lines.push(`   ${f.name.padEnd(40)} ${value.padStart(14)}   ${against}   ${ok ? 'PASS' : 'FAIL'}`);
    }
  }
  return { text: lines.join('\n'), passed };
}

/**
 * Times named stages in order: `time(name, fn)` runs fn and records its wall seconds in `stages`, with
 * the process's CPU seconds over all its threads (DuckDB's, worker threads'): on a loaded machine the
 * wall time says little, the CPU time still compares.
 */
export function stageTimer(): { stages: Array<[string, number, number]>; time: <T>(name: string, fn: () => Promise<T>) => Promise<T> } {
  const stages: Array<[string, number, number]> = [];
  const time = async <T>(name: string, fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const result = await fn();
    const cpu = process.cpuUsage(cpu0);
    stages.push([name, (performance.now() - t0) / 1000, (cpu.user + cpu.system) / 1e6]);
    return result;
  };
  return { stages, time };
}
