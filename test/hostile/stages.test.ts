import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Database } from '../../src/db/database.js';
import { defaultReply, startMockLlm, type MockFault, type MockLlmServer, type MockRequest } from '../../src/testkit/mock-server.js';
import { runCliJson } from '../helpers/cli.js';
import { sampleWorkspace, simDialoguesWorkspace } from '../helpers/workspace.js';

const servers: MockLlmServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
const serve = async (...args: Parameters<typeof startMockLlm>) => {
  const s = await startMockLlm(...args);
  servers.push(s);
  return s;
};

const env = { env: { OPENAI_API_KEY: 'sk-stage-test', ANTHROPIC_API_KEY: 'sk-ant-stage-test' } };
/** 0-99, stable per distinct request body, so a fault hits the same calls on every attempt. */
const bucket = (r: MockRequest) =>
  createHash('sha256')
    .update(r.system + JSON.stringify(r.messages))
    .digest()
    .readUInt16BE(0) % 100;
const specOf = (api: 'openai' | 'anthropic', model: string, url: string) =>
  api === 'openai' ? `openai:${model}?base_url=${url}/v1` : `anthropic:${model}?base_url=${url}`;

async function rows<T>(file: string, sql: string): Promise<T[]> {
  const db = await Database.open(':memory:');
  try {
    return await db.all<T>(sql.replace('$file', `'${file}'`));
  } finally {
    db.close();
  }
}

describe.each(['openai', 'anthropic'] as const)('empty answers never become turns (%s)', (api) => {
  it('an empty or whitespace-only answer is retried; if it persists the dialogue fails as empty_response; no ok dialogue has an empty turn', async () => {
    // 6% of calls always answer empty, 6% whitespace-only on their first attempt, 6% empty on the first attempt.
    const fault = (r: MockRequest): MockFault | undefined => {
      const b = bucket(r);
      if (b < 6) return { kind: 'text', text: '' };
      if (b < 12 && r.attempt === 0) return { kind: 'text', text: ' \n\t ' };
      if (b < 18 && r.attempt === 0) return { kind: 'text', text: '' };
      return undefined;
    };
    const server = await serve({ fault, requireAuth: true });
    const ws = await sampleWorkspace(['--users', '0']);
    const r = await runCliJson<{ ok: number; failed: number; failure_reasons: Record<string, number> }>(
      [
        'dialogues',
        '-w',
        ws,
        '--assistant',
        specOf(api, 'a', server.url),
        '--user',
        specOf(api, 'u', server.url),
        '--retries',
        '2',
        '--retry-delay-ms',
        '1',
        '--no-progress',
      ],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json.failed).toBeGreaterThan(0);
    expect(Object.keys(r.json.failure_reasons)).toEqual(['empty_response']);
    expect(server.stats().outcomes['text']).toBeGreaterThan(r.json.failed);
    const cell = readdirSync(join(ws, 'dialogues'))[0]!;
    const file = join(ws, 'dialogues', cell, 'dialogues.parquet');
    const empty = await rows<{ n: number }>(
      file,
      `select count(*)::INTEGER AS n from read_parquet($file), unnest(messages) AS m(msg) where trim(msg.content) = ''`,
    );
    expect(empty[0]!.n).toBe(0);
    // Turns alternate: user, assistant, user, ... (no assistant turn left without the user turn before it).
    const roles = await rows<{ status: string; roles: string[] }>(
      file,
      `select status, list_transform(messages, m -> m.role) AS roles from read_parquet($file)`,
    );
    for (const d of roles.filter((x) => x.status === 'ok')) {
      d.roles.forEach((role, i) => expect(role).toBe(i % 2 === 0 ? 'user' : 'assistant'));
    }
    const failures = await rows<{ kind: string }>(file, `select error.kind AS kind from read_parquet($file) where status = 'failed'`);
    expect(failures.every((f) => f.kind === 'empty_response')).toBe(true);
  });
});

