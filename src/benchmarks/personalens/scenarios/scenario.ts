/** A scenario as stored (scenario_pool.parquet, scenarios.parquet); see schemas/scenario.schema.json. */
export interface Scenario {
  scenario_id: string;
  user_id: string;
  user_index: number;
  task_id: string;
  kind: 'SD' | 'MD';
  /** The key in the upstream per-user file, e.g. "Task 3". */
  task_key: string;
  relevant_domains: string[];
  relevant_preference_types: string[];
  location: string;
  device: string;
  time_of_day: string;
  day_of_week: string;
  environment: string;
}
