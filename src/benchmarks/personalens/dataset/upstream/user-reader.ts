import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { PlensError } from '../../../../core/errors.js';
import { parseJsonText, readInputTextSync } from '../../../../core/json-input.js';
import { assertValid, escapePointer } from '../../../../core/validator.js';
import { normaliseDomainKey, type Normalisation } from '../domains.js';
import type { Scenario } from '../../scenarios/scenario.js';
import type { PreferenceSchema } from './preference-schema.js';
import type { TaskDefinition } from './task-definitions.js';

type Demographics = {
  user_id: string;
  age: string;
  gender: string;
  employment_status: string;
  education: string;
  marital_status: string;
  english_proficiency: string;
  ethnicity: string;
  religion: string;
  birth_country: string;
  reside_country: string;
};

interface RawProfile {
  demographics: Demographics;
  interests: Record<string, 0 | 1>;
  affinities: Record<string, Record<string, string | string[]>>;
  interactions: Record<string, string>;
}

interface RawUserTask {
  task_id: string;
  'Task Description': string;
  'User Intent': string;
  'Task Goal': string;
  'Relevant Affinity Types': string[];
  'Relevant Domains': string[];
  situations: { Location: string; Device: string; 'Time of Day': string; 'Day of the Week': string; Environment: string };
}

/** One user's records, validated and normalised, ready to append to the dataset tables. */
export interface UserRecord {
  index: number;
  demographics: Demographics;
  interests: Array<{ domain: string; interested: boolean }>;
  /** value null marks an empty list: the user has the preference type but no value. */
  affinities: Array<{ domain: string; preference_type: string; value: string | null; position: number | null; is_list: boolean }>;
  interactions: Array<{ domain: string; summary: string }>;
  scenarios: Array<Omit<Scenario, 'user_id' | 'user_index'>>;
  normalisations: Normalisation[];
  warnings: string[];
}

export interface UserReadContext {
  schema: PreferenceSchema;
  tasks: Map<string, TaskDefinition>;
}

const TASK_FILES = [
  { name: 'tasks.json', kind: 'SD' },
  { name: 'tasks_md.json', kind: 'MD' },
] as const;

