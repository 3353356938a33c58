import { redact } from '../core/redact.js';
import { LlmCallError, isRetryableStatus, parseRetryAfter } from './errors.js';
import type { HttpTransport } from './http-transport.js';

/**
 * POSTs JSON and returns the parsed JSON body. Every way this can fail becomes an
 * LlmCallError that says whether a retry can help; no header (API key) ever reaches a message.
 */
export async function postJson(transport: HttpTransport, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<unknown> {
  const { status, retryAfter, text } = await transport.post(url, headers, JSON.stringify(body), signal);
  if (status < 200 || status >= 300) {
    const retryAfterMs = parseRetryAfter(retryAfter);
    throw new LlmCallError('http', `HTTP ${status} from ${redactUrl(url)}: ${summariseBody(text)}`, {
      status,
      retryable: isRetryableStatus(status),
      ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    });
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    // A 200 with a body that is not JSON (a proxy's HTML page, a cut-off stream) is a transient fault.
    throw new LlmCallError('bad_response', `response from ${redactUrl(url)} is not JSON: ${summariseBody(text)}`, { retryable: true, cause: error });
  }
}

/** A body for a message: redacted before it is cut (a key split by the cut cannot survive in part), whitespace flattened, 300 characters at most. */
export function summariseBody(text: string): string {
  // Redacted before it is cut, so a key split by the cut cannot survive in part.
  const flat = redact(text.replace(/\s+/g, ' ').trim());
  return flat.length > 300 ? `${flat.slice(0, 297)}...` : flat || '(empty body)';
}

/** Drops credentials and query strings from a URL before it reaches a message. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString();
  } catch {
    return '(invalid url)';
  }
}
