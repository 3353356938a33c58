import { usageError } from '../../../core/errors.js';
import { sqlList, type SqlParams } from '../../../db/database.js';
import { assertValid } from '../../../core/validator.js';
import { PAPER_SAMPLES } from './samples.js';

export { parseUserList, type ScenarioSelection } from './selection-spec.js';
import type { ScenarioSelection } from './selection-spec.js';

export function validateSelection(selection: ScenarioSelection): ScenarioSelection {
  assertValid<ScenarioSelection>('plens:scenario-selection', selection, { file: 'scenario selection' });
  if (selection.seed !== undefined && selection.random === undefined) throw usageError('--seed only applies with --random N');
  return selection;
}

/**
 * The SQL that selects from the scenario pool (a table or parquet source named by `from`), and the
 * values it binds (named parameters, so `from` may bind its own).
 */
export function selectionSql(selection: ScenarioSelection, from: string): { sql: string; params: Exclude<SqlParams, unknown[]> } {
  const where: string[] = [];
  const params: Exclude<SqlParams, unknown[]> = {};
  if (selection.kind !== 'all') {
    where.push('kind = $kind');
    params['kind'] = selection.kind.toUpperCase();
  }
  const users = intersectUsers(selection);
  if (users) {
    where.push(users.length ? `user_index IN (${users.map((_, i) => `$user${i}`).join(', ')})` : 'false');
    users.forEach((u, i) => {
      params[`user${i}`] = u;
    });
  }
  if (selection.domains?.length) {
    where.push('list_has_any(relevant_domains, $domains)');
    params['domains'] = sqlList(selection.domains);
  }
  let sql = `SELECT * FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`;
  if (selection.random !== undefined) {
    // A seeded hash order: the same seed always picks the same scenarios, and a larger N
    // keeps every scenario a smaller N picked. md5 is stable across DuckDB versions.
    sql = `SELECT * FROM (${sql}) ORDER BY md5($seed || scenario_id) LIMIT $random`;
    params['seed'] = `${selection.seed ?? '0'}:`;
    params['random'] = selection.random;
  }
  return { sql: `SELECT * FROM (${sql}) ORDER BY user_index, kind DESC, CAST(split_part(task_key, ' ', 2) AS INTEGER), task_id`, params };
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
