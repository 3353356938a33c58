import { PlensError } from '../core/errors.js';

/** Column type (DuckDB's, as in a stage's column map) -> whether a JSON value fits it. */
function fits(type: string, value: unknown): boolean {
  if (value === null) return true;
  if (type.endsWith('[]')) return Array.isArray(value);
  if (type.startsWith('STRUCT')) return typeof value === 'object' && !Array.isArray(value);
  switch (type) {
    case 'VARCHAR':
      return typeof value === 'string';
    case 'INTEGER':
    case 'BIGINT':
      return typeof value === 'number' && Number.isInteger(value);
    case 'DOUBLE':
      return typeof value === 'number';
    case 'BOOLEAN':
      return typeof value === 'boolean';
    case 'TIMESTAMP':
      return typeof value === 'string' && !Number.isNaN(Date.parse(value));
    default:
      return true;
  }
}

const STATUSES = new Set(['ok', 'failed', 'parse_error']);

/**
 * Refuses a line of a stage log that plens did not write: not an object, no key, no try or
 * status, or a field of the wrong type. Without this a hand-edited or junk line would be compacted
 * into an "ok" row of NULLs; with it, the error names the file and the line.
 */
export function checkLogRecord(
  value: unknown,
  columns: Record<string, string>,
  kind: 'record' | 'event',
  file: string,
  line: number,
  required: readonly string[] = [],
): void {
  const fail = (what: string, pointer?: string): never => {
    throw new PlensError('E_INPUT_SCHEMA', `this ${kind === 'record' ? 'stage record' : 'call event'} was not written by plens (edited by hand?): ${what}`, {
      location: { file, line, ...(pointer ? { pointer } : {}) },
      hint: 'remove or repair the line, then run the stage again',
    });
  };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail('a line must be a JSON object');
  const r = value as Record<string, unknown>;
  if (typeof r['key'] !== 'string' || r['key'] === '') fail('"key" must be a non-empty string', '/key');
  if (kind === 'record') {
    if (typeof r['try'] !== 'number' || !Number.isInteger(r['try']) || r['try'] < 1) fail('"try" must be a whole number >= 1', '/try');
    if (!STATUSES.has(r['status'] as string)) fail(`"status" must be one of ${[...STATUSES].join(', ')}`, '/status');
  } else if (typeof r['status'] !== 'string') {
    fail('"status" must be a string', '/status');
  }
  for (const [name, type] of Object.entries(columns)) {
    if (name in r && !fits(type, r[name])) fail(`"${name}" must be ${type.toLowerCase()}`, `/${name}`);
  }
  // An `ok` result without what the stage always writes with one (a bare `{"key", "try", "status": "ok"}`)
  // would be taken for done work and compacted into a row of NULLs.
  if (kind === 'record' && r['status'] === 'ok') {
    const absent = required.find((name) => r[name] === undefined || r[name] === null);
    if (absent !== undefined) fail(`an ok record without "${absent}"`, `/${absent}`);
  }
}
