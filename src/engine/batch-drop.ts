import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { PlensError, usageError } from '../core/errors.js';
import { BatchLedger, readLedgers, workKeys, type LedgerBatch } from './batch-ledger.js';
import { WriterLock } from './lock.js';

/**
 * `plens batches drop`: closes a batch in its ledger without reading it, when the provider no longer
 * knows it (deleted, another account or region, a mock's id): every rerun would otherwise fail on
 * it the same way. Its requests are planned again by the next run (and paid again: only for a batch
 * the provider never answered). The ledger is append-only: a `dropped` line is added, under the
 * writer's lock of that ledger, nothing is removed.
 */
export interface DropResult {
  dry_run: boolean;
  ledger: string;
  id: string;
  batch_id: string | null;
  model: string;
  status: string;
  /** Work keys the next run plans again. */
  keys: number;
}

const LEDGER = /^batches((?:\.shard-\d+-of-\d+)?)\.jsonl$/;

/** Every batch ledger under a workspace (stage folders, their partitions), at most four folders deep. */
export function ledgerFiles(root: string, depth = 4): string[] {
  if (!existsSync(root) || depth < 0) return [];
  const out: string[] = [];
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (entry.isDirectory()) out.push(...ledgerFiles(join(root, entry.name), depth - 1));
    else if (LEDGER.test(entry.name)) out.push(join(root, entry.name));
  }
  return out.sort();
}

export async function dropBatch(options: { workspace: string; id: string; reason?: string; dryRun?: boolean }): Promise<DropResult> {
  const matches: Array<{ file: string; batch: LedgerBatch }> = [];
  const open: string[] = [];
  for (const file of ledgerFiles(options.workspace)) {
    for (const batch of await readLedgers(dirname(file), basename(file))) {
      if (!batch.processed) open.push(`${batch.batchId || batch.id} (${relative(options.workspace, file)})`);
      if (batch.id === options.id || batch.batchId === options.id) matches.push({ file, batch });
    }
  }
  if (matches.length === 0) {
    throw new PlensError('E_INPUT_NOT_FOUND', `no batch ${options.id} in the ledgers of this workspace`, {
      location: { file: options.workspace },
      hint: open.length ? `open batches: ${open.slice(0, 10).join(', ')}${open.length > 10 ? ', ...' : ''}` : 'no batch is open here',
    });
  }
  if (matches.length > 1)
    throw usageError(`${options.id} names ${matches.length} batches (${matches.map((m) => m.file).join(', ')}); give the ledger's own id (b-...)`);
  const { file, batch } = matches[0]!;
  if (batch.processed) throw usageError(`batch ${options.id} is closed already${batch.dropped ? ' (dropped)' : ''}: nothing to drop`);
  const result: DropResult = {
    dry_run: options.dryRun === true,
    ledger: file,
    id: batch.id,
    batch_id: batch.batchId || null,
    model: batch.model,
    status: batch.status,
    keys: workKeys(batch).length,
  };
  if (options.dryRun) return result;
  // The ledger's own writer's lock: a run that holds it may be appending right now.
  const suffix = LEDGER.exec(basename(file))![1]!;
  const lock = WriterLock.acquire(join(dirname(file), `.lock${suffix}`), `the batch ledger ${file}`);
  try {
    const ledger = await BatchLedger.open(file);
    try {
      ledger.dropped(batch.id, options.reason ?? 'dropped by plens batches drop: the provider does not know it');
    } finally {
      ledger.close();
    }
  } finally {
    lock.release();
  }
  return result;
}
