import { parentPort, workerData } from 'node:worker_threads';
import { PreferenceSchema } from './upstream/preference-schema.js';
import { readTaskDefinitions } from './upstream/task-definitions.js';
import { readUser } from './upstream/user-reader.js';
import { toUserRows } from './user-rows.js';
import { serialiseError, type ReadUsersWorkerData, type FromReadUsersWorker, type ToReadUsersWorker } from './read-users.js';

/**
 * A thread of `plens import`: reads, validates and normalises the users it is sent (JSON parsing and
 * schema validation are most of an import's work) and posts their rows back. The schema and the task
 * definitions were already read and checked by the main thread; reading them again here is cheap.
 */
const { schemaFile, taskDir } = workerData as ReadUsersWorkerData;
const schema = await PreferenceSchema.read(schemaFile);
const tasks = new Map((await readTaskDefinitions(taskDir, schema)).map((t) => [t.task_id, t]));
const port = parentPort!;
port.on('message', (job: ToReadUsersWorker) => {
  readUser(job.user, { schema, tasks }).then(
    (record) => port.postMessage({ seq: job.seq, rows: toUserRows(record) } satisfies FromReadUsersWorker),
    (error: unknown) => port.postMessage({ seq: job.seq, error: serialiseError(error) } satisfies FromReadUsersWorker),
  );
});
