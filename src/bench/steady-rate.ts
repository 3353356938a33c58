import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Database, sqlList } from '../db/database.js';
import type { BenchResult } from './report.js';

/** The share of a run's answers at each end that the steady rate leaves out. */
const EDGE = 0.1;
/** Fewer answers than this tell no rate. */
const MIN_ANSWERS = 10;

/**
 * Answers per second over the middle of a run: between the answer at 10% of the run's answers and
 * the one at 90%, so neither the start (threads, connections and compiled code warming up, the
 * first work being loaded) nor the end (units running out, fewer calls in flight) counts. The
 * stage and the bare client are read the same way, from when each answer arrived (ms). Null with
 * fewer than 10 answers, or none of the time between the marks.
 */
export function steadyRate(answeredAtMs: ArrayLike<number>): number | null {
  if (answeredAtMs.length < MIN_ANSWERS) return null;
  const times = Float64Array.from(answeredAtMs).sort();
  const first = Math.floor(times.length * EDGE);
  const last = Math.ceil(times.length * (1 - EDGE)) - 1;
  const spanMs = times[last]! - times[first]!;
  return spanMs > 0 ? (last - first) / (spanMs / 1000) : null;
}

/** When each call of a stage's partitions that went to the endpoint (not the cache) was answered, ms since the epoch. */
export async function answerTimes(partitionDirs: readonly string[]): Promise<number[]> {
  const files = partitionDirs.map((dir) => join(dir, 'calls.parquet')).filter((f) => existsSync(f));
  if (files.length === 0) return [];
  const db = await Database.open(':memory:', { threads: 1 });
  try {
    const rows = await db.all<{ t: number }>('SELECT epoch_ms("at")::DOUBLE AS t FROM read_parquet($1) WHERE NOT cached', undefined, [sqlList(files)]);
    return rows.map((r) => r.t);
  } finally {
    await db.close();
  }
}

/**
 * The stage's and the bare client's steady rates side by side: what the call path reaches once
 * both run, beside the whole-run share the bound is on (a run's start and end are in that one).
 */
export function steadyFigures(concurrency: number, stage: number | null, ceiling: number | null): BenchResult['figures'] {
  if (stage === null || ceiling === null) return [];
  return [
    { name: `c=${concurrency}: calls/s, middle 80% of answers`, value: stage, unit: 'calls/s' },
    { name: `c=${concurrency}: same-body ceiling, middle 80% of answers`, value: ceiling, unit: 'calls/s' },
    { name: `c=${concurrency}: stage's share of same-body ceiling, middle 80%`, value: (100 * stage) / ceiling, unit: '%' },
  ];
}
