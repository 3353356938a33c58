/**
 * Reads a benchmark in the released layout (`<data>/profile/user<N>/…`, `<data>/task/<Domain>/task.jsonl`,
 * the schema at `<data>/res/schema.json` or `<data>/../res/schema.json`) back into construction's
 * records, so the released benchmark can be compared with a built one, or exported again (export.ts
 * writes it back byte for byte).
 *
 * Everything is kept as the files hold it: raw mask keys (`Buses**`), the profile's domain order,
 * preferences of masked domains (the released profiles have all 20 domains, masked ones included),
 * and a user's copy of a task where it differs from the task's definition (6 released MD scenarios
 * drop the `(Media)` / `(Music)` of a preference type): that task's `definition` is then the user's
 * copy, with the definition's Task Number.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PlensError } from '../../../core/errors.js';
import { parseJsonLines, parseJsonText, readInputText, readInputTextSync } from '../../../core/json-input.js';
import { assertValid, escapePointer } from '../../../core/validator.js';
import { MULTI_DOMAIN_DIR } from '../dataset/domains.js';
import { locateUpstream } from '../dataset/upstream/layout.js';
import { PreferenceSchema } from '../dataset/upstream/preference-schema.js';
import { mdTaskId, sdTaskId } from '../dataset/upstream/task-definitions.js';
import {
  DEMOGRAPHIC_FIELDS,
  SITUATION_FIELDS,
  type AssignedTask,
  type BuiltUser,
  type Demographics,
  type DomainMask,
  type DomainPreferences,
  type Situation,
  type TaskDefinition,
} from './types.js';

export interface ReleasedTasks {
  /** SD task definitions per domain, in the schema's domain order, each domain's in its file's order. */
  sdTasks: Map<string, TaskDefinition[]>;
  /** MD task definitions (task/Multi-Domain/task.jsonl), in its file's order. */
  mdTasks: TaskDefinition[];
}

export interface ReleasedBenchmark extends ReleasedTasks {
  dataDir: string;
  schemaFile: string;
  /** The schema file's text, as it is (the export writes it back verbatim). */
  schemaText: string;
  schema: PreferenceSchema;
  /** The users' folders, in user number order. */
  users: Array<{ userId: string; index: number; dir: string }>;
}

/** Locates and reads a released-layout folder's schema and task definitions; users are read one by one with readReleasedUsers. */
export async function openReleased(dataDir: string, options: { schemaFile?: string } = {}): Promise<ReleasedBenchmark> {
  const layout = await locateUpstream(dataDir, options.schemaFile);
  const schemaText = await readInputText(layout.schemaFile);
  const schema = await PreferenceSchema.read(layout.schemaFile);
  const tasks = await readReleasedTasks(layout.taskDir, schema);
  return { dataDir, schemaFile: layout.schemaFile, schemaText, schema, users: layout.users, ...tasks };
}

/** Every schema domain's `task/<Domain>/task.jsonl` and `task/Multi-Domain/task.jsonl`; any other entry in task/ is refused. */
export async function readReleasedTasks(taskDir: string, schema: PreferenceSchema): Promise<ReleasedTasks> {
  const entries = (await readdir(taskDir)).filter((name) => !name.startsWith('.'));
  const unknown = entries.find((name) => name !== MULTI_DOMAIN_DIR && !schema.hasDomain(name));
  if (unknown !== undefined) {
    throw new PlensError('E_INPUT_DOMAIN', `unknown task domain "${unknown}": expected one of the schema's domains or ${MULTI_DOMAIN_DIR}`, {
      location: { file: join(taskDir, unknown) },
    });
  }
  const sdTasks = new Map<string, TaskDefinition[]>();
  for (const domain of schema.domainNames) sdTasks.set(domain, await readTaskFile(join(taskDir, domain, 'task.jsonl'), false));
  const mdTasks = await readTaskFile(join(taskDir, MULTI_DOMAIN_DIR, 'task.jsonl'), true);
  return { sdTasks, mdTasks };
}

async function readTaskFile(file: string, md: boolean): Promise<TaskDefinition[]> {
  const out: TaskDefinition[] = [];
  const seen = new Set<number>();
  for (const { line, value } of parseJsonLines(await readInputText(file), file)) {
    assertValid<TaskDefinition>('plens:upstream-task-definition', value, { file, line });
    if (md !== (value['Relevant Domains'] !== undefined)) {
      throw new PlensError(
        'E_INPUT_SCHEMA',
        md ? 'a multi-domain task needs "Relevant Domains"' : 'a single-domain task has no "Relevant Domains" (its domain is its folder)',
        { location: { file, line, pointer: '/Relevant Domains' } },
      );
    }
    if (seen.has(value['Task Number'])) {
      throw new PlensError('E_INPUT_DUPLICATE', `task number ${value['Task Number']} appears twice`, { location: { file, line, pointer: '/Task Number' } });
    }
    seen.add(value['Task Number']);
    out.push(value);
  }
  return out;
}

