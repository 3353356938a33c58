/**
 * Batch mode for single-call stages: what is left to do goes to the provider's batch API (half
 * price, answered within 24 h) instead of online calls. Every step is in the partition's ledger
 * (batch-ledger.ts) before the next: a crash, Ctrl-C or kill resumes polling and collecting on
 * rerun and never submits paid work again. Each batch's answers become records as soon as it ends
 * (through the same stage code as online calls: parse, re-ask, record); requests it did not answer
 * are called online (fallback online) or recorded as failures (fallback none).
 */
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { PlensError } from '../core/errors.js';
import { isTerminal, type BatchApi, type BatchLine, type BatchResult, type BatchState } from '../llm/batch.js';
import type { LlmClient } from '../llm/client.js';
import { LlmCallError } from '../llm/errors.js';
import { withRetry } from '../llm/retry.js';
import { DEFAULT_RETRY } from '../llm/retry-policy.js';
import { BatchLedger, readLedgers, workKeys, type LedgerBatch } from './batch-ledger.js';
import type { LlmStageDefinition, LlmStageKit } from './llm-stage.js';
import type { WriterLock } from './lock.js';
import type { KeyState, Partition } from './partition.js';
import { inShard } from './shard.js';
import { addSpend, emptySpend } from './spend-budget.js';
import { singleCallDefinition, type SingleCallStage } from './single-call.js';
import { emptyStageSummary, type BatchSummary, type StageSummary } from './stage-runner.js';

/** OpenAI takes input files up to 200 MB: a batch is cut well below. */
const MAX_BATCH_BYTES = 100 * 1024 * 1024;

interface Part {
  partition: Partition;
  ledger: BatchLedger;
  lock: WriterLock;
}

interface Group {
  part: Part;
  client: LlmClient;
  lines: BatchLine[];
  bytes: number;
  /** Call key -> the work key whose line carries that request, for the lines not yet staged. */
  byCall: Map<string, string>;
  /** Call key -> the staged batch (ledger id) and work key that carry it, for the lines staged this run. */
  stagedCalls: Map<string, { batch: string; key: string }>;
  /** Work keys whose request is identical to a line's: staged with it as aliases, never submitted. */
  aliases: Record<string, string>;
}

/** A batch that ended, with its results, waiting for its records. */
interface Ready {
  part: Part;
  batch: LedgerBatch;
  results: Map<string, BatchResult>;
}

