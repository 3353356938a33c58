import { existsSync, readFileSync } from 'node:fs';
import { writeFileAtomic } from '../core/atomic.js';
import type { BenchResult } from './report.js';

/**
 * The recorded baseline of the figures a bench marks `baseline: true` (CPU per call): `npm run
 * bench` fails when one is more than 10% above its recorded value, so a regression is caught the
 * day it lands. The file (src/bench/baseline.json) is updated deliberately, with
 * `npm run bench -- <name> --record-baseline`, and the reason goes in the commit.
 */
export type Baseline = Record<string, Record<string, number>>;

/** How far above its baseline a figure may go: 10%. */
export const REGRESSION_LIMIT_PERCENT = 110;

export function readBaseline(file: string): Baseline {
  if (!existsSync(file)) return {};
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as unknown;
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new Error(`${file}: a baseline is an object of benches, each an object of figures`);
  for (const [bench, figures] of Object.entries(parsed as Record<string, unknown>)) {
    if (bench.startsWith('$')) continue;
    for (const [name, value] of Object.entries((figures ?? {}) as Record<string, unknown>))
      if (typeof value !== 'number' || !(value > 0))
        throw new Error(`${file}: ${bench} / ${name}: a baseline is a positive number, got ${JSON.stringify(value)}`);
  }
  return parsed as Baseline;
}

/**
 * The result with, after each baselined figure that has a recorded value, its share of that value
 * (bound 110%). A baselined figure with no recorded value gets a row that says so, without a bound.
 */
export function compareWithBaseline(id: string, result: BenchResult, baseline: Baseline): BenchResult {
  const recorded = baseline[id] ?? {};
  const figures: BenchResult['figures'] = [];
  for (const f of result.figures) {
    figures.push(f);
    if (!f.baseline) continue;
    const base = recorded[f.name];
    if (base === undefined) figures.push({ name: `${f.name}: no baseline recorded`, value: 0, unit: '%' });
    else figures.push({ name: `${f.name} vs baseline ${base} ${f.unit}`, value: (100 * f.value) / base, unit: '%', bound: REGRESSION_LIMIT_PERCENT });
  }
  return { ...result, figures };
}

/** Records this run's baselined figures as the bench's baseline (the other benches' are kept). */
export async function recordBaseline(file: string, id: string, result: BenchResult): Promise<void> {
  const baseline = readBaseline(file);
  const figures = Object.fromEntries(result.figures.filter((f) => f.baseline).map((f) => [f.name, Number(f.value.toPrecision(3))]));
  baseline[id] = figures;
  await writeFileAtomic(file, `${JSON.stringify(baseline, null, 2)}\n`);
}
