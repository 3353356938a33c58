import { registerSecret } from '../core/redact.js';
import type { HttpTransport } from './http-transport.js';
import type { ChatRequest, ChatResponse, Provider } from './types.js';

/** What every HTTP provider holds: the model, where it lives, its key, and the transport (pool, timeouts). */
export abstract class HttpProvider implements Provider {
  constructor(
    protected readonly model: string,
    protected readonly baseUrl: string,
    protected readonly apiKey: string | undefined,
    protected readonly transport: HttpTransport,
  ) {
    // Whatever a server echoes back, this key is cut from every message and record.
    registerSecret(apiKey);
  }

  abstract complete(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse>;

  /** The transport is owned (and closed) by the client that created it. */
  async close(): Promise<void> {}

  protected endpoint(path: string): string {
    return `${this.baseUrl.replace(/\/$/, '')}${path}`;
  }
}
