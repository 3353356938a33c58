import { afterEach, expect, it } from 'vitest';
import type { JudgeSummary } from '../../src/benchmarks/personalens/judge-stage.js';
import { startMockLlm, type MockLlmServer } from '../../src/testkit/mock-server.js';
import { judgeReply, logLines } from '../helpers/batch.js';
import { runCliJson } from '../helpers/cli.js';
import { simDialoguesWorkspace } from '../helpers/workspace.js';

/*
 * An empty answer is retried, never a result, but the provider bills it: the stage's spend, its
 * call events and a spend cap count its tokens, for calls that then succeed and for calls that fail.
 */
let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const ENV = { env: { OPENAI_API_KEY: 'sk-test' } };

async function judge(emptyFirst: boolean, emptyAlways = false): Promise<{ summary: JudgeSummary; events: Array<Record<string, unknown>> }> {
  server = await startMockLlm({ reply: judgeReply, fault: (r) => (emptyAlways || (emptyFirst && r.attempt === 0) ? { kind: 'text', text: '' } : undefined) });
  const ws = await simDialoguesWorkspace();
  const r = await runCliJson<JudgeSummary>(
    [
      'judge',
      '-w',
      ws,
      '--judge',
      `openai:judge?base_url=${server.url}/v1&price_in=2.5&price_out=10`,
      '--dimensions',
      'task_completion',
      '--retries',
      '1',
      '--retry-delay-ms',
      '1',
      '--cache',
      'off',
      '--limit',
      '5',
    ],
    ENV,
  );
  expect(r.code === 0 || r.code === 1, r.stderr).toBe(true);
  const events = await logLines(r.json.dir, 'events.jsonl');
  await server.close();
  server = undefined;
  return { summary: r.json, events };
}

it('empty answers the provider billed are in the spend, the events and the summary', async () => {
  const clean = await judge(false);
  const retried = await judge(true);
  expect(retried.summary.ok).toBe(5);
  // Each call paid for its empty first answer too: its prompt once more (an empty answer has no output).
  expect(retried.summary.input_tokens).toBe(2 * clean.summary.input_tokens);
  expect(retried.summary.cost_usd).toBeGreaterThan(clean.summary.cost_usd);
  const sum = retried.events.reduce((n, e) => n + (e['cost_usd'] as number), 0);
  expect(sum).toBeCloseTo(retried.summary.cost_usd, 9);

  // Calls that never got a usable answer: failures, and their cost is counted all the same.
  const failed = await judge(false, true);
  expect(failed.summary.failed).toBe(5);
  expect(failed.summary.cost_usd).toBeGreaterThan(0);
  expect(failed.events.every((e) => e['status'] === 'failed' && (e['cost_usd'] as number) > 0)).toBe(true);
});
