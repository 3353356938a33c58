import { DuckDBInstance, JSDuckDBValueConverter, type DuckDBAppender, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlensError } from '../core/errors.js';

/**
 * DuckDB's memory limit when a caller names none: PLENS_MEMORY_LIMIT (e.g. `4GB`) or 1GB. DuckDB's own
 * default is 80% of the machine, which let one warehouse build take 4 GB; with a limit it spills to
 * the temp directory instead.
 */
export function defaultMemoryLimit(): string {
  return process.env['PLENS_MEMORY_LIMIT']?.trim() || '1GB';
}

let opened = 0;

/**
 * Where DuckDB spills: PLENS_TEMP_DIR or the system temp folder, one subfolder per database opened
 * (two instances in one folder would share temp file names). DuckDB creates it on the first spill and
 * removes it on close.
 */
function spillDirectory(): string {
  return join(process.env['PLENS_TEMP_DIR']?.trim() || tmpdir(), `plens-duckdb-${process.pid}-${++opened}`);
}

export interface OpenOptions {
  readOnly?: boolean;
  /** DuckDB threads; the default follows the machine. */
  threads?: number;
  /** e.g. '512MB'; default: defaultMemoryLimit() (1GB unless PLENS_MEMORY_LIMIT says otherwise). */
  memoryLimit?: string;
}

/** A DuckDB database and one connection: the only way plens code talks to DuckDB. */
export class Database {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    readonly path: string,
  ) {}

  static async open(path: string, options: OpenOptions = {}): Promise<Database> {
    const config: Record<string, string> = {};
    if (options.readOnly) config['access_mode'] = 'READ_ONLY';
    if (options.threads) config['threads'] = String(options.threads);
    config['memory_limit'] = options.memoryLimit ?? defaultMemoryLimit();
    config['temp_directory'] = spillDirectory();
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(path, config);
    } catch (error) {
      throw new PlensError('E_PREREQUISITE', `cannot open DuckDB database: ${(error as Error).message}`, { location: { file: path }, cause: error });
    }
    return new Database(instance, await instance.connect(), path);
  }

  /** Runs one or more statements; errors become E_SQL with DuckDB's message. */
  async run(sql: string, context?: { file?: string }): Promise<void> {
    try {
      await this.connection.run(sql);
    } catch (error) {
      throw sqlError(error, context);
    }
  }

  /** Runs a query and returns its rows as JSON-safe objects (BIGINT as number where safe). */
  async all<T = Record<string, unknown>>(sql: string, context?: { file?: string }, params?: DuckDBValue[]): Promise<T[]> {
    return (await this.query(sql, context, params)).rows as T[];
  }

  /** Streams a query's rows in chunks, so large results never sit in memory at once. */
  async *stream<T = Record<string, unknown>>(sql: string, params?: DuckDBValue[]): AsyncGenerator<T> {
    let result;
    try {
      result = await this.connection.stream(sql, params);
    } catch (error) {
      throw sqlError(error);
    }
    for await (const rows of result.yieldRowObjectJs()) {
      for (const row of rows) yield normaliseRow(row) as T;
    }
  }

  async query(sql: string, context?: { file?: string }, params?: DuckDBValue[]): Promise<{ columns: string[]; types: string[]; rows: Record<string, unknown>[] }> {
    try {
      const reader = await this.connection.runAndReadAll(sql, params);
      const columns = reader.columnNames();
      const types = reader.columnTypes().map((t) => t.toString());
      const rows = reader.getRowObjectsJS().map((row) => normaliseRow(row));
      return { columns, types, rows };
    } catch (error) {
      throw sqlError(error, context);
    }
  }

  /**
   * Runs one or more statements and returns the first `limit` rows of the last one's result
   * with its total row count: previews that convert only the rows shown, whatever the result's size.
   * Text with no statement at all (blank, only comments) gives no columns and no rows.
   */
  async head(sql: string, limit: number, params?: DuckDBValue[]): Promise<{ columns: string[]; types: string[]; rows: unknown[][]; total: number }> {
    try {
      // DuckDB rejects an empty statement list with an opaque native error: ask how many there are first.
      if ((await this.connection.extractStatements(sql)).count === 0) return { columns: [], types: [], rows: [], total: 0 };
      const result = await this.connection.stream(sql, params);
      const columns = result.columnNames();
      const types = result.columnTypes().map((t) => t.toString());
      const rows: unknown[][] = [];
      let total = 0;
      for (let chunk = await result.fetchChunk(); chunk && chunk.rowCount > 0; chunk = await result.fetchChunk()) {
        for (let i = 0; i < chunk.rowCount && rows.length < limit; i++) rows.push(chunk.convertRowValues(i, JSDuckDBValueConverter).map(normaliseValue));
        total += chunk.rowCount;
      }
      return { columns, types, rows, total };
    } catch (error) {
      throw sqlError(error);
    }
  }

  async appender(table: string): Promise<DuckDBAppender> {
    return this.connection.createAppender(table);
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

function sqlError(error: unknown, context?: { file?: string }): PlensError {
  return new PlensError('E_SQL', (error as Error).message, { location: context?.file ? { file: context.file } : {}, cause: error });
}

/** BIGINT/HUGEINT come back as bigint; numbers are what tables and JSON want when they fit. */
function normaliseRow(row: Record<string, unknown>): Record<string, unknown> {
  for (const key of Object.keys(row)) row[key] = normaliseValue(row[key]);
  return row;
}

function normaliseValue(value: unknown): unknown {
  if (typeof value === 'bigint') return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value.toString();
  if (Array.isArray(value)) return value.map(normaliseValue);
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === 'object' && value.constructor === Object) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = normaliseValue(v);
    return out;
  }
  return value;
}

/** A SQL string literal. */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}
