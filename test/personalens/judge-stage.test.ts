import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockLlm, type MockLlmServer, type MockRequest } from '../../src/llm/mock-server.js';
import { runCli, runCliJson } from '../helpers/cli.js';
import { sampleWorkspace } from '../helpers/workspace.js';

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A judge that answers in format, except that one personalization reply in three is unreadable (unless re-asked). */
function judgeReply(r: MockRequest): string {
  const prompt = r.messages[0]!.content;
  const bad = createHash('sha256').update(prompt).digest().readUInt8(0) % 3 === 0;
  if (/VERDICT/.test(prompt)) return 'VERDICT: True\nEXPLANATION: Everything the goal asks for was done.';
  if (/Personalization Score/.test(prompt)) {
    if (bad && r.messages.length === 1) return 'I would say the assistant did reasonably well overall, maybe a three.';
    return '<response>\nPersonalization Score: 3\nKey Observations: applied preferences.\nJustification: proactive use of known preferences.\nImprovement Suggestions: none.\n</response>';
  }
  return 'Score: 4\nJustification: reads naturally.';
}

describe('plens judge against an LLM endpoint', () => {
  it('keeps unreadable replies as parse errors (never scores), reruns them on request, and --reask fixes them', async () => {
    server = await startMockLlm({ reply: judgeReply });
    const ws = await sampleWorkspace();
    expect((await runCli(['dialogues', '-w', ws, '--assistant', 'sim:default', '--setting', 'base'])).code).toBe(0);
    const args = ['judge', '-w', ws, '--judge', `openai:judge?base_url=${server.url}/v1`, '--dimensions', 'task_completion', 'personalization', '--retry-delay-ms', '5'];
    const env = { env: { OPENAI_API_KEY: 'sk-judge' } };

    type S = { ok: number; failed: number; planned: number; failure_reasons: Record<string, number>; calls: number; cached_calls: number };
    const first = await runCliJson<S>(args, env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json.planned).toBe(2 * 49);
    const unparsed = first.json.failure_reasons['parse_error'] ?? 0;
    expect(unparsed).toBeGreaterThan(5);
    expect(first.json).toMatchObject({ ok: 98 - unparsed, failed: unparsed });

    const db = join(ws, '..', 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db])).code).toBe(0);
    const rows = (await runCliJson<Array<Record<string, unknown>>>(['sql', "select status, count(*) as n, count(score) as scored, count(raw) as raw from judgments group by 1 order by 1", '--db', db])).json;
    expect(rows).toEqual([
      { status: 'ok', n: 98 - unparsed, scored: 98 - unparsed, raw: 0 },
      { status: 'parse_error', n: unparsed, scored: 0, raw: unparsed },
    ]);
    const [t3] = (await runCliJson<Array<Record<string, unknown>>>(['sql', "select n_p, n_unparsed from table3 where kind = 'SD'", '--db', db])).json;
    // users 0 and 1 have 21 + 22 SD scenarios (data/sample/README.md): each personalization judgment is scored or unparsed.
    expect((t3!['n_p'] as number) + (t3!['n_unparsed'] as number)).toBe(43);

    // Retrying asks the judge again (an unreadable reply is never served from the cache); this
    // judge is deterministic, so the answers are unreadable again.
    const again = await runCliJson<S>([...args, '--retry-failed'], env);
    expect(again.json).toMatchObject({ planned: unparsed, failed: unparsed, calls: unparsed, cached_calls: 0 });
    // Re-asking with the format restated fixes them.
    const reask = await runCliJson<S>([...args, '--retry-failed', '--reask'], env);
    expect(reask.json).toMatchObject({ planned: unparsed, ok: unparsed, failed: 0 });
    expect((await runCli(['warehouse', '-w', ws, '--db', db])).code).toBe(0);
    const after = (await runCliJson<Array<Record<string, unknown>>>(['sql', "select count(*) as n, count(*) filter (status = 'ok') as ok, count(*) filter (reasked) as reasked from judgments", '--db', db])).json;
    expect(after).toEqual([{ n: 98, ok: 98, reasked: unparsed }]);
  });

  it('needs dialogues first (exit 4)', async () => {
    const ws = await sampleWorkspace();
    const r = await runCli(['judge', '-w', ws, '--judge', 'sim:default']);
    expect(r.code).toBe(4);
    expect(r.stderr).toContain('plens dialogues');
  });

  it('rejects an unknown dimension (exit 2)', async () => {
    const ws = await sampleWorkspace();
    const r = await runCli(['judge', '-w', ws, '--judge', 'sim:default', '--dimensions', 'charm']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown "charm"');
  });
});
