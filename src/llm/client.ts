import { usageError } from '../core/errors.js';
import type { BatchApi, BatchInit, BatchResult } from './batch.js';
import { AimdController, isOverloadStatus, type AimdStats, type CallOutcomeSignal } from './aimd.js';
import { callKey, type CallCache } from './call-cache.js';
import { LlmCallError } from './errors.js';
import { DEFAULT_TIMEOUTS, type HttpTimeouts, type HttpTransport, type TransportKind } from './http-transport.js';
import { batchPriceFactor, checkBaseUrl, checkBatchSupport, costOfTokens, endpointIdentity, modelId, type ModelSpec } from './model-spec.js';
import { redact, registerSecret, registerSecretsFromEnv } from '../core/redact.js';
import { providerEntry, type ProviderEntry, type ProviderInit } from './providers.js';
import { withRetry } from './retry.js';
import { DEFAULT_RETRY, type RetryPolicy } from './retry-policy.js';
import { openTransport } from './transport-choice.js';
import { RateLimiter } from './token-bucket.js';
import type { ChatRequest, ChatResponse, Provider, SamplingParams, Usage } from './types.js';

export interface ClientOptions {
  cache: CallCache;
  retry?: RetryPolicy;
  timeouts?: HttpTimeouts;
  /** Upper bound on simultaneous connections to the endpoint. */
  connections?: number;
  /** Where requests run: this thread, the shared HTTP worker thread, or `auto` (the default; see transport-choice.ts). */
  transport?: TransportKind;
  env?: NodeJS.ProcessEnv;
  /**
   * A client for planning (--dry-run, status): ids, parameters and prices, but no key, no
   * connection, and any call is an error. A plan must never need a key.
   */
  planOnly?: boolean;
  /**
   * Adaptive concurrency (aimd.ts): overload answers cut the calls in flight, successes win them
   * back, up to `connections`. On by default; off leaves only the RPM/TPM buckets.
   */
  adaptive?: boolean;
  /** The run's shard count: each shard takes 1/shards of the spec's rpm and tpm, so n machines together keep to the limit. */
  shards?: number;
}

export interface CallOutcome {
  response: ChatResponse;
  cached: boolean;
  attempts: number;
  /** The endpoint's time for the successful attempt (from the cache on a hit). */
  latencyMs: number;
  /** What the call was billed: the answer's tokens, and those of attempts whose answer was empty. */
  costUsd: number;
  /** Tokens of attempts that came back empty (the provider bills them) before the answer; absent when none. */
  billed?: Usage;
  /** The call-cache key of this answer ('' when the cache was not used): what reject() takes. */
  cacheKey: string;
  /** Answered by a provider batch (batch mode): costUsd is the batch price. */
  batch?: boolean;
}

/** Calls one model: cache, then rate limits, then the single retry layer around one provider call. */
export class LlmClient {
  readonly id: string;
  /** The endpoint when it is not the vendor's default (see endpointIdentity): part of every key. */
  readonly endpoint: string | undefined;
  /** An offline provider (the simulator): never cached, no latency recorded. */
  private readonly offline: boolean;
  /** Whether the provider takes a completion prompt (ChatRequest.prompt). */
  private readonly takesPrompt: boolean;
  private readonly limiter: RateLimiter;
  private readonly aimd: AimdController | undefined;
  private readonly inFlight = new Map<string, Promise<CallOutcome>>();
  /** Batch mode: answers collected from provider batches, by call key, each served once. */
  /** Batch results by request, with how many calls will take each (identical requests share one answer, paid once). */
  private readonly batchAnswers = new Map<string, { result: BatchResult; calls: number; paid: number }>();
  private batchInit: BatchInit | undefined;
  private batchLoading: Promise<BatchApi> | undefined;

