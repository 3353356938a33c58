/**
 * SBERT from a local model folder through transformers.js, offline: the tiny BERT-shaped model in
 * test/fixtures/personabench/tiny-sbert (made by its make_model.py) whose last_hidden_state is
 * each token's row of a 13 x 4 table, so every score is worked out by hand below from the table:
 * mean over the tokens the attention mask keeps, [CLS] and [SEP] included (the tokenizer adds
 * them), then the cosine. Real ONNX Runtime, real tokenizer, real LMDB cache; no network.
 */
import { appendFileSync, cpSync, existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Workspace } from '../../../src/core/workspace.js';
import { Database } from '../../../src/db/database.js';
import type { PromptRecord } from '../../../src/benchmarks/personabench/build-prompts.js';
import { runPersonaPredictions, runPersonaScores } from '../../../src/benchmarks/personabench/predict.js';
import { embeddingsStateOf } from '../../../src/llm/embedders.js';
import { LocalEmbedder } from '../../../src/llm/local-embeddings.js';
import { loadPipeline } from '../../../src/make/pipeline.js';
import { startMockLlm, type MockLlmServer } from '../../../src/testkit/mock-server.js';
import { repoRoot, runCli, tempDir } from '../../helpers/cli.js';

const MODEL = join(repoRoot, 'test', 'fixtures', 'personabench', 'tiny-sbert', 'all-tiny-L0');

// The fixture's embedding table, written out again here (make_model.py is its source).
const ROW: Record<string, number[]> = {
  '[PAD]': [100, 100, 100, 100],
  '[UNK]': [0, 0, 0, 1],
  '[CLS]': [1, 0, 0, 0],
  '[SEP]': [0, 1, 0, 0],
  the: [1, 1, 0, 0],
  cat: [2, 0, 1, 0],
  dog: [2, 0, 0, 1],
  sat: [0, 2, 1, 0],
  ran: [0, 1, 0, 2],
  mat: [1, 0, 2, 0],
  on: [0, 0, 1, 1],
  fast: [3, 0, 0, 1],
};

/** The mean of the tokens' rows (what mean pooling gives before normalising). */
function mean(tokens: string[]): number[] {
  const sum = [0, 0, 0, 0];
  for (const t of tokens) ROW[t]!.forEach((x, d) => (sum[d]! += x));
  return sum.map((x) => x / tokens.length);
}
const norm = (v: number[]) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));
const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0) / (norm(a) * norm(b));

// Each text's word pieces, by hand: lower-cased, punctuation split off, unknown words [UNK],
// wrapped in [CLS] ... [SEP], cut at the fixture's max_seq_length of 8.
const TOKENS: Record<string, string[]> = {
  // sum (6,5,5,1)
  'the cat sat on the mat': ['[CLS]', 'the', 'cat', 'sat', 'on', 'the', 'mat', '[SEP]'],
  // sum (4,4,1,1)
  'The dog sat': ['[CLS]', 'the', 'dog', 'sat', '[SEP]'],
  // sum (3,1,1,0)
  cat: ['[CLS]', 'cat', '[SEP]'],
  // 9 pieces cut to 8: "mat" is dropped; sum (8,4,1,5)
  'the dog ran fast on the mat': ['[CLS]', 'the', 'dog', 'ran', 'fast', 'on', 'the', '[SEP]'],
  // "," "zebra" "!" are unknown; sum (4,3,1,5)
  'the cat ran, zebra!': ['[CLS]', 'the', 'cat', 'ran', '[UNK]', '[UNK]', '[UNK]', '[SEP]'],
  // sum (3,1,4,0)
  'MAT mat': ['[CLS]', 'mat', 'mat', '[SEP]'],
};
const vector = (text: string) => {
  const m = mean(TOKENS[text]!);
  return m.map((x) => x / norm(m));
};

