import { describe, expect, it } from 'vitest';
import { PlensError } from '../../src/core/errors.js';
import { formatShard } from '../../src/engine/stage-summary.js';
import { inShard, parseShard, resolveShard } from '../../src/engine/shard.js';

/** The usage error resolveShard throws (exit 2), for matching on its message. */
function usage(fn: () => unknown): PlensError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(PlensError);
    expect((error as PlensError).code).toBe('E_USAGE');
    expect((error as PlensError).exitCode).toBe(2);
    return error as PlensError;
  }
  throw new Error('expected a usage error');
}

describe('resolveShard: sources', () => {
  it('runs unsharded with nothing given (and treats empty variables as unset)', () => {
    expect(resolveShard(undefined, undefined, {})).toBeUndefined();
    expect(resolveShard(undefined, undefined, { PLENS_SHARD: '', JOB_COMPLETION_INDEX: ' ', SLURM_ARRAY_TASK_ID: '', PLENS_SHARD_COUNT: '' })).toBeUndefined();
  });

  it('--shard i/n', () => {
    expect(resolveShard('1/4', undefined, {})).toEqual({ index: 1, count: 4, source: '--shard' });
    expect(resolveShard('1/4', '4', {})).toEqual({ index: 1, count: 4, source: '--shard' });
  });

  it('PLENS_SHARD=i/n', () => {
    expect(resolveShard(undefined, undefined, { PLENS_SHARD: '3/4' })).toEqual({ index: 3, count: 4, source: 'PLENS_SHARD' });
    expect(resolveShard('auto', undefined, { PLENS_SHARD: '0/2', PLENS_SHARD_COUNT: '2' })).toEqual({ index: 0, count: 2, source: 'PLENS_SHARD' });
  });

  it('JOB_COMPLETION_INDEX with the count from --shard-count or PLENS_SHARD_COUNT', () => {
    expect(resolveShard(undefined, undefined, { JOB_COMPLETION_INDEX: '2', PLENS_SHARD_COUNT: '4' })).toEqual({
      index: 2,
      count: 4,
      source: 'JOB_COMPLETION_INDEX',
      count_source: 'PLENS_SHARD_COUNT',
    });
    expect(resolveShard(undefined, '4', { JOB_COMPLETION_INDEX: '0' })).toEqual({
      index: 0,
      count: 4,
      source: 'JOB_COMPLETION_INDEX',
      count_source: '--shard-count',
    });
    // The flag beats the variable.
    expect(resolveShard('auto', 8, { JOB_COMPLETION_INDEX: '5', PLENS_SHARD_COUNT: '4' })).toMatchObject({ index: 5, count: 8, count_source: '--shard-count' });
  });

  it('SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT, counted from SLURM_ARRAY_TASK_MIN', () => {
    expect(resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '3', SLURM_ARRAY_TASK_COUNT: '4' })).toEqual({
      index: 3,
      count: 4,
      source: 'SLURM_ARRAY_TASK_ID',
      count_source: 'SLURM_ARRAY_TASK_COUNT',
    });
    // sbatch --array=1-4
    const oneBased = {
      SLURM_ARRAY_TASK_ID: '1',
      SLURM_ARRAY_TASK_MIN: '1',
      SLURM_ARRAY_TASK_MAX: '4',
      SLURM_ARRAY_TASK_STEP: '1',
      SLURM_ARRAY_TASK_COUNT: '4',
    };
    expect(resolveShard(undefined, undefined, oneBased)).toMatchObject({ index: 0, count: 4 });
    expect(resolveShard(undefined, undefined, { ...oneBased, SLURM_ARRAY_TASK_ID: '4' })).toMatchObject({ index: 3, count: 4 });
    // sbatch --array=0-12:4 (tasks 0, 4, 8, 12)
    const stepped = {
      SLURM_ARRAY_TASK_ID: '8',
      SLURM_ARRAY_TASK_MIN: '0',
      SLURM_ARRAY_TASK_MAX: '12',
      SLURM_ARRAY_TASK_STEP: '4',
      SLURM_ARRAY_TASK_COUNT: '4',
    };
    expect(resolveShard(undefined, undefined, stepped)).toMatchObject({ index: 2, count: 4 });
    // No SLURM_ARRAY_TASK_COUNT (old Slurm): the count is given.
    expect(resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '1', PLENS_SHARD_COUNT: '2' })).toEqual({
      index: 1,
      count: 2,
      source: 'SLURM_ARRAY_TASK_ID',
      count_source: 'PLENS_SHARD_COUNT',
    });
    // A given count that agrees is fine.
    expect(resolveShard(undefined, '4', { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: '4' })).toMatchObject({
      index: 0,
      count: 4,
      count_source: 'SLURM_ARRAY_TASK_COUNT',
    });
  });

  it('AWS_BATCH_JOB_ARRAY_INDEX with AWS_BATCH_JOB_ARRAY_SIZE or a given count', () => {
    expect(resolveShard(undefined, undefined, { AWS_BATCH_JOB_ARRAY_INDEX: '1', AWS_BATCH_JOB_ARRAY_SIZE: '3' })).toEqual({
      index: 1,
      count: 3,
      source: 'AWS_BATCH_JOB_ARRAY_INDEX',
      count_source: 'AWS_BATCH_JOB_ARRAY_SIZE',
    });
    expect(resolveShard(undefined, undefined, { AWS_BATCH_JOB_ARRAY_INDEX: '2', PLENS_SHARD_COUNT: '3' })).toEqual({
      index: 2,
      count: 3,
      source: 'AWS_BATCH_JOB_ARRAY_INDEX',
      count_source: 'PLENS_SHARD_COUNT',
    });
  });
});

