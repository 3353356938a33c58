import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { pMapIterable } from 'p-map';
import { PlensError, type ErrorCode, type InputLocation } from '../../../core/errors.js';
import type { PreferenceSchema } from './upstream/preference-schema.js';
import type { TaskDefinition } from './upstream/task-definitions.js';
import { readUser } from './upstream/user-reader.js';
import { RowFiles } from './row-files.js';
import { toUserRows, type UserSummary } from './user-rows.js';

export type UpstreamUser = { userId: string; index: number; dir: string };

export interface ReadUsersWorkerData {
  schemaFile: string;
  taskDir: string;
  /** The thread's users: one contiguous run of the import's, `first` being the first's position. */
  users: UpstreamUser[];
  first: number;
  rowsDir: string;
  part: number;
}
export type FromReadUsersWorker =
  | { seq: number; user: UserSummary }
  | { seq: number; error: SerialisedError }
  /** Every row of the thread's users is in its files (sent last, after the files are flushed). */
  | { done: true };
type SerialisedError = { plens?: { code: ErrorCode; location: InputLocation; hint: string | undefined }; message: string; cause?: string };

// In process, reading is I/O plus JSON.parse; a few users in flight hide the I/O without holding much memory.
const USERS_IN_FLIGHT = 8;
/** Below this many users, starting threads (each compiles the validators) costs more than it saves. */
const MIN_USERS_FOR_WORKERS = 64;

/** How many readers by default: one per core (this thread among them), this thread alone for a small import. */
export function defaultReaders(users: number): number {
  return users < MIN_USERS_FOR_WORKERS ? 1 : Math.min(availableParallelism(), 4);
}

/** A user's rows read in this thread (in order, a few in flight) and appended to the part's files. */
export async function* readUsersHere(
  users: readonly UpstreamUser[],
  ctx: { schema: PreferenceSchema; tasks: Map<string, TaskDefinition> },
  rows: RowFiles,
): AsyncGenerator<UserSummary> {
  for await (const user of pMapIterable(users, async (u) => toUserRows(await readUser(u, ctx)), { concurrency: USERS_IN_FLIGHT })) {
    await rows.add(user.rows);
    yield user.summary;
  }
  await rows.flush();
}

/**
 * Reads and validates the users, and writes their rows as newline-delimited JSON into `rowsDir`,
 * one part per reader (RowFiles.parts gives them in user order). The users are cut into `readers`
 * contiguous runs: this thread reads the first, a worker thread each of the others, writing its own
 * files, so no row crosses between threads and only small summaries come back. (A thread costs a
 * third of a second to start and compiles its code afresh: this thread, already warm, takes a share.)
 * 0 or 1 reads everything here. Yields each user's summary as it is read; threads finish out of
 * order, so `seq` is the user's position. The first invalid user in user order aborts the read with
 * its typed error, as a read in one thread would.
 */
