import { usageError } from '../../../core/errors.js';
import { sqlString } from '../../../db/database.js';
import { assertValid } from '../../../core/validator.js';
import { PAPER_SAMPLES, type SampleSize } from './samples.js';

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
  for (const raw of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
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

export function validateSelection(selection: ScenarioSelection): ScenarioSelection {
  assertValid<ScenarioSelection>('plens:scenario-selection', selection, { file: 'scenario selection' });
  if (selection.seed !== undefined && selection.random === undefined) throw usageError('--seed only applies with --random N');
  return selection;
}

/** The SQL that selects from the scenario pool (a table or parquet source named by `from`). */
export function selectionSql(selection: ScenarioSelection, from: string): string {
  const where: string[] = [];
  if (selection.kind !== 'all') where.push(`kind = ${sqlString(selection.kind.toUpperCase())}`);
  const users = intersectUsers(selection);
  if (users) where.push(users.length ? `user_index IN (${users.join(', ')})` : 'false');
  if (selection.domains?.length) where.push(`list_has_any(relevant_domains, [${selection.domains.map(sqlString).join(', ')}])`);
  let sql = `SELECT * FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
  if (selection.random !== undefined) {
    // A seeded hash order: the same seed always picks the same scenarios, and a larger N
    // keeps every scenario a smaller N picked. md5 is stable across DuckDB versions.
    const seed = sqlString(`${selection.seed ?? '0'}:`);
    sql = `SELECT * FROM (${sql}) ORDER BY md5(${seed} || scenario_id) LIMIT ${selection.random}`;
  }
  return `SELECT * FROM (${sql}) ORDER BY user_index, kind DESC, CAST(split_part(task_key, ' ', 2) AS INTEGER), task_id`;
}

function intersectUsers(selection: ScenarioSelection): number[] | undefined {
  const sample = selection.sample ? new Set(PAPER_SAMPLES[selection.sample]) : undefined;
  if (sample && selection.users) return selection.users.filter((u) => sample.has(u));
  if (sample) return [...sample];
  return selection.users;
}

/** The users a selection asks for explicitly (sample and/or list), to report those missing from the data. */
export function requestedUsers(selection: ScenarioSelection): number[] | undefined {
  return intersectUsers(selection);
}
