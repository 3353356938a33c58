import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { tempSibling } from '../core/atomic.js';
import type { Database } from '../db/database.js';

/**
 * Expensive warehouse steps (Table 10's lexical diversity takes most of a build) are reused when their
 * inputs did not change. A step's fingerprint hashes its version, its settings and the content of its
 * inputs (computed in SQL on the database being built); its output tables are kept as Parquet in a
 * folder beside the warehouse, `<db>.steps/<step>-<fingerprint>/<table>.parquet`. The folder outlives
 * the warehouse file, so a build that writes a fresh database (into a temp file renamed on success)
 * still finds the previous results.
 */

/** A step whose outputs can be cached. */
export interface CacheableStep {
  name: string;
  /** Bumped by hand when the step's code changes what it writes. */
  version: string;
  /** The tables the step writes; these are what the cache keeps. */
  outputs: readonly string[];
  /**
   * One query over the step's inputs returning one row that changes whenever any input row does
   * (e.g. a count and a sum of row hashes over every column the step reads).
   */
  inputQuery: string;
}

export interface StepRun {
  step: string;
  /** computed: ran and stored; reused: outputs read from the cache; uncached: ran, nothing stored. */
  status: 'computed' | 'reused' | 'uncached';
  fingerprint: string | null;
  elapsed_ms: number;
  /** The settings the outputs were computed with (part of the fingerprint), e.g. Table 10's protocols and laps speaker groups. */
  settings?: Record<string, unknown>;
  /** Ran on a second connection beside the files before its own (see EarlySteps in steps.ts). */
  early?: boolean;
}

/** The cache folder of a warehouse file. */
export function stepCacheDir(dbPath: string): string {
  return `${dbPath}.steps`;
}

/** The fingerprint of a step over the inputs in `db`, with its settings (anything JSON). */
export async function stepFingerprint(db: Database, step: CacheableStep, settings: unknown, extra: readonly string[] = []): Promise<string> {
  const rows = await db.all(step.inputQuery);
  const hash = createHash('sha256');
  hash.update(JSON.stringify({ step: step.name, version: step.version, settings, inputs: rows }));
  for (const text of extra) hash.update('\0').update(text);
  return hash.digest('hex').slice(0, 24);
}

/**
 * Runs `compute` unless the cache holds this fingerprint's outputs, in which case they are loaded
 * instead. Without a cache folder (dry runs, in-memory builds) it simply computes.
 */
export async function runWithStepCache(
  db: Database,
  step: CacheableStep,
  fingerprint: string | null,
  cacheDir: string | null,
  compute: () => Promise<void>,
  settings?: Record<string, unknown> | null,
): Promise<StepRun> {
  const started = performance.now();
  const done = (status: StepRun['status']): StepRun => ({
    step: step.name,
    status,
    fingerprint,
    elapsed_ms: Math.round(performance.now() - started),
    ...(settings ? { settings } : {}),
  });
  if (!cacheDir || !fingerprint) {
    await compute();
    return done('uncached');
  }
  const entry = join(cacheDir, `${step.name}-${fingerprint}`);
  if (step.outputs.every((t) => existsSync(join(entry, `${t}.parquet`)))) {
    try {
      for (const t of step.outputs) await db.run(`CREATE OR REPLACE TABLE ${t} AS SELECT * FROM read_parquet($1)`, undefined, [join(entry, `${t}.parquet`)]);
      return done('reused');
    } catch {
      // An unreadable entry (a disk fault, a truncated file) is recomputed and written again.
      await rm(entry, { recursive: true, force: true });
    }
  }
  await compute();
  try {
    await store(db, step, cacheDir, entry);
  } catch {
    // The cache only saves time: a folder that cannot be written leaves the build as it is.
    return done('uncached');
  }
  return done('computed');
}

/** Writes the outputs into a staging folder renamed into place, then drops the step's older entries. */
async function store(db: Database, step: CacheableStep, cacheDir: string, entry: string): Promise<void> {
  await mkdir(cacheDir, { recursive: true });
  const staging = tempSibling(entry);
  await mkdir(staging, { recursive: true });
  try {
    for (const t of step.outputs) await db.run(`COPY ${t} TO $1 (FORMAT parquet)`, undefined, [join(staging, `${t}.parquet`)]);
    await rm(entry, { recursive: true, force: true });
    await rename(staging, entry);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  // One entry per step: the cache holds the latest results, not a history.
  for (const name of await readdir(cacheDir)) {
    if (name.startsWith(`${step.name}-`) && join(cacheDir, name) !== entry) await rm(join(cacheDir, name), { recursive: true, force: true });
  }
}
