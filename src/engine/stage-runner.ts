import { setMaxListeners } from 'node:events';
import type { JsonlLog } from './jsonl-log.js';
import type { WriterLock } from './lock.js';
import type { KeyState, Partition } from './partition.js';
import { createStageProgress } from './stage-progress.js';
import { inShard, type Shard } from './shard.js';
import type { Reservation, SpendBudget, SpendBreakdown } from './spend-budget.js';

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
  /** The item's idempotent key. */
  key: string;
  /** Appends an event (e.g. one LLM call) to the partition's event log. */
  event(record: unknown): void;
  /** Under a spend cap: this unit's reservation, which its calls charge with what they cost. */
  reservation?: Reservation;
}

export interface StageDefinition<I> {
  stage: string;
  /**
   * Re-iterable input. The engine iterates twice: first to count what is left (`forRun` false:
   * items may skip their heavy context), then to run it (`forRun` true).
   */
  items: (forRun: boolean) => AsyncIterable<I>;
  /** The item's idempotent key and the output partition it belongs to. */
  keyOf(item: I): { key: string; partition: Partition };
  run(item: I, ctx: WorkContext): Promise<{ record: StageOutput; cost: WorkCost }>;
  /** For --dry-run: the expected calls, tokens and cost of one item. */
  estimate?(item: I): WorkCost;
  /**
   * Under a spend cap: what to reserve before the item starts (USD); default its estimate's cost.
   * 0 when the cache will answer it.
   */
  reserve?(item: I): number | Promise<number>;
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
  /** The run's spend cap, shared by every stage of the run (spend-budget.ts). */
  budget?: SpendBudget;
  /** The caller already holds the writer's lock of every partition this run writes (batch mode). */
  locksHeld?: boolean;
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
  /** True when the spend cap stopped this stage before its planned work was done (rerun with a higher cap to go on). */
  spend_capped: boolean;
  /** The run's spend cap, or null for none. */
  max_cost_usd: number | null;
  /** This stage's spend by role and by model (filled by the LLM-stage kit). */
  spend?: SpendBreakdown;
  /** Batch mode (batch-run.ts): what went to the provider's batch API and came back. */
  batch?: BatchSummary;
}

/** Batch mode's part of a stage summary. */
export interface BatchSummary {
  /** Batches submitted by this run, and open batches of earlier runs it found in the ledger. */
  submitted: number;
  resumed: number;
  /** Batches collected (every key recorded) by this run, and those still open at its end (rerun to collect). */
  collected: number;
  pending: number;
  items_submitted: number;
  /** Requests answered by a batch, and those it did not answer: called online, or recorded as failures. */
  items_answered: number;
  fallback_online: number;
  fallback_failed: number;
  /** What the batch answers cost (the discounted price); part of cost_usd. */
  cost_usd: number;
  /** --dry-run: the planned work's price through the batch API (beside estimate.costUsd, the online price). */
  estimate_cost_usd?: number;
  /** --dry-run: the provider's minimum batch size, when the plan is below it (its work is then called online). */
  min_items?: number;
}

/** A stage's summary before any work: every count zero. */
export function emptyStageSummary(stage: string, options: Pick<EngineOptions, 'dryRun' | 'shard' | 'budget'>): StageSummary {
  return {
    stage,
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
    spend_capped: false,
    max_cost_usd: options.budget ? options.budget.maxUsd : null,
  };
}

/**
 * The engine every LLM stage runs on: streams the input, skips keys already done, runs the rest
 * with bounded concurrency, and appends one record per key (a result or a failure) to
 * append-only JSONL, one writer per partition. A stop (Ctrl-C) discards unfinished work, which a
 * rerun picks up; failures are rerun only with retryFailed.
 */
