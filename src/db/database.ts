import {
  DuckDBInstance,
  JSDuckDBValueConverter,
  LIST,
  listValue,
  StatementType,
  VARCHAR,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBResult,
  type DuckDBType,
  type DuckDBValue,
} from '@duckdb/node-api';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PlensError, storageError } from '../core/errors.js';
import { refusedFunction } from './sandbox-sql.js';

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
  /**
   * For SQL typed by a user (`plens sql`, notebooks): no extension is installed or loaded behind
   * its back, and, unless `allowFiles`, no file or network access except reading under `readDirs`.
   * The configuration is then locked, so no statement can undo it.
   */
  sandbox?: { readDirs: string[]; allowFiles: boolean };
}

/** Statements a sandboxed connection refuses whatever the paths: they write files, or attach or load code. */
const SANDBOX_REFUSED = new Map<StatementType, string>([
  [StatementType.COPY, 'COPY'],
  [StatementType.EXPORT, 'EXPORT DATABASE'],
  [StatementType.COPY_DATABASE, 'COPY FROM DATABASE'],
  [StatementType.ATTACH, 'ATTACH'],
  [StatementType.DETACH, 'DETACH'],
  [StatementType.LOAD, 'INSTALL / LOAD'],
  [StatementType.EXTENSION, 'extension statements'],
  [StatementType.UPDATE_EXTENSIONS, 'UPDATE EXTENSIONS'],
]);

/**
 * A DuckDB database and one connection: the only way plens code talks to DuckDB.
 * Every operation in flight is tracked, so close() never pulls the connection from under a query
 * (that query would reject with "connection disconnected" after its caller stopped listening).
 * connect() adds a connection to the same database, for work that runs beside this one's.
 */