describe('an opening that is only the end marker', () => {
  it('is kept as written, as the original does (the opening is never checked for the marker)', async () => {
    // The user agent's first call (no conversation yet) answers with the marker alone.
    const server = await serve({
      reply: (r) => (/TERMINATE/.test(r.system) && !r.messages.at(-1)!.content.includes('[ASSISTANT]:') ? '**TERMINATE**' : defaultReply(r)),
    });
    const ws = await sampleWorkspace(['--users', '0']);
    const r = await runCliJson<{ ok: number; failed: number; failure_reasons: Record<string, number> }>(
      ['dialogues', '-w', ws, '--assistant', 'sim:default', '--user', `openai:u?base_url=${server.url}/v1`, '--limit', '3', '--no-progress'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.json).toMatchObject({ ok: 3, failed: 0 });
    const cell = readdirSync(join(ws, 'dialogues'))[0]!;
    const openings = await rows<{ first: string }>(
      join(ws, 'dialogues', cell, 'dialogues.parquet'),
      `select messages[1].content AS first from read_parquet($file)`,
    );
    expect(openings.map((o) => o.first)).toEqual(['**TERMINATE**', '**TERMINATE**', '**TERMINATE**']);
  });
});

describe('the judge', () => {
  it('--retry-failed re-asks an unreadable reply instead of replaying it from the cache', async () => {
    // Unreadable on a request body's first sight; in format when the same request comes again.
    const reply = (r: MockRequest) => {
      const prompt = r.messages[0]!.content;
      if (/VERDICT/.test(prompt)) return 'VERDICT: True\nEXPLANATION: done.';
      if (r.attempt === 0) return 'Hard to say, honestly.';
      return '<response>\nPersonalization Score: 4\nKey Observations: used preferences.\nJustification: proactive.\nImprovement Suggestions: none.\n</response>';
    };
    const server = await serve({ reply });
    const ws = await simDialoguesWorkspace(['--users', '0'], []);
    const args = ['judge', '-w', ws, '--judge', `openai:judge?base_url=${server.url}/v1`, '--dimensions', 'personalization', '--no-progress'];
    type S = { ok: number; failed: number; planned: number; calls: number; cached_calls: number; failure_reasons: Record<string, number> };
    const first = await runCliJson<S>(args, env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.json.failure_reasons).toEqual({ parse_error: first.json.planned });
    const before = server.stats().requests;
    const retry = await runCliJson<S>([...args, '--retry-failed'], env);
    expect(retry.json).toMatchObject({ planned: first.json.planned, ok: first.json.planned, failed: 0, cached_calls: 0 });
    expect(server.stats().requests - before).toBe(first.json.planned);
    // The good answers are cached now: a rerun of everything is served from the cache.
    const third = await runCliJson<S>([...args, '--retry-failed'], env);
    expect(third.json.planned).toBe(0);
  });

  it('an empty judge reply is a failure (never a score), and a retry asks again', async () => {
    let empty = true;
    const server = await serve({ fault: () => (empty ? { kind: 'text', text: '   ' } : undefined), reply: () => 'VERDICT: False\nEXPLANATION: no.' });
    const ws = await simDialoguesWorkspace(['--users', '0'], []);
    const args = [
      'judge',
      '-w',
      ws,
      '--judge',
      `openai:judge?base_url=${server.url}/v1`,
      '--dimensions',
      'task_completion',
      '--retries',
      '1',
      '--retry-delay-ms',
      '1',
      '--no-progress',
    ];
    const first = await runCliJson<{ planned: number; failed: number; failure_reasons: Record<string, number> }>(args, env);
    expect(first.json.failure_reasons).toEqual({ empty_response: first.json.planned });
    const dir = readdirSync(join(ws, 'judgments'))[0]!;
    const scored = await rows<{ n: number }>(
      join(ws, 'judgments', dir, 'judgments.parquet'),
      `select count(score)::INTEGER + count(verdict)::INTEGER AS n from read_parquet($file)`,
    );
    expect(scored[0]!.n).toBe(0);
    empty = false;
    const retry = await runCliJson<{ ok: number; cached_calls: number }>([...args, '--retry-failed'], env);
    expect(retry.json).toMatchObject({ ok: first.json.planned, cached_calls: 0 });
  });
});

describe('base_url is part of the run identity', () => {
  it("the same model at a second server is new work: not skipped as done, not served the first server's answers", async () => {
    const a = await serve({ reply: (r) => `A says: ${defaultReply(r)}` });
    const b = await serve({ reply: (r) => `B says: ${defaultReply(r)}` });
    const ws = await sampleWorkspace(['--users', '0']);
    type S = { planned: number; already_done: number; ok: number; cached_calls: number };
    const run = (url: string) =>
      runCliJson<S>(['dialogues', '-w', ws, '--assistant', `openai:m?base_url=${url}/v1`, '--user', 'sim:default', '--no-progress'], env);
    const first = await run(a.url);
    expect(first.code, first.stderr).toBe(0);
    const second = await run(b.url);
    expect(second.json).toMatchObject({ planned: first.json.planned, already_done: 0, cached_calls: 0 });
    expect(b.stats().requests).toBeGreaterThan(0);
    const cells = readdirSync(join(ws, 'dialogues')).sort();
    expect(cells).toHaveLength(2);
    // Each cell holds its own server's answers, and neither cell.json holds more than scheme, host, port and path.
    for (const cell of cells) {
      const texts = await rows<{ t: string }>(
        join(ws, 'dialogues', cell, 'dialogues.parquet'),
        `select string_agg(m.content, ' ') AS t from read_parquet($file), unnest(messages) AS x(m) where m.role = 'assistant'`,
      );
      expect(texts[0]!.t.includes('A says') !== texts[0]!.t.includes('B says')).toBe(true);
    }
    // The same server again: everything is done.
    expect((await run(a.url)).json).toMatchObject({ planned: 0 });
  });

  it('the judge at a second server judges anew', async () => {
    const judgeReply = () => 'VERDICT: True\nEXPLANATION: done.';
    const a = await serve({ reply: judgeReply });
    const b = await serve({ reply: judgeReply });
    const ws = await simDialoguesWorkspace(['--users', '0'], []);
    const judge = (url: string) =>
      runCliJson<{ planned: number; cached_calls: number }>(
        ['judge', '-w', ws, '--judge', `openai:j?base_url=${url}/v1`, '--dimensions', 'task_completion', '--no-progress'],
        env,
      );
    const first = await judge(a.url);
    expect(first.json.planned).toBeGreaterThan(0);
    expect((await judge(b.url)).json).toMatchObject({ planned: first.json.planned, cached_calls: 0 });
    expect(b.stats().requests).toBe(first.json.planned);
    expect(readdirSync(join(ws, 'judgments'))).toHaveLength(2);
  });
});