describe('resolveShard: precedence', () => {
  const everything = {
    PLENS_SHARD: '1/5',
    PLENS_SHARD_COUNT: '5',
    JOB_COMPLETION_INDEX: '2',
    SLURM_ARRAY_TASK_ID: '3',
    SLURM_ARRAY_TASK_COUNT: '5',
    AWS_BATCH_JOB_ARRAY_INDEX: '4',
  };
  it('--shard i/n, then PLENS_SHARD, then JOB_COMPLETION_INDEX, then SLURM_ARRAY_TASK_ID, then AWS_BATCH_JOB_ARRAY_INDEX', () => {
    expect(resolveShard('0/5', undefined, everything)).toMatchObject({ index: 0, source: '--shard' });
    expect(resolveShard(undefined, undefined, everything)).toMatchObject({ index: 1, source: 'PLENS_SHARD' });
    expect(resolveShard('auto', undefined, everything)).toMatchObject({ index: 1, source: 'PLENS_SHARD' });
    const { PLENS_SHARD: _a, ...k8s } = everything;
    expect(resolveShard(undefined, undefined, k8s)).toMatchObject({ index: 2, source: 'JOB_COMPLETION_INDEX' });
    const { JOB_COMPLETION_INDEX: _b, ...slurm } = k8s;
    expect(resolveShard(undefined, undefined, slurm)).toMatchObject({ index: 3, source: 'SLURM_ARRAY_TASK_ID' });
    const { SLURM_ARRAY_TASK_ID: _c, ...aws } = slurm;
    expect(resolveShard(undefined, undefined, aws)).toMatchObject({ index: 4, source: 'AWS_BATCH_JOB_ARRAY_INDEX' });
  });

  it('an explicit --shard ignores the environment, so --shard 0/1 opts out inside an array job', () => {
    expect(resolveShard('0/1', undefined, { JOB_COMPLETION_INDEX: '3', PLENS_SHARD_COUNT: '4' })).toEqual({ index: 0, count: 1, source: '--shard' });
  });
});

