import { DuckDBInstance, JSDuckDBValueConverter, type DuckDBAppender, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { PlensError } from '../core/errors.js';

export interface OpenOptions {
  readOnly?: boolean;
  /** DuckDB threads; the default follows the machine. */
  threads?: number;
  /** e.g. '512MB'; keeps peak memory honest on small machines. */
  memoryLimit?: string;
}

/**
 * A DuckDB database and one connection: the only way plens code talks to DuckDB.
 * Every operation in flight is tracked, so close() never pulls the connection from under a query
 * (that query would reject with "connection disconnected" after its caller stopped listening).
 */
export class Database {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    readonly path: string,
  ) {}

  static async open(path: string, options: OpenOptions = {}): Promise<Database> {
    const config: Record<string, string> = {};
    if (options.readOnly) config['access_mode'] = 'READ_ONLY';
    if (options.threads) config['threads'] = String(options.threads);
    if (options.memoryLimit) config['memory_limit'] = options.memoryLimit;
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
      await this.track(() => this.connection.run(sql));
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
      result = await this.track(() => this.connection.stream(sql, params));
    } catch (error) {
      throw sqlError(error);
    }
    // Each fetch is an operation in flight; between fetches the stream holds nothing close() must wait for.
    const chunks = result.yieldRowObjectJs();
    for (;;) {
      let next: IteratorResult<Record<string, unknown>[]>;
      try {
        next = await this.track(() => chunks.next());
      } catch (error) {
        throw sqlError(error);
      }
      if (next.done) return;
      for (const row of next.value) yield normaliseRow(row) as T;
    }
  }

  async query(sql: string, context?: { file?: string }, params?: DuckDBValue[]): Promise<{ columns: string[]; types: string[]; rows: Record<string, unknown>[] }> {
    try {
      const reader = await this.track(() => this.connection.runAndReadAll(sql, params));
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
  head(sql: string, limit: number, params?: DuckDBValue[]): Promise<{ columns: string[]; types: string[]; rows: unknown[][]; total: number }> {
    return this.track(() => this.headNow(sql, limit, params));
  }

  private async headNow(sql: string, limit: number, params?: DuckDBValue[]): Promise<{ columns: string[]; types: string[]; rows: unknown[][]; total: number }> {
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
    return this.track(() => this.connection.createAppender(table));
  }

  /**
   * Closes the connection and the database. Idle, it closes at once; with operations in flight it
   * closes as soon as they have settled (their callers get their results or errors, never a
   * closed connection). Await it where anything may still be running.
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    const now = () => {
      this.closed = true;
      this.connection.closeSync();
      this.instance.closeSync();
    };
    if (this.inFlight.size === 0) {
      now();
      this.closing = Promise.resolve();
    } else {
      this.closing = Promise.allSettled([...this.inFlight]).then(now);
    }
    return this.closing;
  }

  /** Runs one operation on the connection, counted as in flight until it settles. */
  private track<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closed || this.closing) return Promise.reject(new PlensError('E_INTERNAL', `DuckDB database ${this.path} used after close()`));
    const p = operation();
    this.inFlight.add(p);
    const done = () => this.inFlight.delete(p);
    p.then(done, done);
    return p;
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
