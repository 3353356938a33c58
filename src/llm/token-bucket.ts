/**
 * A token bucket refilled continuously at `perMinute` tokens per minute, holding at most
 * `perMinute`. Takers queue in FIFO order, so a large reservation is not starved by small ones.
 * Reservations can be refunded when the real cost turns out lower than reserved.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly queue: Array<{ n: number; resolve: () => void; reject: (e: unknown) => void; signal: AbortSignal | undefined; onAbort: () => void }> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly perMinute: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = perMinute;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.perMinute, this.tokens + ((t - this.last) * this.perMinute) / 60_000);
    this.last = t;
  }

  /** Waits until `n` tokens are available and takes them; `n` above the capacity waits for a full bucket. */
  take(n: number, signal?: AbortSignal): Promise<void> {
    const need = Math.min(n, this.perMinute);
    this.refill();
    if (this.queue.length === 0 && this.tokens >= need) {
      this.tokens -= need;
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const entry = {
        n: need,
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.queue.indexOf(entry);
          if (i >= 0) this.queue.splice(i, 1);
          reject(signal!.reason);
          this.schedule();
        },
      };
      signal?.addEventListener('abort', entry.onAbort, { once: true });
      this.queue.push(entry);
      this.schedule();
    });
  }

  refund(n: number): void {
    if (n <= 0) return;
    this.refill();
    this.tokens = Math.min(this.perMinute, this.tokens + n);
    this.schedule();
  }

  /**
   * Empties the bucket (not below zero): the endpoint has said we are over its limit, so the burst
   * this bucket holds is not there; from now on takers get only the refill rate.
   */
  drain(): void {
    this.refill();
    this.tokens = Math.min(this.tokens, 0);
  }

  get available(): number {
    this.refill();
    return this.tokens;
  }

  private schedule(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.refill();
    while (this.queue.length > 0 && this.tokens >= this.queue[0]!.n) {
      const head = this.queue.shift()!;
      this.tokens -= head.n;
      head.signal?.removeEventListener('abort', head.onAbort);
      head.resolve();
    }
    if (this.queue.length > 0) {
      const deficit = this.queue[0]!.n - this.tokens;
      const waitMs = Math.max(1, Math.ceil((deficit * 60_000) / this.perMinute));
      this.timer = setTimeout(() => this.schedule(), waitMs);
    }
  }
}

/** Requests-per-minute and tokens-per-minute limits for one model. */
export class RateLimiter {
  private readonly rpm: TokenBucket | undefined;
  private readonly tpm: TokenBucket | undefined;

  constructor(limits: { rpm?: number; tpm?: number }) {
    this.rpm = limits.rpm ? new TokenBucket(limits.rpm) : undefined;
    this.tpm = limits.tpm ? new TokenBucket(limits.tpm) : undefined;
  }

  /** Reserves one request and `tokens` (prompt estimate + max output); returns the reservation to settle. */
  async acquire(tokens: number, signal?: AbortSignal): Promise<number> {
    if (this.rpm) await this.rpm.take(1, signal);
    if (this.tpm) await this.tpm.take(tokens, signal);
    return this.tpm ? Math.min(tokens, this.tpm.perMinute) : 0;
  }

  /**
   * An overload answer (429): the RPM bucket is emptied, so calls go out at the limit's steady
   * rate instead of spending the rest of a minute's burst into more 429s. (Its TPM bucket is left
   * as it is: emptying it would hold the next large prompt for seconds.)
   */
  overloaded(): void {
    this.rpm?.drain();
  }

  /** Gives back what a call did not use (reserved minus reported usage). */
  settle(reserved: number, used: number | undefined): void {
    if (this.tpm && used !== undefined) this.tpm.refund(reserved - used);
  }
}