  private constructor(
    readonly spec: ModelSpec,
    private readonly provider: Provider,
    private readonly transport: HttpTransport | undefined,
    private readonly options: ClientOptions,
    endpoint?: string,
  ) {
    this.id = modelId(spec);
    this.offline = Boolean(providerEntry(spec.provider).offline);
    this.takesPrompt = Boolean(providerEntry(spec.provider).takesPrompt);
    this.endpoint = endpoint;
    const shards = Math.max(1, options.shards ?? 1);
    this.limiter = new RateLimiter({ ...(spec.rpm ? { rpm: spec.rpm / shards } : {}), ...(spec.tpm ? { tpm: spec.tpm / shards } : {}) });
    // The simulator is never overloaded: its calls skip the controller, as they skip the cache.
    this.aimd = this.offline || options.adaptive === false ? undefined : new AimdController({ max: options.connections ?? 64 });
  }

  static create(spec: ModelSpec, options: ClientOptions): LlmClient {
    const env = options.env ?? process.env;
    registerSecretsFromEnv(env, spec.keyEnv ? [spec.keyEnv] : []);
    const entry = providerEntry(spec.provider);
    const timeouts = options.timeouts ?? DEFAULT_TIMEOUTS;
    const connections = options.connections ?? 64;
    if (entry.sdk) {
      // The vendor's SDK signs and sends (Bedrock): no plens transport; the cache, limits and retry
      // layer below apply as for every provider. Only an endpoint override is part of the identity.
      const endpoint = spec.baseUrl === undefined ? undefined : endpointIdentity(spec.baseUrl, '');
      if (options.planOnly) return new LlmClient(spec, new PlanOnlyProvider(modelId(spec)), undefined, options, endpoint);
      registerSecretsFromEnv(env, entry.sdk.secretEnv);
      const sdk = { ...(spec.region ? { region: spec.region } : {}), ...(spec.baseUrl ? { baseUrl: spec.baseUrl } : {}), timeouts, connections, env };
      const client = new LlmClient(spec, new LazyProvider(entry, { model: spec.model, sdk }), undefined, options, endpoint);
      if (spec.batchBucket && spec.batchRoleArn) {
        client.batchInit = {
          model: spec.model,
          baseUrl: spec.bedrockEndpoint ?? '',
          apiKey: undefined,
          timeoutMs: timeouts.deadlineMs,
          sdk: {
            ...(spec.region ? { region: spec.region } : {}),
            env,
            bucket: spec.batchBucket,
            roleArn: spec.batchRoleArn,
            ...(spec.s3Endpoint ? { s3Endpoint: spec.s3Endpoint } : {}),
            ...(spec.bedrockEndpoint ? { controlEndpoint: spec.bedrockEndpoint } : {}),
            ...(spec.batchMinRecords !== undefined ? { minRecords: spec.batchMinRecords } : {}),
          },
        };
      }
      return client;
    }
    const http = entry.endpoint;
    if (!http) return new LlmClient(spec, new LazyProvider(entry, { model: spec.model }), undefined, options);
    const baseUrl = spec.baseUrl ?? (env[http.baseUrlEnv] || http.defaultBaseUrl);
    // The endpoint a real client would have, so a plan finds the same cells and keys.
    const endpoint = endpointIdentity(baseUrl, http.defaultBaseUrl);
    // A plan never reads a key, so it needs none by construction.
    if (options.planOnly) return new LlmClient(spec, new PlanOnlyProvider(modelId(spec)), undefined, options, endpoint);
    if (!spec.baseUrl) checkBaseUrl(baseUrl, http.baseUrlEnv);
    const keyEnv = spec.keyEnv ?? http.keyEnv;
    const apiKey = env[keyEnv];
    if (!apiKey && baseUrl.includes(http.vendorHost)) {
      throw usageError(
        `${modelId(spec)}: no API key; set ${keyEnv} (or key_env=VAR in the model spec)`,
        `for a local or self-hosted endpoint, set base_url=... in the spec or ${http.baseUrlEnv}`,
      );
    }
    // Whatever a server echoes back, this key is cut from every message and record.
    registerSecret(apiKey);
    const transport = openTransport(options.transport ?? 'auto', timeouts, connections);
    const client = new LlmClient(spec, new LazyProvider(entry, { model: spec.model, http: { baseUrl, apiKey, transport } }), transport, options, endpoint);
    client.batchInit = { model: spec.model, baseUrl, apiKey, timeoutMs: timeouts.deadlineMs };
    return client;
  }

