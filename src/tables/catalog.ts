import type { Database } from '../db/database.js';
import type { ColumnSpec } from './render.js';

/** A table of a benchmark's paper, as a warehouse view plus how to present it. */
export interface PaperTable {
  name: string;
  title: string;
  caption: string;
  columns: ColumnSpec[];
  /** What brings the view into the warehouse when rebuilding it alone does not. */
  missingHint?: string;
  /** The view exists only when something optional was asked for: its absence is not listed (unless it is named). */
  optional?: boolean;
  /** Notes shown under the table, read from the warehouse beside its rows. */
  notes?: (db: Database, relations: ReadonlySet<string>) => Promise<string[]>;
}

/** Table 10's four metrics, shared by the warehouse view and `plens stats lexical`. */
export const LEXICAL_METRIC_COLUMNS: ColumnSpec[] = [
  { key: 'dist_1', label: 'Dist-1', format: 'float3', nullText: '-' },
  { key: 'dist_2', label: 'Dist-2', format: 'float3', nullText: '-' },
  { key: 'ent_4', label: 'Ent-4', format: 'float3', nullText: '-' },
  { key: 'self_bleu', label: 'Self-BLEU', format: 'float3', nullText: '-' },
];
