import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startMockLlm, type MockLlmServer, type MockRequest } from '../../../src/testkit/mock-server.js';
import { runCli, runCliJson } from '../../helpers/cli.js';
import { sampleWorkspace, simDialoguesWorkspace } from '../../helpers/workspace.js';

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
    const ws = await simDialoguesWorkspace();
    const args = [
      'judge',
      '-w',
      ws,
      '--judge',
      `openai:judge?base_url=${server.url}/v1`,
      '--dimensions',
      'task_completion',
      'personalization',
      '--retry-delay-ms',
      '5',
    ];
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
    const rows = (
      await runCliJson<Array<Record<string, unknown>>>([
        'sql',
        'select status, count(*) as n, count(score) as scored, count(raw) as raw from judgments group by 1 order by 1',
        '--db',
        db,
      ])
    ).json;
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
    const after = (
      await runCliJson<Array<Record<string, unknown>>>([
        'sql',
        "select count(*) as n, count(*) filter (status = 'ok') as ok, count(*) filter (reasked) as reasked from judgments",
        '--db',
        db,
      ])
    ).json;
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

describe('plens judge --dimensions personalization_chain (the original chain-of-turn judgment)', () => {
  type Row = Record<string, unknown>;
  const sql = async (db: string, query: string) => (await runCliJson<Row[]>(['sql', query, '--db', db])).json;

  /**
   * The mock judge scores turn i with min(4, i + 1), one line per `[ASSISTANT]:` line of the
   * conversation it is shown (after the prompt's `Conversation:` label), except for dialogues with exactly 3 assistant turns, where it leaves
   * out the last line: those replies must be parse errors, never scores.
   */
  function chainReply(r: MockRequest): string {
    // The dialogue's own lines: those after the prompt's "Conversation:" label (the rubric's worked examples come before it).
    const prompt = r.messages.at(-1)!.content;
    const turns = prompt
      .slice(prompt.lastIndexOf('\nConversation:\n'))
      .split('\n')
      .filter((l) => l.startsWith('[ASSISTANT]:')).length;
    const shown = turns === 3 ? 2 : turns;
    const lines = Array.from({ length: shown }, (_, i) => `Turn ${i + 1} Personalization Score: ${Math.min(4, i + 2)}`);
    return `<response>\n${lines.join('\n')}\nJustification: grew more personal with each turn.\n</response>`;
  }

  it('one call per dialogue, one score per assistant turn; a reply short of a turn is unparsed; figure5 says chain_of_turn', async () => {
    server = await startMockLlm({ reply: chainReply });
    const ws = await simDialoguesWorkspace();
    const args = ['judge', '-w', ws, '--judge', `openai:judge?base_url=${server.url}/v1`, '--dimensions', 'personalization_chain', '--retry-delay-ms', '5'];
    const env = { env: { OPENAI_API_KEY: 'sk-judge' } };
    const plan = await runCliJson<{ planned: number }>([...args, '--dry-run'], env);
    expect(plan.json.planned).toBe(49);
    const first = await runCliJson<{ ok: number; failed: number; planned: number; failure_reasons: Record<string, number> }>(args, env);
    expect(first.code, first.stderr).toBe(0);
    // users 0 and 1: 43 SD + 6 MD scenarios, one call each.
    expect(first.json.planned).toBe(49);
    expect(server.requests).toHaveLength(49);
    // The judge has no system prompt, and an empty one is sent, as the original does (the spec's call settings).
    expect(server.requests.every((r) => r.systemSent && r.system === '' && r.messages.length === 1 && r.temperature === 0 && r.maxTokens === 4000)).toBe(true);

    const db = join(ws, '..', 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none'])).code).toBe(0);
    const turns = `(select dialogue_id, len(list_filter(messages, m -> m.role = 'assistant')) as n from dialogues)`;
    const [byTurns] = await sql(db, `select count(*) filter (n = 3) as three, count(*) as all from ${turns}`);
    expect(byTurns!['three'] as number).toBeGreaterThan(0);
    expect(first.json).toMatchObject({ ok: 49 - (byTurns!['three'] as number), failed: byTurns!['three'] });
    expect(first.json.failure_reasons).toEqual({ parse_error: byTurns!['three'] });
    // Every scored judgment has exactly one score per assistant turn; every unparsed one is a 3-turn dialogue, kept raw, never scored.
    expect(
      await sql(
        db,
        `select j.status, count(*) filter (len(j.turn_scores) = t.n) as full, count(*) filter (j.turn_scores is null and j.score is null) as unscored,
        count(*) filter (j.raw is not null) as raw, count(*) filter (t.n = 3) as three, count(*) as n
        from judgments j join ${turns} t using (dialogue_id) group by 1 order by 1`,
      ),
    ).toEqual([
      { status: 'ok', full: 49 - (byTurns!['three'] as number), unscored: 0, raw: 0, three: 0, n: 49 - (byTurns!['three'] as number) },
      { status: 'parse_error', full: 0, unscored: byTurns!['three'], raw: byTurns!['three'], three: byTurns!['three'], n: byTurns!['three'] },
    ]);
    const [unparsed] = await sql(db, "select error.message as message from judgments where status = 'parse_error' limit 1");
    expect(unparsed!['message']).toBe("scores for 2 of the dialogue's 3 assistant turns; none for turn 3");
    // The mock's score after turn i is min(4, i + 1), so every figure5 row has that mean.
    const fig5 = await sql(db, 'select distinct method, turn, p from figure5 order by turn');
    expect(fig5.length).toBeGreaterThanOrEqual(2);
    for (const r of fig5) expect(r).toEqual({ method: 'chain_of_turn', turn: r['turn'], p: Math.min(4, (r['turn'] as number) + 1) });
    expect(await sql(db, "select distinct turn_level from judgment_status where dimension = 'personalization_chain'")).toEqual([{ turn_level: true }]);
  });

  it('the simulator answers it, turn by turn as it scores each prefix', async () => {
    const ws = await simDialoguesWorkspace(['--users', '0'], ['--setting', 'base+i']);
    const r = await runCliJson<{ ok: number; failed: number }>([
      'judge',
      '-w',
      ws,
      '--judge',
      'sim:default',
      '--dimensions',
      'personalization_turns',
      'personalization_chain',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.failed).toBe(0);
    const db = join(ws, '..', 'w.duckdb');
    expect((await runCli(['warehouse', '-w', ws, '--db', db, '--lexical', 'none'])).code).toBe(0);
    const rows = (method: string) => sql(db, `select domain, turn, n, p from figure5 where method = '${method}' order by domain, turn`);
    const chain = await rows('chain_of_turn');
    expect(chain.length).toBeGreaterThan(0);
    expect(chain).toEqual(await rows('per_prefix'));
  });
});
