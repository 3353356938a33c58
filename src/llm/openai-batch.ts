/**
 * The OpenAI Batch API: the requests go up as a JSONL file (POST /files, purpose "batch"), a batch
 * is created from it (POST /batches, 24 h window), polled (GET /batches/{id}), and its output and
 * error files are read (GET /files/{id}/content). Lines are built and answers read by the same
 * code as online calls (openai.ts).
 */
import { redact } from '../core/redact.js';
import type { BatchApi, BatchInit, BatchLine, BatchResult, BatchState, BatchStatus } from './batch.js';
import { batchHttp } from './batch-http.js';
import { summariseBody } from './http.js';
import { LlmCallError } from './errors.js';
import { openAiChatBody, readOpenAiReply } from './openai.js';

interface OpenAiBatch {
  id: string;
  status: BatchStatus;
  input_file_id?: string;
  output_file_id?: string | null;
  error_file_id?: string | null;
  request_counts?: { total: number; completed: number; failed: number };
}

interface OutputLine {
  custom_id?: string;
  response?: { status_code?: number; body?: unknown } | null;
  error?: { code?: string; message?: string } | null;
}

/** Marks plens's batches, so `recover` looks only at them. */
const METADATA = { created_by: 'plens' };

export class OpenAiBatchApi implements BatchApi {
  constructor(private readonly init: BatchInit) {}

  async stage(lines: BatchLine[], signal: AbortSignal): Promise<string> {
    const jsonl = lines
      .map((l) => JSON.stringify({ custom_id: l.id, method: 'POST', url: '/v1/chat/completions', body: openAiChatBody(this.init.model, l.request) }))
      .join('\n');
    const form = new FormData();
    form.append('purpose', 'batch');
    form.append('file', new Blob([`${jsonl}\n`], { type: 'application/jsonl' }), 'plens-batch.jsonl');
    const file = (await this.send('POST', '/files', signal, form)) as { id?: string };
    if (typeof file.id !== 'string') throw new LlmCallError('bad_response', 'the file upload answered without a file id', { retryable: true });
    return file.id;
  }

  async submit(staged: string, signal: AbortSignal): Promise<BatchState> {
    const body = { input_file_id: staged, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: METADATA };
    return stateOf((await this.send('POST', '/batches', signal, body)) as OpenAiBatch);
  }

  async recover(staged: string, _known: ReadonlySet<string>, signal: AbortSignal): Promise<BatchState | undefined> {
    // The newest batches first; a batch made from this file was made right after the upload.
    let after: string | undefined;
    for (let page = 0; page < 20; page++) {
      const list = (await this.send('GET', `/batches?limit=100${after ? `&after=${encodeURIComponent(after)}` : ''}`, signal)) as {
        data?: OpenAiBatch[];
        has_more?: boolean;
        last_id?: string;
      };
      const found = list.data?.find((b) => b.input_file_id === staged);
      if (found) return stateOf(found);
      if (!list.has_more || !list.last_id) return undefined;
      after = list.last_id;
    }
    return undefined;
  }

  async status(batchId: string, signal: AbortSignal): Promise<BatchState> {
    return stateOf((await this.send('GET', `/batches/${encodeURIComponent(batchId)}`, signal)) as OpenAiBatch);
  }

  async cancel(batchId: string, signal: AbortSignal): Promise<BatchState> {
    return stateOf((await this.send('POST', `/batches/${encodeURIComponent(batchId)}/cancel`, signal, {})) as OpenAiBatch);
  }

  async results(state: BatchState, signal: AbortSignal): Promise<BatchResult[]> {
    const out: BatchResult[] = [];
    for (const fileId of [state.outputFileId, state.errorFileId]) {
      if (!fileId) continue;
      const text = (await this.send('GET', `/files/${encodeURIComponent(fileId)}/content`, signal, undefined, true)) as string;
      for (const line of text.split('\n')) if (line.trim()) out.push(resultOf(line));
    }
    return out;
  }

  private send(method: 'GET' | 'POST', path: string, signal: AbortSignal, body?: unknown, raw = false): Promise<unknown> {
    const headers: Record<string, string> = this.init.apiKey ? { authorization: `Bearer ${this.init.apiKey}` } : {};
    return batchHttp(method, `${this.init.baseUrl.replace(/\/$/, '')}${path}`, headers, { body, raw, timeoutMs: this.init.timeoutMs, signal });
  }
}

function stateOf(b: OpenAiBatch): BatchState {
  if (typeof b?.id !== 'string' || typeof b.status !== 'string')
    throw new LlmCallError('bad_response', 'a batch object without id or status', { retryable: true });
  return {
    batchId: b.id,
    status: b.status,
    ...(b.output_file_id ? { outputFileId: b.output_file_id } : {}),
    ...(b.error_file_id ? { errorFileId: b.error_file_id } : {}),
    ...(b.request_counts ? { counts: b.request_counts } : {}),
  };
}

/** One line of an output or error file: an answer (status 200 and a readable body), or why there is none. */
function resultOf(line: string): BatchResult {
  let l: OutputLine;
  try {
    l = JSON.parse(line) as OutputLine;
  } catch {
    return { id: '', ok: false, kind: 'bad_response', message: `a batch result line is not JSON: ${summariseBody(line)}` };
  }
  const id = typeof l.custom_id === 'string' ? l.custom_id : '';
  if (l.error)
    return { id, ok: false, kind: `batch_${(l.error.code ?? 'error').replace(/^batch_/, '')}`, message: redact(l.error.message ?? l.error.code ?? 'error') };
  const status = l.response?.status_code ?? 0;
  if (status < 200 || status >= 300)
    return { id, ok: false, kind: `http_${status}`, message: `HTTP ${status} in the batch: ${summariseBody(JSON.stringify(l.response?.body ?? null))}` };
  try {
    return { id, ok: true, response: readOpenAiReply(l.response?.body) };
  } catch (error) {
    return { id, ok: false, kind: 'bad_response', message: (error as Error).message };
  }
}