  /** The provider's batch API (batch mode), loaded at first use; a provider without one is a usage error saying why. */
  batchApi(): Promise<BatchApi> {
    checkBatchSupport(this.spec, this.id);
    const init = this.batchInit;
    if (!init) return Promise.reject(new LlmCallError('config', `${this.id}: a plan-only client (dry run or status) has no batch API`, { retryable: false }));
    this.batchLoading ??= providerEntry(this.spec.provider)
      .batch!.load()
      .then((make) => make(init));
    return this.batchLoading;
  }

  /** What a call answered by a batch costs: the online price times the batch's share of it. */
  batchCostOf(usage: { inputTokens: number; outputTokens: number }): number {
    return this.costOf(usage) * (batchPriceFactor(this.spec) ?? 1);
  }

  /** The call-cache key of a request: equal for identical requests to this model (batch mode submits each once). */
  callKeyOf(request: ChatRequest): string {
    return this.keyOf(request);
  }

  /** Whether the cache would answer this request now: batch mode submits only what it would not. */
  isCached(request: ChatRequest): boolean {
    const cache = this.offline ? undefined : this.options.cache;
    if (!cache?.reads) return false;
    const hit = cache.get(this.keyOf(request));
    return hit !== undefined && hit.response.text.trim() !== '';
  }

  /**
   * Gives a batch's result for this request to the next call of it: an answer is served as a call
   * (not a cache hit) at the batch price and cached like an online answer; a result without an
   * answer fails that call (never cached).
   */
  serveFromBatch(request: ChatRequest, result: BatchResult, options: { alias?: boolean } = {}): void {
    const key = this.keyOf(request);
    // `paid`: how many of these calls the provider billed (its own batch line); an alias's is free.
    const entry = this.batchAnswers.get(key) ?? { result, calls: 0, paid: 0 };
    entry.calls++;
    if (!options.alias) entry.paid++;
    this.batchAnswers.set(key, entry);
  }

  private fromBatch(request: ChatRequest): CallOutcome | undefined {
    const key = this.keyOf(request);
    const entry = this.batchAnswers.get(key);
    if (!entry) return undefined;
    if (--entry.calls === 0) this.batchAnswers.delete(key);
    // A billed line's answer costs the batch price; an alias (an identical request under another key) takes it free.
    const first = entry.paid > 0;
    if (first) entry.paid--;
    const result = entry.result;
    if (!result.ok)
      throw new LlmCallError(result.kind.startsWith('batch_') ? (result.kind as `batch_${string}`) : `batch_${result.kind}`, result.message, {
        retryable: false,
      });
    const response = { ...result.response, text: redact(result.response.text) };
    if (response.text.trim() === '') {
      // Billed all the same: the error carries it, as an online empty answer's does.
      const error = new LlmCallError('empty_response', `${this.id} returned an empty completion in its batch`, { retryable: false });
      if (first) Object.assign(error, { billed: { ...response.usage }, billedUsd: this.batchCostOf(response.usage) });
      throw error;
    }
    const cache = this.offline ? undefined : this.options.cache;
    cache?.put(key, { response, latencyMs: 0 });
    return {
      response,
      cached: !first,
      attempts: first ? 1 : 0,
      latencyMs: 0,
      costUsd: first ? this.batchCostOf(response.usage) : 0,
      cacheKey: cache && cache.mode !== 'off' ? key : '',
      batch: true,
    };
  }

  /** The adaptive concurrency controller's state (undefined when off, and for the simulator). */
  get concurrency(): AimdStats | undefined {
    return this.aimd?.stats;
  }

  /** The agent's defaults (the paper's), overridden by what the model spec sets. */
  params(defaults: SamplingParams): SamplingParams {
    const topP = this.spec.topP ?? defaults.topP;
    return {
      temperature: this.spec.temperature ?? defaults.temperature,
      maxTokens: this.spec.maxTokens ?? defaults.maxTokens,
      ...(topP !== undefined ? { topP } : {}),
    };
  }

  costOf(usage: { inputTokens: number; outputTokens: number }): number {
    return costOfTokens(this.spec, usage);
  }

