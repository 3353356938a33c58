import type { ColumnsOf } from '../../src/engine/partition.js';

/** A record of the engine tests' toy stage: one number per key. */
export interface UnitRecord {
  key: string;
  try: number;
  status: string;
  n: number;
}

/** The partition format of the engine tests' toy stage (`units`). */
export const UNITS_FORMAT = {
  output: 'units',
  records: { key: 'VARCHAR', try: 'INTEGER', status: 'VARCHAR', n: 'INTEGER' } satisfies ColumnsOf<UnitRecord>,
  events: {},
};
