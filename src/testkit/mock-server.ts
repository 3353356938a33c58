/**
 * A local mock LLM server for tests and benchmarks: it speaks the OpenAI Chat
 * Completions API (POST /v1/chat/completions) and the Anthropic Messages API
 * (POST /v1/messages) over real HTTP on 127.0.0.1, and injects real faults
 * (error statuses, connection resets, hangs, broken bodies).
 *
 * Built on node:http only and kept lean: one JSON.parse and one JSON.stringify
 * per request, a SHA-1 of the body for the `attempt` count; nothing kept when
 * `keepRequests` and `countAttempts` are off.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PythonRandom } from '../stats/python-random.js';
import { createMockBatch, isBatchPath, type MockBatchControl, type MockBatchOptions } from './mock-batch.js';

export type MockFault =
  | { kind: 'status'; status: number; retryAfterSeconds?: number; body?: string }
  | { kind: 'reset' }
  | { kind: 'hang' }
  | { kind: 'garbage' }
  | { kind: 'truncated' }
  | { kind: 'empty-choices' }
  /** A well-formed 200 whose completion is this text (empty or whitespace-only: an unusable answer). */
  | { kind: 'text'; text: string };

export interface MockRequest {
  api: 'openai' | 'anthropic';
  /** 0-based order of the parsed requests over the server's life (requests[i].index === i while they are kept). */
  index: number;
  /** How many earlier requests had exactly the same body (0 for the first; always 0 with `countAttempts` off). */
  attempt: number;
  /** SHA-1 of the request's body as it arrived, base64 (a batch's line: of its body serialised again). */
  bodyDigest: string;
  model: string;
  /** The system prompt ('' when none was sent). */
  system: string;
  /** Whether the request carried a system prompt at all (a system message, or Anthropic's `system`). */
  systemSent: boolean;
  messages: Array<{ role: 'user' | 'assistant'; content: string }>;
  temperature: number | undefined;
  maxTokens: number | undefined;
  headers: Record<string, string | string[] | undefined>;
  /** The batch it came in (the Batch API), absent for an online call. */
  batch?: string;
}

export interface MockLlmOptions {
  port?: number;
  latencyMs?: number;
  /**
   * Spreads each answer's latency uniformly over latencyMs ± jitterMs (a fixed pseudo-random
   * sequence, so runs repeat): the mean stays latencyMs, as real endpoints vary around theirs.
   */
  jitterMs?: number;
  reply?: (req: MockRequest) => string;
  fault?: (req: MockRequest) => MockFault | undefined;
  terminateAfter?: number;
  requireAuth?: boolean;
  keepRequests?: boolean;
  /**
   * Counts identical bodies for `attempt` (on by default). The count keeps a digest of every body
   * the server has seen: a long-lived mock (the benchmarks') turns it off, and keeps nothing.
   */
  countAttempts?: boolean;
  /** The OpenAI Batch API's lifecycle (mock-batch.ts). */
  batch?: MockBatchOptions;
  /** Sees every online request body as it arrived (the bench samples them to replay the same bodies). */
  observeBody?: (raw: Buffer) => void;
}

export interface MockLlmServer {
  url: string;
  requests: MockRequest[];
  /** The Batch API's submissions and batches (mock-batch.ts). */
  batch: MockBatchControl;
  stats(): { requests: number; outcomes: Record<string, number> };
  close(): Promise<void>;
}

type Api = MockRequest['api'];

const OPENAI_PATH = '/v1/chat/completions';
const ANTHROPIC_PATH = '/v1/messages';
const GARBAGE_BODY = '<html><head><title>502 Bad Gateway</title></head><body>upstream sent garbage {"choices": [</body></html>';
const AUTH_FAULT: MockFault = { kind: 'status', status: 401 };
const TERMINATE_WORD = /\bTERMINATE\b/;
const ASSISTANT_MARK = '[ASSISTANT]:';

/** The mock's token estimate: one token per 4 characters, rounded up (so at least 1 for non-empty text). */
export function countTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