export async function runBatched<I, V>(kit: LlmStageKit, def: SingleCallStage<I, V>): Promise<StageSummary> {
  const o = kit.options;
  const options = o.batch!;
  const started = performance.now();
  const signal = o.signal;
  const retry = o.retry ?? DEFAULT_RETRY;
  const batch: BatchSummary = {
    submitted: 0,
    resumed: 0,
    collected: 0,
    pending: 0,
    items_submitted: 0,
    items_answered: 0,
    fallback_online: 0,
    fallback_failed: 0,
    cost_usd: 0,
  };
  // Batch mode runs without a spend cap (refused together in the kit), so no budget here.
  const summary: StageSummary = { ...emptyStageSummary(def.stage, { ...(o.shard ? { shard: o.shard } : {}) }), batch };
  const say = (line: string) => {
    if (o.progress) process.stderr.write(`${def.stage}: ${line}\n`);
  };

  const parts = new Map<string, Part>();
  const states = new Map<string, KeyState>();
  const clients = new Map<string, LlmClient>();
  const apis = new Map<string, Promise<BatchApi>>();
  /** A ledger batch for a model its partition is not: a line plens did not write. */
  const foreignBatch = (model: string, part?: Part) =>
    new PlensError('E_INPUT_SCHEMA', `a batch in the ledger is for ${model}, which this run's partition is not (edited by hand?); nothing was submitted`, {
      ...(part ? { location: { file: part.partition.ledgerPath(o.shard) } } : {}),
      hint: "restore the ledger line as plens wrote it, or remove it if its batch is not this run's",
    });
  const apiOf = (model: string, part?: Part): Promise<BatchApi> => {
    const client = clients.get(model);
    if (!client) throw foreignBatch(model, part);
    let api = apis.get(model);
    if (!api) apis.set(model, (api = client.batchApi()));
    return api;
  };
  /** One control call to the batch API, retried as online calls are; a lasting failure stops the run, the ledger intact. */
  const control = async <T>(part: Part, what: string, call: (attempt: number) => Promise<T>, batchId?: string): Promise<T> => {
    try {
      return (await withRetry(call, retry, signal)).value;
    } catch (error) {
      if (signal.aborted) throw new Interrupted();
      if (!(error instanceof LlmCallError) || error.kind === 'batch_lost') throw error;
      throw new PlensError('E_PREREQUISITE', `batch API (${what}): ${error.message}`, {
        location: { file: part.partition.ledgerPath(o.shard) },
        hint:
          error.kind === 'batch_ambiguous'
            ? 'nothing was created; the ledger keeps the staged requests for the rerun'
            : error.status === 404 && batchId
              ? `the provider does not know batch ${batchId}: if it is gone for good (deleted, another account or region), drop it with \`plens batches drop ${batchId} -w ${o.workspace.root}\` and rerun (its requests are planned again)`
              : 'the ledger keeps every batch submitted: rerun to resume polling and collecting (nothing is submitted twice)',
      });
    }
  };

  const partOf = async (partition: Partition): Promise<Part> => {
    let part = parts.get(partition.dir);
    if (part) return part;
    // The writer's lock before the state and the ledger are read, as the engine does.
    const lock = partition.lock(o.shard);
    try {
      for (const [key, state] of await partition.keyStates()) states.set(key, state);
      part = { partition, ledger: await BatchLedger.open(partition.ledgerPath(o.shard)), lock };
    } catch (error) {
      lock.release();
      throw error;
    }
    parts.set(partition.dir, part);
    batch.resumed += part.ledger.open.length;
    // What earlier runs submitted and this one collects is work of this run too.
    summary.planned += part.ledger.open.flatMap(workKeys).filter((k) => !states.get(k)?.ok).length;
    return part;
  };

  /**
   * Every batch id a ledger holds, this run's and any other writer's (the other shards', other
   * configurations' of the stage), read now: recovery never takes one of them for its own.
   */
  const knownBatchIds = async (): Promise<Set<string>> => {
    const ids = new Set<string>();
    const roots = new Set([...parts.values()].map((p) => dirname(p.partition.dir)));
    for (const root of roots) {
      for (const dir of existsSync(root) ? readdirSync(root, { withFileTypes: true }) : []) {
        if (dir.isDirectory()) for (const x of await readLedgers(join(root, dir.name))) if (x.batchId) ids.add(x.batchId);
      }
    }
    for (const p of parts.values()) for (const x of p.ledger.batches) if (x.batchId) ids.add(x.batchId);
    return ids;
  };

  const submit = async (part: Part, b: LedgerBatch, fresh: boolean): Promise<void> => {
    const api = await apiOf(b.model, part);
    let state: BatchState | undefined;
    try {
      // A create is paid work and is never repeated blindly: a batch may have been made by a run
      // killed before it could record it, or by an attempt whose answer was lost (a 5xx after the
      // side effect, a reset, a timeout). Every attempt but a fresh batch's first asks the provider
      // for the batch made from this input before it creates one; a failed look-up is retried
      // before any create.
      // Only an attempt whose answer may have been lost after the batch was made (no answer, a
      // reset, a 5xx) makes the next one look first; a 429 or another refusal made nothing, and a
      // look-up then could only take some other run's batch of the same size for this one's.
      let mayHaveMade = !fresh;
      state = await control(part, 'create', async () => {
        if (mayHaveMade) {
          const found = await api.recover(b.staged, await knownBatchIds(), signal, b.keys);
          if (found) {
            say(`batch ${found.batchId}: found the batch made from ${b.id}'s input (its create's answer was lost); not created again`);
            return found;
          }
        }
        try {
          return await api.submit(b.staged, signal);
        } catch (error) {
          mayHaveMade ||= !(error instanceof LlmCallError) || error.kind !== 'http' || (error.status ?? 0) >= 500;
          throw error;
        }
      });
    } catch (error) {
      if (!(error instanceof LlmCallError && error.kind === 'batch_lost')) throw error;
      // Its requests are gone with the process that staged them: the batch ended unanswered, and the fallback decides.
      part.ledger.ended(b.id, { batchId: '', status: 'failed' }, 0, b.keys.length);
      say(`batch ${b.id}: ${error.message}`);
      return;
    }
    part.ledger.submitted(b.id, state);
    say(`batch ${state.batchId}: ${b.keys.length} requests, ${state.status} (answers within 24 h; a rerun resumes it)`);
  };

  /** Requests too few for a batch of their model (a provider's minimum): called online. */
  const belowMinimum = new Set<string>();
  const flush = async (group: Group): Promise<void> => {
    if (group.lines.length === 0) return;
    const lines = group.lines.splice(0);
    const aliases = group.aliases;
    const calls = [...group.byCall];
    group.aliases = {};
    group.byCall.clear();
    group.bytes = 0;
    const api = await apiOf(group.client.id);
    // Below the provider's minimum (Bedrock: 100 records a job) a batch cannot be made, and padding
    // it would be paid filler: these are called online, at the full price.
    if (api.minItems !== undefined && lines.length < api.minItems) {
      for (const l of lines) belowMinimum.add(l.id);
      // Called online one after another, an alias finds its twin's answer in the call cache (or asks again when the cache is off).
      for (const alias of Object.keys(aliases)) belowMinimum.add(alias);
      batch.fallback_online += lines.length + Object.keys(aliases).length;
      say(`${lines.length} request(s) for ${group.client.id}: fewer than the ${api.minItems} a batch needs; called online at the full price`);
      return;
    }
    const staged = await control(group.part, 'upload', () => api.stage(lines, signal));
    const id = `b-${Date.now().toString(36)}-${batch.submitted}`;
    const b = group.part.ledger.staged(
      id,
      group.client.id,
      staged,
      lines.map((l) => l.id),
      aliases,
    );
    for (const [call, key] of calls) group.stagedCalls.set(call, { batch: b.id, key });
    batch.submitted++;
    batch.items_submitted += lines.length;
    await submit(group.part, b, true);
  };

  /** Records the keys of ended batches (or, with none, the cache's answers): the stage's own code, the batch's answers served to it. */
  const record = async (keys: Set<string>, ready: Ready[]): Promise<void> => {
    if (keys.size === 0) return;
    const answers = new Map<string, { result: BatchResult | undefined; batch: LedgerBatch; alias?: boolean }>();
    for (const r of ready) {
      for (const key of r.batch.keys) answers.set(key, { result: r.results.get(key), batch: r.batch });
      // An alias takes the answer of the identical request the batch carried.
      for (const [alias, key] of Object.entries(r.batch.aliases ?? {})) answers.set(alias, { result: r.results.get(key), batch: r.batch, alias: true });
    }
    const stage = singleCallDefinition(def, (_item, key, request, client) => {
      const a = answers.get(key);
      if (!a) return;
      const r = a.result;
      if (r?.ok && r.response.text.trim() !== '') {
        client.serveFromBatch(request, r, { alias: a.alias === true });
        batch.items_answered++;
        // An alias's answer was paid for once, with the request the batch carried.
        if (!a.alias) batch.cost_usd += client.batchCostOf(r.response.usage);
      } else if (r?.ok) {
        // An empty answer the provider billed: counted, then handled as an unanswered request.
        if (!a.alias) batch.cost_usd += client.batchCostOf(r.response.usage);
        if (options.fallback === 'none') {
          client.serveFromBatch(request, unanswered(key, r, a.batch));
          batch.fallback_failed++;
        } else batch.fallback_online++;
      } else if (options.fallback === 'none') {
        client.serveFromBatch(request, unanswered(key, r, a.batch));
        batch.fallback_failed++;
      } else batch.fallback_online++;
    });
    const s = await kit.run(only(stage, keys), { locksHeld: true, retryFailed: true, limit: undefined });
    add(summary, s);
  };

  try {
    // Plan: what is left, as the engine counts it; answers the cache holds are recorded online, the rest is submitted.
    const groups = new Map<string, Group>();
    const checkedModels = new Set<Part>();
    const fromCache = new Set<string>();
    const seen = new Set<string>();
    let openKeys: Set<string> | undefined;
    let added = 0;
    for await (const item of def.items(true)) {
      const { key, partition } = def.keyOf(item);
      if (!inShard(key, o.shard) || seen.has(key)) continue;
      seen.add(key);
      if (!parts.has(partition.dir)) openKeys = undefined;
      const part = await partOf(partition);
      // Every model seen, done or not: an open batch of a partition whose keys are all done is still closed below.
      const client = def.client(item);
      clients.set(client.id, client);
      // A partition's batches are all its model's: another model's in its ledger was not written by
      // plens, and is refused before this run submits or records anything.
      if (!checkedModels.has(part)) {
        checkedModels.add(part);
        const foreign = part.ledger.open.find((b) => b.model !== client.id);
        if (foreign) throw foreignBatch(foreign.model, part);
      }
      const state = states.get(key);
      if (state?.ok) {
        summary.already_done++;
        continue;
      }
      openKeys ??= new Set([...parts.values()].flatMap((p) => [...p.ledger.openKeys()]));
      // Submitted by an earlier run: collected below, never submitted again.
      if (openKeys.has(key)) continue;
      if (state && !o.retryFailed) {
        summary.already_failed++;
        continue;
      }
      if (o.limit !== undefined && added >= o.limit) continue;
      added++;
      summary.planned++;
      const request = await def.request(item);
      if (client.isCached(request)) {
        fromCache.add(key);
        continue;
      }
      const gk = `${partition.dir}\n${client.id}`;
      let group = groups.get(gk);
      if (!group) groups.set(gk, (group = { part, client, lines: [], bytes: 0, byCall: new Map(), stagedCalls: new Map(), aliases: {} }));
      // An identical request under another key (the same prompt judged twice) is submitted once.
      const callKey = client.callKeyOf(request);
      const twin = group.byCall.get(callKey);
      if (twin !== undefined) {
        group.aliases[key] = twin;
        continue;
      }
      // Its twin is in a batch staged earlier in this run: recorded there, before anything else happens to it.
      const staged = group.stagedCalls.get(callKey);
      if (staged) {
        part.ledger.aliases(staged.batch, { [key]: staged.key });
        continue;
      }
      group.byCall.set(callKey, key);
      group.lines.push({ id: key, request });
      group.bytes += request.messages.reduce((n, m) => n + m.content.length, request.system?.length ?? 0) + 300;
      if (group.lines.length >= options.maxItems || group.bytes >= MAX_BATCH_BYTES) await flush(group);
    }
    seen.clear();
    for (const group of groups.values()) await flush(group);
    summary.partitions = [...parts.keys()];
    const workStarted = performance.now();

    // Answers the cache holds, and what is too few for a batch, go through the stage online (no batch answers).
    await record(new Set([...fromCache, ...belowMinimum]), []);

    // Batches whose answers include work this run does not plan (say, other --dimensions): left open
    // in the ledger, answers unread, for the run that plans it; a paid answer is never dropped.
    const deferred = new Set<string>();
    // Poll: each batch that ends is collected and recorded at once; the ledger says what is left.
    while (!signal.aborted) {
      const open = [...parts.values()].flatMap((part) => part.ledger.open.filter((b) => !deferred.has(b.id)).map((b) => ({ part, b })));
      if (open.length === 0) break;
      const ready: Ready[] = [];
      for (const { part, b } of open) {
        if (signal.aborted) break;
        // Ended, and every key recorded before a stop kept the ledger from saying so: nothing to read again.
        if (b.ended && workKeys(b).every((k) => states.get(k)?.ok)) {
          part.ledger.processed(b.id);
          continue;
        }
        if (b.status === 'staged') await submit(part, b, false);
        const api = await apiOf(b.model, part);
        let state: BatchState;
        if (b.ended) state = { batchId: b.batchId!, status: b.status as BatchState['status'], outputFileId: b.outputFileId, errorFileId: b.errorFileId };
        else {
          state = await control(part, 'status', () => api.status(b.batchId!, signal), b.batchId);
          if (state.status !== b.status) {
            part.ledger.status(b.id, state);
            say(`batch ${state.batchId}: ${state.status}${state.counts ? ` (${state.counts.completed} of ${state.counts.total} done)` : ''}`);
          }
          if (!isTerminal(state.status)) continue;
        }
        const results = new Map<string, BatchResult>();
        for (const r of await control(part, 'results', () => api.results(state, signal))) results.set(r.id, r);
        const answered = b.keys.filter((k) => results.get(k)?.ok).length;
        if (!b.ended) {
          part.ledger.ended(b.id, state, answered, b.keys.length - answered);
          say(`batch ${state.batchId}: ${state.status}, ${answered} of ${b.keys.length} answered`);
        }
        ready.push({ part, batch: b, results });
      }
      if (ready.length) {
        await record(new Set(ready.flatMap((r) => workKeys(r.batch))), ready);
        if (signal.aborted) break;
        const recorded = new Map<string, Set<string>>();
        for (const r of ready) {
          let keys = recorded.get(r.part.partition.dir);
          if (!keys) recorded.set(r.part.partition.dir, (keys = new Set((await r.part.partition.keyStates()).keys())));
          const left = workKeys(r.batch).filter((k) => !keys.has(k)).length;
          if (left === 0) {
            r.part.ledger.processed(r.batch.id);
            batch.collected++;
          } else {
            deferred.add(r.batch.id);
            say(`batch ${r.batch.batchId ?? r.batch.id}: ${left} answer(s) are for work this run does not plan; kept open for the run that does`);
          }
        }
        continue;
      }
      await sleep(options.pollIntervalS * 1000, undefined, { signal }).catch(() => undefined);
    }
    summary.work_ms = Math.round(performance.now() - workStarted);
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
  } finally {
    batch.pending = [...parts.values()].reduce((n, p) => n + p.ledger.open.length, 0);
    for (const p of parts.values()) {
      p.ledger.close();
      p.lock.release();
    }
  }
  summary.interrupted = signal.aborted;
  summary.elapsed_ms = Math.round(performance.now() - started);
  return summary;
}

