import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/**
 * A small Chrome DevTools Protocol client over `--remote-debugging-pipe`: Chromium reads commands
 * on its fd 3 and writes replies and events on fd 4, each a JSON message ended by a NUL byte. No
 * WebSocket and no port, so nothing listens on the network while a report is checked.
 */

export interface CdpEvent {
  method: string;
  params: Record<string, unknown>;
  sessionId?: string;
}

interface Pending {
  resolve: (result: Record<string, unknown>) => void;
  reject: (error: Error) => void;
  method: string;
}

export class CdpBrowser {
  private next = 0;
  private readonly pending = new Map<number, Pending>();
  private readonly waiters: Array<{ match: (e: CdpEvent) => boolean; resolve: (e: CdpEvent) => void; reject: (error: Error) => void }> = [];
  /** Every event received, in order (the page's log entries among them). */
  readonly events: CdpEvent[] = [];
  private stderr = '';
  private exited: Error | null = null;
  /** Settles once Chromium has gone: exited, or never started. */
  private readonly ended: Promise<void>;
  private markEnded: () => void = () => {};

  private constructor(
    private readonly child: ChildProcess,
    private readonly out: Writable,
    input: Readable,
  ) {
    let buffer = Buffer.alloc(0);
    input.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (let end = buffer.indexOf(0); end >= 0; end = buffer.indexOf(0)) {
        const text = buffer.subarray(0, end).toString('utf8');
        buffer = buffer.subarray(end + 1);
        this.receive(JSON.parse(text) as Record<string, unknown>);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      // The last few KB are enough to say why Chromium stopped.
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-8192);
    });
    this.ended = new Promise((resolve) => (this.markEnded = resolve));
    // A binary that cannot be run (missing, not executable) emits 'error' and maybe no 'exit':
    // every command and wait fails at once with why, instead of waiting for a reply that never comes.
    child.on('error', (error) =>
      this.gone(new Error(`Chromium could not be started (${error.message}); install it (apt-get install -y chromium) or set PLENS_CHROMIUM`)),
    );
    child.on('exit', (code, signal) =>
      this.gone(new Error(`Chromium exited (${signal ?? `code ${code}`})${this.stderr ? `: ${this.stderr.trim().split('\n').slice(-3).join(' | ')}` : ''}`)),
    );
  }

  /** Chromium has gone (the first reason stands): whatever waits on it fails with `error`. */
  private gone(error: Error): void {
    if (this.exited) return;
    this.exited = error;
    for (const p of this.pending.values()) p.reject(error);
    this.pending.clear();
    for (const w of this.waiters.splice(0)) w.reject(error);
    this.markEnded();
  }

  /** Starts Chromium with the pipe open; `args` are its other flags. */
  static launch(chromium: string, args: string[]): CdpBrowser {
    const child = spawn(chromium, [...args, '--remote-debugging-pipe', 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
    const out = child.stdio[3] as Writable;
    const input = child.stdio[4] as Readable;
    // A write after Chromium has gone fails here, not as an unhandled error.
    out.on('error', () => {});
    return new CdpBrowser(child, out, input);
  }

  private receive(message: Record<string, unknown>): void {
    const id = message['id'];
    if (typeof id === 'number') {
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      const error = message['error'] as { message?: string } | undefined;
      if (error) p.reject(new Error(`${p.method}: ${error.message ?? JSON.stringify(error)}`));
      else p.resolve((message['result'] as Record<string, unknown>) ?? {});
      return;
    }
    const event: CdpEvent = {
      method: String(message['method']),
      params: (message['params'] as Record<string, unknown>) ?? {},
      ...(typeof message['sessionId'] === 'string' ? { sessionId: message['sessionId'] } : {}),
    };
    this.events.push(event);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i]!.match(event)) this.waiters.splice(i, 1)[0]!.resolve(event);
    }
  }

  /** Sends one command and waits for its reply. */
  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> {
    if (this.exited) return Promise.reject(this.exited);
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, method });
      this.out.write(`${JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) })}\0`);
    });
  }

  /** The first event (already received or still to come) that `match` accepts. */
  waitFor(match: (e: CdpEvent) => boolean): Promise<CdpEvent> {
    const seen = this.events.find(match);
    if (seen) return Promise.resolve(seen);
    const waiting = this.exited ? Promise.reject(this.exited) : new Promise<CdpEvent>((resolve, reject) => this.waiters.push({ match, resolve, reject }));
    // A wait made ahead of the command that brings its event (the load event before navigating)
    // may fail while that command fails first: the caller sees the command's error, and this one
    // must not surface as an unhandled rejection. Awaiting it still throws.
    waiting.catch(() => {});
    return waiting;
  }

  /** Opens a page and returns its session (commands for the page carry it). */
  async openPage(): Promise<string> {
    const target = await this.send('Target.createTarget', { url: 'about:blank' });
    const attached = await this.send('Target.attachToTarget', { targetId: target['targetId'], flatten: true });
    return String(attached['sessionId']);
  }

  /** Evaluates an expression in the page and returns its value (JSON-serialisable). */
  async evaluate<T>(sessionId: string, expression: string): Promise<T> {
    const r = await this.send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
    const thrown = r['exceptionDetails'] as { text?: string; exception?: { description?: string } } | undefined;
    if (thrown) throw new Error(`in the page: ${thrown.exception?.description ?? thrown.text ?? 'an exception'}`);
    return (r['result'] as { value: T }).value;
  }

  /** Closes Chromium (politely, then by signal) and waits for it to exit. */
  async close(): Promise<void> {
    if (this.exited) return;
    this.send('Browser.close').catch(() => {});
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await this.ended;
    clearTimeout(timer);
  }

  /** Kills Chromium at once (after a timeout). */
  kill(): void {
    if (!this.exited) this.child.kill('SIGKILL');
  }
}
