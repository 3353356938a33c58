/**
 * What building a PersonaLens benchmark makes, record by record (paper section 2, Appendix A.1,
 * A.2, A.4; ../shared/spec/personalens-construction.md). The field names and values are the
 * released data's (data/profile/user<N>/{profile,tasks,tasks_md}.json, data/task/<Domain>/task.jsonl),
 * so the export writes them as they are.
 */

/** The demographic fields of a released profile, in its order (PRISM's survey fields). */
export const DEMOGRAPHIC_FIELDS = [
  'age',
  'gender',
  'employment_status',
  'education',
  'marital_status',
  'english_proficiency',
  'ethnicity',
  'religion',
  'birth_country',
  'reside_country',
] as const;
export type DemographicField = (typeof DEMOGRAPHIC_FIELDS)[number];

/** A user's demographics as the released profile.json holds them: `user_id` then the ten fields ("N/A" where unknown). */
export type Demographics = { user_id: string } & Record<DemographicField, string>;

/** The domain mask (profile.json `interests`): every schema domain, in the schema's order, 1 kept, 0 masked. */
export type DomainMask = Record<string, 0 | 1>;

/** A preference's value: one value, or a list when the type has multiple values. */
export type PreferenceValue = string | string[];

/** A user's preferences in one domain (profile.json `affinities[domain]`): type -> value, in the schema's order. */
export type DomainPreferences = Record<string, PreferenceValue>;

/** A task definition as task/<Domain>/task.jsonl holds it (MD tasks also name their domains, before the affinity types). */
export interface TaskDefinition {
  'Task Number': number;
  'Task Description': string;
  'User Intent': string;
  'Task Goal': string;
  'Relevant Domains'?: string[];
  'Relevant Affinity Types': string[];
}

/** The situation variables (tasks.json `situations`), in the released order. */
export const SITUATION_FIELDS = ['Location', 'Device', 'Time of Day', 'Day of the Week', 'Environment'] as const;
export type SituationField = (typeof SITUATION_FIELDS)[number];
export type Situation = Record<SituationField, string>;

/** The closed sets of the situation variables (paper Figure 11; Day of the Week as the released data spells it). Location is open. */
export const SITUATION_VALUES: Partial<Record<SituationField, readonly string[]>> = {
  Device: ['Smartphone', 'Laptop', 'Smart speaker', 'Tablet', 'Smartwatch'],
  'Time of Day': ['Morning', 'Afternoon', 'Evening', 'Night'],
  'Day of the Week': ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'],
  Environment: ['Quiet', 'Noisy'],
};

/** A generated situation: the values and the justification given for each (the released files keep only the values). */
export interface GeneratedSituation {
  values: Situation;
  justifications: Record<SituationField, string>;
}

/** The consistency check of a profile (paper Figure 21): a label per domain (1 = a conflict) with its explanation, and across domains. */
export interface ConsistencyVerdict {
  domains: Record<string, { label: 0 | 1; explanation: string }>;
  cross_domain: { label: 0 | 1; explanation: string };
}

/** What a parser noticed in a reply it accepted: values kept but counted (the paper allows going beyond a list). */
export interface ParseNotes {
  /** Categorical values not in the type's possible values: `<type>: <value>`. */
  off_list: string[];
  /** Values given in the other shape (a list for a single-valued type, one value for a multi-valued one) and reshaped. */
  reshaped: string[];
}

/** A parsed reply: the value and what was noticed, or why it was refused (a recorded parse state; --retry-failed asks again). */
export type ParseResult<V> = { ok: true; value: V; notes: ParseNotes } | { ok: false; state: ParseState; error: string };

/**
 * Why a reply was refused. `not_json` / `not_xml`: the format could not be read; `missing_type`,
 * `unknown_type`: a preference type of the schema absent, or one it does not have; `bad_value`: a
 * value of the wrong kind (empty, not a string); `unknown_domain`: a domain the schema lacks;
 * `off_set`: a situation value outside its closed set; `wrong_count`: not the number of tasks asked
 * for; `empty`: nothing usable.
 */
export type ParseState = 'not_json' | 'not_xml' | 'missing_type' | 'unknown_type' | 'bad_value' | 'unknown_domain' | 'off_set' | 'wrong_count' | 'empty';

/** One task a user is given, as tasks.json / tasks_md.json hold it (key `Task K`). */
export interface AssignedTask {
  /** `SD-<Domain>-task-<K>` or `MD-task-<K>`. */
  task_id: string;
  definition: TaskDefinition;
  /** SD: the task's domain; MD: its relevant domains. */
  domains: string[];
}

/** A built user, everything the export writes for them. */
export interface BuiltUser {
  demographics: Demographics;
  interests: DomainMask;
  /** Unmasked domains only, in the schema's order. */
  affinities: Record<string, DomainPreferences>;
  interactions: Record<string, string>;
  sd: Array<AssignedTask & { situations: Situation }>;
  md: Array<AssignedTask & { situations: Situation }>;
}

/** The construction stages that call a model, in the order a build runs them. */
export const BUILD_LLM_STAGES = ['masks', 'preferences', 'interactions', 'sd-tasks', 'md-tasks', 'situations', 'consistency'] as const;
export type BuildLlmStage = (typeof BUILD_LLM_STAGES)[number];
