import { createHash } from 'node:crypto';
import { usageError } from '../core/errors.js';

/** Where a shard's index came from, in the order resolveShard tries them. */
export const SHARD_SOURCES = ['--shard', 'PLENS_SHARD', 'JOB_COMPLETION_INDEX', 'SLURM_ARRAY_TASK_ID', 'AWS_BATCH_JOB_ARRAY_INDEX'] as const;
export type ShardSource = (typeof SHARD_SOURCES)[number];

export interface Shard {
  index: number;
  count: number;
  /** Where the index came from (set by resolveShard; reported in the stage summary). */
  source?: ShardSource;
  /** Where the count came from, when not the same place as the index (e.g. PLENS_SHARD_COUNT). */
  count_source?: string;
}

/** Parses "i/n" (0-based i); `name` is the flag or variable it came from, for the error. */
export function parseShard(spec: string, name = '--shard'): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(spec.trim());
  if (!m) throw usageError(`${name} "${spec}": expected i/n, e.g. 0/4`);
  const index = Number(m[1]);
  const count = Number(m[2]);
  if (count < 1 || index >= count) throw usageError(`${name} "${spec}": need 0 <= i < n`);
  return { index, count };
}

type Env = Record<string, string | undefined>;

const SCHEDULER_VARS = 'JOB_COMPLETION_INDEX (Kubernetes Indexed Job), SLURM_ARRAY_TASK_ID (Slurm array) or AWS_BATCH_JOB_ARRAY_INDEX (AWS Batch array)';

/**
 * Which shard this process runs, and why. Precedence: an explicit `--shard i/n`; then env
 * PLENS_SHARD=i/n; then an array job's index: JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID,
 * AWS_BATCH_JOB_ARRAY_INDEX. `--shard auto` skips the first step and requires one of the others.
 * A scheduler that gives no count takes it from `--shard-count` or PLENS_SHARD_COUNT. Empty
 * variables count as unset. Returns undefined for an unsharded run; inconsistent values are
 * usage errors naming the variable.
 */
export function resolveShard(flag: string | undefined, countFlag: string | number | undefined, env: Env): Shard | undefined {
  const get = (name: string) => (env[name]?.trim() ? env[name]!.trim() : undefined);
  const flagCount =
    countFlag === undefined || countFlag === '' ? undefined : { count: parseWhole(String(countFlag), '--shard-count', 1), from: '--shard-count' };
  const envCount =
    get('PLENS_SHARD_COUNT') === undefined ? undefined : { count: parseWhole(get('PLENS_SHARD_COUNT')!, 'PLENS_SHARD_COUNT', 1), from: 'PLENS_SHARD_COUNT' };
  // The flag beats the variable, as everywhere: a command line is more specific than a pod spec.
  const givenCount = flagCount ?? envCount;

  const spec = flag?.trim();
  if (spec && spec !== 'auto') {
    // An explicit shard ignores the environment entirely, so `--shard 0/1` opts out inside an array job.
    return withSpecCount({ ...parseShard(spec, '--shard'), source: '--shard' }, flagCount);
  }
  const plensShard = get('PLENS_SHARD');
  if (plensShard !== undefined) return withSpecCount({ ...parseShard(plensShard, 'PLENS_SHARD'), source: 'PLENS_SHARD' }, givenCount);

  const k8s = get('JOB_COMPLETION_INDEX');
  if (k8s !== undefined) {
    const index = parseWhole(k8s, 'JOB_COMPLETION_INDEX', 0);
    // Kubernetes passes no count to the pod: it is the Job's `completions`, given by flag or env.
    const count = schedulerCount(undefined, '', givenCount, `JOB_COMPLETION_INDEX=${k8s}`);
    return check({ index, count: count.count, source: 'JOB_COMPLETION_INDEX' }, count.from, `JOB_COMPLETION_INDEX=${k8s}`);
  }

  const slurm = get('SLURM_ARRAY_TASK_ID');
  if (slurm !== undefined) {
    const id = parseWhole(slurm, 'SLURM_ARRAY_TASK_ID', 0);
    // Arrays may start anywhere (--array=1-4) and step (--array=0-12:4): shard = (ID - MIN) / STEP.
    const min = get('SLURM_ARRAY_TASK_MIN') === undefined ? 0 : parseWhole(get('SLURM_ARRAY_TASK_MIN')!, 'SLURM_ARRAY_TASK_MIN', 0);
    const step = get('SLURM_ARRAY_TASK_STEP') === undefined ? 1 : parseWhole(get('SLURM_ARRAY_TASK_STEP')!, 'SLURM_ARRAY_TASK_STEP', 1);
    const what = `SLURM_ARRAY_TASK_ID=${id} (SLURM_ARRAY_TASK_MIN=${min}, SLURM_ARRAY_TASK_STEP=${step})`;
    if (id < min || (id - min) % step !== 0) throw usageError(`${what}: the task is not on the array's range`, 'use a plain range, e.g. sbatch --array=0-3');
    const count = schedulerCount(get('SLURM_ARRAY_TASK_COUNT'), 'SLURM_ARRAY_TASK_COUNT', givenCount, what);
    const max = get('SLURM_ARRAY_TASK_MAX');
    // A list such as --array=1,3,7 has no (MIN, STEP) that numbers its tasks 0..n-1: refuse it.
    if (max !== undefined && count.from === 'SLURM_ARRAY_TASK_COUNT' && (parseWhole(max, 'SLURM_ARRAY_TASK_MAX', 0) - min) / step + 1 !== count.count) {
      throw usageError(
        `SLURM_ARRAY_TASK_COUNT=${count.count} does not match the range SLURM_ARRAY_TASK_MIN=${min}..SLURM_ARRAY_TASK_MAX=${max} step ${step}`,
        'shard with a plain range, e.g. sbatch --array=0-3',
      );
    }
    return check({ index: (id - min) / step, count: count.count, source: 'SLURM_ARRAY_TASK_ID' }, count.from, what);
  }

  const aws = get('AWS_BATCH_JOB_ARRAY_INDEX');
  if (aws !== undefined) {
    const index = parseWhole(aws, 'AWS_BATCH_JOB_ARRAY_INDEX', 0);
    // AWS Batch itself sets no size variable; AWS_BATCH_JOB_ARRAY_SIZE is honoured when a job definition sets it.
    const count = schedulerCount(get('AWS_BATCH_JOB_ARRAY_SIZE'), 'AWS_BATCH_JOB_ARRAY_SIZE', givenCount, `AWS_BATCH_JOB_ARRAY_INDEX=${aws}`);
    return check({ index, count: count.count, source: 'AWS_BATCH_JOB_ARRAY_INDEX' }, count.from, `AWS_BATCH_JOB_ARRAY_INDEX=${aws}`);
  }

  if (spec === 'auto') throw usageError(`--shard auto: no shard in the environment; set PLENS_SHARD=i/n or run as an array job (${SCHEDULER_VARS})`);
  // A count with nothing to index it would otherwise run everything in every task.
  if (givenCount)
    throw usageError(`${givenCount.from}=${givenCount.count} is set but no shard index is: use --shard i/n, PLENS_SHARD=i/n or ${SCHEDULER_VARS}`);
  return undefined;
}

