import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Workspace } from '../../src/core/workspace.js';
import { Database } from '../../src/db/database.js';
import { hashParts, llmStageFormat, LlmStageKit, partitionName, type LlmStageOptions } from '../../src/engine/llm-stage.js';
import { Partition, type ColumnsOf } from '../../src/engine/partition.js';
import { runSingleCall, type Answer } from '../../src/engine/single-call.js';
import { parseModelSpec } from '../../src/llm/model-spec.js';
import { startMockLlm, type MockLlmServer, type MockRequest } from '../../src/testkit/mock-server.js';
import { tempDir } from '../helpers/cli.js';

/** A prediction stage as PERSONA-bench will declare one: one question per record, "ANSWER: <n>" parsed from the reply. */
interface PredictionRecord {
  key: string;
  try: number;
  status: 'ok' | 'failed' | 'parse_error';
  error: { kind: string; message: string } | null;
  item_id: string;
  answer: number | null;
  raw: string | null;
  input_tokens: number;
}

const COLUMNS: ColumnsOf<PredictionRecord> = {
  key: 'VARCHAR',
  try: 'INTEGER',
  status: 'VARCHAR',
  error: 'STRUCT(kind VARCHAR, message VARCHAR)',
  item_id: 'VARCHAR',
  answer: 'INTEGER',
  raw: 'VARCHAR',
  input_tokens: 'INTEGER',
};

interface Question {
  id: string;
  text: string;
}

const QUESTIONS: Question[] = Array.from({ length: 6 }, (_, i) => ({ id: `q${i}`, text: `What is ${i} + ${i}?` }));

/** Answers in format, except q3 (prose, until re-asked) and q5 (a 400 the client does not retry). */
function reply(r: MockRequest): string {
  const m = /What is (\d+) \+ (\d+)\?/.exec(r.messages[0]!.content)!;
  if (m[1] === '3' && r.messages.length === 1) return 'Six, I believe.';
  return `ANSWER: ${Number(m[1]) + Number(m[2])}`;
}

