import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Typed errors with stable codes. Every failure a user can cause is a PlensError;
 * the CLI prints it once, at the top, and maps it to an exit code. Codes are
 * stable so scripts and tests can match on them rather than on wording.
 */

export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  invalidInput: 3,
  missingPrerequisite: 4,
  sql: 5,
  /** Not an error: the run stopped at its spend cap (`--max-cost`); a rerun with a higher cap goes on. */
  spendCapped: 6,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export type ErrorCode =
  | 'E_USAGE'
  | 'E_INPUT_NOT_FOUND'
  | 'E_INPUT_LAYOUT'
  | 'E_INPUT_JSON'
  | 'E_INPUT_SCHEMA'
  | 'E_INPUT_DOMAIN'
  | 'E_INPUT_REFERENCE'
  | 'E_INPUT_DUPLICATE'
  | 'E_INPUT_ENCODING'
  | 'E_PREREQUISITE'
  | 'E_STORAGE'
  | 'E_CACHE_MISS'
  | 'E_SQL'
  | 'E_INTERNAL';

const exitCodeOf: Record<ErrorCode, ExitCodeValue> = {
  E_USAGE: ExitCode.usage,
  E_INPUT_NOT_FOUND: ExitCode.invalidInput,
  E_INPUT_LAYOUT: ExitCode.invalidInput,
  E_INPUT_JSON: ExitCode.invalidInput,
  E_INPUT_SCHEMA: ExitCode.invalidInput,
  E_INPUT_DOMAIN: ExitCode.invalidInput,
  E_INPUT_REFERENCE: ExitCode.invalidInput,
  E_INPUT_DUPLICATE: ExitCode.invalidInput,
  E_INPUT_ENCODING: ExitCode.invalidInput,
  E_STORAGE: ExitCode.failure,
  E_PREREQUISITE: ExitCode.missingPrerequisite,
  E_CACHE_MISS: ExitCode.missingPrerequisite,
  E_SQL: ExitCode.sql,
  E_INTERNAL: ExitCode.failure,
};

/** Where in an input file a problem is: the file, and a line or a JSON pointer. */
export interface InputLocation {
  file?: string;
  line?: number;
  column?: number;
  pointer?: string;
}

export class PlensError extends Error {
  readonly code: ErrorCode;
  readonly location: InputLocation;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: { location?: InputLocation; hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PlensError';
    this.code = code;
    this.location = options.location ?? {};
    this.hint = options.hint;
  }

  get exitCode(): ExitCodeValue {
    return exitCodeOf[this.code];
  }

  /** `file:line:column` or `file#/json/pointer`, whichever is known. */
  get where(): string | undefined {
    const { file, line, column, pointer } = this.location;
    if (!file) return pointer;
    if (line !== undefined) return `${file}:${line}${column !== undefined ? `:${column}` : ''}${pointer ? ` ${pointer}` : ''}`;
    if (pointer !== undefined) return `${file}#${pointer}`;
    return file;
  }

  toJSON(): Record<string, unknown> {
    return { code: this.code, message: this.message, ...this.location, hint: this.hint };
  }
}

export function usageError(message: string, hint?: string): PlensError {
  return new PlensError('E_USAGE', message, hint === undefined ? {} : { hint });
}

const STORAGE_CAUSES: Record<string, string> = {
  ENOSPC: 'the disk is full (no space left on device)',
  EDQUOT: 'the disk quota is exceeded',
  EROFS: 'the file system is read-only',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'a directory is where a file was expected',
  ENOTDIR: 'a file is where a directory was expected',
  ENOENT: 'no such file or directory',
  EEXIST: 'something already exists at this path',
  EMFILE: 'too many open files',
  EIO: 'an input/output error from the device',
};

/** The same faults as DuckDB, LMDB and other native code report them, in their own words. */
const NATIVE_STORAGE: Array<[RegExp, string]> = [
  [/no space left on device|disk is full|not enough space|MDB_MAP_FULL|could not write all bytes/i, 'ENOSPC'],
  [/read-only file system/i, 'EROFS'],
  [/permission denied/i, 'EACCES'],
  [/disk quota exceeded/i, 'EDQUOT'],
];

/**
 * A file-system fault (from Node, DuckDB or LMDB) as a typed error that says what went wrong and
 * where; undefined when `error` is not one. Nothing of the original is lost: it is the cause.
 */
export function storageError(error: unknown, path?: string): PlensError | undefined {
  if (error instanceof PlensError) {
    if (error.code !== 'E_STORAGE') return undefined;
    // Re-pointed at the file the user named (a build writes a temp sibling of it).
    return path && error.location.file !== path
      ? new PlensError('E_STORAGE', error.message.split(':')[0]!, { location: { file: path }, ...(error.hint ? { hint: error.hint } : {}), cause: error })
      : error;
  }
  const e = error as NodeJS.ErrnoException | undefined;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  let code = typeof e?.code === 'string' && e.code in STORAGE_CAUSES ? e.code : undefined;
  // A recursive mkdir on a read-only file system reports ENOENT: ask the nearest existing folder why.
  if (code === 'ENOENT' && e?.syscall === 'mkdir' && typeof e.path === 'string') code = writeFaultAt(e.path) ?? code;
  code ??= NATIVE_STORAGE.find(([pattern]) => pattern.test(message))?.[1];
  if (!code) return undefined;
  const file = path ?? (typeof e?.path === 'string' ? e.path : undefined);
  const cause = STORAGE_CAUSES[code]!;
  const hint =
    code === 'ENOSPC' || code === 'EDQUOT'
      ? 'free some space (or point --workspace / --db elsewhere) and run the command again; finished work is kept'
      : code === 'EROFS' || code === 'EACCES' || code === 'EPERM'
        ? 'use a writable --workspace / --db, or fix the permissions'
        : undefined;
  const syscall = typeof e?.syscall === 'string' ? ` (${e.syscall})` : '';
  const ioCode = code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR' ? 'E_INPUT_NOT_FOUND' : 'E_STORAGE';
  return new PlensError(ioCode, `${cause}${syscall}${code && !e?.code ? `: ${firstLine(message)}` : ''}`, {
    location: file ? { file } : {},
    ...(hint ? { hint } : {}),
    cause: error,
  });
}

/**
 * Any error as a PlensError: typed ones as they are, file-system faults explained, and anything
 * else as E_INTERNAL with its message (its stack only under --debug).
 */
export function asPlensError(error: unknown): PlensError {
  if (error instanceof PlensError) return error;
  const storage = storageError(error);
  if (storage) return storage;
  if (error instanceof RangeError && /call stack/i.test(error.message)) {
    return new PlensError('E_INTERNAL', 'the input is nested too deeply to process', { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new PlensError('E_INTERNAL', `unexpected error: ${firstLine(message) || (error as Error)?.name || 'unknown'}`, {
    hint: 'this is a bug in plens; rerun with --debug for the stack trace and report it',
    cause: error,
  });
}

function writeFaultAt(path: string): string | undefined {
  for (let dir = path; ; dir = dirname(dir)) {
    if (existsSync(dir)) {
      try {
        accessSync(dir, constants.W_OK);
        return undefined;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code;
      }
    }
    if (dirname(dir) === dir) return undefined;
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0]!.trim();
}
