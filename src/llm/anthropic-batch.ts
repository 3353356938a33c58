/**
 * Anthropic Message Batches: the requests go in the create call itself (POST
 * /v1/messages/batches), which is polled (GET /v1/messages/batches/{id}) until it has ended, and
 * its results are read as JSONL (GET /v1/messages/batches/{id}/results). Bodies are built and
 * replies read by the same code as online calls (anthropic.ts).
 */
import { ANTHROPIC_VERSION, anthropicBody, readAnthropicReply } from './anthropic.js';
import type { BatchApi, BatchInit, BatchLine, BatchResult, BatchState } from './batch.js';
import { batchHttp } from './batch-http.js';
import { summariseBody } from './http.js';
import { LlmCallError } from './errors.js';

interface MessageBatch {
  id: string;
  processing_status: 'in_progress' | 'canceling' | 'ended';
  created_at?: string;
  request_counts?: { processing: number; succeeded: number; errored: number; canceled: number; expired: number };
}

interface ResultLine {
  custom_id?: string;
  result?: { type?: string; message?: unknown; error?: { error?: { type?: string; message?: string }; type?: string; message?: string } };
}

/** How far back a batch may have been created before its staging was recorded (clock skew, slow answers). */
const RECOVER_SLACK_MS = 10 * 60_000;

export class AnthropicBatchApi implements BatchApi {
  /**
   * There is no upload: the requests travel with the create call, so staging keeps them here and
   * records a token of when and how many, which `recover` matches against the batches listed.
   */
  private readonly staged = new Map<string, BatchLine[]>();

  constructor(private readonly init: BatchInit) {}

  async stage(lines: BatchLine[]): Promise<string> {
    const token = `local:${Date.now()}:${lines.length}:${this.staged.size}`;
    this.staged.set(token, lines);
    return token;
  }

  async submit(token: string, signal: AbortSignal): Promise<BatchState> {
    const lines = this.staged.get(token);
    if (!lines)
      throw new LlmCallError('batch_lost', 'its requests were staged by a process that stopped before creating the batch; they are not in any batch', {
        retryable: false,
      });
    const body = { requests: lines.map((l) => ({ custom_id: l.id, params: anthropicBody(this.init.model, l.request) })) };
    const state = stateOf((await this.send('POST', '/v1/messages/batches', signal, body)) as MessageBatch);
    this.staged.delete(token);
    return state;
  }

  /**
   * A batch created by a run killed before recording it, or by a create whose answer was lost: one
   * made no earlier than the staging with as many requests and not already in a ledger. Taken when
   * exactly one fits. When several do (batches of one size, say from shards killed together), the
   * ended ones are told apart by the custom ids of their results; while that cannot be done it is
   * an error, never a guess (creating another could pay for the work twice).
   */
  async recover(token: string, known: ReadonlySet<string>, signal: AbortSignal, keys?: readonly string[]): Promise<BatchState | undefined> {
    const [, at, count] = token.split(':');
    const since = Number(at) - RECOVER_SLACK_MS;
    const fits: MessageBatch[] = [];
    let after: string | undefined;
    for (let page = 0; page < 20; page++) {
      const list = (await this.send('GET', `/v1/messages/batches?limit=100${after ? `&after_id=${encodeURIComponent(after)}` : ''}`, signal)) as {
        data?: MessageBatch[];
        has_more?: boolean;
        last_id?: string;
      };
      let older = false;
      for (const b of list.data ?? []) {
        if (b.created_at && Date.parse(b.created_at) < since) older = true;
        else if (!known.has(b.id) && total(b) === Number(count)) fits.push(b);
      }
      if (older || !list.has_more || !list.last_id) break;
      after = list.last_id;
    }
    if (fits.length <= 1) return fits.length === 1 ? stateOf(fits[0]!) : undefined;
    if (keys) {
      const want = new Set(keys);
      for (const b of fits.filter((x) => x.processing_status === 'ended')) {
        const ids = (await this.results(stateOf(b), signal)).map((r) => r.id);
        if (ids.length === want.size && ids.every((id) => want.has(id))) return stateOf(b);
      }
    }
    const running = fits.filter((x) => x.processing_status !== 'ended').length;
    throw new LlmCallError(
      'batch_ambiguous',
      `${fits.length} message batches (${fits.map((b) => b.id).join(', ')}) were made after these requests were staged, with as many requests, and no ledger holds them; ` +
        (running
          ? `plens tells them apart by their results' custom ids once they have ended (${running} still running, within 24 h): rerun then`
          : 'none of them holds exactly these requests') +
        '. Nothing was created.',
      { retryable: false },
    );
  }

