import type { Normalisation } from './domains.js';
import type { UserRecord } from './upstream/user-reader.js';

/** The dataset tables that hold one user's rows (the others come from the schema and task/). */
export const PER_USER_TABLES = ['users', 'interests', 'affinities', 'interactions', 'scenario_pool'] as const;
export type PerUserTable = (typeof PER_USER_TABLES)[number];

/**
 * One user's rows as newline-delimited JSON per table, keyed by the tables' column names: DuckDB's
 * JSON reader loads them in bulk (in C++, in parallel), where appending value by value from
 * JavaScript took half the import.
 */
export interface UserRows {
  rows: Record<PerUserTable, string>;
  summary: UserSummary;
}

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
  const lines = (objects: object[]) => objects.map((o) => JSON.stringify(o) + '\n').join('');
  return {
    rows: {
      users: lines([
        {
          user_id,
          user_index,
          age: d.age,
          gender: d.gender,
          employment_status: d.employment_status,
          education: d.education,
          marital_status: d.marital_status,
          english_proficiency: d.english_proficiency,
          ethnicity: d.ethnicity,
          religion: d.religion,
          birth_country: d.birth_country,
          reside_country: d.reside_country,
        },
      ]),
      interests: lines(r.interests.map((i) => ({ user_id, user_index, domain: i.domain, interested: i.interested }))),
      affinities: lines(
        r.affinities.map((f) => ({
          user_id,
          user_index,
          domain: f.domain,
          preference_type: f.preference_type,
          value: f.value,
          position: f.position,
          is_list: f.is_list,
        })),
      ),
      interactions: lines(r.interactions.map((x) => ({ user_id, user_index, domain: x.domain, summary: x.summary }))),
      scenario_pool: lines(
        r.scenarios.map((s) => ({
          scenario_id: s.scenario_id,
          user_id,
          user_index,
          task_id: s.task_id,
          kind: s.kind,
          task_key: s.task_key,
          relevant_domains: s.relevant_domains,
          relevant_preference_types: s.relevant_preference_types,
          location: s.location,
          device: s.device,
          time_of_day: s.time_of_day,
          day_of_week: s.day_of_week,
          environment: s.environment,
        })),
      ),
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
