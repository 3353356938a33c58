import { usageError } from '../../../core/errors.js';
import type { SampleSize } from './samples.js';

/** Which scenarios to keep. Criteria combine with AND; --random applies last. */
export interface ScenarioSelection {
  kind: 'sd' | 'md' | 'all';
  sample?: SampleSize;
  users?: number[];
  domains?: string[];
  random?: number;
  seed?: string;
}

/** Parses "0-99,7,user12" into sorted, distinct user indices. */
export function parseUserList(spec: string): number[] {
  const out = new Set<number>();
  for (const raw of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const part = raw.replace(/^user/, '');
    const range = /^(\d+)-(?:user)?(\d+)$/.exec(part);
    if (range) {
      const [lo, hi] = [Number(range[1]), Number(range[2])];
      if (lo > hi) throw usageError(`--users: range "${raw}" runs backwards`);
      if (hi - lo > 10_000_000) throw usageError(`--users: range "${raw}" is too large`);
      for (let i = lo; i <= hi; i++) out.add(i);
    } else if (/^\d+$/.test(part)) {
      out.add(Number(part));
    } else {
      throw usageError(`--users: cannot read "${raw}"`, 'give indices and ranges like 0-99,7,user12');
    }
  }
  if (out.size === 0) throw usageError('--users: no users given');
  return [...out].sort((a, b) => a - b);
}