class Interrupted extends Error {}

/** Why a request of a batch has no answer, as a failure to record (fallback none). */
function unanswered(key: string, r: BatchResult | undefined, b: LedgerBatch): BatchResult {
  if (r && !r.ok) return r;
  if (r?.ok) return { id: key, ok: false, kind: 'batch_empty_response', message: 'the batch answered with an empty completion' };
  return { id: key, ok: false, kind: `batch_${b.status}`, message: `batch ${b.batchId} ended ${b.status} without answering this request` };
}

/** The stage restricted to some keys. */
function only<I>(stage: LlmStageDefinition<I>, keys: Set<string>): LlmStageDefinition<I> {
  return {
    ...stage,
    items: async function* (forRun) {
      for await (const item of stage.items(forRun)) if (keys.has(stage.keyOf(item).key)) yield item;
    },
  };
}

function add(into: StageSummary, s: StageSummary): void {
  into.ok += s.ok;
  into.failed += s.failed;
  for (const [k, v] of Object.entries(s.failure_reasons)) into.failure_reasons[k] = (into.failure_reasons[k] ?? 0) + v;
  into.calls += s.calls;
  into.cached_calls += s.cached_calls;
  into.input_tokens += s.input_tokens;
  into.output_tokens += s.output_tokens;
  into.cost_usd += s.cost_usd;
  if (s.spend) addSpend((into.spend ??= emptySpend()), s.spend);
}
