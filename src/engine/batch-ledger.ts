import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BatchState, BatchStatus } from '../llm/batch.js';
import { PlensError } from '../core/errors.js';
import { JsonlLog, readJsonlLines } from './jsonl-log.js';

/**
 * One line of a partition's batch ledger (`batches.jsonl`, one per writer). Each step is recorded
 * before the next is taken: `staged` (the input uploaded, nothing paid yet) before the batch is
 * created, `submitted` as soon as it is, `ended` once its results were read, `processed` once
 * every key's record is written. A rerun reads it back and resumes where it stopped.
 */
export type LedgerEntry =
  | { type: 'staged'; id: string; model: string; staged: string; keys: string[]; aliases?: Record<string, string>; at: string }
  | { type: 'submitted'; id: string; batch_id: string; status: BatchStatus; at: string }
  | { type: 'status'; id: string; status: BatchStatus; completed: number | null; failed: number | null; at: string }
  | {
      type: 'ended';
      id: string;
      status: BatchStatus;
      output_file_id: string | null;
      error_file_id: string | null;
      answered: number;
      unanswered: number;
      at: string;
    }
  | { type: 'processed'; id: string; at: string }
  /** Work keys found later in the same run to ask what a staged line of this batch asks. */
  | { type: 'aliases'; id: string; aliases: Record<string, string>; at: string }
  /** Dropped by `plens batches drop` (the provider does not know it): closed unread, its requests planned again. */
  | { type: 'dropped'; id: string; reason: string; at: string };

/** A batch as the ledger knows it. */
export interface LedgerBatch {
  /** The ledger's own id (stable before the provider has given one). */
  id: string;
  model: string;
  /** The staged input (OpenAI: the uploaded file's id). */
  staged: string;
  /** The work keys it carries: each request's custom id. */
  keys: string[];
  /**
   * Work keys whose request is identical to one the batch carries (alias -> that key): submitted
   * once, paid once, and recorded from the same answer.
   */
  aliases?: Record<string, string>;
  batchId?: string;
  status: BatchStatus | 'staged';
  ended: boolean;
  processed: boolean;
  outputFileId?: string;
  errorFileId?: string;
  /** Dropped from the ledger by hand (plens batches drop): its answers are never read. */
  dropped?: boolean;
}

/** The durable job ledger of a partition's batches: append-only, torn tail repaired on open (jsonl-log.ts). */
export class BatchLedger {
  private constructor(
    private readonly log: JsonlLog,
    private readonly byId: Map<string, LedgerBatch>,
  ) {}

  /** Reads the ledger at `path` (absent: empty) and opens it for appending; the caller holds the writer's lock. */
  static async open(path: string): Promise<BatchLedger> {
    // Open first: it cuts a torn last line that a kill left, so reading sees whole entries only.
    const log = JsonlLog.open(path);
    const byId = new Map<string, LedgerBatch>();
    for await (const { value, line } of readJsonlLines<unknown>(path)) apply(byId, checkedEntry(value, path, line));
    return new BatchLedger(log, byId);
  }

  /** Every batch, in the order staged. */
  get batches(): LedgerBatch[] {
    return [...this.byId.values()];
  }

  /** Batches whose records are not all written yet: they are polled, collected and processed, never submitted again. */
  get open(): LedgerBatch[] {
    return this.batches.filter((b) => !b.processed);
  }

  /** The work keys of the open batches, aliases included. */
  openKeys(): Set<string> {
    return new Set(this.open.flatMap(workKeys));
  }

  staged(id: string, model: string, staged: string, keys: string[], aliases?: Record<string, string>): LedgerBatch {
    return this.write({ type: 'staged', id, model, staged, keys, ...(aliases && Object.keys(aliases).length ? { aliases } : {}), at: now() });
  }

  submitted(id: string, state: BatchState): LedgerBatch {
    return this.write({ type: 'submitted', id, batch_id: state.batchId, status: state.status, at: now() });
  }

  status(id: string, state: BatchState): LedgerBatch {
    return this.write({
      type: 'status',
      id,
      status: state.status,
      completed: state.counts?.completed ?? null,
      failed: state.counts?.failed ?? null,
      at: now(),
    });
  }

  ended(id: string, state: BatchState, answered: number, unanswered: number): LedgerBatch {
    return this.write({
      type: 'ended',
      id,
      status: state.status,
      output_file_id: state.outputFileId ?? null,
      error_file_id: state.errorFileId ?? null,
      answered,
      unanswered,
      at: now(),
    });
  }

  processed(id: string): LedgerBatch {
    return this.write({ type: 'processed', id, at: now() });
  }

  aliases(id: string, aliases: Record<string, string>): LedgerBatch {
    return this.write({ type: 'aliases', id, aliases, at: now() });
  }

