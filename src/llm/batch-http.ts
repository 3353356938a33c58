import { isRetryableStatus, LlmCallError, parseRetryAfter } from './errors.js';
import { redactUrl, summariseBody } from './http.js';

/**
 * One control call of a batch API (upload, create, status, results): JSON or a form in, JSON or
 * raw text out. Few and far between, so plain fetch rather than the call transport. Failures are
 * LlmCallErrors the retry layer reads; no header (key) and no query string reaches a message.
 */
export async function batchHttp(
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  o: { body?: unknown; raw?: boolean; timeoutMs: number; signal: AbortSignal },
): Promise<unknown> {
  const h = { ...headers };
  let payload: string | FormData | undefined;
  if (o.body instanceof FormData) payload = o.body;
  else if (o.body !== undefined) {
    h['content-type'] = 'application/json';
    payload = JSON.stringify(o.body);
  }
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method,
      headers: h,
      ...(payload === undefined ? {} : { body: payload }),
      signal: AbortSignal.any([o.signal, AbortSignal.timeout(o.timeoutMs)]),
    });
    text = await res.text();
  } catch (error) {
    if (o.signal.aborted) throw new LlmCallError('aborted', `${method} ${redactUrl(url)} stopped`, { retryable: false, cause: error });
    const timeout = (error as Error)?.name === 'TimeoutError';
    throw new LlmCallError(timeout ? 'timeout' : 'network', `${method} ${redactUrl(url)}: ${timeout ? 'timed out' : (error as Error)?.message}`, {
      retryable: true,
      cause: error,
    });
  }
  if (res.status < 200 || res.status >= 300) {
    const retryAfterMs = parseRetryAfter(res.headers.get('retry-after') ?? undefined);
    throw new LlmCallError('http', `HTTP ${res.status} from ${method} ${redactUrl(url)}: ${summariseBody(text)}`, {
      status: res.status,
      retryable: isRetryableStatus(res.status),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  if (o.raw) return text;
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new LlmCallError('bad_response', `${method} ${redactUrl(url)} answered with something that is not JSON: ${summariseBody(text)}`, {
      retryable: true,
      cause: error,
    });
  }
}
