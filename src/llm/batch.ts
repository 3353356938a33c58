/**
 * A provider's batch API, provider-neutral: independent requests submitted together, answered
 * within the provider's window (24 h) at a discount. The engine's ledger (engine/batch-ledger.ts)
 * records each step before the next, so a crash never submits paid work twice.
 */
import type { ChatRequest, ChatResponse } from './types.js';

/** One request of a batch; `id` is the stage's work key (the provider's custom_id). */
export interface BatchLine {
  id: string;
  request: ChatRequest;
}

/** Where a batch is. Terminal: completed, expired, cancelled, failed. */
export type BatchStatus = 'validating' | 'in_progress' | 'finalizing' | 'cancelling' | 'completed' | 'expired' | 'cancelled' | 'failed';

export const TERMINAL_BATCH_STATUSES: readonly BatchStatus[] = ['completed', 'expired', 'cancelled', 'failed'];

export interface BatchState {
  batchId: string;
  status: BatchStatus;
  /** The provider's files holding the answers and the per-request errors (OpenAI), when there are any. */
  outputFileId?: string;
  errorFileId?: string;
  /** Requests done and failed so far, as the provider counts them. */
  counts?: { total: number; completed: number; failed: number };
}

/** How one request of a finished batch ended: an answer, or why there is none (expired, cancelled, an error). */
export type BatchResult = { id: string; ok: true; response: ChatResponse } | { id: string; ok: false; kind: string; message: string };

/**
 * One model's batch API. Submitting is two steps, each recorded by the caller before the next:
 * `stage` (OpenAI uploads the input; nothing is charged yet) and `submit` (create the batch: paid).
 * `recover` finds the batch made from a staged input when a crash came between submit and its
 * record, or the create's answer was lost (`known`: batch ids the ledgers already hold, never
 * taken; `keys`: the staged requests' custom ids, for a provider that can only tell its batches
 * apart by what they hold). It throws (kind `batch_ambiguous`) rather than guess. A `submit` that cannot be made
 * any more (the staged requests lived only in a process that is gone) fails with kind `batch_lost`.
 */
export interface BatchApi {
  stage(lines: BatchLine[], signal: AbortSignal): Promise<string>;
  submit(staged: string, signal: AbortSignal): Promise<BatchState>;
  recover(staged: string, known: ReadonlySet<string>, signal: AbortSignal, keys?: readonly string[]): Promise<BatchState | undefined>;
  status(batchId: string, signal: AbortSignal): Promise<BatchState>;
  /** Every result of a terminal batch: answers and errors; requests it never reached are absent. */
  results(state: BatchState, signal: AbortSignal): Promise<BatchResult[]>;
  cancel(batchId: string, signal: AbortSignal): Promise<BatchState>;
  /**
   * The fewest requests a batch may hold (Bedrock: 100 records per job), when the provider has a
   * minimum: fewer left over are called online instead (never padded with paid filler).
   */
  readonly minItems?: number;
}

/** What a batch API is made from: the model and the endpoint and key the client resolved. */
export interface BatchInit {
  model: string;
  baseUrl: string;
  apiKey: string | undefined;
  timeoutMs: number;
  /** For a provider whose SDK signs and sends (Bedrock): where, as whom, and the spec's batch settings. */
  sdk?: {
    region?: string;
    env: NodeJS.ProcessEnv;
    /** s3://bucket/prefix: inputs under prefix/input/, outputs under prefix/output/. */
    bucket: string;
    roleArn: string;
    /** An S3-compatible endpoint (addressed path-style), else AWS S3. */
    s3Endpoint?: string;
    /** The Bedrock control-plane endpoint, else the regional one. */
    controlEndpoint?: string;
    minRecords?: number;
  };
}

export function isTerminal(status: BatchStatus): boolean {
  return TERMINAL_BATCH_STATUSES.includes(status);
}
