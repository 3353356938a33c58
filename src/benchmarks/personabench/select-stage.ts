/**
 * `plens persona select`: every task x setting selection written as one JSONL file
 * (samples.jsonl), and the same samples with their prompt text (prompts.jsonl, the records
 * the predictions stage sends; build-prompts.ts).
 */
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { join } from 'node:path';
import { replaceDirectoryAtomic } from '../../core/atomic.js';
import { readPersonaUsers } from './import.js';
import { promptRecord } from './build-prompts.js';
import { FIXED_NP_CONV_PROMPTS } from './np-conv-prompts.js';
import { PromptCorpus } from './prompt-corpus.js';
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
  prompts_file: string | null;
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
    prompts_file: options.dryRun ? null : join(options.out, 'prompts.jsonl'),
    counts,
    corrections: options.fidelity === 'fixed' ? [...FIXED_CORRECTIONS, ...FIXED_NP_CONV_PROMPTS] : [],
  };
  if (!options.dryRun) {
    // The folder may be one the user named: anything in it this command did not write stays.
    await replaceDirectoryAtomic(
      options.out,
      async (staging) => {
        await writeJsonl(join(staging, 'samples.jsonl'), rows);
        const corpus = new PromptCorpus(users);
        // Prompts are written as they are built: 3.3 prompts carry whole threads.
        await writeJsonl(
          join(staging, 'prompts.jsonl'),
          (function* () {
            for (const row of rows) yield promptRecord(row, corpus, options.fidelity);
          })(),
        );
        await writeFile(join(staging, 'summary.json'), JSON.stringify(summary, null, 2) + '\n');
      },
      { ownOnly: true },
    );
  }
  return summary;
}

/** Writes one JSON record per line, streaming (waits for the file when its buffer is full). */
export async function writeJsonl(file: string, records: Iterable<unknown>): Promise<number> {
  const out = createWriteStream(file);
  let count = 0;
  // Lines are gathered into ~1 MB writes: one stream write per record costs more than the JSON.
  let batch: string[] = [];
  let size = 0;
  const flush = async (): Promise<void> => {
    const text = batch.join('');
    batch = [];
    size = 0;
    if (!out.write(text)) await once(out, 'drain');
  };
  try {
    for (const record of records) {
      count++;
      const line = JSON.stringify(record) + '\n';
      batch.push(line);
      size += line.length;
      if (size >= 1 << 20) await flush();
    }
    if (batch.length) await flush();
  } finally {
    out.end();
    await once(out, 'close');
  }
  return count;
}
