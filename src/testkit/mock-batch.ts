/**
 * The OpenAI Batch API on the mock server: POST /v1/files (multipart, purpose "batch"),
 * GET /v1/files/{id}/content, POST /v1/batches, GET /v1/batches (newest first), GET
 * /v1/batches/{id}, POST /v1/batches/{id}/cancel; and Anthropic Message Batches: POST and GET
 * /v1/messages/batches, GET /v1/messages/batches/{id} and .../results, POST .../cancel. Each batch's lifecycle is controlled by a plan
 * (validating -> in_progress -> completed / expired / cancelled / failed, partial results, per-request
 * errors), advanced by status checks, so a test decides when a batch ends. Answers come from the
 * server's own reply function, as for online calls. It counts uploads and submissions.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export interface MockBatchPlan {
  /** Status checks that see the batch in progress before it ends (default 1). */
  polls?: number;
  /** Stay in progress until the test calls release(). */
  hold?: boolean;
  /** How it ends (default completed). */
  end?: 'completed' | 'expired' | 'cancelled' | 'failed';
  /** For an expired or cancelled batch: the requests answered before it ended (default none). */
  answered?: (customId: string, index: number) => boolean;
  /** A request's own HTTP error in the batch (its line goes to the error file). */
  itemStatus?: (customId: string, index: number) => number | undefined;
}

/**
 * What becomes of a create call's answer after the batch was made (the side effect has happened,
 * as on a real network): `reset` drops the connection, `status` answers with a 5xx, `hang` never
 * answers (the client's timeout ends it), `slow` answers after `delayMs`.
 */
export type MockCreateFault = { kind: 'reset' } | { kind: 'status'; status: number } | { kind: 'hang' } | { kind: 'slow'; delayMs: number };

export interface MockBatchOptions {
  /** The plan of the n-th batch created (0-based); default: completed after one status check. */
  plan?: (batchIndex: number) => MockBatchPlan;
  /** The n-th create call (0-based, both APIs, counting only calls that made a batch): its answer's fate. */
  createFault?: (createIndex: number) => MockCreateFault | undefined;
  /** The n-th create call (0-based, every call): refused with this status before anything is made (a 429, a 400). */
  createReject?: (callIndex: number) => number | undefined;
}

export interface MockBatchInfo {
  id: string;
  status: string;
  inputFileId: string;
  total: number;
  polls: number;
}

/** What a test sees of, and does to, the mock's batches. */
export interface MockBatchControl {
  /** Batches created (POST /v1/batches): paid work. */
  readonly submissions: number;
  /** How many batches carried each custom id (a request paid for more than once has more than 1). */
  submittedPerCustomId(): Map<string, number>;
  /** Files uploaded. */
  readonly uploads: number;
  list(): MockBatchInfo[];
  /** Held batches end at their next status check. */
  release(): void;
  /** The provider forgets a batch (deleted, or another account's): it answers 404 from now on. */
  forget(id: string): void;
}

/** How the server answers one request of a batch: what an online call of the same body would get. */
export type BatchAnswerer = (api: 'openai' | 'anthropic', body: unknown, batchId: string) => { status: number; body: unknown };

/** Paths the batch mock answers. */
export function isBatchPath(path: string): boolean {
  return path.startsWith('/v1/files') || path.startsWith('/v1/batches') || path.startsWith('/v1/messages/batches');
}

interface Batch {
  api: 'openai' | 'anthropic';
  id: string;
  index: number;
  plan: MockBatchPlan;
  inputFileId: string;
  lines: Array<{ customId: string; body: unknown }>;
  status: string;
  polls: number;
  createdAt: number;
  outputFileId: string | null;
  errorFileId: string | null;
  completed: number;
  failed: number;
  /** Anthropic's counts of what the requests became. */
  canceled: number;
  expired: number;
  cancelRequested: boolean;
  errors: string | null;
  endedAt: string | null;
}

