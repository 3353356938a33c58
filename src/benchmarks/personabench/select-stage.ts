/** `plens persona select`: every task x setting selection written as one JSONL file. */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceDirectoryAtomic } from '../../core/atomic.js';
import { readPersonaUsers } from './import.js';
import { FIXED_CORRECTIONS, selectAll, type Fidelity } from './selection.js';

export interface PersonaSelectOptions {
  from: string;
  out: string;
  fidelity: Fidelity;
  seed: number;
  dryRun?: boolean;
}

export interface PersonaSelectSummary {
  dry_run: boolean;
  fidelity: Fidelity;
  seed: number;
  file: string | null;
  counts: Record<string, number>;
  corrections: readonly string[];
}

export async function runPersonaSelect(options: PersonaSelectOptions): Promise<PersonaSelectSummary> {
  const { users } = await readPersonaUsers(options.from);
  const { score, reply } = selectAll(users, { fidelity: options.fidelity, seed: options.seed });
  const rows = [...score, ...reply];
  const counts: Record<string, number> = {};
  for (const row of rows) counts[`${row.task} ${row.setting}`] = (counts[`${row.task} ${row.setting}`] ?? 0) + 1;
  const summary: PersonaSelectSummary = {
    dry_run: options.dryRun === true,
    fidelity: options.fidelity,
    seed: options.seed,
    file: options.dryRun ? null : join(options.out, 'samples.jsonl'),
    counts,
    corrections: options.fidelity === 'fixed' ? FIXED_CORRECTIONS : [],
  };
  if (!options.dryRun) {
    await replaceDirectoryAtomic(options.out, async (staging) => {
      await writeFile(join(staging, 'samples.jsonl'), rows.map((row) => JSON.stringify(row)).join('\n') + (rows.length ? '\n' : ''));
      await writeFile(join(staging, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
    });
  }
  return summary;
}
