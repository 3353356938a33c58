import type { Partition } from '../engine/partition.js';
import { addCallSpend, type SpendBreakdown } from '../engine/spend-budget.js';

export interface Spent {
  calls: number;
  cached_calls: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export interface WorkStatus {
  done: number;
  /** null when it cannot be known yet (the scenarios are not selected, or out of date). */
  pending: number | null;
  failed: number;
  /** The most common failure reasons of what is failed now, most frequent first. */
  failure_reasons: Array<{ reason: string; count: number }>;
  spent: Spent;
  /** Part of `pending` is estimated: judgments of dialogues not made yet. */
  pending_estimated?: boolean;
  /** PERSONA-bench predictions: replies that did not parse (kept, counted, never scored; not in `failed`). */
  unparsed?: number;
}

export interface LogRecord {
  key: string;
  status: string;
  error?: { kind?: string } | null;
  dialogue_id?: string;
}

interface LogEvent {
  key: string;
  role?: string;
  model?: string;
  status?: string;
  cached?: boolean;
  input_tokens?: number | null;
  output_tokens?: number | null;
  cost_usd?: number | null;
}

/** A partition's logs, read once: the latest state of every key and the calls' spend. */
export async function readPartition(partition: Partition) {
  // A result beats any failure; among failures the latest try counts.
  const latest = await partition.latest<LogRecord>();
  const events: LogEvent[] = [];
  for await (const e of partition.read<LogEvent>('events')) events.push(e);
  const okKeys = new Set([...latest.values()].filter((r) => r.status === 'ok').map((r) => r.key));
  return {
    okKeys,
    reasons(filter: (r: LogRecord) => boolean = () => true) {
      const counts = new Map<string, number>();
      for (const r of latest.values())
        if (r.status !== 'ok' && filter(r)) counts.set(r.error?.kind ?? r.status, (counts.get(r.error?.kind ?? r.status) ?? 0) + 1);
      return [...counts]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([reason, count]) => ({ reason, count }));
    },
    /** What the calls of the filtered keys cost; each answered call is also added, by role and model, to `split`. */
    spent(filter: (r: LogRecord) => boolean = () => true, split?: SpendBreakdown): Spent {
      const keys = new Set([...latest.values()].filter(filter).map((r) => r.key));
      const s: Spent = { calls: 0, cached_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 };
      for (const e of events) {
        if (!keys.has(e.key)) continue;
        if (split && e.status !== 'failed' && e.role && e.model)
          addCallSpend(split, { role: e.role, model: e.model, cached: Boolean(e.cached), cost_usd: e.cost_usd ?? 0 });
        s.calls++;
        // What was spent: a call the cache answered cost nothing this time.
        if (e.cached) s.cached_calls++;
        else {
          s.input_tokens += e.input_tokens ?? 0;
          s.output_tokens += e.output_tokens ?? 0;
          s.cost_usd += e.cost_usd ?? 0;
        }
      }
      return s;
    },
  };
}

export function emptyWork(): WorkStatus {
  return { done: 0, pending: null, failed: 0, failure_reasons: [], spent: { calls: 0, cached_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0 } };
}

export function sumStatus(list: WorkStatus[]): WorkStatus {
  const t = emptyWork();
  t.pending = list.length && list.every((w) => w.pending !== null) ? 0 : null;
  const reasons = new Map<string, number>();
  for (const w of list) {
    t.done += w.done;
    t.failed += w.failed;
    if (t.pending !== null) t.pending += w.pending!;
    t.pending_estimated ||= Boolean(w.pending_estimated);
    for (const r of w.failure_reasons) reasons.set(r.reason, (reasons.get(r.reason) ?? 0) + r.count);
    for (const k of Object.keys(t.spent) as Array<keyof Spent>) t.spent[k] += w.spent[k];
  }
  t.failure_reasons = [...reasons]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 5)
    .map(([reason, count]) => ({ reason, count }));
  return t;
}

/** `1,234 done, 5 pending, 0 failed (reasons) | calls, tokens, cost`: one line of work. */
export function formatWork(w: WorkStatus): string {
  const n = (x: number | null) => (x === null ? '?' : Math.round(x).toLocaleString('en-US'));
  return (
    `${n(w.done)} done, ${w.pending_estimated ? '~' : ''}${n(w.pending)} pending, ${n(w.failed)} failed${w.failure_reasons.length ? ` (${w.failure_reasons.map((r) => `${r.reason} x${r.count}`).join(', ')})` : ''}` +
    ` | ${n(w.spent.calls)} calls (${n(w.spent.cached_calls)} cached), ${n(w.spent.input_tokens)} in + ${n(w.spent.output_tokens)} out tokens, $${w.spent.cost_usd.toFixed(4)}`
  );
}