/** Both APIs' batches end in one of these (the mock keeps OpenAI's names for both). */
const hasEnded = (b: Batch): boolean => ['completed', 'expired', 'cancelled', 'failed'].includes(b.status);

/** A cancel asked of a running batch: it ends, cancelled, at its next status check. */
function requestCancel(b: Batch): void {
  if (hasEnded(b)) return;
  b.cancelRequested = true;
  b.status = 'cancelling';
}

const EXPIRED = 'This request could not be executed before the completion window expired.';
const CANCELLED = 'This request was not executed because the batch was cancelled.';

export function createMockBatch(options: MockBatchOptions, answer: BatchAnswerer) {
  const files = new Map<string, { purpose: string; content: string; filename: string }>();
  const batches = new Map<string, Batch>();
  let submissions = 0;
  let uploads = 0;
  let released = false;
  let nextFile = 0;

  /** A new batch of either API: a paid submission, counted, with its test plan. */
  const created = (api: Batch['api'], prefix: string, what: Pick<Batch, 'inputFileId' | 'lines' | 'status'>): Batch => {
    const index = submissions++;
    return {
      api,
      id: `${prefix}${index}`,
      index,
      plan: options.plan?.(index) ?? {},
      ...what,
      polls: 0,
      createdAt: Math.floor(Date.now() / 1000),
      outputFileId: null,
      errorFileId: null,
      completed: 0,
      failed: 0,
      canceled: 0,
      expired: 0,
      cancelRequested: false,
      errors: null,
      endedAt: null,
    };
  };

  const addFile = (purpose: string, content: string, filename: string): string => {
    const id = `file-mock-${nextFile++}`;
    files.set(id, { purpose, content, filename });
    return id;
  };

  const view = (b: Batch) => ({
    id: b.id,
    object: 'batch',
    endpoint: '/v1/chat/completions',
    errors: b.errors ? { object: 'list', data: [{ code: 'invalid_request', message: b.errors }] } : null,
    input_file_id: b.inputFileId,
    completion_window: '24h',
    status: b.status,
    output_file_id: b.outputFileId,
    error_file_id: b.errorFileId,
    created_at: b.createdAt,
    request_counts: { total: b.lines.length, completed: b.completed, failed: b.failed },
    metadata: null,
  });

  const anthropicView = (b: Batch) => {
    const ended = hasEnded(b);
    return {
      id: b.id,
      type: 'message_batch',
      processing_status: ended ? 'ended' : b.status === 'cancelling' ? 'canceling' : 'in_progress',
      request_counts: {
        processing: ended ? 0 : b.lines.length,
        succeeded: b.completed,
        errored: b.failed - b.canceled - b.expired,
        canceled: b.canceled,
        expired: b.expired,
      },
      ended_at: b.endedAt,
      created_at: new Date(b.createdAt * 1000).toISOString(),
      expires_at: new Date((b.createdAt + 86_400) * 1000).toISOString(),
      cancel_initiated_at: null,
      results_url: ended ? `/v1/messages/batches/${b.id}/results` : null,
    };
  };

  /** Ends a batch: its output file (answers) and error file (request errors, and what it never reached). */
  const finish = (b: Batch, end: NonNullable<MockBatchPlan['end']>): void => {
    b.status = end;
    b.endedAt = new Date().toISOString();
    if (end === 'failed' && b.api === 'openai') {
      b.errors ??= 'the batch failed (mock)';
      return;
    }
    const out: string[] = [];
    const err: string[] = [];
    b.lines.forEach((l, i) => {
      const reached = end === 'completed' || (b.plan.answered?.(l.customId, i) ?? false);
      if (!reached) {
        b.failed++;
        if (end === 'expired') b.expired++;
        else b.canceled++;
        if (b.api === 'anthropic') out.push(JSON.stringify({ custom_id: l.customId, result: { type: end === 'expired' ? 'expired' : 'canceled' } }));
        else {
          const code = end === 'expired' ? 'batch_expired' : 'batch_cancelled';
          err.push(
            JSON.stringify({
              id: `batch_req_${b.id}_${i}`,
              custom_id: l.customId,
              response: null,
              error: { code, message: end === 'expired' ? EXPIRED : CANCELLED },
            }),
          );
        }
        return;
      }
      const own = b.plan.itemStatus?.(l.customId, i);
      const a = own ? { status: own, body: { error: { message: `HTTP ${own} (mock)`, type: 'invalid_request_error' } } } : answer(b.api, l.body, b.id);
      if (a.status === 200) b.completed++;
      else b.failed++;
      if (b.api === 'anthropic') {
        const result =
          a.status === 200
            ? { type: 'succeeded', message: a.body }
            : { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: `HTTP ${a.status} (mock)` } } };
        out.push(JSON.stringify({ custom_id: l.customId, result }));
        return;
      }
      const line = JSON.stringify({
        id: `batch_req_${b.id}_${i}`,
        custom_id: l.customId,
        response: { status_code: a.status, request_id: `req_${i}`, body: a.body },
        error: null,
      });
      (a.status === 200 ? out : err).push(line);
    });
    if (out.length) b.outputFileId = addFile('batch_output', `${out.join('\n')}\n`, `${b.id}_output.jsonl`);
    if (err.length) b.errorFileId = addFile('batch_output', `${err.join('\n')}\n`, `${b.id}_error.jsonl`);
  };

  const poll = (b: Batch): void => {
    if (hasEnded(b)) return;
    b.polls++;
    if (b.cancelRequested) finish(b, 'cancelled');
    else if (b.errors) finish(b, 'failed');
    else if ((b.plan.hold && !released) || b.polls <= (b.plan.polls ?? 1)) b.status = 'in_progress';
    else finish(b, b.plan.end ?? 'completed');
  };

  const create = (body: Record<string, unknown>): { status: number; body: unknown } => {
    const fileId = body['input_file_id'];
    const file = typeof fileId === 'string' ? files.get(fileId) : undefined;
    if (file?.purpose !== 'batch')
      return { status: 400, body: { error: { message: `No such batch input file: ${String(fileId)}`, type: 'invalid_request_error' } } };
    if (body['endpoint'] !== '/v1/chat/completions' || body['completion_window'] !== '24h')
      return { status: 400, body: { error: { message: 'endpoint must be /v1/chat/completions and completion_window 24h', type: 'invalid_request_error' } } };
    const b = created('openai', 'batch_mock_', { inputFileId: fileId as string, lines: [], status: 'validating' });
    // The input is checked as OpenAI does: every line a POST to the batch's endpoint, custom ids unique.
    const seen = new Set<string>();
    for (const [n, raw] of file.content.split('\n').entries()) {
      if (!raw.trim()) continue;
      let line: { custom_id?: unknown; method?: unknown; url?: unknown; body?: unknown };
      try {
        line = JSON.parse(raw);
      } catch {
        b.errors = `line ${n + 1} is not JSON`;
        break;
      }
      if (typeof line.custom_id !== 'string' || seen.has(line.custom_id)) b.errors = `line ${n + 1}: custom_id missing or repeated`;
      else if (line.method !== 'POST' || line.url !== '/v1/chat/completions') b.errors = `line ${n + 1}: method must be POST and url /v1/chat/completions`;
      if (b.errors) break;
      seen.add(line.custom_id as string);
      b.lines.push({ customId: line.custom_id as string, body: line.body });
    }
    batches.set(b.id, b);
    return { status: 200, body: view(b) };
  };

  /** Anthropic's create: the requests inline, checked up front (custom ids of 1-64 letters, digits, _ and -, unique). */
  const createAnthropic = (body: Record<string, unknown>): { status: number; body: unknown } => {
    const requests = body['requests'];
    const bad = (message: string) => ({ status: 400, body: { type: 'error', error: { type: 'invalid_request_error', message } } });
    if (!Array.isArray(requests) || requests.length === 0) return bad('requests: a non-empty array is required');
    const seen = new Set<string>();
    for (const [i, r] of requests.entries()) {
      const id = (r as { custom_id?: unknown })?.custom_id;
      if (typeof id !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(id) || seen.has(id)) return bad(`requests.${i}.custom_id: missing, malformed or repeated`);
      seen.add(id);
    }
    const lines = requests.map((r: { custom_id: string; params: unknown }) => ({ customId: r.custom_id, body: r.params }));
    const b = created('anthropic', 'msgbatch_mock_', { inputFileId: '', lines, status: 'in_progress' });
    batches.set(b.id, b);
    return { status: 200, body: anthropicView(b) };
  };

  let creates = 0;
  let createCalls = 0;
  /** A create's answer, after the batch was made: sent, or lost as the test's fault says. */
  const answerCreate = (res: ServerResponse, r: { status: number }, send: () => void): void => {
    const fault = r.status === 200 ? options.createFault?.(creates++) : undefined;
    if (!fault) {
      send();
      return;
    }
    if (fault.kind === 'reset') res.socket?.destroy();
    else if (fault.kind === 'status') {
      const payload = JSON.stringify({ error: { message: `HTTP ${fault.status} (mock, after the batch was made)`, type: 'server_error' } });
      res.writeHead(fault.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
    } else if (fault.kind === 'slow') setTimeout(send, fault.delayMs);
    // hang: no answer at all; the client's timeout (or the server's close) ends the exchange.
  };

  /** Answers a request under /v1/files or /v1/batches; false when the path is not one of them. */
  const handle = (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
    raw: Buffer,
    authorized: boolean,
  ): Promise<boolean> | boolean => {
    if (!isBatchPath(path)) return false;
    if (path.startsWith('/v1/messages/batches')) return handleAnthropic(req, res, path, query, raw, authorized);
    const reply = (status: number, body: unknown, text = false) => {
      const payload = text ? String(body) : JSON.stringify(body);
      res.writeHead(status, { 'content-type': text ? 'application/jsonl' : 'application/json', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
    };
    if (!authorized) {
      reply(401, { error: { message: 'Invalid or missing API key (mock)', type: 'invalid_request_error', code: 'invalid_api_key' } });
      return true;
    }
    const notFound = () => reply(404, { error: { message: `No such object: ${path}`, type: 'invalid_request_error' } });
    const m = req.method;
    if (m === 'POST' && path === '/v1/files') {
      return (async () => {
        const form = await new Response(new Uint8Array(raw), { headers: { 'content-type': String(req.headers['content-type'] ?? '') } })
          .formData()
          .catch(() => undefined);
        const file = form?.get('file');
        const purpose = form?.get('purpose');
        if (!form || typeof purpose !== 'string' || !file || typeof file === 'string') {
          reply(400, { error: { message: 'expected multipart/form-data with purpose and file', type: 'invalid_request_error' } });
          return true;
        }
        uploads++;
        const content = await file.text();
        const id = addFile(purpose, content, file.name);
        reply(200, { id, object: 'file', bytes: Buffer.byteLength(content), filename: file.name, purpose, created_at: Math.floor(Date.now() / 1000) });
        return true;
      })();
    }
    const content = /^\/v1\/files\/([^/]+)\/content$/.exec(path);
    if (m === 'GET' && content) {
      const file = files.get(decodeURIComponent(content[1]!));
      if (file) reply(200, file.content, true);
      else notFound();
      return true;
    }
    if (m === 'POST' && path === '/v1/batches') {
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      const refused = options.createReject?.(createCalls++);
      if (refused !== undefined) {
        reply(refused, {
          error: { message: `HTTP ${refused} (mock): nothing was created`, type: refused === 429 ? 'rate_limit_error' : 'invalid_request_error' },
        });
        return true;
      }
      const r = typeof body === 'object' && body !== null ? create(body as Record<string, unknown>) : { status: 400, body: { error: { message: 'not JSON' } } };
      answerCreate(res, r, () => reply(r.status, r.body));
      return true;
    }
    if (m === 'GET' && path === '/v1/batches') {
      const all = [...batches.values()].reverse();
      const after = query.get('after');
      const from = after ? all.findIndex((b) => b.id === after) + 1 : 0;
      const limit = Number(query.get('limit') ?? 20);
      const page = all.slice(from, from + limit);
      reply(200, {
        object: 'list',
        data: page.map(view),
        first_id: page[0]?.id ?? null,
        last_id: page.at(-1)?.id ?? null,
        has_more: from + limit < all.length,
      });
      return true;
    }
    const one = /^\/v1\/batches\/([^/]+)(\/cancel)?$/.exec(path);
    const b = one ? batches.get(decodeURIComponent(one[1]!)) : undefined;
    if (!b) {
      notFound();
      return true;
    }
    if (m === 'GET' && !one![2]) poll(b);
    else if (m === 'POST' && one![2]) {
      requestCancel(b);
    } else {
      notFound();
      return true;
    }
    reply(200, view(b));
    return true;
  };

  const handleAnthropic = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams, raw: Buffer, authorized: boolean): boolean => {
    const reply = (status: number, body: unknown, text = false) => {
      const payload = text ? String(body) : JSON.stringify(body);
      res.writeHead(status, { 'content-type': text ? 'application/binary' : 'application/json', 'content-length': Buffer.byteLength(payload) });
      res.end(payload);
    };
    if (!authorized) {
      reply(401, { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key (mock)' } });
      return true;
    }
    const notFound = () => reply(404, { type: 'error', error: { type: 'not_found_error', message: `No such object: ${path}` } });
    const m = req.method;
    if (m === 'POST' && path === '/v1/messages/batches') {
      let body: unknown;
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch {
        body = undefined;
      }
      const refused = options.createReject?.(createCalls++);
      if (refused !== undefined) {
        reply(refused, {
          type: 'error',
          error: { type: refused === 429 ? 'rate_limit_error' : 'invalid_request_error', message: `HTTP ${refused} (mock): nothing was created` },
        });
        return true;
      }
      const r = typeof body === 'object' && body !== null ? createAnthropic(body as Record<string, unknown>) : { status: 400, body: { type: 'error' } };
      answerCreate(res, r, () => reply(r.status, r.body));
      return true;
    }
    if (m === 'GET' && path === '/v1/messages/batches') {
      const all = [...batches.values()].filter((b) => b.api === 'anthropic').reverse();
      const after = query.get('after_id');
      const from = after ? all.findIndex((b) => b.id === after) + 1 : 0;
      const limit = Number(query.get('limit') ?? 20);
      const page = all.slice(from, from + limit);
      reply(200, { data: page.map(anthropicView), first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: from + limit < all.length });
      return true;
    }
    const one = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/.exec(path);
    const b = one ? batches.get(decodeURIComponent(one[1]!)) : undefined;
    if (b?.api !== 'anthropic') {
      notFound();
      return true;
    }
    const sub = one![2];
    if (m === 'GET' && sub === '/results') {
      const file = b.outputFileId ? files.get(b.outputFileId) : undefined;
      if (file) reply(200, file.content, true);
      else notFound();
      return true;
    }
    if (m === 'GET' && !sub) poll(b);
    else if (m === 'POST' && sub === '/cancel') {
      requestCancel(b);
    } else {
      notFound();
      return true;
    }
    reply(200, anthropicView(b));
    return true;
  };

  const control: MockBatchControl = {
    get submissions() {
      return submissions;
    },
    get uploads() {
      return uploads;
    },
    submittedPerCustomId: () => {
      const counts = new Map<string, number>();
      for (const b of batches.values()) for (const l of b.lines) counts.set(l.customId, (counts.get(l.customId) ?? 0) + 1);
      return counts;
    },
    list: () => [...batches.values()].map((b) => ({ id: b.id, status: b.status, inputFileId: b.inputFileId, total: b.lines.length, polls: b.polls })),
    release: () => {
      released = true;
    },
    forget: (id: string) => {
      batches.delete(id);
    },
  };
  return { handle, control };
}
