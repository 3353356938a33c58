import { expect } from 'vitest';
import type { ExpectedDatasetTables } from './expected.js';

type Row = Record<string, unknown>;

/** Compares the warehouse's dataset views with the oracle, row by row, in order. */
export function expectDatasetTablesMatch(actual: { table1: Row[]; table6_7: Row[]; table8_9: Row[] }, expected: ExpectedDatasetTables): void {
  expect(actual.table1.map((r) => ({ domain: r['domain'], n_tasks: r['n_tasks'], n_dialogues: r['n_dialogues'] }))).toEqual(expected.table1);

  expect(actual.table6_7.map((r) => [r['field'], r['value'], r['count']])).toEqual(expected.table6_7.map((r) => [r.field, r.value, r.count]));
  actual.table6_7.forEach((r, i) => expect(r['percent'] as number).toBeCloseTo(expected.table6_7[i]!.percent, 10));

  expect(
    actual.table8_9.map((r) => ({
      domain: r['domain'],
      preference_type: r['preference_type'],
      is_categorical: r['is_categorical'],
      n_possible: r['n_possible'],
      n_distinct: r['n_distinct'],
      n_generated: r['n_generated'],
    })),
  ).toEqual(expected.table8_9.map(({ evenness: _e, ...rest }) => rest));
  actual.table8_9.forEach((r, i) => {
    const want = expected.table8_9[i]!.evenness;
    if (want === null) expect(r['evenness']).toBeNull();
    else expect(Math.abs((r['evenness'] as number) - want)).toBeLessThan(1e-12);
  });
}
