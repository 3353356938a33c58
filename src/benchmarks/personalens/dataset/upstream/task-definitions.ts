import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PlensError } from '../../../../core/errors.js';
import { parseJsonLines, readInputText } from '../../../../core/json-input.js';
import { assertValid } from '../../../../core/validator.js';
import { MULTI_DOMAIN_DIR, normaliseDomainKey } from '../domains.js';
import type { PreferenceSchema } from './preference-schema.js';

interface RawTaskDefinition {
  'Task Number': number;
  'Task Description': string;
  'User Intent': string;
  'Task Goal': string;
  'Relevant Affinity Types': string[];
  'Relevant Domains'?: string[];
}

/** One task of the benchmark: SD tasks belong to one domain, MD tasks span several. */
export interface TaskDefinition {
  task_id: string;
  kind: 'SD' | 'MD';
  task_number: number;
  domain: string | null;
  description: string;
  user_intent: string;
  goal: string;
  relevant_domains: string[];
  relevant_preference_types: string[];
}

export function sdTaskId(domain: string, n: number): string {
  return `SD-${domain}-task-${n}`;
}
export function mdTaskId(n: number): string {
  return `MD-task-${n}`;
}

export async function readTaskDefinitions(taskDir: string, schema: PreferenceSchema): Promise<TaskDefinition[]> {
  const entries = (await readdir(taskDir, { withFileTypes: true })).filter((e) => !e.name.startsWith('.'));
  const byId = new Map<string, TaskDefinition>();
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    const dirPath = join(taskDir, entry.name);
    const isMd = entry.name === MULTI_DOMAIN_DIR;
    if (!entry.isDirectory() || (!isMd && !schema.hasDomain(entry.name))) {
      throw new PlensError('E_INPUT_DOMAIN', `unknown task domain "${entry.name}": expected one of the schema's domains or ${MULTI_DOMAIN_DIR}`, {
        location: { file: dirPath },
      });
    }
    const file = join(dirPath, 'task.jsonl');
    if (!existsSync(file)) throw new PlensError('E_INPUT_NOT_FOUND', 'missing task.jsonl', { location: { file } });
    for (const { line, value } of parseJsonLines(await readInputText(file), file)) {
      assertValid<RawTaskDefinition>('plens:upstream-task-definition', value, { file, line });
      const relevantDomains = isMd ? (value['Relevant Domains'] ?? []) : [entry.name];
      if (isMd && relevantDomains.length === 0) {
        throw new PlensError('E_INPUT_SCHEMA', 'a multi-domain task needs "Relevant Domains"', { location: { file, line, pointer: '/Relevant Domains' } });
      }
      relevantDomains.forEach((d, i) => {
        if (!schema.hasDomain(normaliseDomainKey(d))) {
          throw new PlensError('E_INPUT_DOMAIN', `unknown domain "${d}"`, { location: { file, line, pointer: `/Relevant Domains/${i}` } });
        }
      });
      const n = value['Task Number'];
      const task: TaskDefinition = {
        task_id: isMd ? mdTaskId(n) : sdTaskId(entry.name, n),
        kind: isMd ? 'MD' : 'SD',
        task_number: n,
        domain: isMd ? null : entry.name,
        description: value['Task Description'],
        user_intent: value['User Intent'],
        goal: value['Task Goal'],
        relevant_domains: relevantDomains.map(normaliseDomainKey),
        relevant_preference_types: value['Relevant Affinity Types'],
      };
      if (byId.has(task.task_id)) {
        throw new PlensError('E_INPUT_DUPLICATE', `task number ${n} appears twice (${task.task_id})`, { location: { file, line, pointer: '/Task Number' } });
      }
      byId.set(task.task_id, task);
    }
  }
  if (byId.size === 0) throw new PlensError('E_INPUT_LAYOUT', 'no task definitions found', { location: { file: taskDir } });
  return [...byId.values()];
}