/** A whole number >= min, from a flag or variable; `name` is in the error. */
function parseWhole(text: string, name: string, min: number): number {
  const t = text.trim();
  if (!/^\d+$/.test(t) || Number(t) < min || !Number.isSafeInteger(Number(t)))
    throw usageError(`${name}=${JSON.stringify(text)}: expected a whole number >= ${min}`);
  return Number(t);
}

/** The count a scheduler gives, else the one given by flag or env; both must agree. */
function schedulerCount(
  text: string | undefined,
  name: string,
  given: { count: number; from: string } | undefined,
  what: string,
): { count: number; from: string } {
  if (text === undefined) {
    if (!given)
      throw usageError(
        `${what} gives the shard index but not the number of shards`,
        'pass --shard-count N or set PLENS_SHARD_COUNT=N (N = the number of array tasks)',
      );
    return given;
  }
  const count = parseWhole(text, name, 1);
  if (given && given.count !== count) throw usageError(`${name}=${count} disagrees with ${given.from}=${given.count}`);
  return { count, from: name };
}

function withSpecCount(s: Shard, given: { count: number; from: string } | undefined): Shard {
  if (given && given.count !== s.count) throw usageError(`${s.source} "${s.index}/${s.count}" disagrees with ${given.from}=${given.count}`);
  return s;
}

function check(s: Shard, countFrom: string, what: string): Shard {
  if (s.index >= s.count) throw usageError(`${what}: shard index ${s.index} is not below the number of shards ${s.count} (${countFrom})`);
  return countFrom === s.source ? s : { ...s, count_source: countFrom };
}

/** Work belongs to the shard its key hashes to, so shards partition any input with nothing lost or doubled. */
export function inShard(key: string, shard: Shard | undefined): boolean {
  if (!shard || shard.count === 1) return true;
  return createHash('sha256').update(key).digest().readUInt32BE(0) % shard.count === shard.index;
}

export function shardSuffix(shard: Shard | undefined): string {
  return shard && shard.count > 1 ? `.shard-${shard.index}-of-${shard.count}` : '';
}
