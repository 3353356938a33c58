import { LIST, VARCHAR, type DuckDBAppender } from '@duckdb/node-api';

/** A cell of a dataset row: the few column types our tables use. */
export type Cell = string | number | boolean | null | undefined | readonly string[];

const STRING_LIST = LIST(VARCHAR);

/** Appends one row, dispatching on each value's JS type (numbers are INTEGER columns, arrays VARCHAR[]). */
export function appendRow(appender: DuckDBAppender, cells: readonly Cell[]): void {
  for (const cell of cells) {
    if (cell === null || cell === undefined) appender.appendNull();
    else if (typeof cell === 'string') appender.appendVarchar(cell);
    else if (typeof cell === 'number') appender.appendInteger(cell);
    else if (typeof cell === 'boolean') appender.appendBoolean(cell);
    else appender.appendList(cell as string[], STRING_LIST);
  }
  appender.endRow();
}
