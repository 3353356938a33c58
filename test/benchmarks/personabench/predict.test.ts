import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Workspace } from '../../../src/core/workspace.js';
import { Database } from '../../../src/db/database.js';
import type { PromptRecord } from '../../../src/benchmarks/personabench/build-prompts.js';
import { parsePrediction, runPersonaPredictions, runPersonaScores, type PersonaPredictOptions } from '../../../src/benchmarks/personabench/predict.js';
import { startMockLlm, type MockLlmServer, type MockRequest } from '../../../src/testkit/mock-server.js';
import { tempDir } from '../../helpers/cli.js';

const record = (task: PromptRecord['task'], position: number, prompt: string, trueLabel: string | number): PromptRecord => ({
  sampleId: `${task}/P-Conv/${position}`,
  task,
  setting: 'P-Conv',
  position,
  targetPostId: null,
  targetReplyId: `r${position}`,
  trueLabel,
  subreddit: 'books',
  user: 'u1',
  fewShot: null,
  prompt,
  extra: null,
  source: 'plens',
});

const RECORDS: PromptRecord[] = [
  record('3.1', 0, 'SIGN A', 'positive'),
  record('3.1', 1, 'SIGN B', 'negative'),
  record('3.1', 2, 'SIGN C', 'negative'),
  record('3.2', 0, 'IMPACT A', 3),
  record('3.2', 1, 'IMPACT B', -2),
  record('3.3', 0, 'REPLY A', 'the true reply'),
];

/** Replies exercising every path: a plain label, prose (strict cannot read it), a 400, a number, a <think> reply. */
function reply(r: MockRequest): string {
  const p = r.messages[0]!.content;
  if (p === 'SIGN A') return 'positive';
  if (p === 'SIGN B') return 'I think it is negative.';
  if (p === 'IMPACT A') return ' 3.5 ';
  if (p === 'IMPACT B') return 'about -2 or -1';
  return `<think>plan</think>reply ${r.temperature}`;
}

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function options(url: string, ws: Workspace, file: string, extra: Partial<PersonaPredictOptions> = {}): PersonaPredictOptions {
  return {
    workspace: ws,
    promptRecords: file,
    model: `openai:tiny?base_url=${url}/v1`,
    samples: 3,
    cache: 'on',
    concurrency: 2,
    signal: new AbortController().signal,
    env: { OPENAI_API_KEY: 'sk-test' },
    ...extra,
  };
}

