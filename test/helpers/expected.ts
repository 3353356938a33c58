import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './cli.js';

/** Values computed by test/expected/dataset_tables.py, an independent Python implementation of the spec. */
export interface ExpectedDatasetTables {
  counts: Record<string, number>;
  samples: Record<string, { sd: number; md: number }>;
  normalisations: Array<{ user_id: string; field: string; from: string; to: string }>;
  table1: Array<{ domain: string; n_tasks: number; n_dialogues: number }>;
  table6_7: Array<{ field: string; value: string; count: number; percent: number }>;
  table8_9: Array<{
    domain: string;
    preference_type: string;
    is_categorical: boolean;
    n_possible: number | null;
    n_distinct: number;
    n_generated: number;
    evenness: number | null;
  }>;
}

export function loadExpected(name: 'sample' | 'personalens-full'): ExpectedDatasetTables {
  return JSON.parse(readFileSync(join(repoRoot, 'test', 'expected', `${name}.json`), 'utf8')) as ExpectedDatasetTables;
}