  async call(request: ChatRequest, signal: AbortSignal): Promise<CallOutcome> {
    // Sent to a chat API, its messages would go instead: another request than the one asked for.
    if (request.prompt !== undefined && !this.takesPrompt)
      throw new LlmCallError('config', `${this.id}: this provider takes no completion prompt (Bedrock's Llama and Mistral models do)`, { retryable: false });
    const batched = this.batchAnswers.size > 0 ? this.fromBatch(request) : undefined;
    if (batched) return batched;
    // The simulator is instant and deterministic: caching it would only cost disk.
    const cache = this.offline ? undefined : this.options.cache;
    if (!cache || cache.mode === 'off' || cache.mode === 'write') return this.callOnce(request, signal, cache, '');
    const key = this.keyOf(request);
    // Identical calls in flight share one HTTP request: it saves a call, and every sharer records
    // the same answer and latency, so a rerun from the cache reproduces the run byte for byte.
    const pending = this.inFlight.get(key);
    if (pending) {
      let shared: CallOutcome;
      try {
        shared = await pending;
      } catch (error) {
        // What was billed is charged to the caller that made the call, not again to each sharer.
        if (error instanceof LlmCallError && (error as { billed?: unknown }).billed) {
          const copy = new LlmCallError(error.kind, error.message, {
            retryable: error.retryable,
            ...(error.status !== undefined ? { status: error.status } : {}),
            cause: error,
          });
          throw copy;
        }
        throw error;
      }
      // Shared, so not billed again: the sharer's cost is nothing.
      return { ...shared, cached: true, attempts: 0 };
    }
    const promise = this.callOnce(request, signal, cache, key);
    this.inFlight.set(key, promise);
    try {
      return await promise;
    } finally {
      this.inFlight.delete(key);
    }
  }

  private async callOnce(request: ChatRequest, signal: AbortSignal, cache: CallCache | undefined, cacheKey: string): Promise<CallOutcome> {
    const key = cacheKey || (cache ? this.keyOf(request) : '');
    const hit = cache?.get(key);
    // An empty answer recorded by an older version is no answer: never served, in any mode.
    if (hit && hit.response.text.trim() !== '') {
      return { response: hit.response, cached: true, attempts: 0, latencyMs: hit.latencyMs, costUsd: this.costOf(hit.response.usage), cacheKey: key };
    }
    if (cache?.mode === 'replay') {
      throw new LlmCallError('cache_miss', `--cache replay: no recorded answer for this ${request.purpose} call to ${this.id} (key ${key.slice(0, 12)})`, {
        retryable: false,
      });
    }
    const estimate = maxTokensOf(request);
    let latencyMs = 0;
    // Empty answers are retried, but the provider bills their tokens: counted, never dropped.
    const billed: Usage = { inputTokens: 0, outputTokens: 0 };
    const billedSoFar = () => (billed.inputTokens + billed.outputTokens > 0 ? { billed: { ...billed }, billedUsd: this.costOf(billed) } : {});
    const { value: response, attempts } = await withRetry(
      async () => {
        // A slot first (adaptive concurrency), then the buckets: a token is never taken by a call
        // that then waits for a slot. The slot is given back before the retry layer's back-off.
        const slot = await this.aimd?.acquire(signal);
        let outcome: CallOutcomeSignal = 'other';
        // Every attempt is a request the endpoint counts: each one takes from the RPM and TPM
        // buckets, so a burst of retries cannot overrun the limits that caused the 429s.
        let reserved: number;
        try {
          reserved = await this.limiter.acquire(estimate, signal);
        } catch (error) {
          slot?.release('other');
          throw error;
        }
        let used: number | undefined;
        try {
          const t0 = performance.now();
          const r = await this.provider.complete(request, signal);
          // The simulator has no latency worth recording; 0 keeps its dialogues byte-stable.
          latencyMs = this.offline ? 0 : Math.round(performance.now() - t0);
          used = r.usage.inputTokens + r.usage.outputTokens;
          // A 200 with nothing in it is an unusable answer like a broken body: retried, then a
          // failure; never a turn or a judgment, and never cached.
          if (r.text.trim() === '') {
            billed.inputTokens += r.usage.inputTokens;
            billed.outputTokens += r.usage.outputTokens;
            throw new LlmCallError(
              'empty_response',
              `${this.id} returned an empty ${r.text === '' ? '' : 'whitespace-only '}completion (finish reason ${r.finishReason ?? 'none'})`,
              { retryable: true },
            );
          }
          outcome = 'ok';
          // A server may echo a key in an answer too.
          return { ...r, text: redact(r.text) };
        } catch (error) {
          if (error instanceof LlmCallError && error.kind === 'http' && isOverloadStatus(error.status)) {
            outcome = 'overload';
            this.limiter.overloaded();
          }
          throw error;
        } finally {
          // A failed attempt keeps its reservation: the endpoint may have spent the tokens.
          this.limiter.settle(reserved, used);
          slot?.release(outcome);
        }
      },
      this.options.retry ?? DEFAULT_RETRY,
      signal,
    ).catch((error: unknown) => {
      // A call that failed after empty answers still cost them: the error carries what was billed.
      if (error instanceof Error) Object.assign(error, billedSoFar());
      throw error;
    });
    // Committed with this turn's other writes; the stage awaits cache.committed() before it
    // records the result, which also bounds how many writes can be pending.
    cache?.put(key, { response, latencyMs });
    const extra = billedSoFar();
    return {
      response,
      cached: false,
      attempts,
      latencyMs,
      costUsd: this.costOf(response.usage) + (extra.billedUsd ?? 0),
      ...(extra.billed ? { billed: extra.billed } : {}),
      cacheKey: key,
    };
  }

