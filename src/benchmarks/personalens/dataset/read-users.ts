import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { pMapIterable } from 'p-map';
import { PlensError, type ErrorCode, type InputLocation } from '../../../core/errors.js';
import type { PreferenceSchema } from './upstream/preference-schema.js';
import type { TaskDefinition } from './upstream/task-definitions.js';
import { readUser } from './upstream/user-reader.js';
import { toUserRows, type UserRows } from './user-rows.js';

type UpstreamUser = { userId: string; index: number; dir: string };

export interface ReadUsersWorkerData {
  schemaFile: string;
  taskDir: string;
}
export type ToReadUsersWorker = { seq: number; user: UpstreamUser };
export type FromReadUsersWorker = { seq: number; rows: UserRows } | { seq: number; error: SerialisedError };
type SerialisedError = { plens?: { code: ErrorCode; location: InputLocation; hint: string | undefined }; message: string; cause?: string };

// In process, reading is I/O plus JSON.parse; a few users in flight hide the I/O without holding much memory.
const USERS_IN_FLIGHT = 8;
// Per worker thread: enough queued that a thread never waits for the main thread.
const USERS_PER_WORKER = 4;
/** Below this many users, starting threads (each compiles the validators) costs more than it saves. */
const MIN_USERS_FOR_WORKERS = 64;

/** How many threads read users by default: one per core, none for a small import. */
export function defaultReadWorkers(users: number): number {
  return users < MIN_USERS_FOR_WORKERS ? 0 : Math.min(availableParallelism(), 4);
}

/**
 * The users' rows in user order, read and validated on `workers` threads (0: in this thread). The
 * first invalid user in that order aborts the read with its typed error, as a read in one thread would.
 */
export async function* readUsers(
  users: readonly UpstreamUser[],
  ctx: { schema: PreferenceSchema; tasks: Map<string, TaskDefinition>; schemaFile: string; taskDir: string },
  workers: number,
): AsyncGenerator<UserRows> {
  const entry = workers > 0 ? workerEntry() : null;
  if (!entry) {
    yield* pMapIterable(users, async (user) => toUserRows(await readUser(user, ctx)), { concurrency: USERS_IN_FLIGHT });
    return;
  }
  const threads = Array.from(
    { length: Math.min(workers, users.length) },
    () => new Worker(entry, { execArgv: [], workerData: { schemaFile: ctx.schemaFile, taskDir: ctx.taskDir } satisfies ReadUsersWorkerData }),
  );
  const done = new Map<number, FromReadUsersWorker>();
  let wake: (() => void) | null = null;
  let failure: Error | null = null;
  let next = 0;
  let stopping = false;
  const send = (thread: Worker) => {
    if (next < users.length) thread.postMessage({ seq: next, user: users[next++]! } satisfies ToReadUsersWorker);
  };
  for (const thread of threads) {
    thread.on('message', (m: FromReadUsersWorker) => {
      done.set(m.seq, m);
      send(thread);
      wake?.();
    });
    thread.on('error', (error) => {
      failure ??= error;
      wake?.();
    });
    thread.on('exit', (code) => {
      if (!stopping) failure ??= new Error(`an import reader thread stopped (exit code ${code})`);
      wake?.();
    });
    for (let i = 0; i < USERS_PER_WORKER; i++) send(thread);
  }
  try {
    for (let seq = 0; seq < users.length; seq++) {
      while (!done.has(seq)) {
        if (failure) throw failure;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = null;
      }
      const m = done.get(seq)!;
      done.delete(seq);
      if ('error' in m) throw deserialiseError(m.error);
      yield m.rows;
    }
  } finally {
    stopping = true;
    await Promise.all(threads.map((t) => t.terminate()));
  }
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