export class Database {
  private readonly inFlight = new Set<Promise<unknown>>();
  private closed = false;
  private closing: Promise<void> | undefined;
  /** The connections connect() made (none on a connection that is itself one of them). */
  private readonly others = new Set<Database>();

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    readonly path: string,
    /** Refuses SANDBOX_REFUSED statements (see OpenOptions.sandbox). */
    private readonly sandboxed = false,
    /** Set on a connection made by connect(): closing it closes the connection only. */
    private readonly owner: Database | null = null,
  ) {}

  /**
   * Another connection to the same database: its own transactions and temp objects, and its queries
   * run beside this connection's (DuckDB's threads are shared). Closing it leaves the database open;
   * closing the database closes it too, once its operations have settled.
   */
  async connect(): Promise<Database> {
    if (this.owner) return this.owner.connect();
    const connection = await this.track(() => this.instance.connect());
    const other = new Database(this.instance, connection, this.path, this.sandboxed, this);
    this.others.add(other);
    return other;
  }

  /** Stops the query running on this connection (it rejects with DuckDB's interrupt error); the connection stays usable. */
  interrupt(): void {
    if (!this.closed) this.connection.interrupt();
  }

  static async open(path: string, options: OpenOptions = {}): Promise<Database> {
    const config: Record<string, string> = {};
    if (options.readOnly) config['access_mode'] = 'READ_ONLY';
    if (options.threads) config['threads'] = String(options.threads);
    config['memory_limit'] = options.memoryLimit ?? defaultMemoryLimit();
    config['temp_directory'] = spillDirectory();
    if (options.sandbox) {
      config['autoinstall_known_extensions'] = 'false';
      config['autoload_known_extensions'] = 'false';
    }
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(path, config);
    } catch (error) {
      throw (
        storageError(error, path) ??
        new PlensError('E_PREREQUISITE', `cannot open DuckDB database: ${(error as Error).message}`, { location: { file: path }, cause: error })
      );
    }
    const db = new Database(instance, await instance.connect(), path, options.sandbox !== undefined && !options.sandbox.allowFiles);
    if (options.sandbox) {
      // allowed_directories must be set before external access is turned off; then nothing can change.
      if (!options.sandbox.allowFiles) {
        await db.run('SET allowed_directories = $1', undefined, [sqlList(options.sandbox.readDirs.map((d) => (d.endsWith('/') ? d : `${d}/`)))]);
        await db.run('SET enable_external_access = false');
      }
      await db.run('SET lock_configuration = true');
    }
    return db;
  }

  /**
   * Runs one or more statements; errors become E_SQL with DuckDB's message. With `params` (one
   * statement only), values are bound: `$1` by position or `$name` by name.
   */
  async run(sql: string, context?: { file?: string }, params?: SqlParams): Promise<void> {
    this.guard(sql, context);
    try {
      await this.track(() => this.connection.run(sql, params, typesOf(params)));
    } catch (error) {
      throw sqlError(error, context);
    }
  }

  /** Runs a query and returns its rows as JSON-safe objects (BIGINT as number where safe). */
  async all<T = Record<string, unknown>>(sql: string, context?: { file?: string }, params?: SqlParams): Promise<T[]> {
    return (await this.query(sql, context, params)).rows as T[];
  }

  /** Streams a query's rows in chunks, so large results never sit in memory at once. */
  async *stream<T = Record<string, unknown>>(sql: string, params?: SqlParams): AsyncGenerator<T> {
    this.guard(sql);
    let result: DuckDBResult;
    try {
      result = await this.track(() => this.connection.stream(sql, params, typesOf(params)));
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

  async query(sql: string, context?: { file?: string }, params?: SqlParams): Promise<{ columns: string[]; types: string[]; rows: Record<string, unknown>[] }> {
    if (this.sandboxed) {
      this.guard(sql, context);
      return this.track(() => this.querySandboxed(sql, context, params));
    }
    try {
      const reader = await this.track(() => this.connection.runAndReadAll(sql, params, typesOf(params)));
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
  head(sql: string, limit: number, params?: SqlParams): Promise<{ columns: string[]; types: string[]; rows: unknown[][]; total: number }> {
    this.guard(sql);
    return this.track(() => this.headNow(sql, limit, params));
  }

  private async headNow(sql: string, limit: number, params?: SqlParams): Promise<{ columns: string[]; types: string[]; rows: unknown[][]; total: number }> {
    try {
      // DuckDB rejects an empty statement list with an opaque native error: ask how many there are first.
      const statements = await this.connection.extractStatements(sql);
      if (statements.count === 0) return { columns: [], types: [], rows: [], total: 0 };
      let result: DuckDBResult;
      if (this.sandboxed) {
        // Statement by statement, each checked before it runs, as in query(); the last one streams.
        for (let i = 0; i < statements.count - 1; i++) await (await this.checkedStatement(statements, i)).run();
        const last = await this.checkedStatement(statements, statements.count - 1);
        if (params) last.bind(params, typesOf(params));
        result = await last.stream();
      } else {
        result = await this.connection.stream(sql, params, typesOf(params));
      }
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
      if (error instanceof PlensError) throw error;
      throw sqlError(error);
    }
  }

  /** A sandboxed text that calls a function which configures the database or runs SQL from strings is refused before anything runs. */
  private guard(sql: string, context?: { file?: string }): void {
    if (!this.sandboxed) return;
    const refused = refusedFunction(sql);
    if (refused) {
      throw new PlensError('E_SQL', `${refused.name}() is not allowed here: ${refused.why}, and this connection reads the warehouse only`, {
        location: context?.file ? { file: context.file } : {},
        hint: refused.why.includes('string')
          ? 'write the statement out instead of building it from a string (or pass --allow-files to lift the lock)'
          : 'pass --allow-files to lift the file lock (logs may then be written where you say)',
      });
    }
  }

  /** Statement i of a sandboxed text, prepared, refused if it writes files or attaches or loads code. */
  private async checkedStatement(statements: Awaited<ReturnType<DuckDBConnection['extractStatements']>>, i: number, context?: { file?: string }) {
    const prepared = await statements.prepare(i);
    const refused = SANDBOX_REFUSED.get(prepared.statementType);
    if (refused) {
      throw new PlensError('E_SQL', `${refused} is not allowed here: this connection reads the warehouse only`, {
        location: context?.file ? { file: context.file } : {},
        hint: 'pass --allow-files to let SQL read and write files (COPY, EXPORT, ATTACH); extensions are never installed or loaded automatically',
      });
    }
    return prepared;
  }

  /** Statement by statement, each checked before it runs; the last one's rows are returned. */
  private async querySandboxed(
    sql: string,
    context?: { file?: string },
    params?: SqlParams,
  ): Promise<{ columns: string[]; types: string[]; rows: Record<string, unknown>[] }> {
    try {
      const statements = await this.connection.extractStatements(sql);
      let out = { columns: [] as string[], types: [] as string[], rows: [] as Record<string, unknown>[] };
      for (let i = 0; i < statements.count; i++) {
        const prepared = await this.checkedStatement(statements, i, context);
        // Bound values belong to the last statement (a single one in practice: SET VARIABLE x = $1).
        if (params && i === statements.count - 1) prepared.bind(params, typesOf(params));
        const reader = await prepared.runAndReadAll();
        out = {
          columns: reader.columnNames(),
          types: reader.columnTypes().map((t) => t.toString()),
          rows: reader.getRowObjectsJS().map((row) => normaliseRow(row)),
        };
      }
      return out;
    } catch (error) {
      if (error instanceof PlensError) throw error;
      throw sqlError(error, context);
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
      if (this.owner) this.owner.others.delete(this);
      else this.instance.closeSync();
    };
    const others = [...this.others].map((o) => o.close());
    if (this.inFlight.size === 0 && this.others.size === 0) {
      now();
      this.closing = Promise.resolve();
    } else {
      this.closing = Promise.allSettled([...this.inFlight, ...others]).then(now);
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
  // A full disk or a read-only directory is not a SQL mistake: say so, with the path DuckDB names.
  const storage = storageError(error, context?.file ?? /"(\/[^"]+)"/.exec((error as Error)?.message ?? '')?.[1]);
  if (storage && storage.code === 'E_STORAGE') return storage;
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

/**
 * Values bound to a statement's parameters: `$1, $2 ...` by position or `$name` by name. Values go
 * here, never into the SQL text; only what DuckDB cannot bind (identifiers, a view's body) is
 * written into SQL, through sqlString / sqlIdentifier.
 */
export type SqlParams = DuckDBValue[] | Record<string, DuckDBValue>;

/** A SQL string literal, for the places DuckDB cannot bind a value (a view's body, SET in a script). */
export function sqlString(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** A quoted SQL identifier (a column or table name that comes from input or configuration). */
export function sqlIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

const stringLists = new WeakSet<object>();

/** A list of strings as one bound value (`list_contains($1, x)`, `read_parquet($1)` over many files). */
export function sqlList(values: readonly string[]): DuckDBValue {
  const list = listValue(values);
  stringLists.add(list);
  return list;
}

/** The types DuckDB cannot infer from a value: an empty list has no item type, so sqlList's are VARCHAR[]. */
function typesOf(params: SqlParams | undefined): DuckDBType[] | Record<string, DuckDBType | undefined> | undefined {
  if (!params) return undefined;
  const type = (v: DuckDBValue) => (typeof v === 'object' && v !== null && stringLists.has(v) ? LIST(VARCHAR) : undefined);
  // The binding reads a missing entry as "infer from the value".
  if (Array.isArray(params)) return params.map(type) as DuckDBType[];
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, type(v)]));
}
