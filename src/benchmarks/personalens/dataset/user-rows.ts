import type { Normalisation } from './domains.js';
import type { UserRecord } from './upstream/user-reader.js';

/** The dataset tables that hold one user's rows (the others come from the schema and task/). */
export const PER_USER_TABLES = ['users', 'interests', 'affinities', 'interactions', 'scenario_pool'] as const;
export type PerUserTable = (typeof PER_USER_TABLES)[number];
export const isPerUserTable = (name: string): name is PerUserTable => (PER_USER_TABLES as readonly string[]).includes(name);

/**
 * One user's rows as one line of JSON per table, column by column: the user's id and index once, and
 * a list per other column (row i of the user is element i of every list). DuckDB's JSON reader loads
 * the lines in bulk (in C++, in parallel) and unnests the lists back into rows (see import.ts); columns
 * instead of row objects leave out the repeated keys, which were half the bytes written and parsed.
 * (Appending value by value from JavaScript took half the import.) A user without rows in a table
 * writes no line for it.
 */
export interface UserRows {
  rows: Record<PerUserTable, string>;
  summary: UserSummary;
}

/** The columns a per-user table's lines hold once per user; the others are lists, one element a row. */
export const USER_KEY_COLUMNS = ['user_id', 'user_index'] as const;

/** What the import keeps of a user besides the rows: small, so a reader thread posts it back. */
export interface UserSummary {
  index: number;
  normalisations: Normalisation[];
  warnings: string[];
  sd: number;
  md: number;
}

export function toUserRows(r: UserRecord): UserRows {
  const d = r.demographics;
  const user_id = d.user_id;
  const user_index = r.index;
  // The lists are as long as each other: the first says how many rows the user has in the table.
  const line = (columns: Record<string, unknown[]>) =>
    Object.values(columns)[0]!.length === 0 ? '' : JSON.stringify({ user_id, user_index, ...columns }) + '\n';
  const pick = <T, K extends keyof T>(rows: readonly T[], key: K): Array<T[K]> => rows.map((row) => row[key]);
  const { interests: i, affinities: a, interactions: x, scenarios: s } = r;
  return {
    rows: {
      users: line({
        age: [d.age],
        gender: [d.gender],
        employment_status: [d.employment_status],
        education: [d.education],
        marital_status: [d.marital_status],
        english_proficiency: [d.english_proficiency],
        ethnicity: [d.ethnicity],
        religion: [d.religion],
        birth_country: [d.birth_country],
        reside_country: [d.reside_country],
      }),
      interests: line({ domain: pick(i, 'domain'), interested: pick(i, 'interested') }),
      affinities: line({
        domain: pick(a, 'domain'),
        preference_type: pick(a, 'preference_type'),
        value: pick(a, 'value'),
        position: pick(a, 'position'),
        is_list: pick(a, 'is_list'),
      }),
      interactions: line({ domain: pick(x, 'domain'), summary: pick(x, 'summary') }),
      scenario_pool: line({
        scenario_id: pick(s, 'scenario_id'),
        task_id: pick(s, 'task_id'),
        kind: pick(s, 'kind'),
        task_key: pick(s, 'task_key'),
        relevant_domains: pick(s, 'relevant_domains'),
        relevant_preference_types: pick(s, 'relevant_preference_types'),
        location: pick(s, 'location'),
        device: pick(s, 'device'),
        time_of_day: pick(s, 'time_of_day'),
        day_of_week: pick(s, 'day_of_week'),
        environment: pick(s, 'environment'),
      }),
    },
    summary: {
      index: r.index,
      normalisations: r.normalisations,
      warnings: r.warnings,
      sd: r.scenarios.filter((s) => s.kind === 'SD').length,
      md: r.scenarios.filter((s) => s.kind === 'MD').length,
    },
  };
}