const USER_LINES = [
  'Hi! I need some help with this. What would you suggest I start with?',
  'Thanks. Could you make that a bit more specific to my situation?',
  'That sounds good. Is there anything I should watch out for?',
  'Okay, and what would you recommend as the next step?',
];
const USER_CLOSING = "Great, that's everything I needed. Thanks for your help!";

/**
 * The default, deterministic reply. For the simulated user agent (its system prompt
 * contains the word TERMINATE) a short user-like turn, which ends with " TERMINATE"
 * once the rendered conversation in the last message holds at least `terminateAfter`
 * "[ASSISTANT]:" lines. For the assistant side, a short sentence carrying a stable
 * 8-hex-char digest of the prompt, so different prompts give different replies.
 */
export function defaultReply(req: MockRequest, terminateAfter = 2): string {
  if (TERMINATE_WORD.test(req.system)) {
    const last = req.messages.length > 0 ? req.messages[req.messages.length - 1]!.content : '';
    const turns = countOccurrences(last, ASSISTANT_MARK);
    if (turns >= terminateAfter) return `${USER_CLOSING} TERMINATE`;
    return USER_LINES[turns % USER_LINES.length]!;
  }
  return `Here is a concise answer tailored to your request (ref ${digest(req)}): start simple, then adjust to your preferences.`;
}

function countOccurrences(text: string, needle: string): number {
  let n = 0;
  let at = text.indexOf(needle);
  while (at !== -1) {
    n++;
    at = text.indexOf(needle, at + needle.length);
  }
  return n;
}

