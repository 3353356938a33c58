/**
 * The mock LLM server as a process, for benchmarks:
 *
 *   node dist/testkit/mock-server-main.js --port 0 --latency 50 [--jitter 25] [--terminate-after 2] [--no-keep] [--require-auth] [--unique-replies] [--sample-bodies FILE]
 *
 * --sample-bodies FILE keeps a uniform sample of the request bodies it received (at most 2,000) and
 * writes them to FILE, one per line, on SIGUSR2 (to a temporary name, then renamed), so a bench can
 * replay the bodies a stage really sent.
 *
 * Prints exactly one line, `listening <url>`, on stdout once ready; exits cleanly on SIGTERM/SIGINT.
 * Requests are never kept in memory (keepRequests and countAttempts are always off here: a bench's
 * mock serves hundreds of thousands of requests; --no-keep is accepted for clarity).
 */
import { renameSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { PythonRandom } from '../stats/python-random.js';
import { defaultReply, startMockLlm, type MockRequest } from './mock-server.js';

function usage(message: string): never {
  process.stderr.write(
    `mock-server: ${message}\nusage: mock-server-main --port <n> --latency <ms> [--jitter <ms>] [--terminate-after <n>] [--no-keep] [--require-auth] [--unique-replies] [--sample-bodies FILE]\n`,
  );
  process.exit(2);
}

function integer(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) usage(`--${name} must be a non-negative integer, got ${JSON.stringify(value)}`);
  return n;
}

let values: {
  port?: string;
  latency?: string;
  jitter?: string;
  'terminate-after'?: string;
  'no-keep'?: boolean;
  'require-auth'?: boolean;
  'unique-replies'?: boolean;
  'sample-bodies'?: string;
};
try {
  ({ values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      port: { type: 'string' },
      latency: { type: 'string' },
      jitter: { type: 'string' },
      'terminate-after': { type: 'string' },
      'no-keep': { type: 'boolean' },
      'require-auth': { type: 'boolean' },
      'unique-replies': { type: 'boolean' },
      'sample-bodies': { type: 'string' },
    },
    strict: true,
    allowPositionals: false,
  }));
} catch (error) {
  usage((error as Error).message);
}

const port = integer('port', values.port, 0);
if (port > 65535) usage(`--port must be at most 65535, got ${port}`);

const terminateAfter = integer('terminate-after', values['terminate-after'], 2);
// --unique-replies: every reply names a digest of its request, so no two conversations repeat a
// request (a benchmark then measures real calls, not cache hits or shared in-flight calls). The
// digest is the one the server already takes of the raw body: a second one, of the parsed
// messages serialised again, cost about a tenth of the mock's CPU per request (114-128 against
// 103-113 µs at c=256), taken from the client under test on the same machine.
const uniqueReply = (r: MockRequest): string => `(${r.bodyDigest.slice(0, 11)}) ${defaultReply(r, terminateAfter)}`;

// A reservoir sample (Algorithm R, a fixed-seed generator) of the bodies received, written on SIGUSR2.
const SAMPLE_SIZE = 2000;
const sample: string[] = [];
let seen = 0;
const sampleRng = new PythonRandom(7);
const sampleFile = values['sample-bodies'];
const observeBody = (raw: Buffer): void => {
  seen++;
  if (sample.length < SAMPLE_SIZE) sample.push(raw.toString('utf8'));
  else {
    const j = Math.floor(sampleRng.random() * seen);
    if (j < SAMPLE_SIZE) sample[j] = raw.toString('utf8');
  }
};
if (sampleFile)
  process.on('SIGUSR2', () => {
    writeFileSync(`${sampleFile}.tmp`, sample.map((b) => `${b.replace(/\n/g, ' ')}\n`).join(''));
    renameSync(`${sampleFile}.tmp`, sampleFile);
  });

const server = await startMockLlm({
  ...(sampleFile ? { observeBody } : {}),
  ...(values['unique-replies'] ? { reply: uniqueReply } : {}),
  port,
  latencyMs: integer('latency', values.latency, 0),
  jitterMs: integer('jitter', values.jitter, 0),
  terminateAfter,
  requireAuth: values['require-auth'] ?? false,
  keepRequests: false,
  countAttempts: false,
});

let stopping = false;
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);

process.stdout.write(`listening ${server.url}\n`);
