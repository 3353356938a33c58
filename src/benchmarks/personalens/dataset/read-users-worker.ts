import { parentPort, workerData } from 'node:worker_threads';
import { PreferenceSchema } from './upstream/preference-schema.js';
import { readTaskDefinitions } from './upstream/task-definitions.js';
import { RowFiles } from './row-files.js';
import { readUsersHere, serialiseError, type FromReadUsersWorker, type ReadUsersWorkerData } from './read-users.js';

/**
 * A thread of `plens import`: reads, validates and normalises one contiguous run of the users (JSON
 * parsing and schema validation are most of an import's work), writes their rows into its own part
 * files, and posts back each user's summary. It stops at its first invalid user. The schema and
 * the task definitions were already read and checked by the main thread; reading them again here is cheap.
 */
const { schemaFile, taskDir, users, first, rowsDir, part } = workerData as ReadUsersWorkerData;
const port = parentPort!;
const post = (m: FromReadUsersWorker) => port.postMessage(m);
const schema = await PreferenceSchema.read(schemaFile);
const tasks = new Map((await readTaskDefinitions(taskDir, schema)).map((t) => [t.task_id, t]));
let seq = first;
try {
  for await (const user of readUsersHere(users, { schema, tasks }, new RowFiles(rowsDir, part))) post({ seq: seq++, user });
} catch (error) {
  // The user that failed is the next one: the reads before it were in order.
  post({ seq, error: serialiseError(error) });
}
post({ done: true });