  async status(batchId: string, signal: AbortSignal): Promise<BatchState> {
    return stateOf((await this.send('GET', `/v1/messages/batches/${encodeURIComponent(batchId)}`, signal)) as MessageBatch);
  }

  async cancel(batchId: string, signal: AbortSignal): Promise<BatchState> {
    return stateOf((await this.send('POST', `/v1/messages/batches/${encodeURIComponent(batchId)}/cancel`, signal, {})) as MessageBatch);
  }

  async results(state: BatchState, signal: AbortSignal): Promise<BatchResult[]> {
    // Read from this endpoint, not from the results_url the answer names: the key goes nowhere else.
    if (!state.batchId || !state.outputFileId) return [];
    const text = (await this.send('GET', `/v1/messages/batches/${encodeURIComponent(state.batchId)}/results`, signal, undefined, true)) as string;
    return text
      .split('\n')
      .filter((l) => l.trim())
      .map(resultOf);
  }

  private send(method: 'GET' | 'POST', path: string, signal: AbortSignal, body?: unknown, raw = false): Promise<unknown> {
    const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION };
    if (this.init.apiKey) headers['x-api-key'] = this.init.apiKey;
    return batchHttp(method, `${this.init.baseUrl.replace(/\/$/, '')}${path}`, headers, { body, raw, timeoutMs: this.init.timeoutMs, signal });
  }
}

function total(b: MessageBatch): number {
  const c = b.request_counts;
  return c ? c.processing + c.succeeded + c.errored + c.canceled + c.expired : -1;
}

/** Anthropic's three states as the neutral ones: an ended batch is cancelled, expired or completed by what its requests became. */
function stateOf(b: MessageBatch): BatchState {
  if (typeof b?.id !== 'string' || typeof b.processing_status !== 'string')
    throw new LlmCallError('bad_response', 'a message batch without id or processing_status', { retryable: true });
  const c = b.request_counts ?? { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
  const status =
    b.processing_status === 'in_progress'
      ? 'in_progress'
      : b.processing_status === 'canceling'
        ? 'cancelling'
        : c.canceled > 0
          ? 'cancelled'
          : c.expired > 0
            ? 'expired'
            : 'completed';
  return {
    batchId: b.id,
    status,
    // An ended batch has results to read; the id stands for them.
    ...(b.processing_status === 'ended' ? { outputFileId: b.id } : {}),
    counts: { total: total(b), completed: c.succeeded, failed: c.errored + c.canceled + c.expired },
  };
}

function resultOf(line: string): BatchResult {
  let l: ResultLine;
  try {
    l = JSON.parse(line) as ResultLine;
  } catch {
    return { id: '', ok: false, kind: 'bad_response', message: `a batch result line is not JSON: ${summariseBody(line)}` };
  }
  const id = typeof l.custom_id === 'string' ? l.custom_id : '';
  const type = l.result?.type ?? 'unknown';
  if (type === 'succeeded') {
    try {
      return { id, ok: true, response: readAnthropicReply(l.result?.message) };
    } catch (error) {
      return { id, ok: false, kind: 'bad_response', message: (error as Error).message };
    }
  }
  if (type === 'errored') {
    const e = l.result?.error?.error ?? l.result?.error;
    return { id, ok: false, kind: `batch_${e?.type ?? 'errored'}`, message: summariseBody(e?.message ?? 'errored') };
  }
  // canceled, expired
  return { id, ok: false, kind: `batch_${type === 'canceled' ? 'cancelled' : type}`, message: `the request was ${type} before it ran` };
}