  dropped(id: string, reason: string): LedgerBatch {
    return this.write({ type: 'dropped', id, reason, at: now() });
  }

  close(): void {
    this.log.close();
  }

  private write(entry: LedgerEntry): LedgerBatch {
    this.log.append(entry);
    apply(this.byId, entry);
    return this.byId.get(entry.id)!;
  }
}

/** Every work key a batch answers: the keys it carries and their aliases. */
export function workKeys(b: LedgerBatch): string[] {
  return b.aliases ? [...b.keys, ...Object.keys(b.aliases)] : b.keys;
}

/**
 * Every batch in the ledgers of a partition folder (all writers), read without opening them for
 * writing: what `plens status` shows of batches still open.
 */
export async function readLedgers(dir: string, only?: string): Promise<LedgerBatch[]> {
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.startsWith('batches') && f.endsWith('.jsonl') && (only === undefined || f === only)) : [];
  const out: LedgerBatch[] = [];
  for (const f of files.sort()) {
    const byId = new Map<string, LedgerBatch>();
    for await (const { value, line } of readJsonlLines<unknown>(join(dir, f))) apply(byId, checkedEntry(value, join(dir, f), line));
    out.push(...byId.values());
  }
  return out;
}

function apply(byId: Map<string, LedgerBatch>, e: LedgerEntry): void {
  if (e.type === 'staged') {
    byId.set(e.id, {
      id: e.id,
      model: e.model,
      staged: e.staged,
      keys: e.keys,
      ...(e.aliases ? { aliases: e.aliases } : {}),
      status: 'staged',
      ended: false,
      processed: false,
    });
    return;
  }
  const b = byId.get(e.id);
  // An entry for a batch the ledger never staged cannot come from plens: skipped rather than guessed at.
  if (!b) return;
  if (e.type === 'aliases') b.aliases = { ...b.aliases, ...e.aliases };
  else if (e.type === 'dropped') {
    b.processed = true;
    b.dropped = true;
  } else if (e.type === 'submitted') {
    b.batchId = e.batch_id;
    b.status = e.status;
  } else if (e.type === 'status') b.status = e.status;
  else if (e.type === 'ended') {
    b.status = e.status;
    b.ended = true;
    if (e.output_file_id) b.outputFileId = e.output_file_id;
    if (e.error_file_id) b.errorFileId = e.error_file_id;
  } else b.processed = true;
}

function now(): string {
  return new Date().toISOString();
}

const STATUSES = new Set(['validating', 'in_progress', 'finalizing', 'cancelling', 'completed', 'expired', 'cancelled', 'failed']);

/**
 * A ledger line as plens writes it, or an error naming the file and line: a line edited by hand or
 * forged is refused when the ledger is read, before the run acts on it or appends anything.
 */
function checkedEntry(value: unknown, file: string, line: number): LedgerEntry {
  const e = value as Record<string, unknown> | null;
  const str = (k: string) => typeof e?.[k] === 'string' && (e[k] as string) !== '';
  const strOrNull = (k: string) => e?.[k] === null || typeof e?.[k] === 'string';
  const count = (k: string) => Number.isInteger(e?.[k]) && (e![k] as number) >= 0;
  const keys = (v: unknown) => Array.isArray(v) && v.every((k) => typeof k === 'string' && k !== '');
  const aliases = (v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v) && Object.entries(v as object).every(([k, t]) => k !== '' && typeof t === 'string' && t !== '');
  const status = () => STATUSES.has(e?.['status'] as string);
  let ok = typeof e === 'object' && e !== null && !Array.isArray(e) && str('id') && str('at');
  if (ok) {
    switch (e!['type']) {
      case 'staged':
        ok = str('model') && typeof e!['staged'] === 'string' && keys(e!['keys']) && (e!['aliases'] === undefined || aliases(e!['aliases']));
        break;
      case 'submitted':
        ok = typeof e!['batch_id'] === 'string' && status();
        break;
      case 'status':
        ok = status() && (e!['completed'] === null || count('completed')) && (e!['failed'] === null || count('failed'));
        break;
      case 'ended':
        ok = status() && strOrNull('output_file_id') && strOrNull('error_file_id') && count('answered') && count('unanswered');
        break;
      case 'processed':
        break;
      case 'aliases':
        ok = aliases(e!['aliases']);
        break;
      case 'dropped':
        ok = typeof e!['reason'] === 'string';
        break;
      default:
        ok = false;
    }
  }
  if (!ok) {
    throw new PlensError('E_INPUT_SCHEMA', 'a batch ledger line is not one plens writes (edited by hand?); nothing was submitted or recorded', {
      location: { file, line },
      hint: "restore the line as plens wrote it, or remove it if its batch is not this run's (a batch whose line is removed is never collected)",
    });
  }
  return e as unknown as LedgerEntry;
}
