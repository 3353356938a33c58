import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareWithBaseline, readBaseline, recordBaseline } from '../../src/bench/baseline.js';
import { formatBench, type BenchResult } from '../../src/bench/report.js';
import { tempDir } from '../helpers/cli.js';

/** Issue 34: `npm run bench` fails when CPU per call is more than 10% above the recorded baseline. */
describe('the bench baseline', () => {
  const result = (cpu64: number, cpu256: number): BenchResult => ({
    name: 'dialogues',
    context: 'mock',
    figures: [
      { name: 'c=64: calls/s', value: 1200, unit: 'calls/s' },
      { name: 'c=64: CPU per call', value: cpu64, unit: 'ms', baseline: true },
      { name: 'c=256: CPU per call', value: cpu256, unit: 'ms', baseline: true },
    ],
  });

  it('records the baselined figures, keeps the other benches, and fails a run more than 10% above them', async () => {
    const file = join(tempDir('plens-bench-baseline-'), 'baseline.json');
    writeFileSync(file, JSON.stringify({ construction: { 'c=64: CPU per call': 0.3 } }));
    await recordBaseline(file, 'dialogues', result(0.5123, 0.3));
    const written = JSON.parse(readFileSync(file, 'utf8'));
    expect(written).toEqual({ construction: { 'c=64: CPU per call': 0.3 }, dialogues: { 'c=64: CPU per call': 0.512, 'c=256: CPU per call': 0.3 } });
    const baseline = readBaseline(file);

    // 9% above at c=64 and equal at c=256: passes.
    const ok = compareWithBaseline('dialogues', result(0.558, 0.3), baseline);
    expect(ok.figures.map((f) => f.name)).toEqual([
      'c=64: calls/s',
      'c=64: CPU per call',
      'c=64: CPU per call vs baseline 0.512 ms',
      'c=256: CPU per call',
      'c=256: CPU per call vs baseline 0.3 ms',
    ]);
    expect(formatBench(ok).passed).toBe(true);

    // 12% above at c=256: fails, and the line says so.
    const slow = formatBench(compareWithBaseline('dialogues', result(0.5, 0.336), baseline));
    expect(slow.passed).toBe(false);
    expect(slow.text).toMatch(/c=256: CPU per call vs baseline 0\.3 ms\s+112 %\s+bound <= 110 %\s+FAIL/);
  });

  it('says when a baselined figure has no recorded value, without failing, and refuses a malformed file', () => {
    const dir = tempDir('plens-bench-baseline-');
    const none = compareWithBaseline('dialogues', result(0.5, 0.3), readBaseline(join(dir, 'missing.json')));
    expect(none.figures.map((f) => f.name)).toContain('c=64: CPU per call: no baseline recorded');
    expect(formatBench(none).passed).toBe(true);
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ dialogues: { 'c=64: CPU per call': 'fast' } }));
    expect(() => readBaseline(bad)).toThrow(/dialogues \/ c=64: CPU per call: a baseline is a positive number/);
  });
});