export async function* readUsers(
  users: readonly UpstreamUser[],
  ctx: { schema: PreferenceSchema; tasks: Map<string, TaskDefinition>; schemaFile: string; taskDir: string },
  readers: number,
  rowsDir: string,
  threadStart = THREAD_START_IN_USERS,
): AsyncGenerator<{ seq: number; user: UserSummary }> {
  const entry = readers > 1 ? workerEntry() : null;
  const runs = splitRuns(users, entry ? readers : 1, threadStart);
  const arrived: FromReadUsersWorker[] = [];
  const read = new Array<boolean>(users.length).fill(false);
  let wake: (() => void) | null = null;
  let failure: Error | null = null;
  let stopping = false;
  const pool = runs.slice(1).map(({ part, first, users: run }) => {
    const thread = new Worker(entry!, {
      execArgv: [],
      workerData: { schemaFile: ctx.schemaFile, taskDir: ctx.taskDir, users: run, first, rowsDir, part } satisfies ReadUsersWorkerData,
    });
    thread.on('message', (m: FromReadUsersWorker) => {
      arrived.push(m);
      wake?.();
    });
    thread.on('error', (error) => {
      failure ??= error;
      wake?.();
    });
    thread.on('exit', (code) => {
      if (!stopping && code !== 0) failure ??= new Error(`an import reader thread stopped (exit code ${code})`);
      wake?.();
    });
    return thread;
  });
  // The lowest position not yet read, and the first invalid user the threads reported (each stops at its own first).
  let next = 0;
  const first: { invalid: { seq: number; error: SerialisedError } | null } = { invalid: null };
  let finished = 0;
  /** Takes the threads' messages so far; the summaries among them, to yield. */
  const take = (): Array<{ seq: number; user: UserSummary }> => {
    if (failure) throw failure;
    const out: Array<{ seq: number; user: UserSummary }> = [];
    for (const m of arrived.splice(0)) {
      if ('done' in m) finished++;
      else if ('error' in m) {
        if (!first.invalid || m.seq < first.invalid.seq) first.invalid = m;
      } else {
        read[m.seq] = true;
        out.push(m);
      }
    }
    return out;
  };
  try {
    // This thread's run comes first in user order: its failure is the first, thrown as it comes.
    let seq = 0;
    for await (const user of readUsersHere(runs[0]!.users, ctx, new RowFiles(rowsDir, 0))) {
      read[seq] = true;
      yield { seq: seq++, user };
      yield* take();
    }
    while (finished < pool.length) {
      while (arrived.length === 0) {
        if (failure) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
      yield* take();
      while (next < read.length && read[next]) next++;
      // Every user before the invalid one is read: no earlier one can fail.
      if (first.invalid && next === first.invalid.seq) throw deserialiseError(first.invalid.error);
    }
    yield* take();
    if (first.invalid) throw deserialiseError(first.invalid.error);
  } finally {
    stopping = true;
    await Promise.all(pool.map((t) => t.terminate()));
  }
}

/**
 * What a thread's start costs (loading the modules, compiling the validators), in users this thread
 * reads meanwhile: about a third of a second, at about 1.4 ms a user.
 */
export const THREAD_START_IN_USERS = 250;

/**
 * Contiguous runs of the users, one per reader, cut so that all finish together: this thread, which
 * starts at once, takes THREAD_START_IN_USERS more than each thread. Fewer than `readers` runs when a
 * thread would get too few users to pay for its start.
 */
export function splitRuns(
  users: readonly UpstreamUser[],
  readers: number,
  start = THREAD_START_IN_USERS,
): Array<{ part: number; first: number; users: UpstreamUser[] }> {
  let count = Math.max(1, Math.min(readers, users.length + 1));
  // Here: m + (count - 1)(m - start) = n, so m = (n + (count - 1) start) / count; each thread gets m - start.
  const hereFor = (c: number) => Math.ceil((users.length + (c - 1) * start) / c);
  while (count > 1 && hereFor(count) - start < Math.max(1, start)) count--;
  const here = hereFor(count);
  const each = count > 1 ? Math.ceil((users.length - here) / (count - 1)) : 0;
  return Array.from({ length: count }, (_, part) => {
    const first = part === 0 ? 0 : here + (part - 1) * each;
    const end = part === 0 ? here : Math.min(users.length, first + each);
    return { part, first, users: users.slice(first, end) };
  });
}

export function serialiseError(error: unknown): SerialisedError {
  if (error instanceof PlensError) {
    const cause = error.cause instanceof Error ? error.cause.message : undefined;
    return { plens: { code: error.code, location: error.location, hint: error.hint }, message: error.message, ...(cause ? { cause } : {}) };
  }
  return { message: error instanceof Error ? (error.stack ?? error.message) : String(error) };
}

function deserialiseError(e: SerialisedError): Error {
  if (!e.plens) return new Error(`reading a user failed: ${e.message}`);
  return new PlensError(e.plens.code, e.message, {
    location: e.plens.location,
    ...(e.plens.hint ? { hint: e.plens.hint } : {}),
    ...(e.cause ? { cause: new Error(e.cause) } : {}),
  });
}

/** The reader thread's module; null (read in this thread) when running from sources that were never built. */
function workerEntry(): URL | null {
  const beside = new URL('./read-users-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(beside))) return beside;
  // Running from the TypeScript sources (the tests): the thread runs the build of the same module.
  const built = new URL('../../../../dist/benchmarks/personalens/dataset/read-users-worker.js', import.meta.url);
  return existsSync(fileURLToPath(built)) ? built : null;
}