  /**
   * What a call is expected to cost at most, for a spend cap: its prompt (4 characters a token)
   * and all of its max_tokens at the spec's prices; 0 when the call cache will answer it.
   */
  estimateCostOf(request: ChatRequest): number {
    const cache = this.offline ? undefined : this.options.cache;
    if (cache?.get(this.keyOf(request))?.response.text.trim()) return 0;
    return this.costOf({ inputTokens: Math.ceil(promptCharsOf(request) / 4), outputTokens: request.params.maxTokens });
  }

  /** The call-cache key: everything that decides the answer, the endpoint included when it is not the vendor's default. */
  private keyOf(request: ChatRequest): string {
    return callKey(this.spec.provider, this.spec.model, request, this.endpoint);
  }

  /**
   * Marks an answer as unusable (it did not parse, or ended as a failure): reads (--cache on/read)
   * no longer serve it, so a rerun or --retry-failed asks the endpoint again; replay still serves
   * it, to reproduce the run as it was.
   */
  reject(outcome: CallOutcome): void {
    if (outcome.cacheKey) this.options.cache.reject(outcome.cacheKey);
  }

  async close(): Promise<void> {
    // The cache is shared and closed by its owner, but the writes this client started are its
    // own: once it is closed, every answer it got is recorded.
    await this.options.cache.committed();
    await this.provider.close();
    await this.transport?.close();
  }
}

function promptCharsOf(request: ChatRequest): number {
  return (request.system?.length ?? 0) + request.messages.reduce((n, m) => n + m.content.length, 0);
}

/** The tokens a call may use at most: its prompt (4 characters a token) and its max_tokens. */
function maxTokensOf(request: ChatRequest): number {
  return Math.ceil(promptCharsOf(request) / 4) + request.params.maxTokens;
}

/** Stands in for a provider while planning: nothing is ever sent. */
class PlanOnlyProvider implements Provider {
  constructor(private readonly id: string) {}
  complete(): Promise<ChatResponse> {
    // Not retryable: a plan that reached a call is a bug to report at once, not after the back-offs.
    return Promise.reject(new LlmCallError('config', `${this.id}: a plan-only client (dry run or status) cannot make calls`, { retryable: false }));
  }
  async close(): Promise<void> {}
}

/** Imports the provider's code at the first call, so a run loads only the providers it uses. */
class LazyProvider implements Provider {
  private ready: Provider | undefined;
  private loading: Promise<Provider> | undefined;
  constructor(
    private readonly entry: ProviderEntry,
    private readonly init: ProviderInit,
  ) {}

  complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    if (this.ready) return this.ready.complete(request, signal);
    this.loading ??= this.entry.load().then((make) => (this.ready = make(this.init)));
    return this.loading.then((p) => p.complete(request, signal));
  }

  async close(): Promise<void> {
    if (this.loading) await (await this.loading).close();
  }
}
