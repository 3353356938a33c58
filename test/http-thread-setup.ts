import { afterAll, beforeAll } from 'vitest';
import { DEFAULT_TIMEOUTS } from '../src/llm/http-transport.js';
import { WorkerTransport } from '../src/llm/worker-transport.js';

/**
 * One HTTP worker thread per test file. The thread stops when its last connection pool closes, and
 * a test file opens and closes many clients (each in-process CLI run its own): without a pool held
 * open for the file, every client started a thread of its own, about 0.35 s of CPU each (most of
 * test/llm/client.test.ts's time). A plens process that makes several clients shares one thread
 * the same way; each client still opens and closes its own pool on it. Threads in child processes
 * (spawned CLIs, test/llm/worker-transport.test.ts's lifecycle checks) are their own.
 */
let held: WorkerTransport | undefined;
beforeAll(() => {
  held = new WorkerTransport(DEFAULT_TIMEOUTS, 1);
});
afterAll(async () => {
  await held?.close();
  held = undefined;
});
