/**
 * Reading a cell of a row DuckDB returned, for the report's tables and charts: counts come back as
 * bigint, missing values as null.
 */

/** A finite number (a bigint converted), else null. */
export const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : typeof v === 'bigint' ? Number(v) : null);

/** The value as text; null and undefined as ''. */
export const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
