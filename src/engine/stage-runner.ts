import { setMaxListeners } from 'node:events';
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { createStageProgress } from './stage-progress.js';
import { JsonlLog, readJsonl } from './jsonl-log.js';
import { WriterLock } from './lock.js';
import { inShard, shardSuffix, type Shard } from './shard.js';

/**
 * What a unit of work produces: a result, or a failure (never a score), plus stage fields.
 * `parse_error` is a failure whose answer came back unreadable; like `failed`, it is not done.
 */
export interface StageOutput {
  status: 'ok' | 'failed' | 'parse_error';
  error?: { kind: string; message: string } | null;
  [field: string]: unknown;
}

/** Every output record carries its idempotent key and which try of that key it is. */
export interface EngineRecord extends StageOutput {
  key: string;
  /** 1 for the first try of a key, 2 after one recorded failure, ... */
  try: number;
}

/** What one unit of work cost; summed into progress and the summary. */
export interface WorkCost {
  calls: number;
  cachedCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

export interface WorkContext {
  signal: AbortSignal;
  /** Appends an event (e.g. one LLM call) to the partition's event log. */
  event(record: unknown): void;
}

export interface StageDefinition<I> {
  stage: string;
  /**
   * Re-iterable input. The engine iterates twice: first to count what is left (`forRun` false:
   * items may skip their heavy context), then to run it (`forRun` true).
   */
  items: (forRun: boolean) => AsyncIterable<I>;
  /** The item's idempotent key and the output partition (directory) it belongs to. */
  keyOf(item: I): { key: string; dir: string };
  run(item: I, ctx: WorkContext): Promise<{ record: StageOutput; cost: WorkCost }>;
  /** For --dry-run: the expected calls, tokens and cost of one item. */
  estimate?(item: I): WorkCost;
  /**
   * Resolves once what finished work wrote elsewhere (the call cache) is committed. Awaited
   * before each record is appended: a recorded result's calls are always in the cache.
   */
  durable?(): Promise<void>;
}

export interface EngineOptions {
  concurrency: number;
  limit?: number;
  shard?: Shard;
  retryFailed?: boolean;
  dryRun?: boolean;
  signal: AbortSignal;
  progress?: boolean;
}

export interface StageSummary {
  stage: string;
  dry_run: boolean;
  interrupted: boolean;
  /** Work this run set out to do (after skipping done keys, the shard filter and --limit). */
  planned: number;
  ok: number;
  failed: number;
  already_done: number;
  already_failed: number;
  failure_reasons: Record<string, number>;
  calls: number;
  cached_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  /** With --dry-run: the estimate for the planned work. */
  estimate?: WorkCost;
  partitions: string[];
  elapsed_ms: number;
  /** Of elapsed_ms, the time the work itself ran (after counting what is left, before compaction). */
  work_ms: number;
  /** The shard this run did, and where its index came from (absent when unsharded). */
  shard?: Shard;
}

export const RECORDS_FILE = 'records';
export const EVENTS_FILE = 'events';

/**
 * The engine every LLM stage runs on: streams the input, skips keys already done, runs the rest
 * with bounded concurrency, and appends one record per key (a result or a failure) to
 * append-only JSONL, one writer per partition. A stop (Ctrl-C) discards unfinished work, which a
 * rerun picks up; failures are rerun only with retryFailed.
 */
export async function runStage<I>(def: StageDefinition<I>, options: EngineOptions): Promise<StageSummary> {
  const started = performance.now();
  const states = new Map<string, { ok: boolean; tries: number }>();
  const loadedDirs = new Set<string>();
  const locks = new Map<string, WriterLock>();
  const loadState = async (dir: string) => {
    if (loadedDirs.has(dir)) return;
    loadedDirs.add(dir);
    // The writer's lock is taken before the state is read: what is done cannot change under us.
    if (!options.dryRun) {
      mkdirSync(dir, { recursive: true });
      const suffix = shardSuffix(options.shard);
      locks.set(dir, WriterLock.acquireLayout(dir, suffix, `${dir}${suffix ? ` (shard ${suffix.slice(7)})` : ''}`));
    }
    for (const file of listLogs(dir, RECORDS_FILE)) {
      for await (const r of readJsonl<EngineRecord>(join(dir, file))) {
        const s = states.get(r.key) ?? { ok: false, tries: 0 };
        s.tries++;
        s.ok ||= r.status === 'ok';
        states.set(r.key, s);
      }
    }
  };
  const summary: StageSummary = {
    stage: def.stage,
    dry_run: Boolean(options.dryRun),
    interrupted: false,
    planned: 0,
    ok: 0,
    failed: 0,
    already_done: 0,
    already_failed: 0,
    failure_reasons: {},
    calls: 0,
    cached_calls: 0,
    input_tokens: 0,
    output_tokens: 0,
    cost_usd: 0,
    partitions: [],
    elapsed_ms: 0,
    work_ms: 0,
    ...(options.shard ? { shard: options.shard } : {}),
  };

  // Pass 1: what is left to do, counted without holding the items.
  const estimate: WorkCost = { calls: 0, cachedCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
  // The same key twice in one input (e.g. a setting given twice) is one unit of work.
  const seen = new Set<string>();
  try {
  for await (const item of def.items(false)) {
    const { key, dir } = def.keyOf(item);
    if (!inShard(key, options.shard) || seen.has(key)) continue;
    seen.add(key);
    await loadState(dir);
    const state = states.get(key);
    if (state?.ok) summary.already_done++;
    else if (state && !options.retryFailed) summary.already_failed++;
    else if (options.limit === undefined || summary.planned < options.limit) {
      summary.planned++;
      if (options.dryRun && def.estimate) addCost(estimate, def.estimate(item));
    }
  }
  } catch (error) {
    for (const lock of locks.values()) lock.release();
    throw error;
  }
  seen.clear();
  summary.partitions = [...loadedDirs];
  if (options.dryRun) {
    summary.estimate = estimate;
    summary.elapsed_ms = Math.round(performance.now() - started);
    return summary;
  }

  // Pass 2: run it.
  const logs = new Map<string, { records: JsonlLog; events: JsonlLog }>();
  const logsFor = (dir: string) => {
    let l = logs.get(dir);
    if (!l) {
      const suffix = shardSuffix(options.shard);
      l = { records: JsonlLog.open(join(dir, `${RECORDS_FILE}${suffix}.jsonl`)), events: JsonlLog.open(join(dir, `${EVENTS_FILE}${suffix}.jsonl`)) };
      logs.set(dir, l);
    }
    return l;
  };
  const progress = createStageProgress(def.stage, summary.planned, options.progress ?? false);
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  // Every unit in flight listens to the run's signal (HTTP call, rate-limit wait, retry sleep):
  // raise the leak warning's threshold to what the concurrency really needs, no further.
  setMaxListeners(Math.max(1, options.concurrency) * 4 + 10, signal);
  let fatal: unknown;
  let taken = 0;

  const source = (async function* () {
    for await (const item of def.items(true)) {
      const { key, dir } = def.keyOf(item);
      if (!inShard(key, options.shard)) continue;
      const state = states.get(key);
      if (state?.ok || (state && !options.retryFailed) || seen.has(key)) continue;
      seen.add(key);
      if (options.limit !== undefined && taken >= options.limit) return;
      taken++;
      yield { item, key, dir, tries: state?.tries ?? 0 };
    }
  })();

  const worker = async () => {
    while (!signal.aborted) {
      try {
        const next = await source.next();
        if (next.done) return;
        const { item, key, dir, tries } = next.value;
        const l = logsFor(dir);
        const { record, cost } = await def.run(item, { signal, event: (e) => l.events.append(e) });
        await def.durable?.();
        // Work cut short by a stop is not a result and not a failure: a rerun does it again.
        if (signal.aborted) return;
        l.records.append({ key, try: tries + 1, ...record });
        if (record.status === 'ok') summary.ok++;
        else {
          summary.failed++;
          const reason = record.error?.kind ?? 'unknown';
          summary.failure_reasons[reason] = (summary.failure_reasons[reason] ?? 0) + 1;
        }
        summary.calls += cost.calls;
        summary.cached_calls += cost.cachedCalls;
        summary.input_tokens += cost.inputTokens;
        summary.output_tokens += cost.outputTokens;
        summary.cost_usd += cost.costUsd;
        progress.tick(summary);
      } catch (error) {
        if (signal.aborted && !fatal) return;
        fatal ??= error;
        stop.abort();
        return;
      }
    }
  };

  const workStarted = performance.now();
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  } finally {
    // Every worker has returned, so no next() is in flight: ending the input stream runs its
    // cleanup (open queries, loads started ahead) before the caller closes what it reads from.
    await source.return(undefined).catch((error: unknown) => {
      fatal ??= error;
    });
    summary.work_ms = Math.round(performance.now() - workStarted);
    progress.stop();
    for (const l of logs.values()) {
      l.records.close();
      l.events.close();
    }
    for (const lock of locks.values()) lock.release();
  }
  if (fatal) throw fatal;
  summary.interrupted = options.signal.aborted;
  summary.partitions = [...new Set([...summary.partitions, ...logs.keys()])];
  summary.elapsed_ms = Math.round(performance.now() - started);
  return summary;
}

/** The log files of one kind in a partition: records.jsonl and records.shard-i-of-n.jsonl. */
export function listLogs(dir: string, kind: string): string[] {
  try {
    return readdirSync(dir).filter((f) => f.startsWith(kind) && f.endsWith('.jsonl')).sort();
  } catch {
    return [];
  }
}

function addCost(into: WorkCost, c: WorkCost): void {
  into.calls += c.calls;
  into.cachedCalls += c.cachedCalls;
  into.inputTokens += c.inputTokens;
  into.outputTokens += c.outputTokens;
  into.costUsd += c.costUsd;
}