async function runPredictions(url: string, ws: Workspace, extra: Partial<LlmStageOptions> & { reask?: boolean } = {}) {
  const options: LlmStageOptions = {
    workspace: ws,
    cache: 'on',
    concurrency: 3,
    signal: new AbortController().signal,
    env: { OPENAI_API_KEY: 'sk-test' },
    ...extra,
  };
  return LlmStageKit.with(options, 'predictions', 'run with --cache on', async (kit) => {
    const model = kit.client(parseModelSpec(`openai:tiny?base_url=${url}/v1`, '--model'));
    const partition = Partition.in(join(ws.root, 'predictions'), partitionName([model.id], [model.id, 'v1']), llmStageFormat('predictions', COLUMNS));
    const summary = await runSingleCall<Question, number>(kit, {
      stage: 'predictions',
      items: async function* () {
        yield* QUESTIONS;
      },
      keyOf: (q) => ({ key: hashParts(['prediction-v1', q.id, model.id]), partition }),
      client: () => model,
      at: () => ({ turn: null, role: 'predict' }),
      request: (q) => ({
        system: 'Answer with ANSWER: <number>.',
        messages: [{ role: 'user', content: q.text }],
        params: { temperature: 0, maxTokens: 20 },
        purpose: 'predict',
        promptVersion: 'v1',
        replicate: 0,
      }),
      parse: (text) => {
        const m = /^ANSWER: (\d+)$/.exec(text.trim());
        return m ? { ok: true, value: Number(m[1]) } : { ok: false, error: 'no ANSWER line' };
      },
      ...(extra.reask ? { reask: (error: string) => `Unreadable (${error}); answer as ANSWER: <number>.` } : {}),
      record: (q, a: Answer<number>, cost): Omit<PredictionRecord, 'key' | 'try'> => ({
        status: a.status,
        error: a.status === 'ok' ? null : a.error,
        item_id: q.id,
        answer: a.status === 'ok' ? a.value : null,
        raw: a.status === 'parse_error' ? a.text : null,
        input_tokens: cost.inputTokens,
      }),
    });
    return { summary, partition, rows: await kit.compact(partition) };
  });
}

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('a single-call stage on the LLM-stage kit', () => {
  it('writes one record per input (a value, an unreadable reply kept raw, or a failure), its call events, and resumes', async () => {
    server = await startMockLlm({ reply, fault: (r) => (r.messages[0]!.content.includes('5 + 5') ? { kind: 'status', status: 400 } : undefined) });
    const ws = new Workspace(join(tempDir('plens-single-'), 'out'));

    const first = await runPredictions(server.url, ws);
    expect(first.summary).toMatchObject({ planned: 6, ok: 4, failed: 2, failure_reasons: { parse_error: 1, http_400: 1 }, calls: 6, cached_calls: 0 });
    expect(first.rows).toBe(6);
    expect(server.requests).toHaveLength(6);

    const db = await Database.open(':memory:');
    try {
      const rows = await db.all<{ item_id: string; status: string; answer: number | null; raw: string | null; kind: string | null }>(
        `SELECT item_id, status, answer, raw, error.kind AS kind FROM read_parquet(?) ORDER BY item_id`,
        undefined,
        [first.partition.outputFile],
      );
      expect(rows).toEqual([
        { item_id: 'q0', status: 'ok', answer: 0, raw: null, kind: null },
        { item_id: 'q1', status: 'ok', answer: 2, raw: null, kind: null },
        { item_id: 'q2', status: 'ok', answer: 4, raw: null, kind: null },
        { item_id: 'q3', status: 'parse_error', answer: null, raw: 'Six, I believe.', kind: 'parse_error' },
        { item_id: 'q4', status: 'ok', answer: 8, raw: null, kind: null },
        { item_id: 'q5', status: 'failed', answer: null, raw: null, kind: 'http_400' },
      ]);
      const calls = await db.all<{ status: string; role: string; n: number }>(
        `SELECT status, role, count(*)::INTEGER AS n FROM read_parquet(?) GROUP BY ALL ORDER BY ALL`,
        undefined,
        [first.partition.callsFile],
      );
      expect(calls).toEqual([
        { status: 'failed', role: 'predict', n: 1 },
        { status: 'ok', role: 'predict', n: 5 },
      ]);
    } finally {
      await db.close();
    }

    // Done keys are skipped; recorded failures wait for --retry-failed.
    const again = await runPredictions(server.url, ws);
    expect(again.summary).toMatchObject({ planned: 0, already_done: 4, already_failed: 2, calls: 0 });
    expect(server.requests).toHaveLength(6);

    // Retried with a re-ask: the unreadable reply is asked anew (never served from the cache) and
    // fixed by the re-ask; the 400 fails again.
    const retried = await runPredictions(server.url, ws, { retryFailed: true, reask: true });
    expect(retried.summary).toMatchObject({ planned: 2, ok: 1, failed: 1, failure_reasons: { http_400: 1 }, calls: 3, cached_calls: 0 });
    expect(
      server.requests
        .slice(6)
        .map((r) => r.messages.length)
        .sort(),
    ).toEqual([1, 1, 3]);
    expect(retried.rows).toBe(6);
  });

  it('stops on a replay miss instead of recording a failure', async () => {
    server = await startMockLlm({ reply });
    const ws = new Workspace(join(tempDir('plens-single-'), 'out'));
    await expect(runPredictions(server.url, ws, { cache: 'replay' })).rejects.toMatchObject({ code: 'E_CACHE_MISS' });
    expect(server.requests).toHaveLength(0);
    // The writer's lock made the partition's folder; nothing was recorded in it.
    const partitions = Partition.list(join(ws.root, 'predictions'), llmStageFormat('predictions', COLUMNS));
    expect(partitions).toHaveLength(1);
    expect((await partitions[0]!.keyStates()).size).toBe(0);
  });
});
