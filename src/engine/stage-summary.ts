import type { StageSummary } from './stage-runner.js';
import type { Shard } from './shard.js';
import { formatSpend } from './spend-budget.js';

interface WithCells extends StageSummary {
  prompt_version?: string;
  simulated?: boolean;
  /** Models with no price in their spec. */
  price_unknown?: string[];
  cells?: Array<{ dir: string; setting: string; assistant: string; user: string; rows: number | null }>;
  /** The judge stage: its judge and output folder. */
  judge?: string;
  dir?: string;
  rows?: number | null;
}

/** The closing summary of an LLM stage, for people. */
export function formatStageSummary(s: WithCells): string {
  const lines: string[] = [];
  if (s.dry_run) {
    const e = s.estimate!;
    lines.push(`${s.stage}: dry run, nothing called`);
    lines.push(
      `  planned      ${s.planned} (already done ${s.already_done}, recorded failed ${s.already_failed}${s.already_failed ? '; --retry-failed reruns them' : ''})`,
    );
    lines.push(
      `  estimate     ~${Math.round(e.calls)} calls, ~${fmt(e.inputTokens)} input + ~${fmt(e.outputTokens)} output tokens, ${formatEstimatedCost(e.costUsd, s.price_unknown ?? [])}`,
    );
    if (s.max_cost_usd != null)
      lines.push(
        `  spend cap    $${s.max_cost_usd.toFixed(2)}${e.costUsd > s.max_cost_usd ? ': below the estimate, so the run would stop at the cap (a rerun with a higher cap goes on)' : ''}`,
      );
  } else {
    const state = s.interrupted
      ? 'STOPPED (rerun to resume)'
      : s.spend_capped
        ? `STOPPED at the spend cap of $${s.max_cost_usd!.toFixed(2)} (rerun with a higher --max-cost to go on)`
        : 'done';
    lines.push(`${s.stage}: ${state} in ${(s.elapsed_ms / 1000).toFixed(1)} s`);
    lines.push(`  this run     ${s.ok} ok, ${s.failed} failed of ${s.planned} planned`);
    lines.push(`  before       ${s.already_done} already done, ${s.already_failed} recorded failed${s.already_failed ? ' (--retry-failed reruns them)' : ''}`);
    if (s.failed)
      lines.push(
        `  failures     ${Object.entries(s.failure_reasons)
          .map(([k, v]) => `${k} x${v}`)
          .join(', ')}`,
      );
    lines.push(
      `  calls        ${s.calls} (${s.cached_calls} from cache), ${fmt(s.input_tokens)} input + ${fmt(s.output_tokens)} output tokens, $${s.cost_usd.toFixed(4)}`,
    );
    const spend = formatSpend(s.spend);
    if (spend) lines.push(`  spend        ${spend}`);
    if (s.max_cost_usd != null)
      lines.push(`  spend cap    $${s.max_cost_usd.toFixed(2)}${s.spend_capped ? ' (reached: work not started is left for a rerun)' : ''}`);
  }
  if (s.batch) lines.push(...formatBatch(s));
  if (s.shard) lines.push(`  shard        ${formatShard(s.shard)}`);
  if (s.prompt_version) lines.push(`  prompts      ${s.prompt_version}`);
  if (s.judge) lines.push(`  judge        ${s.judge}${s.rows != null ? ` | ${s.rows} records` : ''}\n               ${s.dir}`);
  for (const c of s.cells ?? [])
    lines.push(`  cell         ${c.setting} | ${c.assistant} | user ${c.user}${c.rows !== null ? ` | ${c.rows} records` : ''}\n               ${c.dir}`);
  if (s.simulated) lines.push('  NOTE: sim:* is an offline simulator, not a model; what it produces says nothing about any assistant.');
  return lines.join('\n');
}

/** Batch mode's lines: the batch price of a plan, or what went to the batch API and came back. */
function formatBatch(s: WithCells): string[] {
  const b = s.batch!;
  // An unpriced model is never shown as free: its cost is unknown, online and batched alike.
  const unknown = s.price_unknown ?? [];
  if (s.dry_run && b.min_items !== undefined)
    return [
      `  batch        ${s.planned} requests, fewer than the ${b.min_items} a batch needs: called online ${unknown.length ? `(${formatEstimatedCost(s.estimate?.costUsd ?? 0, unknown)})` : `at ~$${(s.estimate?.costUsd ?? 0).toFixed(2)}`}`,
    ];
  if (s.dry_run && unknown.length)
    return [`  batch        through the batch API (answers within 24 h); ${formatEstimatedCost(b.estimate_cost_usd ?? 0, unknown)}`];
  if (s.dry_run)
    return [
      `  batch        ~$${(b.estimate_cost_usd ?? 0).toFixed(2)} through the batch API, against ~$${(s.estimate?.costUsd ?? 0).toFixed(2)} online; answers within 24 h`,
    ];
  return [
    `  batches      ${b.submitted} submitted, ${b.resumed} resumed from the ledger, ${b.collected} collected${b.pending ? `, ${b.pending} still open (rerun to collect them; nothing is submitted twice)` : ''}`,
    `  batch items  ${b.items_submitted} submitted, ${b.items_answered} answered by a batch, ${b.fallback_online} called online, ${b.fallback_failed} recorded failed; batch cost $${b.cost_usd.toFixed(4)}`,
  ];
}

/** "~$1.23 (prices from the model specs)", or what is missing: an estimate never counts an unknown price as free. */
export function formatEstimatedCost(costUsd: number, priceUnknown: string[]): string {
  if (priceUnknown.length === 0) return `~$${costUsd.toFixed(2)} (prices from the model specs)`;
  const missing = `price unknown for ${priceUnknown.join(', ')} (add price_in=...&price_out=..., USD per 1M tokens, to the spec)`;
  return costUsd > 0 ? `~$${costUsd.toFixed(2)} for the priced models; ${missing}` : `cost: ${missing}`;
}

function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** "2 of 4 (0-based), from JOB_COMPLETION_INDEX, count from PLENS_SHARD_COUNT". */
export function formatShard(s: Shard): string {
  return `${s.index} of ${s.count} (0-based)${s.source ? `, from ${s.source}` : ''}${s.count_source ? `, count from ${s.count_source}` : ''}`;
}
