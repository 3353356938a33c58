// The format number lives with the workspace's dataset files, which check it; bump it there whenever a table below changes shape.
export { DATASET_FORMAT } from './workspace-files.js';

/**
 * The normalised dataset tables `plens import` writes, one Parquet file each in
 * <workspace>/dataset/. Column order here is the order of the Parquet files.
 */
export const DATASET_TABLES = {
  domains: `domain VARCHAR, position INTEGER, description VARCHAR`,
  preference_schema: `domain VARCHAR, preference_type VARCHAR, position INTEGER, description VARCHAR, is_categorical BOOLEAN,
    has_multiple_values BOOLEAN, possible_values VARCHAR[], n_possible INTEGER`,
  tasks: `task_id VARCHAR, kind VARCHAR, task_number INTEGER, domain VARCHAR, description VARCHAR, user_intent VARCHAR, goal VARCHAR,
    relevant_domains VARCHAR[], relevant_preference_types VARCHAR[]`,
  users: `user_id VARCHAR, user_index INTEGER, age VARCHAR, gender VARCHAR, employment_status VARCHAR, education VARCHAR,
    marital_status VARCHAR, english_proficiency VARCHAR, ethnicity VARCHAR, religion VARCHAR, birth_country VARCHAR, reside_country VARCHAR`,
  interests: `user_id VARCHAR, user_index INTEGER, domain VARCHAR, interested BOOLEAN`,
  affinities: `user_id VARCHAR, user_index INTEGER, domain VARCHAR, preference_type VARCHAR, value VARCHAR, position INTEGER, is_list BOOLEAN`,
  interactions: `user_id VARCHAR, user_index INTEGER, domain VARCHAR, summary VARCHAR`,
  scenario_pool: `scenario_id VARCHAR, user_id VARCHAR, user_index INTEGER, task_id VARCHAR, kind VARCHAR, task_key VARCHAR,
    relevant_domains VARCHAR[], relevant_preference_types VARCHAR[], location VARCHAR, device VARCHAR, time_of_day VARCHAR,
    day_of_week VARCHAR, environment VARCHAR`,
} as const;

export type DatasetTable = keyof typeof DATASET_TABLES;

/**
 * Per-user tables are written in user order in small row groups, so a reader that wants a few
 * users (the dialogue stage, a batch at a time) skips the rest by the user_index statistics.
 */
export const ROW_GROUP_SIZE: Partial<Record<DatasetTable, number>> = { affinities: 8192, interactions: 1024, interests: 8192 };
export const DATASET_TABLE_NAMES = Object.keys(DATASET_TABLES) as DatasetTable[];
