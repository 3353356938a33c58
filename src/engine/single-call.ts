import type { CallOutcome, LlmClient } from '../llm/client.js';
import { LlmCallError } from '../llm/errors.js';
import type { ChatMessage, ChatRequest } from '../llm/types.js';
import { failureOf, type CallRecorder, type LlmStageDefinition, type LlmStageKit, type StageFailure } from './llm-stage.js';
import type { Partition } from './partition.js';
import type { BatchSummary, StageOutput, StageSummary, WorkCost } from './stage-runner.js';

/** A reply read by a stage's parser: the value, or why it could not be read. */
export type Parsed<V> = { ok: true; value: V } | { ok: false; error: string };

/** How one request ended: a parsed reply, a reply that did not parse (kept as text), or a failed call. */
export type Answer<V> =
  | { status: 'ok'; value: V; text: string; reasked: boolean }
  | { status: 'parse_error'; error: StageFailure; text: string; reasked: boolean }
  | { status: 'failed'; error: StageFailure };

export interface AskOptions<V> {
  /** Where the call is in the work and what it is for (the call event's turn and role). */
  at: { turn: number | null; role: string };
  parse(text: string): Parsed<V>;
  /**
   * When set, a reply that does not parse is asked once more: the conversation so far plus this
   * message (restating the format).
   */
  reask?: (error: string) => string;
}

/**
 * One request, its reply parsed. A reply that ends unparsed is never served from the cache again
 * (a rerun with --retry-failed asks anew), and never a value: the text is kept to be read. An LLM
 * failure is a failure, never a value.
 */
export async function askAndParse<V>(calls: CallRecorder, client: LlmClient, request: ChatRequest, o: AskOptions<V>): Promise<Answer<V>> {
  const outcomes: CallOutcome[] = [];
  try {
    const first = await calls.call(client, request, o.at);
    outcomes.push(first);
    let text = first.response.text;
    let parsed = o.parse(text);
    let reasked = false;
    if (!parsed.ok && o.reask) {
      reasked = true;
      const messages: ChatMessage[] = [...request.messages, { role: 'assistant', content: text }, { role: 'user', content: o.reask(parsed.error) }];
      const again = await calls.call(client, { ...request, messages }, o.at);
      outcomes.push(again);
      text = again.response.text;
      parsed = o.parse(text);
    }
    if (parsed.ok) return { status: 'ok', value: parsed.value, text, reasked };
    for (const outcome of outcomes) client.reject(outcome);
    return { status: 'parse_error', error: { kind: 'parse_error', message: parsed.error }, text, reasked };
  } catch (error) {
    if (!(error instanceof LlmCallError)) throw error;
    return { status: 'failed', error: failureOf(error) };
  }
}

/**
 * A stage of one request per input record: build the request, parse the reply, write a record
 * (a value, an unreadable reply, or a failure). Keys, partitions, the cache, call events, cost,
 * shards and resumption come from the kit and the engine.
 */
export interface SingleCallStage<I, V> {
  stage: string;
  items: (forRun: boolean) => AsyncIterable<I>;
  keyOf(item: I): { key: string; partition: Partition };
  client(item: I): LlmClient;
  request(item: I): ChatRequest | Promise<ChatRequest>;
  /** The call event's turn and role for an item. */
  at(item: I): { turn: number | null; role: string };
  parse(text: string, item: I): Parsed<V>;
  reask?: (error: string) => string;
  /** The record written for an item, from how its request ended and what its calls cost. */
  record(item: I, answer: Answer<V>, cost: WorkCost): StageOutput;
  estimate?(item: I): WorkCost;
}

/**
 * Runs a single-call stage: online, or with `batch` in the kit's options through the provider's
 * batch API (engine/batch-run.ts, loaded only then). A dry run is the same plan either way.
 */
export async function runSingleCall<I, V>(kit: LlmStageKit, def: SingleCallStage<I, V>): Promise<StageSummary> {
  if (kit.options.batch && !kit.options.dryRun) {
    const { runBatched } = await import('./batch-run.js');
    // The run record starts with the batch run, not with its first online fallback.
    await kit.begin(def.stage);
    const batched = await runBatched(kit, def);
    kit.settle(batched);
    return batched;
  }
  const summary = await kit.run(singleCallDefinition(def));
  // A batch plan shows the batch price beside the online one (the estimate); work below the
  // provider's minimum batch size (Bedrock: 100) is called online, so it is priced online.
  if (kit.options.batch && summary.estimate) {
    const min = kit.batchMinItems;
    const tooFew = min !== undefined && summary.planned > 0 && summary.planned < min;
    summary.batch = {
      ...emptyBatchSummary(),
      // Absent when a model has no price: an unknown cost is never 0.
      ...(kit.priceUnknown.length ? {} : { estimate_cost_usd: tooFew ? summary.estimate.costUsd : summary.estimate.costUsd * kit.batchPriceFactor }),
      ...(tooFew ? { min_items: min } : {}),
    };
  }
  return summary;
}

function emptyBatchSummary(): BatchSummary {
  return { submitted: 0, resumed: 0, collected: 0, pending: 0, items_submitted: 0, items_answered: 0, fallback_online: 0, fallback_failed: 0, cost_usd: 0 };
}

/**
 * The engine's definition of a single-call stage. `before` sees each item's request and client
 * before the call (batch mode hands the client the batch's answer there).
 */
export function singleCallDefinition<I, V>(
  def: SingleCallStage<I, V>,
  before?: (item: I, key: string, request: ChatRequest, client: LlmClient) => void,
): LlmStageDefinition<I> {
  // Under a spend cap the request is built to price it before the item starts; the run reuses it.
  const built = new WeakMap<object, ChatRequest>();
  const keyable = (item: I): item is I & object => typeof item === 'object' && item !== null;
  const requestOf = async (item: I): Promise<ChatRequest> => {
    const request = (keyable(item) ? built.get(item) : undefined) ?? (await def.request(item));
    if (keyable(item)) built.delete(item);
    return request;
  };
  return {
    stage: def.stage,
    items: def.items,
    keyOf: def.keyOf,
    ...(def.estimate ? { estimate: def.estimate } : {}),
    // One call's worst case (its prompt and max_tokens) or the item's estimate, whichever is more;
    // nothing when the cache will answer it.
    reserve: async (item) => {
      const request = await def.request(item);
      if (keyable(item)) built.set(item, request);
      const call = def.client(item).estimateCostOf(request);
      return call === 0 ? 0 : Math.max(call, def.estimate?.(item).costUsd ?? 0);
    },
    run: async (item, calls) => {
      const client = def.client(item);
      const request = await requestOf(item);
      before?.(item, calls.key, request, client);
      const answer = await askAndParse(calls, client, request, {
        at: def.at(item),
        parse: (text) => def.parse(text, item),
        ...(def.reask ? { reask: def.reask } : {}),
      });
      return def.record(item, answer, calls.cost);
    },
  };
}
