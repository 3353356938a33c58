import type { Dispatcher } from 'undici';
import type { HttpTimeouts } from './http.js';
import type { ChatRequest, ChatResponse, Provider } from './types.js';

/** What every HTTP provider holds: the model, where it lives, its key, a connection pool, timeouts. */
export abstract class HttpProvider implements Provider {
  constructor(
    protected readonly model: string,
    protected readonly baseUrl: string,
    protected readonly apiKey: string | undefined,
    protected readonly dispatcher: Dispatcher,
    protected readonly timeouts: HttpTimeouts,
  ) {}

  abstract complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse>;

  /** The pool is owned (and closed) by the client that created it. */
  async close(): Promise<void> {}

  protected endpoint(path: string): string {
    return `${this.baseUrl.replace(/\/$/, '')}${path}`;
  }
}
