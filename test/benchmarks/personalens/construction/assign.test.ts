import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assignTasks } from '../../../../src/benchmarks/personalens/construction/assign.js';
import { openReleased, readReleasedUsers } from '../../../../src/benchmarks/personalens/construction/released.js';
import type { DomainMask, TaskDefinition } from '../../../../src/benchmarks/personalens/construction/types.js';
import { PlensError } from '../../../../src/core/errors.js';
import { sampleDir, sharedPersonaLens } from '../../../helpers/cli.js';

const released = join(sharedPersonaLens, 'data');
const available = existsSync(join(released, 'profile'));
if (!available && process.env['CI']) throw new Error(`the PersonaLens data is missing at ${sharedPersonaLens}`);

const task = (n: number, domains?: string[]): TaskDefinition => ({
  'Task Number': n,
  'Task Description': `task ${n}`,
  'User Intent': `intent ${n}`,
  'Task Goal': `goal ${n}`,
  ...(domains ? { 'Relevant Domains': domains } : {}),
  'Relevant Affinity Types': [],
});

const sdTasks = new Map<string, TaskDefinition[]>([
  ['Alarm', [task(1), task(2)]],
  ['Books', [task(1)]],
  ['Rental Cars', [task(1), task(2), task(3)]],
  ['Train', [task(1)]],
]);
const mdTasks = [task(1, ['Alarm', 'Books']), task(2, ['Books', 'Train']), task(3, ['Rental Cars', 'Alarm']), task(4, ['Alarm', 'Weather'])];

const ids = (tasks: Array<{ task_id: string }>) => tasks.map((t) => t.task_id);

describe('task assignment (paper 2.2)', () => {
  it('gives every task of every kept domain and every MD task whose domains are all kept', () => {
    const { sd, md } = assignTasks({ Alarm: 1, Books: 0, 'Rental Cars': 1, Train: 1 }, sdTasks, mdTasks);
    expect(ids(sd)).toEqual([
      'SD-Alarm-task-1',
      'SD-Alarm-task-2',
      'SD-Rental Cars-task-1',
      'SD-Rental Cars-task-2',
      'SD-Rental Cars-task-3',
      'SD-Train-task-1',
    ]);
    // MD-task-1 and MD-task-2 each have one masked domain (Books); MD-task-4 names a domain no schema has.
    expect(ids(md)).toEqual(['MD-task-3']);
    expect(sd[2]).toEqual({ task_id: 'SD-Rental Cars-task-1', definition: sdTasks.get('Rental Cars')![0], domains: ['Rental Cars'] });
    expect(md[0]).toEqual({ task_id: 'MD-task-3', definition: mdTasks[2], domains: ['Rental Cars', 'Alarm'] });
  });

  it('keeps nothing for an all-masked user, everything but the unknown-domain MD task for an all-kept one', () => {
    expect(assignTasks({ Alarm: 0, Books: 0, 'Rental Cars': 0, Train: 0 }, sdTasks, mdTasks)).toEqual({ sd: [], md: [] });
    const all = assignTasks({ Alarm: 1, Books: 1, 'Rental Cars': 1, Train: 1 }, sdTasks, mdTasks);
    expect(all.sd).toHaveLength(7);
    expect(ids(all.md)).toEqual(['MD-task-1', 'MD-task-2', 'MD-task-3']);
    // Even a mask that names the unknown domain: it has no SD tasks, so keeping it is an error.
    expect(() => assignTasks({ Alarm: 1, Weather: 1 }, sdTasks, mdTasks)).toThrow(PlensError);
    expect(ids(assignTasks({ Alarm: 1, Books: 1, Weather: 0 }, sdTasks, mdTasks).md)).toEqual(['MD-task-1']);
  });

  it("orders SD tasks by the mask's domains and reads stray characters in a mask key as the import does", () => {
    const mask: DomainMask = { 'Train**': 1, Alarm: 1, Books: 1, 'Rental Cars': 0 };
    const { sd, md } = assignTasks(mask, sdTasks, mdTasks);
    expect(ids(sd)).toEqual(['SD-Train-task-1', 'SD-Alarm-task-1', 'SD-Alarm-task-2', 'SD-Books-task-1']);
    expect(ids(md)).toEqual(['MD-task-1', 'MD-task-2']);
  });

  it("reproduces the sample's task lists", async () => {
    const sample = await openReleased(sampleDir);
    let users = 0;
    for (const user of readReleasedUsers(sample)) {
      const { sd, md } = assignTasks(user.interests, sample.sdTasks, sample.mdTasks);
      expect(ids(sd), user.demographics.user_id).toEqual(ids(user.sd));
      expect(ids(md), user.demographics.user_id).toEqual(ids(user.md));
      users++;
    }
    expect(users).toBe(8);
  });

  describe.skipIf(!available)('on the released data', () => {
    it("reproduces every user's tasks.json and tasks_md.json task_id lists exactly", async () => {
      const data = await openReleased(released);
      const masked = new Set<string>();
      let users = 0;
      let sdCount = 0;
      let mdCount = 0;
      let schemaOrder = 0;
      const schemaDomains = data.schema.domainNames.join('|');
      for (const user of readReleasedUsers(data)) {
        const id = user.demographics.user_id;
        const { sd, md } = assignTasks(user.interests, data.sdTasks, data.mdTasks);
        expect(ids(sd), id).toEqual(ids(user.sd));
        expect(ids(md), id).toEqual(ids(user.md));
        expect(md.map((t) => t.domains)).toEqual(user.md.map((t) => t.domains));
        for (const [domain, flag] of Object.entries(user.interests)) if (flag === 0) masked.add(`${id}:${domain}`);
        if (Object.keys(user.interests).join('|') === schemaDomains) schemaOrder++;
        users++;
        sdCount += sd.length;
        mdCount += md.length;
      }
      expect({ users, sdCount, mdCount }).toEqual({ users: 1500, sdCount: 98_115, mdCount: 24_018 });
      // The users whose mask is not in the schema's order (their tasks follow the mask), and the one stray key.
      expect(users - schemaOrder).toBe(8);
      expect(masked.has('user874:Buses**')).toBe(true);
    });

    it('every MD task names schema domains only', () => {
      const schema = JSON.parse(readFileSync(join(sharedPersonaLens, 'res', 'schema.json'), 'utf8')) as Array<{ domain: string }>;
      const domains = new Set(schema.map((d) => d.domain));
      const md = readFileSync(join(released, 'task', 'Multi-Domain', 'task.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as TaskDefinition);
      expect(md).toHaveLength(25);
      expect(md.flatMap((t) => t['Relevant Domains']!).filter((d) => !domains.has(d))).toEqual([]);
    });
  });
});
