/**
 * A run's spend cap (`--max-cost`, `limits.max_cost`): one budget shared by every stage of a run.
 * Committed spend is what was spent plus what the units in flight have reserved and not yet used.
 * A unit reserves its expected cost before it starts; its calls charge what they really cost; when
 * it ends, what it did not use is released. When a unit's reservation does not fit under the cap,
 * it waits for the units in flight to end; if it still does not fit with nothing in flight, the
 * budget is capped for good and the scheduler starts no more work.
 */
export class SpendBudget {
  private spentUsd = 0;
  private readonly open = new Set<Reservation>();
  private waiters: Array<() => void> = [];
  private isCapped = false;

  constructor(readonly maxUsd: number) {
    if (!Number.isFinite(maxUsd) || maxUsd < 0) throw new RangeError(`a spend cap must be a number >= 0, got ${maxUsd}`);
  }

  /** What the run's calls have cost so far (cache answers cost nothing). */
  get spent(): number {
    return this.spentUsd;
  }

  /** What the units in flight reserved and have not spent yet. */
  get reserved(): number {
    let n = 0;
    for (const r of this.open) n += r.unused;
    return n;
  }

  get committed(): number {
    return this.spentUsd + this.reserved;
  }

  /** Units in flight. */
  get inFlight(): number {
    return this.open.size;
  }

  /** True once a unit could not start under the cap: nothing more is started in this run. */
  get capped(): boolean {
    return this.isCapped;
  }

  /**
   * Reserves `usd` for a unit about to start. Resolves with the reservation; or, once the cap is
   * reached (or `signal` aborts), with undefined: the unit must not start. Waits while the units
   * in flight may still release enough.
   */
  async reserve(usd: number, signal?: AbortSignal): Promise<Reservation | undefined> {
    const amount = Math.max(0, Number.isFinite(usd) ? usd : 0);
    for (;;) {
      if (this.isCapped || signal?.aborted) return undefined;
      // A hair of tolerance: sums of float prices must not refuse what fits exactly.
      if (this.committed + amount <= this.maxUsd * (1 + 1e-12) + 1e-12) {
        const r = new Reservation(this, amount);
        this.open.add(r);
        return r;
      }
      if (this.open.size === 0) {
        this.isCapped = true;
        this.wake();
        return undefined;
      }
      await this.changed(signal);
    }
  }

  /** @internal A reservation's call cost: spent now. */
  charged(usd: number): void {
    this.spentUsd += usd;
  }

  /** @internal A reservation ended: what it did not use is free again. */
  closed(r: Reservation): void {
    if (this.open.delete(r)) this.wake();
  }

  private changed(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener('abort', done);
        resolve();
      };
      this.waiters.push(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}

/** What one unit of work holds of the budget while it runs. */
export class Reservation {
  private used = 0;
  private ended = false;

  constructor(
    private readonly budget: SpendBudget,
    readonly amount: number,
  ) {}

  /** What is reserved and not yet used (a unit that spends more than it reserved holds nothing more). */
  get unused(): number {
    return Math.max(0, this.amount - this.used);
  }

  /** A finished call of this unit cost `usd`: spent now, taken out of the reservation. */
  charge(usd: number): void {
    if (!(usd > 0)) return;
    this.used += usd;
    this.budget.charged(usd);
  }

  /** The unit ended (done, failed or stopped): the unused part goes back. Idempotent. */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.budget.closed(this);
  }
}

/** Calls and spend of one role or one model. */
export interface SpendLine {
  calls: number;
  cached_calls: number;
  cost_usd: number;
}

/** Spend split by role (user agent, assistant, judge, predictor) and by model. */
export interface SpendBreakdown {
  by_role: Record<string, SpendLine>;
  by_model: Record<string, SpendLine>;
}

/**
 * The spend role of a call event's role: `user` is the user agent, `judge:<dimension>` the judge,
 * `persona:<task>` the predictor; anything else is its own role.
 */
export function spendRole(role: string): string {
  if (role === 'user') return 'user agent';
  if (role === 'assistant') return 'assistant';
  if (role.startsWith('judge')) return 'judge';
  if (role.startsWith('persona')) return 'predictor';
  return role;
}

export function emptySpend(): SpendBreakdown {
  return { by_role: {}, by_model: {} };
}

/** Adds one call (by its event role and model) to a breakdown, in place. */
export function addCallSpend(into: SpendBreakdown, call: { role: string; model: string; cached: boolean; cost_usd: number }): void {
  for (const [map, name] of [
    [into.by_role, spendRole(call.role)],
    [into.by_model, call.model],
  ] as const) {
    const line = (map[name] ??= { calls: 0, cached_calls: 0, cost_usd: 0 });
    line.calls++;
    if (call.cached) line.cached_calls++;
    else line.cost_usd += call.cost_usd;
  }
}

/** Adds breakdown `b` to `into`, in place. */
export function addSpend(into: SpendBreakdown, b: SpendBreakdown | undefined): void {
  if (!b) return;
  for (const key of ['by_role', 'by_model'] as const)
    for (const [name, l] of Object.entries(b[key])) {
      const line = (into[key][name] ??= { calls: 0, cached_calls: 0, cost_usd: 0 });
      line.calls += l.calls;
      line.cached_calls += l.cached_calls;
      line.cost_usd += l.cost_usd;
    }
}

/** "user agent $0.12, assistant $0.40 | by model: openai:gpt-4o $0.52", or '' when nothing was called. */
export function formatSpend(s: SpendBreakdown | undefined): string {
  if (!s || Object.keys(s.by_model).length === 0) return '';
  const list = (m: Record<string, SpendLine>) =>
    Object.entries(m)
      .sort((a, b) => b[1].cost_usd - a[1].cost_usd || a[0].localeCompare(b[0]))
      .map(([name, l]) => `${name} $${l.cost_usd.toFixed(4)}`)
      .join(', ');
  return `${list(s.by_role)} | by model: ${list(s.by_model)}`;
}