export async function readUser(user: { userId: string; index: number; dir: string }, ctx: UserReadContext): Promise<UserRecord> {
  const profileFile = join(user.dir, 'profile.json');
  const profile = parseJsonText(readInput(profileFile), profileFile);
  assertValid<RawProfile>('plens:upstream-profile', profile, { file: profileFile });

  if (profile.demographics.user_id !== user.userId) {
    throw new PlensError('E_INPUT_REFERENCE', `user_id "${profile.demographics.user_id}" does not match its directory "${user.userId}"`, {
      location: { file: profileFile, pointer: '/demographics/user_id' },
    });
  }

  const record: UserRecord = {
    index: user.index,
    demographics: profile.demographics,
    interests: [],
    affinities: [],
    interactions: [],
    scenarios: [],
    normalisations: [],
    warnings: [],
  };
  // Pointers are built only when needed (an error or a normalised key): a user has hundreds of domain keys.
  const domainOf = (raw: string, file: string, pointer: () => string): string => {
    const domain = normaliseDomainKey(raw);
    if (!ctx.schema.hasDomain(domain)) {
      throw new PlensError('E_INPUT_DOMAIN', `unknown domain "${raw}"; the schema has: ${ctx.schema.domainNames.join(', ')}`, {
        location: { file, pointer: pointer() },
      });
    }
    if (domain !== raw) record.normalisations.push({ file, pointer: pointer(), from: raw, to: domain });
    return domain;
  };
  const once = (seen: Set<string>, domain: string, file: string, pointer: () => string) => {
    if (seen.has(domain))
      throw new PlensError('E_INPUT_DUPLICATE', `domain "${domain}" appears twice (after normalising keys)`, { location: { file, pointer: pointer() } });
    seen.add(domain);
  };

  const interested = new Set<string>();
  const seenInterest = new Set<string>();
  for (const [raw, flag] of Object.entries(profile.interests)) {
    const pointer = () => `/interests/${escapePointer(raw)}`;
    const domain = domainOf(raw, profileFile, pointer);
    once(seenInterest, domain, profileFile, pointer);
    if (flag === 1) interested.add(domain);
    record.interests.push({ domain, interested: flag === 1 });
  }

  const seenAffinity = new Set<string>();
  for (const [raw, prefs] of Object.entries(profile.affinities)) {
    const pointer = () => `/affinities/${escapePointer(raw)}`;
    const domain = domainOf(raw, profileFile, pointer);
    once(seenAffinity, domain, profileFile, pointer);
    for (const [type, value] of Object.entries(prefs)) {
      if (!ctx.schema.hasPreferenceType(domain, type)) {
        throw new PlensError('E_INPUT_REFERENCE', `preference type "${type}" is not in the schema for domain ${domain}`, {
          location: { file: profileFile, pointer: `/affinities/${escapePointer(raw)}/${escapePointer(type)}` },
        });
      }
      if (Array.isArray(value)) {
        if (value.length === 0) record.affinities.push({ domain, preference_type: type, value: null, position: null, is_list: true });
        value.forEach((v, position) => record.affinities.push({ domain, preference_type: type, value: v, position, is_list: true }));
      } else {
        record.affinities.push({ domain, preference_type: type, value, position: 0, is_list: false });
      }
    }
  }

  const seenInteraction = new Set<string>();
  for (const [raw, summary] of Object.entries(profile.interactions)) {
    const pointer = () => `/interactions/${escapePointer(raw)}`;
    const domain = domainOf(raw, profileFile, pointer);
    once(seenInteraction, domain, profileFile, pointer);
    record.interactions.push({ domain, summary });
  }

  const seenTasks = new Set<string>();
  for (const { name, kind } of TASK_FILES) {
    const file = join(user.dir, name);
    const data = parseJsonText(readInput(file), file);
    assertValid<Record<string, RawUserTask>>('plens:upstream-user-tasks', data, { file });
    for (const [key, task] of Object.entries(data)) {
      const base = `/${escapePointer(key)}`;
      const definition = ctx.tasks.get(task.task_id);
      if (!definition) {
        throw new PlensError('E_INPUT_REFERENCE', `task_id "${task.task_id}" is not defined in task/`, { location: { file, pointer: `${base}/task_id` } });
      }
      if (definition.kind !== kind) {
        throw new PlensError('E_INPUT_REFERENCE', `${name} holds ${kind} scenarios, but "${task.task_id}" is ${definition.kind}`, {
          location: { file, pointer: `${base}/task_id` },
        });
      }
      if (seenTasks.has(task.task_id)) {
        throw new PlensError('E_INPUT_DUPLICATE', `task "${task.task_id}" appears twice for ${user.userId}`, {
          location: { file, pointer: `${base}/task_id` },
        });
      }
      seenTasks.add(task.task_id);
      const domains = task['Relevant Domains'].map((d, i) => domainOf(d, file, () => `${base}/Relevant Domains/${i}`));
      const masked = domains.filter((d) => !interested.has(d));
      if (masked.length > 0) record.warnings.push(`${file}#${base}: scenario ${task.task_id} includes masked domain(s) ${masked.join(', ')}`);
      if (task['Relevant Affinity Types'].join('\u0000') !== definition.relevant_preference_types.join('\u0000')) {
        record.warnings.push(`${file}#${base}: relevant preference types of ${task.task_id} differ from its task definition; the scenario keeps its own`);
      }
      for (const [field, defValue] of [
        ['Task Description', definition.description],
        ['User Intent', definition.user_intent],
        ['Task Goal', definition.goal],
      ] as const) {
        if (task[field] !== defValue)
          record.warnings.push(`${file}#${base}/${field}: differs from the task definition of ${task.task_id}; the definition is used`);
      }
      const s = task.situations;
      const scenario: UserRecord['scenarios'][number] = {
        scenario_id: `${user.userId}:${task.task_id}`,
        task_id: task.task_id,
        kind,
        task_key: key,
        relevant_domains: domains,
        relevant_preference_types: task['Relevant Affinity Types'],
        location: s.Location,
        device: s.Device,
        time_of_day: s['Time of Day'],
        day_of_week: s['Day of the Week'],
        environment: s.Environment,
      };
      // Every field comes from input the upstream schemas checked (user_id, task_id by pattern, kind from
      // the file), so the row fits the scenario schema by construction; a test checks every sample row
      // against it (checking each of 122k rows here cost a sixth of the read).
      record.scenarios.push(scenario);
    }
  }
  return record;
}

/**
 * Read synchronously: a user's files are small (tens of KB) and are read on the import's reader
 * threads, where the four thread-pool round trips of an async read cost more CPU than the read.
 */
function readInput(file: string): string {
  if (!existsSync(file))
    throw new PlensError('E_INPUT_NOT_FOUND', 'missing file (each user<N>/ holds profile.json, tasks.json and tasks_md.json)', { location: { file } });
  return readInputTextSync(file);
}