describe('resolveShard: errors (exit 2, naming the variable)', () => {
  it('rejects malformed specs', () => {
    expect(usage(() => resolveShard('1of4', undefined, {})).message).toContain('--shard "1of4"');
    expect(usage(() => resolveShard('4/4', undefined, {})).message).toContain('need 0 <= i < n');
    expect(usage(() => resolveShard('0/0', undefined, {})).message).toContain('--shard "0/0"');
    expect(usage(() => resolveShard(undefined, undefined, { PLENS_SHARD: '-1/4' })).message).toContain('PLENS_SHARD "-1/4"');
    expect(usage(() => resolveShard(undefined, undefined, { PLENS_SHARD: '5/4' })).message).toContain('PLENS_SHARD "5/4"');
  });

  it('rejects counts that are not whole numbers >= 1', () => {
    expect(usage(() => resolveShard(undefined, 'four', { JOB_COMPLETION_INDEX: '0' })).message).toContain('--shard-count="four"');
    expect(usage(() => resolveShard(undefined, 0, { JOB_COMPLETION_INDEX: '0' })).message).toContain('--shard-count="0"');
    expect(usage(() => resolveShard(undefined, undefined, { JOB_COMPLETION_INDEX: '0', PLENS_SHARD_COUNT: '2.5' })).message).toContain(
      'PLENS_SHARD_COUNT="2.5"',
    );
    expect(usage(() => resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_COUNT: 'x' })).message).toContain(
      'SLURM_ARRAY_TASK_COUNT="x"',
    );
    expect(usage(() => resolveShard(undefined, undefined, { AWS_BATCH_JOB_ARRAY_INDEX: '0', AWS_BATCH_JOB_ARRAY_SIZE: '0' })).message).toContain(
      'AWS_BATCH_JOB_ARRAY_SIZE="0"',
    );
  });

  it('rejects indices that are not whole numbers', () => {
    expect(usage(() => resolveShard(undefined, undefined, { JOB_COMPLETION_INDEX: 'a', PLENS_SHARD_COUNT: '4' })).message).toContain(
      'JOB_COMPLETION_INDEX="a"',
    );
    expect(usage(() => resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '1.0', SLURM_ARRAY_TASK_COUNT: '4' })).message).toContain(
      'SLURM_ARRAY_TASK_ID="1.0"',
    );
    expect(usage(() => resolveShard(undefined, undefined, { AWS_BATCH_JOB_ARRAY_INDEX: '-1', PLENS_SHARD_COUNT: '4' })).message).toContain(
      'AWS_BATCH_JOB_ARRAY_INDEX="-1"',
    );
    expect(
      usage(() => resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_MIN: 'z', SLURM_ARRAY_TASK_COUNT: '4' })).message,
    ).toContain('SLURM_ARRAY_TASK_MIN="z"');
  });

  it('rejects an index not below the count', () => {
    expect(usage(() => resolveShard(undefined, undefined, { JOB_COMPLETION_INDEX: '4', PLENS_SHARD_COUNT: '4' })).message).toMatch(
      /JOB_COMPLETION_INDEX=4: shard index 4 is not below the number of shards 4 \(PLENS_SHARD_COUNT\)/,
    );
    expect(usage(() => resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '4', SLURM_ARRAY_TASK_COUNT: '4' })).message).toContain(
      'SLURM_ARRAY_TASK_ID=4',
    );
    expect(usage(() => resolveShard(undefined, undefined, { AWS_BATCH_JOB_ARRAY_INDEX: '3', AWS_BATCH_JOB_ARRAY_SIZE: '3' })).message).toContain(
      'AWS_BATCH_JOB_ARRAY_INDEX=3',
    );
  });

  it('rejects a scheduler index without a count', () => {
    const e = usage(() => resolveShard(undefined, undefined, { JOB_COMPLETION_INDEX: '1' }));
    expect(e.message).toContain('JOB_COMPLETION_INDEX=1 gives the shard index but not the number of shards');
    expect(e.hint).toContain('PLENS_SHARD_COUNT');
    expect(usage(() => resolveShard(undefined, undefined, { AWS_BATCH_JOB_ARRAY_INDEX: '1' })).message).toContain('AWS_BATCH_JOB_ARRAY_INDEX=1');
    expect(usage(() => resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '1' })).message).toContain('SLURM_ARRAY_TASK_ID=1');
  });

  it('rejects counts that disagree', () => {
    expect(usage(() => resolveShard('1/4', '8', {})).message).toContain('--shard "1/4" disagrees with --shard-count=8');
    expect(usage(() => resolveShard(undefined, undefined, { PLENS_SHARD: '1/4', PLENS_SHARD_COUNT: '8' })).message).toContain(
      'PLENS_SHARD "1/4" disagrees with PLENS_SHARD_COUNT=8',
    );
    expect(
      usage(() => resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '1', SLURM_ARRAY_TASK_COUNT: '4', PLENS_SHARD_COUNT: '8' })).message,
    ).toContain('SLURM_ARRAY_TASK_COUNT=4 disagrees with PLENS_SHARD_COUNT=8');
    expect(usage(() => resolveShard(undefined, '2', { AWS_BATCH_JOB_ARRAY_INDEX: '1', AWS_BATCH_JOB_ARRAY_SIZE: '3' })).message).toContain(
      'AWS_BATCH_JOB_ARRAY_SIZE=3 disagrees with --shard-count=2',
    );
  });

  it('rejects Slurm tasks off a plain range', () => {
    expect(
      usage(() => resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '0', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_COUNT: '4' })).message,
    ).toContain('not on the array');
    expect(
      usage(() => resolveShard(undefined, undefined, { SLURM_ARRAY_TASK_ID: '5', SLURM_ARRAY_TASK_STEP: '4', SLURM_ARRAY_TASK_COUNT: '4' })).message,
    ).toContain('not on the array');
    // sbatch --array=1,3,7: no MIN/STEP numbers these 0..2.
    const list = { SLURM_ARRAY_TASK_ID: '3', SLURM_ARRAY_TASK_MIN: '1', SLURM_ARRAY_TASK_MAX: '7', SLURM_ARRAY_TASK_STEP: '1', SLURM_ARRAY_TASK_COUNT: '3' };
    expect(usage(() => resolveShard(undefined, undefined, list)).message).toContain('SLURM_ARRAY_TASK_COUNT=3 does not match the range');
  });

  it('--shard auto with nothing in the environment, or a count with no index', () => {
    expect(usage(() => resolveShard('auto', undefined, {})).message).toContain('--shard auto: no shard in the environment');
    expect(usage(() => resolveShard(undefined, '4', {})).message).toContain('--shard-count=4 is set but no shard index is');
    expect(usage(() => resolveShard(undefined, undefined, { PLENS_SHARD_COUNT: '4' })).message).toContain('PLENS_SHARD_COUNT=4 is set but no shard index is');
  });
});

describe('shards', () => {
  it('partition keys: every key in exactly one of n shards', () => {
    const keys = Array.from({ length: 500 }, (_, i) => `key-${i}`);
    const shards = [0, 1, 2, 3].map((i) => parseShard(`${i}/4`));
    for (const k of keys) expect(shards.filter((s) => inShard(k, s))).toHaveLength(1);
    for (const s of shards) expect(keys.filter((k) => inShard(k, s)).length).toBeGreaterThan(80);
  });

  it('say where they came from in the summary', () => {
    expect(formatShard(resolveShard(undefined, undefined, { JOB_COMPLETION_INDEX: '2', PLENS_SHARD_COUNT: '4' })!)).toBe(
      '2 of 4 (0-based), from JOB_COMPLETION_INDEX, count from PLENS_SHARD_COUNT',
    );
    expect(formatShard(resolveShard('0/4', undefined, {})!)).toBe('0 of 4 (0-based), from --shard');
  });
});