interface RawProfile {
  demographics: Demographics;
  interests: DomainMask;
  affinities: Record<string, DomainPreferences>;
  interactions: Record<string, string>;
}

type RawUserTask = Omit<TaskDefinition, 'Task Number' | 'Relevant Domains'> & { task_id: string; 'Relevant Domains': string[]; situations: Situation };

/** The users of an opened folder, one at a time, in user number order. */
export function* readReleasedUsers(released: ReleasedBenchmark): Generator<BuiltUser> {
  const byId = new Map<string, TaskDefinition>();
  for (const [domain, list] of released.sdTasks) for (const d of list) byId.set(sdTaskId(domain, d['Task Number']), d);
  for (const d of released.mdTasks) byId.set(mdTaskId(d['Task Number']), d);
  for (const user of released.users) yield readReleasedUser(user, byId);
}

/**
 * One user's folder: profile.json as it is, and the tasks of tasks.json / tasks_md.json in their
 * order, each tied to its definition by task_id (`definitions`: task_id -> definition).
 */
export function readReleasedUser(user: { userId: string; dir: string }, definitions: ReadonlyMap<string, TaskDefinition>): BuiltUser {
  const profileFile = join(user.dir, 'profile.json');
  const profile = parseJsonText(readInputTextSync(profileFile), profileFile);
  assertValid<RawProfile>('plens:upstream-profile', profile, { file: profileFile });
  if (profile.demographics.user_id !== user.userId) {
    throw new PlensError('E_INPUT_REFERENCE', `user_id "${profile.demographics.user_id}" does not match its directory "${user.userId}"`, {
      location: { file: profileFile, pointer: '/demographics/user_id' },
    });
  }
  const demographics = { user_id: profile.demographics.user_id } as Demographics;
  for (const field of DEMOGRAPHIC_FIELDS) demographics[field] = profile.demographics[field];
  return {
    demographics,
    interests: profile.interests,
    affinities: profile.affinities,
    interactions: profile.interactions,
    sd: readUserTasks(join(user.dir, 'tasks.json'), definitions, 'SD'),
    md: readUserTasks(join(user.dir, 'tasks_md.json'), definitions, 'MD'),
  };
}

function readUserTasks(file: string, definitions: ReadonlyMap<string, TaskDefinition>, kind: 'SD' | 'MD'): BuiltUser['sd'] {
  const data = parseJsonText(readInputTextSync(file), file);
  assertValid<Record<string, RawUserTask>>('plens:upstream-user-tasks', data, { file });
  const out: BuiltUser['sd'] = [];
  for (const [key, task] of Object.entries(data)) {
    const pointer = `/${escapePointer(key)}/task_id`;
    const defined = definitions.get(task.task_id);
    if (!defined) throw new PlensError('E_INPUT_REFERENCE', `task_id "${task.task_id}" is not defined in task/`, { location: { file, pointer } });
    if (!task.task_id.startsWith(`${kind}-`)) {
      throw new PlensError('E_INPUT_REFERENCE', `this file holds ${kind} tasks, but "${task.task_id}" is not one`, { location: { file, pointer } });
    }
    const situations = {} as Situation;
    for (const field of SITUATION_FIELDS) situations[field] = task.situations[field];
    out.push({ task_id: task.task_id, definition: userCopy(task, defined, kind), domains: task['Relevant Domains'], situations });
  }
  return out;
}

/** The definition, or the user's copy of it where the user's file words it otherwise. */
function userCopy(task: RawUserTask, defined: TaskDefinition, kind: 'SD' | 'MD'): AssignedTask['definition'] {
  const same =
    task['Task Description'] === defined['Task Description'] &&
    task['User Intent'] === defined['User Intent'] &&
    task['Task Goal'] === defined['Task Goal'] &&
    sameList(task['Relevant Affinity Types'], defined['Relevant Affinity Types']) &&
    (kind === 'SD' || sameList(task['Relevant Domains'], defined['Relevant Domains'] ?? []));
  if (same) return defined;
  return {
    'Task Number': defined['Task Number'],
    'Task Description': task['Task Description'],
    'User Intent': task['User Intent'],
    'Task Goal': task['Task Goal'],
    ...(kind === 'MD' ? { 'Relevant Domains': task['Relevant Domains'] } : {}),
    'Relevant Affinity Types': task['Relevant Affinity Types'],
  };
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