let server: MockLlmServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('SBERT from a local model folder (transformers.js, offline)', () => {
  it('embeds as sentence-transformers: mean pooling over the mask (padding left out), L2-normalised, truncated at max_seq_length; cached by content', async () => {
    const dir = tempDir('plens-sbert-local-');
    const texts = Object.keys(TOKENS);
    const first = new LocalEmbedder({ folder: MODEL, cacheDir: join(dir, 'cache') });
    let vectors: Float64Array[];
    try {
      // One batch: the short texts are padded with [PAD], whose row (100s) would show if it leaked.
      vectors = await first.embed([...texts, texts[0]!]);
      expect(first.stats).toEqual({ batches: 1, cached: 0, embedded: texts.length });
      expect(first.id).toMatch(new RegExp(`^local:${MODEL.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}#[0-9a-f]{12}$`));
    } finally {
      await first.close();
    }
    expect(vectors).toHaveLength(texts.length + 1);
    texts.forEach((text, i) => {
      const expected = vector(text);
      expect(Array.from(vectors[i]!)).toHaveLength(4);
      vectors[i]!.forEach((x, d) => expect(x).toBeCloseTo(expected[d]!, 6));
    });
    expect(Array.from(vectors[texts.length]!)).toEqual(Array.from(vectors[0]!));

    // The same files under another path: the cache keys by content, so nothing is embedded again.
    const copy = join(dir, 'moved-model');
    cpSync(MODEL, copy, { recursive: true });
    const moved = new LocalEmbedder({ folder: copy, cacheDir: join(dir, 'cache') });
    try {
      const again = await moved.embed(texts);
      expect(moved.stats).toEqual({ batches: 0, cached: texts.length, embedded: 0 });
      expect(again.map((v) => Array.from(v))).toEqual(vectors.slice(0, texts.length).map((v) => Array.from(v)));
    } finally {
      await moved.close();
    }
    // A changed tokenizer is another model: its vectors are not served from the first one's.
    appendFileSync(join(copy, 'tokenizer.json'), '\n');
    const changed = new LocalEmbedder({ folder: copy, cacheDir: join(dir, 'cache') });
    try {
      await changed.embed(texts.slice(0, 2));
      expect(changed.stats).toEqual({ batches: 1, cached: 0, embedded: 2 });
    } finally {
      await changed.close();
    }
  });

  it('plens persona score --embeddings local:FOLDER: per-reply SBERT and best-of-n match the cosines worked out from the table', async () => {
    const REPLIES: Record<string, string[]> = {
      'REPLY A': ['The dog sat', 'cat'],
      'REPLY B': ['the cat ran, zebra!', 'MAT mat'],
    };
    server = await startMockLlm({ reply: (r) => REPLIES[r.messages[0]!.content]![r.attempt]! });
    const dir = tempDir('plens-sbert-local-score-');
    const file = join(dir, 'prompts.jsonl');
    const record = (position: number, prompt: string, trueLabel: string, subreddit: string): PromptRecord => ({
      sampleId: `3.3/P-Conv/${position}`,
      task: '3.3',
      setting: 'P-Conv',
      position,
      targetPostId: null,
      targetReplyId: `r${position}`,
      trueLabel,
      subreddit,
      user: 'u1',
      fewShot: null,
      prompt,
      extra: null,
      source: 'plens',
    });
    writeFileSync(
      file,
      `${JSON.stringify(record(0, 'REPLY A', 'the cat sat on the mat', 'cats'))}\n${JSON.stringify(record(1, 'REPLY B', 'the dog ran fast on the mat', 'dogs'))}\n`,
    );
    const ws = new Workspace(join(dir, 'out'));
    await runPersonaPredictions({
      workspace: ws,
      promptRecords: file,
      model: `openai:tiny?base_url=${server.url}/v1`,
      samples: 2,
      cache: 'on',
      concurrency: 1,
      signal: new AbortController().signal,
      env: { OPENAI_API_KEY: 'sk-test' },
    });

    const r = await runCli(['persona', 'score', '--workspace', ws.root, '--embeddings', `local:${MODEL}`, '--json']);
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(r.stdout) as { sbert: string; metrics: string; sample_scores: string };
    expect(summary.sbert).toMatch(/^local:.*all-tiny-L0#[0-9a-f]{12}$/);

    // By hand: A's reference (6,5,5,1) against (4,4,1,1) and (3,1,1,0): 50/sqrt(2958) = 0.919329,
    // 28/sqrt(957) = 0.905111; B's (8,4,1,5) against (4,3,1,5) and (3,1,4,0): 70/sqrt(5406)
    // = 0.952051, 32/sqrt(2756) = 0.609551.
    const a1 = cos(mean(TOKENS['the cat sat on the mat']!), mean(TOKENS['The dog sat']!));
    const a2 = cos(mean(TOKENS['the cat sat on the mat']!), mean(TOKENS.cat!));
    const b1 = cos(mean(TOKENS['the dog ran fast on the mat']!), mean(TOKENS['the cat ran, zebra!']!));
    const b2 = cos(mean(TOKENS['the dog ran fast on the mat']!), mean(TOKENS['MAT mat']!));
    expect([a1, a2, b1, b2].map((x) => Number(x.toFixed(6)))).toEqual([0.919329, 0.905111, 0.952051, 0.609551]);

    const db = await Database.open(':memory:');
    try {
      const replies = await db.all<{ sample_id: string; replicate: number; sbert: number }>(
        'SELECT sample_id, replicate, sbert FROM read_parquet(?) ORDER BY sample_id, replicate',
        undefined,
        [summary.sample_scores],
      );
      expect(replies.map((x) => [x.sample_id, x.replicate])).toEqual([
        ['3.3/P-Conv/0', 0],
        ['3.3/P-Conv/0', 1],
        ['3.3/P-Conv/1', 0],
        ['3.3/P-Conv/1', 1],
      ]);
      [a1, a2, b1, b2].forEach((expected, i) => expect(Math.abs(replies[i]!.sbert - expected)).toBeLessThan(1e-6));
      const metrics = await db.all<{ subreddit: string | null; value: number; n_scored: number }>(
        `SELECT subreddit, value, n_scored FROM read_parquet(?) WHERE mode = 'best-of-n' AND metric = 'sbert' ORDER BY subreddit NULLS FIRST`,
        undefined,
        [summary.metrics],
      );
      expect(metrics.map((m) => [m.subreddit, m.n_scored])).toEqual([
        [null, 4],
        ['cats', 2],
        ['dogs', 2],
      ]);
      expect(Math.abs(metrics[0]!.value - (a1 + b1) / 2)).toBeLessThan(1e-6);
      expect(Math.abs(metrics[1]!.value - a1)).toBeLessThan(1e-6);
      expect(Math.abs(metrics[2]!.value - b1)).toBeLessThan(1e-6);
    } finally {
      await db.close();
    }
    // The vectors are in the workspace's cache.
    expect(readdirSync(join(ws.root, 'cache', 'embeddings')).length).toBeGreaterThan(0);
  });

  it('a missing folder or file is a usage error naming the path and what is expected; nothing is written', async () => {
    const dir = tempDir('plens-sbert-local-missing-');
    const ws = join(dir, 'ws');
    const missing = join(dir, 'no-such-model');
    const r = await runCli(['persona', 'score', '--workspace', ws, '--embeddings', `local:${missing}`]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${missing} is not a folder`);
    expect(r.stderr).toContain('config.json, tokenizer.json, tokenizer_config.json, onnx/model.onnx');
    expect(existsSync(ws)).toBe(false);

    // A folder without its ONNX file: the error names what it lacks.
    const partial = join(dir, 'partial');
    cpSync(MODEL, partial, { recursive: true, filter: (src) => !src.endsWith('model.onnx') });
    await expect(runPersonaScores({ workspace: new Workspace(ws), embeddings: `local:${partial}` })).rejects.toMatchObject({
      code: 'E_USAGE',
      message: expect.stringContaining(`${partial} lacks onnx/model.onnx`),
    });
    expect(existsSync(join(ws, 'cache'))).toBe(false);
    expect(existsSync(join(ws, 'persona'))).toBe(false);
  });

  it('a corrupt ONNX file or a tokenizer.json that is not JSON names the file, and leaves no empty vector cache', async () => {
    const dir = tempDir('plens-sbert-local-corrupt-');
    const onnx = join(dir, 'onnx-broken');
    cpSync(MODEL, onnx, { recursive: true });
    writeFileSync(join(onnx, 'onnx', 'model.onnx'), 'not a model');
    const cacheDir = join(dir, 'cache');
    const embedder = new LocalEmbedder({ folder: onnx, cacheDir });
    await expect(embedder.embed(['hello'])).rejects.toMatchObject({ code: 'E_INPUT_LAYOUT', location: { file: join(onnx, 'onnx', 'model.onnx') } });
    await embedder.close();
    expect(existsSync(cacheDir)).toBe(false);

    const tok = join(dir, 'tokenizer-broken');
    cpSync(MODEL, tok, { recursive: true });
    writeFileSync(join(tok, 'tokenizer.json'), '{"version": "1.0",\n  "model": ');
    expect(() => new LocalEmbedder({ folder: tok, cacheDir })).toThrow(
      expect.objectContaining({ code: 'E_INPUT_JSON', location: expect.objectContaining({ file: join(tok, 'tokenizer.json'), line: 2 }) }),
    );
    expect(existsSync(cacheDir)).toBe(false);
  });

  it('a pipeline takes persona.embeddings: local:FOLDER (relative to the working directory); a changed model file makes scores out of date', () => {
    const dir = tempDir('plens-sbert-local-pipeline-');
    const sample = join(repoRoot, 'data', 'personabench-sample', 'raw.json');
    const pipeline = (embeddings: string) => {
      const file = join(dir, 'p.yaml');
      writeFileSync(
        file,
        `name: pl\nworkspace: ${dir}/out\nbenchmark: persona-bench\npersona:\n  source: ${sample}\n  models: [sim:default]\n  embeddings: ${embeddings}\n`,
      );
      return file;
    };
    // Only the spec is checked when the pipeline loads: status works where the folder is not.
    const relative = loadPipeline(pipeline('local:models/minilm'), {});
    expect(relative.persona!.embeddings).toBe(`local:${join(process.cwd(), 'models', 'minilm')}`);
    expect(() => loadPipeline(pipeline('anthropic:x'), {})).toThrow(
      expect.objectContaining({ code: 'E_INPUT_SCHEMA', message: expect.stringContaining('local:FOLDER') }),
    );

    const copy = join(dir, 'model');
    cpSync(MODEL, copy, { recursive: true });
    const before = JSON.stringify(embeddingsStateOf(`local:${copy}`));
    expect(JSON.stringify(embeddingsStateOf(`local:${copy}`))).toBe(before);
    utimesSync(join(copy, 'onnx', 'model.onnx'), new Date(1_000_000), new Date(1_000_000));
    expect(JSON.stringify(embeddingsStateOf(`local:${copy}`))).not.toBe(before);
  });
});
