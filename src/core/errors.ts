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
  | 'E_PREREQUISITE'
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
