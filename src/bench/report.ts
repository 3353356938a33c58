/** A benchmark's measured figures; a figure with a bound passes when value <= bound. */
export interface BenchResult {
  name: string;
  context: string;
  figures: Array<{ name: string; value: number; unit: string; bound?: number }>;
}

export function formatBench(result: BenchResult): { text: string; passed: boolean } {
  let passed = true;
  const lines = [`== ${result.name}`, `   ${result.context}`];
  for (const f of result.figures) {
    const value = `${f.value.toFixed(f.unit === 's' ? 2 : 0)} ${f.unit}`;
    if (f.bound === undefined) {
      lines.push(`   ${f.name.padEnd(34)} ${value.padStart(12)}`);
    } else {
      const ok = f.value <= f.bound;
      passed &&= ok;
      lines.push(`   ${f.name.padEnd(34)} ${value.padStart(12)}   bound ${f.bound} ${f.unit}   ${ok ? 'PASS' : 'FAIL'}`);
    }
  }
  return { text: lines.join('\n'), passed };
}