export async function runStage<I>(def: StageDefinition<I>, options: EngineOptions): Promise<StageSummary> {
  const started = performance.now();
  const states = new Map<string, KeyState>();
  const loaded = new Map<string, Partition>();
  const locks = new Map<string, WriterLock>();
  const loadState = async (partition: Partition) => {
    if (loaded.has(partition.dir)) return;
    loaded.set(partition.dir, partition);
    // The writer's lock is taken before the state is read: what is done cannot change under us.
    if (!options.dryRun && !options.locksHeld) locks.set(partition.dir, partition.lock(options.shard));
    // Keys are hashes of everything that decides them, the partition included: no two partitions share one.
    for (const [key, state] of await partition.keyStates()) states.set(key, state);
  };
  const summary = emptyStageSummary(def.stage, options);

  // Pass 1: what is left to do, counted without holding the items.
  const estimate = zeroCost();
  // The same key twice in one input (e.g. a setting given twice) is one unit of work.
  const seen = new Set<string>();
  try {
    for await (const item of def.items(false)) {
      const { key, partition } = def.keyOf(item);
      if (!inShard(key, options.shard) || seen.has(key)) continue;
      seen.add(key);
      await loadState(partition);
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
  summary.partitions = [...loaded.keys()];
  if (options.dryRun) {
    summary.estimate = estimate;
    summary.elapsed_ms = Math.round(performance.now() - started);
    return summary;
  }

  // Pass 2: run it.
  const logs = new Map<string, { records: JsonlLog; events: JsonlLog }>();
  const logsFor = (partition: Partition) => {
    let l = logs.get(partition.dir);
    if (!l) {
      l = partition.openLogs(options.shard);
      logs.set(partition.dir, l);
    }
    return l;
  };
  const progress = createStageProgress(def.stage, summary.planned, options.progress ?? false, summary.partitions);
  const stop = new AbortController();
  const signal = AbortSignal.any([options.signal, stop.signal]);
  // Every unit in flight listens to the run's signal (HTTP call, rate-limit wait, retry sleep):
  // raise the leak warning's threshold to what the concurrency really needs, no further.
  setMaxListeners(Math.max(1, options.concurrency) * 4 + 10, signal);
  let fatal: unknown;
  let taken = 0;

  const source = (async function* () {
    for await (const item of def.items(true)) {
      const { key, partition } = def.keyOf(item);
      if (!inShard(key, options.shard)) continue;
      const state = states.get(key);
      if (state?.ok || (state && !options.retryFailed) || seen.has(key)) continue;
      seen.add(key);
      if (options.limit !== undefined && taken >= options.limit) return;
      taken++;
      yield { item, key, partition, tries: state?.tries ?? 0 };
    }
  })();

  const budget = options.budget;
  /** Records finished but waiting for def.durable(): each is appended once it resolves. */
  const durable = new Set<Promise<void>>();
  const settle = ({ l, key, tries, record, cost }: { l: { records: JsonlLog }; key: string; tries: number; record: StageOutput; cost: WorkCost }) => {
    // A stop that came while the record waited: a rerun does it again (its calls are in the cache).
    if (signal.aborted) return;
    l.records.append({ key, try: tries + 1, ...record });
    if (record.status === 'ok') summary.ok++;
    else {
      summary.failed++;
      // A record may keep its failure's kind in a flat error_kind column (PERSONA-bench predictions).
      const flatKind = typeof record.error_kind === 'string' ? record.error_kind : undefined;
      const reason = (typeof record.error === 'object' ? record.error?.kind : undefined) ?? flatKind ?? 'unknown';
      summary.failure_reasons[reason] = (summary.failure_reasons[reason] ?? 0) + 1;
    }
    addToSummary(summary, cost);
    progress.tick(summary);
  };
  const worker = async () => {
    while (!signal.aborted && !budget?.capped) {
      let reservation: Reservation | undefined;
      try {
        const next = await source.next();
        if (next.done) return;
        const { item, key, partition, tries } = next.value;
        if (budget) {
          // Reserved before the unit starts: when it cannot fit under the cap, nothing more starts.
          // The item is not recorded, so a rerun (with a higher cap) picks it up.
          const usd = def.reserve ? await def.reserve(item) : (def.estimate?.(item).costUsd ?? 0);
          reservation = await budget.reserve(usd, signal);
          if (!reservation) return;
        }
        const l = logsFor(partition);
        const { record, cost } = await def.run(item, { signal, key, event: (e) => l.events.append(e), ...(reservation ? { reservation } : {}) });
        reservation?.close();
        // Work cut short by a stop is not a result and not a failure: a rerun does it again.
        if (signal.aborted) return;
        const done = { l, key, tries, record, cost };
        if (!def.durable) settle(done);
        else {
          // The record waits for what its work wrote elsewhere to be committed; the worker slot does
          // not: it takes the next item at once, so a commit's wait never idles a slot.
          const waiting = def
            .durable()
            .then(() => settle(done))
            .catch((error: unknown) => {
              fatal ??= error;
              stop.abort();
            });
          durable.add(waiting);
          void waiting.finally(() => durable.delete(waiting));
        }
      } catch (error) {
        if (signal.aborted && !fatal) return;
        fatal ??= error;
        stop.abort();
        return;
      } finally {
        reservation?.close();
      }
    }
  };

  const workStarted = performance.now();
  try {
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
    // Every record still waiting on a commit is appended (or dropped by a stop) before the logs
    // close; only workers add to the set, and they have all returned.
    await Promise.all([...durable]);
  } finally {
    // Every worker has returned, so no next() is in flight: ending the input stream runs its
    // cleanup (open queries, loads started ahead) before the caller closes what it reads from.
    await source.return(undefined).catch((error: unknown) => {
      fatal ??= error;
    });
    summary.work_ms = Math.round(performance.now() - workStarted);
    progress.stop();
    // Every log is closed (writing what it gathered) and every lock released, even when one write fails.
    for (const l of logs.values())
      for (const log of [l.records, l.events]) {
        try {
          log.close();
        } catch (error) {
          fatal ??= error;
        }
      }
    for (const lock of locks.values()) lock.release();
  }
  if (fatal) throw fatal;
  summary.interrupted = options.signal.aborted;
  // The cap (reached here, or by another stage sharing the budget) left planned work undone.
  summary.spend_capped = Boolean(budget?.capped) && summary.ok + summary.failed < summary.planned;
  summary.partitions = [...new Set([...summary.partitions, ...logs.keys()])];
  summary.elapsed_ms = Math.round(performance.now() - started);
  return summary;
}

/** No calls yet. */
export function zeroCost(): WorkCost {
  return { calls: 0, cachedCalls: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };
}

/** Adds one cost to another, in place. */
export function addCost(into: WorkCost, c: WorkCost): void {
  into.calls += c.calls;
  into.cachedCalls += c.cachedCalls;
  into.inputTokens += c.inputTokens;
  into.outputTokens += c.outputTokens;
  into.costUsd += c.costUsd;
}

function addToSummary(s: StageSummary, c: WorkCost): void {
  s.calls += c.calls;
  s.cached_calls += c.cachedCalls;
  s.input_tokens += c.inputTokens;
  s.output_tokens += c.outputTokens;
  s.cost_usd += c.costUsd;
}
