/**
 * Adaptive concurrency for one model's calls: additive increase, multiplicative decrease (AIMD),
 * as TCP congestion control treats a lost packet. An overload answer (429, 503, 529) cuts the
 * number of calls allowed in flight to half of what was in flight; each success gives back
 * 1/limit of a slot, so a full window of successes regains one slot. Bounded by the configured
 * concurrency above and `min` below. It sits on top of the RPM/TPM buckets (token-bucket.ts):
 * the buckets keep the rate under the limits the user knows; this backs off from limits they do
 * not know (a shared account's quota, a busy endpoint) so retries do not feed a 429 storm.
 *
 * One cut per round trip: a call started before the last cut saw the old load, so its overload
 * answer says nothing new and does not cut again (otherwise the 16 answers of one burst of 16
 * would cut the limit to 1). Epochs, not clocks, tell them apart, so the controller needs no timer.
 */

/** How one call ended, as far as load goes. */
export type CallOutcomeSignal = 'ok' | 'overload' | 'other';

export interface AimdOptions {
  /** The configured concurrency: the most calls ever allowed in flight, and where the limit starts. */
  max: number;
  /** The least (default 1): one call in flight keeps probing. */
  min?: number;
  /** The cut, as a factor of the calls in flight (default 0.5). */
  decrease?: number;
  /** Slots regained per window (limit) of successes (default 1). */
  increase?: number;
}

export interface AimdStats {
  limit: number;
  inFlight: number;
  /** How often the limit was cut, and the lowest it went. */
  cuts: number;
  lowest: number;
  overloads: number;
  successes: number;
}

/** A slot held by one call attempt; release it exactly once with how the attempt ended. */
export interface AimdSlot {
  release(outcome: CallOutcomeSignal): void;
}

interface Waiter {
  resolve: (slot: AimdSlot) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

export class AimdController {
  readonly max: number;
  readonly min: number;
  private readonly decrease: number;
  private readonly increase: number;
  /** The allowed calls in flight, fractional between whole slots while it grows. */
  private window: number;
  private inFlight = 0;
  private epoch = 0;
  private readonly waiters: Waiter[] = [];
  private readonly counts = { cuts: 0, overloads: 0, successes: 0, lowest: 0 };

  constructor(options: AimdOptions) {
    if (!(options.max >= 1)) throw new RangeError(`AIMD max must be >= 1, got ${options.max}`);
    this.max = Math.floor(options.max);
    this.min = Math.max(1, Math.min(this.max, Math.floor(options.min ?? 1)));
    this.decrease = options.decrease ?? 0.5;
    this.increase = options.increase ?? 1;
    if (!(this.decrease > 0 && this.decrease < 1)) throw new RangeError(`AIMD decrease must be in (0, 1), got ${this.decrease}`);
    if (!(this.increase > 0)) throw new RangeError(`AIMD increase must be > 0, got ${this.increase}`);
    this.window = this.max;
    this.counts.lowest = this.max;
  }

  /** Whole calls allowed in flight now. */
  get limit(): number {
    return Math.max(this.min, Math.floor(this.window));
  }

  get stats(): AimdStats {
    return {
      limit: this.limit,
      inFlight: this.inFlight,
      cuts: this.counts.cuts,
      lowest: this.counts.lowest,
      overloads: this.counts.overloads,
      successes: this.counts.successes,
    };
  }

  /** Waits (FIFO) until a call may start; rejects with the signal's reason if aborted while waiting. */
  acquire(signal?: AbortSignal): Promise<AimdSlot> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.waiters.length === 0 && this.inFlight < this.limit) return Promise.resolve(this.take());
    return new Promise<AimdSlot>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const i = this.waiters.indexOf(waiter);
          if (i >= 0) this.waiters.splice(i, 1);
          reject(signal!.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private take(): AimdSlot {
    this.inFlight++;
    const epoch = this.epoch;
    let released = false;
    return {
      release: (outcome) => {
        if (released) return;
        released = true;
        this.settle(outcome, epoch);
      },
    };
  }

  private settle(outcome: CallOutcomeSignal, epoch: number): void {
    if (outcome === 'overload') {
      this.counts.overloads++;
      if (epoch === this.epoch) {
        // Half of what was actually in flight (this call included), not of a limit that was never used.
        this.window = Math.max(this.min, Math.min(this.window, this.inFlight) * this.decrease);
        this.epoch++;
        this.counts.cuts++;
        this.counts.lowest = Math.min(this.counts.lowest, this.limit);
      }
    } else if (outcome === 'ok') {
      this.counts.successes++;
      this.window = Math.min(this.max, this.window + this.increase / Math.max(1, this.window));
    }
    this.inFlight--;
    this.wake();
  }

  private wake(): void {
    while (this.waiters.length > 0 && this.inFlight < this.limit) {
      const next = this.waiters.shift()!;
      next.signal?.removeEventListener('abort', next.onAbort);
      next.resolve(this.take());
    }
  }
}

/** Overload answers: 429 Too Many Requests, 503 Service Unavailable, Anthropic's 529 Overloaded. */
export function isOverloadStatus(status: number | undefined): boolean {
  return status === 429 || status === 503 || status === 529;
}