describe('persona predict', () => {
  it('sends the decoding per task, one call per 3.3 replicate, and keeps unparsed and failed replies as states', async () => {
    server = await startMockLlm({
      reply,
      keepRequests: true,
      fault: (r) => (r.messages[0]!.content === 'SIGN C' ? { kind: 'status', status: 400 } : undefined),
    });
    const dir = tempDir('plens-persona-predict-');
    const file = join(dir, 'prompts.jsonl');
    writeFileSync(file, RECORDS.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const ws = new Workspace(join(dir, 'out'));

    const first = await runPersonaPredictions(options(server.url, ws, file));
    expect(first).toMatchObject({ planned: 8, ok: 6, failed: 2, failure_reasons: { parse_error: 1, http_400: 1 }, calls: 8, cached_calls: 0 });
    // One user message and no system prompt, as the original GPT scripts send.
    expect(server.requests.every((r) => !r.systemSent && r.messages.length === 1 && r.messages[0]!.role === 'user')).toBe(true);
    const wire = server.requests.map((r) => [r.messages[0]!.content, r.temperature, r.maxTokens]).sort();
    expect(wire).toEqual([
      ['IMPACT A', 0, 25],
      ['IMPACT B', 0, 25],
      ['REPLY A', 0.7, 256],
      ['REPLY A', 0.7, 256],
      ['REPLY A', 0.7, 256],
      ['SIGN A', 0, 10],
      ['SIGN B', 0, 10],
      ['SIGN C', 0, 10],
    ]);

    const db = await Database.open(':memory:');
    try {
      expect(first.partitions).toHaveLength(3);
      const files = join(ws.root, 'persona', 'predictions', '*', 'predictions.parquet');
      const rows = await db.all<Record<string, unknown>>(
        `SELECT sample_id, replicate, status, error_kind, reply, predicted, true_label, true_number, predicted_number
         FROM read_parquet(?) ORDER BY sample_id, replicate`,
        undefined,
        [files],
      );
      expect(rows).toEqual([
        {
          sample_id: '3.1/P-Conv/0',
          replicate: 0,
          status: 'ok',
          error_kind: null,
          reply: 'positive',
          predicted: 'positive',
          true_label: 'positive',
          true_number: null,
          predicted_number: null,
        },
        {
          sample_id: '3.1/P-Conv/1',
          replicate: 0,
          status: 'parse_error',
          error_kind: 'parse_error',
          reply: 'I think it is negative.',
          predicted: null,
          true_label: 'negative',
          true_number: null,
          predicted_number: null,
        },
        {
          sample_id: '3.1/P-Conv/2',
          replicate: 0,
          status: 'failed',
          error_kind: 'http_400',
          reply: null,
          predicted: null,
          true_label: 'negative',
          true_number: null,
          predicted_number: null,
        },
        {
          sample_id: '3.2/P-Conv/0',
          replicate: 0,
          status: 'ok',
          error_kind: null,
          reply: ' 3.5 ',
          predicted: '3.5',
          true_label: '3',
          true_number: 3,
          predicted_number: 3.5,
        },
        {
          sample_id: '3.2/P-Conv/1',
          replicate: 0,
          status: 'ok',
          error_kind: null,
          reply: 'about -2 or -1',
          predicted: '-1',
          true_label: '-2',
          true_number: -2,
          predicted_number: -1,
        },
        {
          sample_id: '3.3/P-Conv/0',
          replicate: 0,
          status: 'ok',
          error_kind: null,
          reply: '<think>plan</think>reply 0.7',
          predicted: 'reply 0.7',
          true_label: 'the true reply',
          true_number: null,
          predicted_number: null,
        },
        {
          sample_id: '3.3/P-Conv/0',
          replicate: 1,
          status: 'ok',
          error_kind: null,
          reply: '<think>plan</think>reply 0.7',
          predicted: 'reply 0.7',
          true_label: 'the true reply',
          true_number: null,
          predicted_number: null,
        },
        {
          sample_id: '3.3/P-Conv/0',
          replicate: 2,
          status: 'ok',
          error_kind: null,
          reply: '<think>plan</think>reply 0.7',
          predicted: 'reply 0.7',
          true_label: 'the true reply',
          true_number: null,
          predicted_number: null,
        },
      ]);
    } finally {
      await db.close();
    }

    // The scores of these predictions, worked by hand: 3.1 scores only the one ok reply (positive/positive);
    // 3.2 errors 0.5 and 1 give MSE (0.25 + 1) / 2, MAE 0.75; 3.3 best-of-3 of "reply 0.7" against
    // "the true reply" shares one unigram of three (ROUGE-1 = ROUGE-L = 1/3); BLEU from NLTK 3.8
    // sentence_bleu([['the','true','reply']], ['reply','0.7'], smoothing_function=SmoothingFunction().method1).
    const scored = await runPersonaScores({ workspace: ws });
    const metricsBytes = readFileSync(scored.metrics);
    await runPersonaScores({ workspace: ws });
    expect(readFileSync(scored.metrics).equals(metricsBytes)).toBe(true);
    const mdb = await Database.open(':memory:');
    try {
      const metrics = await mdb.all<Record<string, unknown>>(
        `SELECT task, mode, metric, value, n_total, n_scored, n_unparsed, n_failed FROM read_parquet(?) WHERE subreddit IS NULL AND metric <> 'meteor' ORDER BY task, metric`,
        undefined,
        [scored.metrics],
      );
      const c31 = { n_total: 3, n_scored: 1, n_unparsed: 1, n_failed: 1 };
      const c32 = { n_total: 2, n_scored: 2, n_unparsed: 0, n_failed: 0 };
      const c33 = { n_total: 3, n_scored: 3, n_unparsed: 0, n_failed: 0 };
      expect(metrics).toEqual([
        { task: '3.1', mode: null, metric: 'accuracy', value: 1, ...c31 },
        { task: '3.1', mode: null, metric: 'f1', value: 1, ...c31 },
        // LogEval3.1's weighted F1: one true class, so binary F1 with that class positive.
        { task: '3.1', mode: null, metric: 'f1_weighted', value: 1, ...c31 },
        { task: '3.1', mode: null, metric: 'mcc', value: 0, ...c31 },
        { task: '3.2', mode: null, metric: 'mae', value: 0.75, ...c32 },
        { task: '3.2', mode: null, metric: 'mse', value: 0.625, ...c32 },
        { task: '3.2', mode: null, metric: 'rmse', value: 0.7905694150420949, ...c32 },
        { task: '3.3', mode: 'best-of-n', metric: 'bleu', value: 0.09069748827745895, ...c33 },
        { task: '3.3', mode: 'best-of-n', metric: 'rouge1', value: 1 / 3, ...c33 },
        { task: '3.3', mode: 'best-of-n', metric: 'rougeL', value: 1 / 3, ...c33 },
      ]);
      const samples = await mdb.all<Record<string, unknown>>(
        `SELECT replicate, rouge1, rouge_l, bleu, sbert FROM read_parquet(?) ORDER BY replicate`,
        undefined,
        [scored.sample_scores],
      );
      expect(samples).toEqual([0, 1, 2].map((replicate) => ({ replicate, rouge1: 1 / 3, rouge_l: 1 / 3, bleu: 0.09069748827745895, sbert: null })));
    } finally {
      await mdb.close();
    }

    // A rerun asks nothing that ended ok; with --retry-failed the unparsed and failed ones are asked anew (never from the cache).
    const again = await runPersonaPredictions(options(server.url, ws, file));
    expect(again).toMatchObject({ planned: 0, calls: 0 });
    expect(server.requests).toHaveLength(8);
    const retried = await runPersonaPredictions(options(server.url, ws, file, { retryFailed: true }));
    expect(retried).toMatchObject({ planned: 2 });
    expect(server.requests).toHaveLength(10);
  });

  it('dry run needs no key and calls nothing', async () => {
    server = await startMockLlm({ reply, keepRequests: true });
    const dir = tempDir('plens-persona-predict-dry-');
    const file = join(dir, 'prompts.jsonl');
    writeFileSync(file, RECORDS.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const summary = await runPersonaPredictions(options(server.url, new Workspace(join(dir, 'out')), file, { dryRun: true, env: {} }));
    expect(summary).toMatchObject({ dry_run: true, planned: 8, calls: 0 });
    expect(server.requests).toHaveLength(0);
  });

  it('reads replies with each parser variant', () => {
    expect(parsePrediction('3.1', 'strict', ' Positive\n')).toEqual({ ok: true, value: 'positive' });
    expect(parsePrediction('3.1', 'strict', 'positive or negative')).toMatchObject({ ok: false });
    expect(parsePrediction('3.1', 'last-match', 'positive, no: negative')).toEqual({ ok: true, value: 'negative' });
    expect(parsePrediction('3.1', 'last-match', '<think>positive</think>')).toMatchObject({ ok: false });
    expect(parsePrediction('3.2', 'float-only', 'score: 2')).toMatchObject({ ok: false });
    expect(parsePrediction('3.2', 'float-then-last-number', 'from 1 to 4')).toEqual({ ok: true, value: '4' });
    expect(parsePrediction('3.2', 'last-match', '<think>9</think> 2.5')).toEqual({ ok: true, value: '2.5' });
    expect(parsePrediction('3.3', 'text', '<think>only thinking</think>  ')).toMatchObject({ ok: false });
  });

  it('the offline simulator answers PERSONA-bench prompts deterministically, with no key and no network', async () => {
    const dir = tempDir('plens-persona-predict-sim-');
    const file = join(dir, 'prompts.jsonl');
    const many = Array.from({ length: 30 }, (_, i) => record(i % 2 ? '3.1' : '3.2', i, `P${i}`, i % 2 ? 'positive' : i % 5));
    writeFileSync(file, many.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const run = async (out: string) => {
      const ws = new Workspace(join(dir, out));
      const summary = await runPersonaPredictions({ ...options('unused', ws, file, { env: {} }), model: 'sim:default' });
      const db = await Database.open(':memory:');
      try {
        const rows = await db.all<{ status: string; n: number }>(
          `SELECT status, count(*)::INTEGER AS n FROM read_parquet(?) GROUP BY ALL ORDER BY ALL`,
          undefined,
          [join(ws.root, 'persona', 'predictions', '*', 'predictions.parquet')],
        );
        return { summary, rows };
      } finally {
        await db.close();
      }
    };
    const a = await run('a');
    const b = await run('b');
    expect(a.summary).toMatchObject({ planned: 30, simulated: true });
    expect(a.rows).toEqual(b.rows);
    expect(a.rows.map((r) => r.status)).toEqual(['ok', 'parse_error']);
  });

  it('after the prompts change, the earlier predictions are kept but only the current ones are scored', async () => {
    const dir = tempDir('plens-persona-predict-superseded-');
    const file = join(dir, 'prompts.jsonl');
    const many = Array.from({ length: 6 }, (_, i) => record('3.1', i, `P${i}`, i % 2 ? 'positive' : 'negative'));
    writeFileSync(file, many.map((r) => JSON.stringify(r)).join('\n') + '\n');
    const ws = new Workspace(join(dir, 'out'));
    const predict = () => runPersonaPredictions({ ...options('unused', ws, file, { env: {} }), model: 'sim:default' });
    await predict();
    // A new plens words sample 0's prompt otherwise: a new key in the same partition.
    writeFileSync(file, many.map((r, i) => JSON.stringify(i === 0 ? { ...r, prompt: 'P0, reworded' } : r)).join('\n') + '\n');
    const second = await predict();
    expect(second.planned).toBe(1);
    const scored = await runPersonaScores({ workspace: ws });
    expect(Object.values(scored.superseded)).toEqual([1]);
    const db = await Database.open(':memory:');
    try {
      const [row] = await db.all<{ n: number; kept: number }>(
        `SELECT max(n_total)::INTEGER AS n, (SELECT count(*) FROM read_parquet(?))::INTEGER AS kept FROM read_parquet(?) WHERE subreddit IS NULL`,
        undefined,
        [join(ws.root, 'persona', 'predictions', '*', 'predictions.parquet'), scored.metrics],
      );
      // Six samples scored, seven predictions kept.
      expect(row).toEqual({ n: 6, kept: 7 });
    } finally {
      await db.close();
    }
  });

  it('keeps one cache entry per 3.3 replicate: predictions rebuilt from the cache ask the endpoint nothing', async () => {
    server = await startMockLlm({ reply, keepRequests: true });
    const dir = tempDir('plens-persona-predict-cache-');
    const file = join(dir, 'prompts.jsonl');
    writeFileSync(file, `${JSON.stringify(RECORDS[5])}\n`);
    const ws = new Workspace(join(dir, 'out'));
    const first = await runPersonaPredictions(options(server.url, ws, file, { samples: 4 }));
    expect(first).toMatchObject({ planned: 4, ok: 4, calls: 4, cached_calls: 0 });
    expect(server.requests.map((r) => r.messages[0]!.content)).toEqual(['REPLY A', 'REPLY A', 'REPLY A', 'REPLY A']);
    rmSync(join(ws.root, 'persona', 'predictions'), { recursive: true });
    const again = await runPersonaPredictions(options(server.url, ws, file, { samples: 4 }));
    expect(again).toMatchObject({ planned: 4, ok: 4, calls: 4, cached_calls: 4 });
    expect(server.requests).toHaveLength(4);
  });

  it("scores SBERT through an embeddings endpoint: best-of-n, the GPT scripts' filtered averages, each reply", async () => {
    // Three samples of one prompt each; the mock answers the k-th identical request with REPLIES[prompt][k].
    const REPLIES: Record<string, string[]> = {
      'REPLY A': ['a dog ran', 'the cat ran', 'cat'],
      'REPLY B': ['small blue boat', 'red car', 'small blue boat'],
    };
    server = await startMockLlm({ reply: (r) => REPLIES[r.messages[0]!.content]![r.attempt]!, keepRequests: true });
    // Vectors chosen so the cosines are worked by hand: A's reference [1,0,0] against [0,0,3], [1,1,1], [3,4,0]
    // gives 0, 1/sqrt(3), 0.6 (best 0.6); B's reference [0,2,0] against [1,0,0] and [0,0,3] gives 0 (best 0).
    const VECTORS: Record<string, number[]> = {
      'the cat sat': [1, 0, 0],
      'a dog ran': [0, 0, 3],
      'the cat ran': [1, 1, 1],
      cat: [3, 4, 0],
      'big red car': [0, 2, 0],
      'small blue boat': [1, 0, 0],
      'red car': [0, 0, 3],
    };
    const embedded: string[] = [];
    const embeddings = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const input = (JSON.parse(body) as { input: string[] }).input;
        embedded.push(...input);
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ object: 'list', data: input.map((text, index) => ({ object: 'embedding', index, embedding: VECTORS[text] })) }));
      });
    });
    await new Promise<void>((resolve) => embeddings.listen(0, '127.0.0.1', resolve));
    try {
      const dir = tempDir('plens-persona-sbert-');
      const file = join(dir, 'prompts.jsonl');
      const records = [
        { ...record('3.3', 0, 'REPLY A', 'the cat sat'), subreddit: 'cats' },
        { ...record('3.3', 1, 'REPLY B', 'big red car'), subreddit: 'cars' },
      ];
      writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      const ws = new Workspace(join(dir, 'out'));
      await runPersonaPredictions(options(server.url, ws, file, { concurrency: 1 }));
      const spec = `openai:all-MiniLM-L6-v2?base_url=http://127.0.0.1:${(embeddings.address() as AddressInfo).port}/v1`;
      const scored = await runPersonaScores({ workspace: ws, embeddings: spec });
      expect(scored.sbert).toMatch(/^all-MiniLM-L6-v2@http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings$/);
      // Each distinct text embedded once.
      expect([...embedded].sort()).toEqual(Object.keys(VECTORS).sort());
      const db = await Database.open(':memory:');
      try {
        const metrics = await db.all<Record<string, unknown>>(
          `SELECT mode, metric, value, n_scored FROM read_parquet(?) WHERE subreddit IS NULL AND metric IN ('sbert', 'rouge1') ORDER BY mode, metric`,
          undefined,
          [scored.metrics],
        );
        // ROUGE-1 best-of-3: A 2/3 ("the cat ran"), B 0.8 ("red car": P 1, R 2/3). The filtered
        // averages keep only the prompts whose best SBERT is in [0.1, 1.0]: A alone.
        expect(metrics).toEqual([
          { mode: 'best-of-n', metric: 'rouge1', value: (2 / 3 + 0.8) / 2, n_scored: 6 },
          { mode: 'best-of-n', metric: 'sbert', value: 0.3, n_scored: 6 },
          { mode: 'best-of-n-filtered', metric: 'rouge1', value: 2 / 3, n_scored: 6 },
          { mode: 'best-of-n-filtered', metric: 'sbert', value: 0.6, n_scored: 6 },
        ]);
        const perSubreddit = await db.all<Record<string, unknown>>(
          `SELECT subreddit, value FROM read_parquet(?) WHERE subreddit IS NOT NULL AND mode = 'best-of-n' AND metric = 'sbert' ORDER BY subreddit`,
          undefined,
          [scored.metrics],
        );
        expect(perSubreddit).toEqual([
          { subreddit: 'cars', value: 0 },
          { subreddit: 'cats', value: 0.6 },
        ]);
        const replies = await db.all<{ sample_id: string; sbert: number }>(
          `SELECT sample_id, sbert FROM read_parquet(?) ORDER BY sample_id, sbert`,
          undefined,
          [scored.sample_scores],
        );
        expect(replies.map((r) => [r.sample_id, r.sbert])).toEqual([
          ['3.3/P-Conv/0', 0],
          ['3.3/P-Conv/0', expect.closeTo(1 / Math.sqrt(3), 15)],
          ['3.3/P-Conv/0', expect.closeTo(0.6, 15)],
          ['3.3/P-Conv/1', 0],
          ['3.3/P-Conv/1', 0],
          ['3.3/P-Conv/1', 0],
        ]);
      } finally {
        await db.close();
      }
      await expect(runPersonaScores({ workspace: ws, embeddings: 'anthropic:x' })).rejects.toThrow(/OpenAI-compatible embeddings endpoint/);
    } finally {
      await new Promise<void>((resolve) => embeddings.close(() => resolve()));
    }
  });
});
