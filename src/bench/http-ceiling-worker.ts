import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { DEFAULT_TIMEOUTS } from '../llm/http-transport.js';
import { InlineTransport } from '../llm/inline-transport.js';
import { steadyRate } from './steady-rate.js';

/**
 * The harness's own ceiling: a plain loop over the stage's HTTP layer (its undici pool and
 * transport) against the same mock, with the same concurrency, connection pool and request bodies
 * as the stage, and nothing else (no prompts, cache, logs, retries):
 *   node dist/bench/http-ceiling-worker.js <mock url> <concurrency> <calls> [<bodies file>]
 * The bodies file is the mock's sample of what the stage sent (mock-server-main --sample-bodies):
 * each call serialises one of them again and sends it, in turn, so the ceiling does the same
 * serialisation and moves the same bytes as the stage. Without it, a fixed ~5 KB body.
 * Prints one JSON line. What it reaches is the most any client can get from this mock on this
 * machine; the stage's rate is read against it as well as against concurrency / latency.
 */
const [url, concurrencyArg, callsArg, bodiesFile] = process.argv.slice(2);
const concurrency = Number(concurrencyArg);
const calls = Number(callsArg);
// The stage's pool settings, sized to the concurrency as the stage sizes it, on this thread: the
// stage's transport at 64; at 256 the stage runs its requests on the HTTP worker thread
// (transport-choice.ts), and this loop over that thread read 1-5% lower (three pairs of 20k calls).
const transport = new InlineTransport(DEFAULT_TIMEOUTS, concurrency);
// One run-long signal, as the stage passes its own: every call in flight listens on it.
const never = new AbortController().signal;
setMaxListeners(0, never);
// About what a dialogue call sends: a ~4 KB system prompt and a ~1 KB turn.
const system = 'You are a simulated user. '.repeat(160);
const turn = 'Tell me more about the options you suggested. '.repeat(22);
const bodies: unknown[] = bodiesFile
  ? readFileSync(bodiesFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as unknown)
  : [];
if (bodiesFile && bodies.length === 0) throw new Error(`no request bodies in ${bodiesFile}`);
const bodyOf = (i: number): string =>
  bodies.length
    ? JSON.stringify(bodies[i % bodies.length])
    : JSON.stringify({
        model: 'ceiling',
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: `${i} ${turn}` },
        ],
        temperature: 0.7,
        max_tokens: 1024,
      });

let started = 0;
let answered = 0;
/** When each answer arrived (ms since the epoch, as the stage's calls record it), for the steady rate. */
const answeredAt = new Float64Array(calls);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (started < calls) {
      const i = started++;
      const reply = await transport.post(`${url}/v1/chat/completions`, { authorization: 'Bearer sk-bench' }, bodyOf(i), never);
      const json = JSON.parse(reply.text) as { choices?: unknown[] };
      if (reply.status !== 200 || !json.choices) throw new Error(`mock answered ${reply.status}`);
      answeredAt[answered++] = performance.timeOrigin + performance.now();
    }
  }),
);
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
await transport.close();
const bytes = bodies.length ? bodies.reduce<number>((n, b) => n + Buffer.byteLength(JSON.stringify(b)), 0) / bodies.length : Buffer.byteLength(bodyOf(0));
process.stdout.write(
  JSON.stringify({ calls, wall_ms: wallMs, cpu_ms: (cpu.user + cpu.system) / 1000, mean_body_bytes: bytes, steady_rate: steadyRate(answeredAt) }) + '\n',
);
