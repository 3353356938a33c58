/**
 * Task assignment (paper section 2.2): deterministic, no LLM. A user gets every SD task of every
 * domain they were not masked out of, and every MD task none of whose relevant domains is masked.
 *
 * Order, as the released tasks.json / tasks_md.json have it: SD tasks domain by domain in the
 * order of the user's mask (`profile.json` `interests`, which construction writes in the schema's
 * order), each domain's tasks in the order given (Task Number order); MD tasks in the order given.
 * The mask's order, not the schema's, because 7 of the 1,500 released users (user300, user301,
 * user432, user1094, user1378, user1490, user1499) have their interests in another order (Music
 * first, or Books / Music last) and their tasks.json follows it; for a mask in the schema's order
 * the two are the same.
 *
 * Domain names are compared after normaliseDomainKey on both sides, as the import reads them
 * (the released user874 spells its Buses interest `Buses**`). A domain is kept only where the mask
 * says 1: an MD task naming a domain the mask does not have (not in the schema) is not assigned.
 */
import { PlensError } from '../../../core/errors.js';
import { normaliseDomainKey } from '../dataset/domains.js';
import { mdTaskId, sdTaskId } from '../dataset/upstream/task-definitions.js';
import type { AssignedTask, DomainMask, TaskDefinition } from './types.js';

export interface Assignment {
  sd: AssignedTask[];
  md: AssignedTask[];
}

/**
 * The tasks one user is given. `sdTasks`: each domain's SD task definitions (keyed by the schema's
 * domain name, every domain the mask may keep); `mdTasks`: the MD task definitions. A domain the
 * mask keeps but `sdTasks` lacks is an error (its tasks were not built), not a domain without tasks.
 */
export function assignTasks(mask: DomainMask, sdTasks: ReadonlyMap<string, readonly TaskDefinition[]>, mdTasks: readonly TaskDefinition[]): Assignment {
  const kept = new Set<string>();
  const sd: AssignedTask[] = [];
  for (const [raw, flag] of Object.entries(mask)) {
    const domain = normaliseDomainKey(raw);
    if (flag !== 1 || kept.has(domain)) continue;
    kept.add(domain);
    const definitions = sdTasks.get(domain);
    if (!definitions) {
      throw new PlensError('E_INPUT_DOMAIN', `the mask keeps domain "${raw}", which has no SD task definitions`, {
        hint: `the SD tasks are built for: ${[...sdTasks.keys()].join(', ')}`,
      });
    }
    for (const definition of definitions) sd.push({ task_id: sdTaskId(domain, definition['Task Number']), definition, domains: [domain] });
  }
  const md: AssignedTask[] = [];
  for (const definition of mdTasks) {
    const domains = definition['Relevant Domains'] ?? [];
    if (domains.length > 0 && domains.every((d) => kept.has(normaliseDomainKey(d)))) {
      md.push({ task_id: mdTaskId(definition['Task Number']), definition, domains: [...domains] });
    }
  }
  return { sd, md };
}
