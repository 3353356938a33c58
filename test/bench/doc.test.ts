import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeBenchSection } from '../../src/bench/doc.js';
import type { BenchResult } from '../../src/bench/report.js';
import { tempDir } from '../helpers/cli.js';

/** docs/benchmarks.md: one current table per bench, rewritten in place, the others kept, in the benches' order. */
describe('the benchmarks document', () => {
  const result = (rate: number): BenchResult => ({
    name: 'construction: a build stage',
    context: 'mock in its own process',
    figures: [
      { name: 'c=64: calls/s', value: rate, unit: 'calls/s' },
      { name: "c=64: stage's share of ceiling", value: 91.4, unit: '%', min: 90 },
      { name: 'c=64: CPU per call', value: 0.684, unit: 'ms', bound: 0.55 },
    ],
  });
  const order = ['dataset', 'dialogues', 'construction', 'results'];

  it('writes a section per bench with every figure, its bound and verdict, and replaces it on the next run', async () => {
    const file = join(tempDir('plens-bench-doc-'), 'benchmarks.md');
    await writeBenchSection(file, 'construction', result(1111), order, 'Node vX, 2 CPUs');
    await writeBenchSection(
      file,
      'dataset',
      { name: 'dataset: import', context: 'released data', figures: [{ name: 'import', value: 12.5, unit: 's', bound: 60 }] },
      order,
      'Node vX, 2 CPUs',
    );
    await writeBenchSection(file, 'construction', result(1234), order, 'Node vX, 2 CPUs');
    const text = readFileSync(file, 'utf8');
    expect(text.startsWith('# Benchmarks\n')).toBe(true);
    // The benches' order, each once, the second construction run in place of the first.
    expect([...text.matchAll(/^## (\S+)$/gm)].map((m) => m[1])).toEqual(['dataset', 'construction']);
    expect(text).toContain('| c=64: calls/s | 1234 calls/s |  |  |');
    expect(text).not.toContain('1111');
    expect(text).toContain("| c=64: stage's share of ceiling | 91 % | >= 90 % | PASS |");
    expect(text).toContain('| c=64: CPU per call | 0.68 ms | <= 0.55 ms | FAIL |');
    expect(text).toContain('| import | 12.50 s | <= 60 s | PASS |');
  });

  it('keeps what is written above the sections', async () => {
    const file = join(tempDir('plens-bench-doc-'), 'benchmarks.md');
    writeFileSync(file, '# Benchmarks\n\nA note of ours.\n');
    await writeBenchSection(file, 'results', result(1), order);
    const text = readFileSync(file, 'utf8');
    expect(text).toMatch(/^# Benchmarks\n\nA note of ours\.\n\n<!-- bench:results -->/);
  });
});