/** FNV-1a (32 bit) over the system prompt and the messages, as 8 hex chars. */
function digest(req: MockRequest): string {
  let h = fnv(0x811c9dc5, req.system);
  for (const m of req.messages) {
    h = fnv(h, m.role === 'user' ? '\u0001' : '\u0002');
    h = fnv(h, m.content);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

function fnv(hash: number, text: string): number {
  let h = hash;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

// ---------------------------------------------------------------------------
// Request parsing

type Parsed = Omit<MockRequest, 'api' | 'index' | 'attempt' | 'bodyDigest' | 'headers'>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A string, or an array of content parts/blocks whose text parts are joined with newlines; null/absent is ''. */
function flatten(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (content === null || content === undefined) return '';
  if (!Array.isArray(content)) return undefined;
  let out = '';
  let first = true;
  for (const part of content) {
    if (typeof part === 'string') {
      out += first ? part : `\n${part}`;
      first = false;
    } else if (isObject(part) && typeof part['text'] === 'string') {
      out += first ? part['text'] : `\n${part['text']}`;
      first = false;
    }
  }
  return out;
}

function numberOrUndefined(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function parseCommon(body: unknown): Record<string, unknown> | string {
  if (!isObject(body)) return 'the request body must be a JSON object';
  if (typeof body['model'] !== 'string' || body['model'] === '') return 'model: field required';
  if (!Array.isArray(body['messages'])) return 'messages: field required (an array)';
  if (body['stream'] === true) return 'stream: the mock server does not support streaming';
  return body;
}

function parseOpenAi(raw: unknown): Parsed | string {
  const body = parseCommon(raw);
  if (typeof body === 'string') return body;
  const list = body['messages'] as unknown[];
  let system = '';
  let systemSent = false;
  const messages: Parsed['messages'] = [];
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    if (!isObject(m)) return `messages[${i}]: must be an object`;
    const role = m['role'];
    const content = flatten(m['content']);
    if (content === undefined) return `messages[${i}].content: must be a string or an array of content parts`;
    if (role === 'system' || role === 'developer') {
      system = systemSent ? `${system}\n${content}` : content;
      systemSent = true;
    } else if (role === 'assistant') messages.push({ role: 'assistant', content });
    else if (role === 'user' || role === 'tool' || role === 'function') messages.push({ role: 'user', content });
    else return `messages[${i}].role: invalid role ${JSON.stringify(role)}`;
  }
  return {
    model: body['model'] as string,
    system,
    systemSent,
    messages,
    temperature: numberOrUndefined(body['temperature']),
    maxTokens: numberOrUndefined(body['max_completion_tokens']) ?? numberOrUndefined(body['max_tokens']),
  };
}

function parseAnthropic(raw: unknown): Parsed | string {
  const body = parseCommon(raw);
  if (typeof body === 'string') return body;
  // The Messages API takes no system prompt at all as well as one.
  const systemSent = body['system'] !== undefined;
  const system = systemSent ? flatten(body['system']) : '';
  if (system === undefined) return 'system: must be a string or an array of text blocks';
  const list = body['messages'] as unknown[];
  const messages: Parsed['messages'] = [];
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    if (!isObject(m)) return `messages.${i}: must be an object`;
    const role = m['role'];
    if (role !== 'user' && role !== 'assistant') return `messages.${i}.role: Unexpected role ${JSON.stringify(role)}`;
    const content = flatten(m['content']);
    if (content === undefined) return `messages.${i}.content: must be a string or an array of content blocks`;
    messages.push({ role, content });
  }
  return {
    model: body['model'] as string,
    system,
    systemSent,
    messages,
    temperature: numberOrUndefined(body['temperature']),
    maxTokens: numberOrUndefined(body['max_tokens']),
  };
}

function isAuthorized(api: Api, headers: IncomingMessage['headers']): boolean {
  if (api === 'anthropic') {
    const key = headers['x-api-key'];
    return typeof key === 'string' && key.trim() !== '';
  }
  const auth = headers['authorization'];
  return typeof auth === 'string' && /^Bearer\s+\S/i.test(auth);
}

function inputTokens(req: MockRequest): number {
  let chars = req.system.length;
  for (const m of req.messages) chars += m.content.length;
  return Math.ceil(chars / 4);
}

// ---------------------------------------------------------------------------
// Response bodies

function successBody(api: Api, req: MockRequest, text: string | undefined): string {
  const promptTokens = inputTokens(req);
  const completionTokens = text === undefined ? 0 : countTokens(text);
  if (api === 'openai') {
    return JSON.stringify({
      id: `chatcmpl-mock-${req.index}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: req.model,
      choices: text === undefined ? [] : [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    });
  }
  return JSON.stringify({
    id: `msg_mock_${req.index}`,
    type: 'message',
    role: 'assistant',
    model: req.model,
    content: text === undefined ? [] : [{ type: 'text', text }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: promptTokens, output_tokens: completionTokens },
  });
}

function defaultMessage(status: number): string {
  switch (status) {
    case 400:
      return 'Invalid request (mock)';
    case 401:
      return 'Invalid or missing API key (mock)';
    case 403:
      return 'Permission denied (mock)';
    case 404:
      return 'Not found (mock)';
    case 429:
      return 'Rate limit reached; please try again later (mock)';
    case 500:
      return 'Internal server error (mock)';
    case 503:
      return 'Service unavailable (mock)';
    case 529:
      return 'Overloaded (mock)';
    default:
      return `HTTP ${status} (mock)`;
  }
}

/** An error body in the API's real error format. */
function errorBody(api: Api, status: number, message = defaultMessage(status)): string {
  if (api === 'anthropic') {
    let type: string;
    if (status === 400) type = 'invalid_request_error';
    else if (status === 401) type = 'authentication_error';
    else if (status === 403) type = 'permission_error';
    else if (status === 404) type = 'not_found_error';
    else if (status === 413) type = 'request_too_large';
    else if (status === 429) type = 'rate_limit_error';
    else if (status === 529) type = 'overloaded_error';
    else if (status >= 400 && status < 500) type = 'invalid_request_error';
    else type = 'api_error';
    return JSON.stringify({ type: 'error', error: { type, message } });
  }
  let type: string;
  let code: string | null = null;
  if (status === 401) {
    type = 'invalid_request_error';
    code = 'invalid_api_key';
  } else if (status === 429) {
    type = 'requests';
    code = 'rate_limit_exceeded';
  } else if (status >= 400 && status < 500) type = 'invalid_request_error';
  else type = 'server_error';
  return JSON.stringify({ error: { message, type, param: null, code } });
}

function send(res: ServerResponse, status: number, body: string, retryAfterSeconds?: number): void {
  if (res.destroyed || res.headersSent) return;
  const headers: OutgoingHttpHeaders = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
  if (retryAfterSeconds !== undefined) headers['retry-after'] = String(retryAfterSeconds);
  res.writeHead(status, headers);
  res.end(body);
}

// ---------------------------------------------------------------------------
// The server

/** Starts the mock on 127.0.0.1 and resolves once it listens. */
export function startMockLlm(options: MockLlmOptions = {}): Promise<MockLlmServer> {
  const latencyMs = Math.max(0, options.latencyMs ?? 0);
  const jitterMs = Math.min(latencyMs, Math.max(0, options.jitterMs ?? 0));
  // A seeded generator, so a jittered run is the same run every time.
  const rng = new PythonRandom(50);

  const terminateAfter = options.terminateAfter ?? 2;
  const reply = options.reply ?? ((req: MockRequest) => defaultReply(req, terminateAfter));
  const faultOf = options.fault;
  const requireAuth = options.requireAuth ?? false;
  const keepRequests = options.keepRequests ?? true;
  const countAttempts = options.countAttempts ?? true;

  const requests: MockRequest[] = [];
  const outcomes = new Map<string, number>();
  const seenBodies = new Map<string, number>();
  const timers = new Set<NodeJS.Timeout>();
  let received = 0;
  let nextIndex = 0;
  let closing: Promise<void> | undefined;

  const count = (outcome: string): void => {
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  };

  /**
   * Sends once the configured latency has passed since the request arrived. Counting from arrival
   * rather than from the end of the mock's own parsing keeps that work inside the latency, as an
   * endpoint's own processing is: under a burst of requests the mock's queue would otherwise add
   * to every answer's latency, and a benchmark would measure the mock rather than the client.
   */
  const respond = (res: ServerResponse, arrived: number, status: number, body: string, retryAfterSeconds?: number): void => {
    if (latencyMs === 0) {
      send(res, status, body, retryAfterSeconds);
      return;
    }
    const latency = jitterMs ? latencyMs - jitterMs + 2 * jitterMs * rng.random() : latencyMs;
    const timer = setTimeout(
      () => {
        timers.delete(timer);
        send(res, status, body, retryAfterSeconds);
      },
      Math.max(0, latency - (performance.now() - arrived)),
    );
    timers.add(timer);
  };

  const onBody = (api: Api, req: IncomingMessage, res: ServerResponse, raw: Buffer, arrived: number): void => {
    options.observeBody?.(raw);
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      count('status:400');
      respond(res, arrived, 400, errorBody(api, 400, 'The request body is not valid JSON'));
      return;
    }
    const parsed = api === 'openai' ? parseOpenAi(json) : parseAnthropic(json);
    if (typeof parsed === 'string') {
      count('status:400');
      respond(res, arrived, 400, errorBody(api, 400, parsed));
      return;
    }

    const key = createHash('sha1').update(raw).digest('base64');
    const attempt = countAttempts ? (seenBodies.get(key) ?? 0) : 0;
    if (countAttempts) seenBodies.set(key, attempt + 1);
    const mock: MockRequest = {
      api,
      index: nextIndex++,
      attempt,
      bodyDigest: key,
      model: parsed.model,
      system: parsed.system,
      systemSent: parsed.systemSent,
      messages: parsed.messages,
      temperature: parsed.temperature,
      maxTokens: parsed.maxTokens,
      headers: req.headers,
    };
    if (keepRequests) requests.push(mock);

    let fault: MockFault | undefined;
    let text: string | undefined;
    try {
      fault = requireAuth && !isAuthorized(api, req.headers) ? AUTH_FAULT : faultOf?.(mock);
      if (fault === undefined || fault.kind === 'truncated') text = reply(mock);
    } catch (error) {
      count('error');
      respond(res, arrived, 500, errorBody(api, 500, `mock callback failed: ${(error as Error)?.message ?? String(error)}`));
      return;
    }

    if (fault === undefined) {
      count('ok');
      respond(res, arrived, 200, successBody(api, mock, text));
      return;
    }
    switch (fault.kind) {
      case 'status':
        count(`status:${fault.status}`);
        respond(res, arrived, fault.status, fault.body ?? errorBody(api, fault.status), fault.retryAfterSeconds);
        return;
      case 'reset':
        count('reset');
        req.socket.resetAndDestroy();
        return;
      case 'hang':
        count('hang'); // never answered; close() destroys the socket
        return;
      case 'garbage':
        count('garbage');
        respond(res, arrived, 200, GARBAGE_BODY);
        return;
      case 'truncated': {
        count('truncated');
        const full = successBody(api, mock, text);
        respond(res, arrived, 200, full.slice(0, Math.floor(full.length / 2)));
        return;
      }
      case 'empty-choices':
        count('empty-choices');
        respond(res, arrived, 200, successBody(api, mock, undefined));
        return;
      case 'text':
        count('text');
        respond(res, arrived, 200, successBody(api, mock, fault.text));
        return;
    }
  };

  // A batch's requests are answered as online calls of the same body would be (reply and faults).
  const batchMock = createMockBatch(options.batch ?? {}, (api, raw, batchId) => {
    const parsed = api === 'openai' ? parseOpenAi(raw) : parseAnthropic(raw);
    if (typeof parsed === 'string') return { status: 400, body: JSON.parse(errorBody(api, 400, parsed)) };
    const bodyDigest = createHash('sha1').update(JSON.stringify(raw)).digest('base64');
    const mock: MockRequest = { api, index: nextIndex++, attempt: 0, bodyDigest, ...parsed, headers: {}, batch: batchId };
    if (keepRequests) requests.push(mock);
    const fault = faultOf?.(mock);
    if (fault?.kind === 'status') return { status: fault.status, body: JSON.parse(errorBody(api, fault.status)) };
    count('batch:ok');
    return { status: 200, body: JSON.parse(successBody(api, mock, fault?.kind === 'text' ? fault.text : reply(mock))) };
  });

  const server = createServer((req, res) => {
    const arrived = performance.now();
    received++;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (isBatchPath(path)) {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const authorized = !requireAuth || isAuthorized(path.startsWith('/v1/messages/') ? 'anthropic' : 'openai', req.headers);
        Promise.resolve(batchMock.handle(req, res, path, new URLSearchParams(q === -1 ? '' : url.slice(q + 1)), Buffer.concat(chunks), authorized)).catch(() =>
          send(res, 500, errorBody('openai', 500, 'mock batch handler failed')),
        );
      });
      return;
    }
    let api: Api | undefined;
    if (req.method === 'POST') {
      if (path === OPENAI_PATH) api = 'openai';
      else if (path === ANTHROPIC_PATH) api = 'anthropic';
    }
    if (api === undefined) {
      req.resume();
      count('status:404');
      const looksAnthropic = req.headers['x-api-key'] !== undefined || req.headers['anthropic-version'] !== undefined;
      const message = `Invalid URL (${req.method ?? '?'} ${path})`;
      send(res, 404, errorBody(looksAnthropic ? 'anthropic' : 'openai', 404, message));
      return;
    }
    const target: Api = api;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => onBody(target, req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), arrived));
  });
  // Keep idle keep-alive connections well past the client's own idle timeout races.
  server.keepAliveTimeout = 30_000;

  return new Promise<MockLlmServer>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        requests,
        batch: batchMock.control,
        stats: () => ({ requests: received, outcomes: Object.fromEntries(outcomes) }),
        close: () => {
          closing ??= new Promise<void>((done) => {
            for (const timer of timers) clearTimeout(timer);
            timers.clear();
            server.close(() => done());
            server.closeAllConnections();
          });
          return closing;
        },
      });
    });
  });
}
