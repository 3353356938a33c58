import { createHash } from 'node:crypto';
import { Workspace } from '../core/workspace.js';
import { runDialogues } from '../benchmarks/personalens/dialogues-stage.js';
import { defaultReply, startMockLlm, type MockRequest } from '../testkit/mock-server.js';

/**
 * The dialogues stage through a 429 storm, in one fresh process:
 *   node dist/bench/dialogues-storm-worker.js <workspace> <rpm> <storm seconds> <concurrency> <burst seconds>
 * The mock (in this process: the rate is low) enforces `rpm` per model with a token bucket holding
 * `burst seconds` of it (60: a minute, as the client's own bucket; 1: per-second enforcement), and
 * answers every request 429 for the first `storm seconds` after the first request (an overloaded
 * endpoint). Each model's spec carries the same rpm, as a user who
 * knows the quota writes it. Prints one JSON line: each request's second and status, per model.
 */
const [ws, rpmArg, stormArg, concurrencyArg, burstArg = '60'] = process.argv.slice(2);
const rpm = Number(rpmArg);
const stormMs = Number(stormArg) * 1000;
const capacity = (rpm * Number(burstArg)) / 60;

const buckets = new Map<string, { tokens: number; last: number }>();
const events: Array<[model: string, ms: number, status: number]> = [];
/** Set at the first request: the storm and the figures count from there, not from start-up. */
let t0: number | undefined;
const admit = (r: MockRequest): boolean => {
  const now = performance.now();
  t0 ??= now;
  const b = buckets.get(r.model) ?? { tokens: capacity, last: now };
  b.tokens = Math.min(capacity, b.tokens + ((now - b.last) * rpm) / 60_000);
  b.last = now;
  buckets.set(r.model, b);
  if (now - t0 < stormMs || b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
};
const server = await startMockLlm({
  latencyMs: 50,
  keepRequests: false,
  // Unique replies: every call is a real request, never a shared or cached one.
  reply: (r) => `(${createHash('sha1').update(r.system).update(JSON.stringify(r.messages)).digest('hex').slice(0, 8)}) ${defaultReply(r)}`,
  fault: (r) => {
    const ok = admit(r);
    events.push([r.model, Math.round(performance.now() - t0!), ok ? 200 : 429]);
    return ok ? undefined : { kind: 'status', status: 429 };
  },
});
const start = performance.now();
const summary = await runDialogues({
  workspace: new Workspace(ws!),
  assistants: [`openai:bench-assistant?base_url=${server.url}/v1&rpm=${rpm}`],
  user: `openai:bench-user?base_url=${server.url}/v1&rpm=${rpm}`,
  settings: ['base'],
  cache: 'off',
  concurrency: Number(concurrencyArg),
  signal: new AbortController().signal,
  env: { OPENAI_API_KEY: 'sk-bench' },
});
const wallMs = performance.now() - start;
await server.close();
process.stdout.write(JSON.stringify({ dialogues: summary.ok, failed: summary.failed, wall_ms: wallMs, events }) + '\n');
