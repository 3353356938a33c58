import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readInterTurns, readTopic } from '../../../src/benchmarks/prefeval/data.js';
import { exchangeText, RetrievalError, topExplicit, topImplicit } from '../../../src/benchmarks/prefeval/rag.js';
import { extractChoice, MarkupRejected } from '../../../src/benchmarks/prefeval/parse.js';
import { gridFailure } from '../../../src/benchmarks/prefeval/stages.js';
import { Database } from '../../../src/db/database.js';
import { repoRoot, runCli, tempDir } from '../../helpers/cli.js';
import { startEmbeddingsServer } from '../../helpers/embeddings-server.js';

/**
 * PrefEval's RAG baseline: which exchanges go before the question (the original's ranking:
 * highest similarity first, ties in order, 5 of them, the preference and its answer named
 * `User:` / `Assistant:`), and the `retrieval: <embeddings spec>` option end to end against a
 * local embeddings endpoint. The original's own retrievals are compared with its code in
 * test/differential/prefeval/.
 */
describe('the RAG ranking', () => {
  const filler = Array.from({ length: 8 }, (_, i) => ({ role: (i % 2 ? 'assistant' : 'user') as 'user' | 'assistant', content: `filler ${i}` }));
  const text = { preference: 'P', answer: 'A', exchange: (i: number) => exchangeText(filler[i - 2]!) };

  it('explicit: cuts the scores to the conversation, sorts them (ties keep their order) and names 0 and 1', () => {
    // 2 + 2 x 2 = 6 sentences count; index 7 (score 0.99) is beyond 2 filler turns.
    const scores: Array<[number, number]> = [
      [0, 0.5],
      [1, 0.2],
      [2, 0.5],
      [3, 0.9],
      [4, 0.1],
      [5, 0.5],
      [6, 0.3],
      [7, 0.99],
    ];
    expect(topExplicit(scores, 2, text)).toEqual(['assistant: filler 1', 'User: P', 'user: filler 0', 'assistant: filler 3', 'Assistant: A']);
  });

  it('explicit: fewer than 5 exchanges is refused, as the original asserts', () => {
    expect(() =>
      topExplicit(
        [
          [0, 1],
          [1, 1],
          [2, 1],
          [3, 1],
        ],
        1,
        text,
      ),
    ).toThrow(RetrievalError);
  });

  it('implicit: the conversation and the filler ranked together, the conversation first among equals', () => {
    const conversation = [
      { role: 'user' as const, content: 'c0' },
      { role: 'assistant' as const, content: 'c1' },
      { role: 'user' as const, content: 'c2' },
    ];
    // The filler's scores beyond 2 x 1 turn (0.95) are not considered.
    expect(topImplicit([0.4, 0.1, 0.7], [0.4, 0.8, 0.95], 1, conversation, filler)).toEqual([
      'assistant: filler 1',
      'user: c2',
      'user: c0',
      'user: filler 0',
      'assistant: c1',
    ]);
    expect(() => topImplicit([0.4, 0.1], [0.4, 0.8], 1, conversation, filler)).toThrow(RetrievalError);
  });
});

describe('a grid item that threw', () => {
  it('is a recorded failure when the original would stop (no retrieval, a reply bs4 refuses), and a defect otherwise', () => {
    expect(gridFailure(new RetrievalError('x has no record 53'))).toEqual({ status: 'failed', error_kind: 'retrieval', error: 'x has no record 53' });
    // bs4 raises on an unknown marked-section keyword; the original's extract_choice lets it escape.
    let refused: unknown;
    try {
      extractChoice('<choice><![foo]>A</choice>');
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(MarkupRejected);
    expect(gridFailure(refused)).toMatchObject({ status: 'failed', error_kind: 'unreadable' });
    expect(() => gridFailure(new TypeError('a bug'))).toThrow(TypeError);
  });
});

/** A deterministic 6-dimensional vector for any text. */
function vectorOf(text: string): number[] {
  const h = createHash('sha256').update(text).digest();
  return Array.from({ length: 6 }, (_, i) => h.readInt8(i) / 128);
}
const cosine = (a: number[], b: number[]) => {
  const dot = a.reduce((n, x, i) => n + x * b[i]!, 0);
  return dot / Math.sqrt(a.reduce((n, x) => n + x * x, 0) * b.reduce((n, x) => n + x * x, 0));
};

describe('retrieval: an embeddings spec (plens make, both tasks)', () => {
  const dir = tempDir('plens-prefeval-rag-');
  const data = join(repoRoot, 'data', 'prefeval-sample');
  let server: Awaited<ReturnType<typeof startEmbeddingsServer>>;
  let pipeline: string;

  beforeAll(async () => {
    server = await startEmbeddingsServer(vectorOf);
    pipeline = join(dir, 'rag.yaml');
    writeFileSync(
      pipeline,
      [
        'name: prefeval-rag',
        'benchmark: prefeval',
        `workspace: ${join(dir, 'out')}`,
        `warehouse: ${join(dir, 'w.duckdb')}`,
        'prefeval:',
        `  data: ${data}`,
        '  tasks: [generation, classification]',
        '  topics: [travel_restaurant]',
        '  forms: [explicit, choice]',
        '  baselines: [zero-shot, rag]',
        '  inter_turns: [3]',
        '  models: [sim:default]',
        '  judge: sim:default',
        `  retrieval: openai:test-embedder?base_url=${server.url}`,
        '',
      ].join('\n'),
    );
    const r = await runCli(['make', 'all', '-p', pipeline, '--no-progress'], {});
    expect(r.code, r.stderr + r.stdout).toBe(0);
  }, 120_000);
  afterAll(async () => server?.close());

  it('retrieves the 5 exchanges most similar to the question, by the cosine of their vectors', async () => {
    const db = await Database.open(':memory:');
    try {
      for (const [glob, answerColumn] of [
        ['prefeval/responses/*/responses.parquet', 'response_to_pref'],
        ['prefeval/mcq/*/mcq.parquet', 'response_to_pref'],
      ] as const) {
        const rows = await db.all<{ form: string; task_index: number; question: string; retrieved: string; answer: string | null; retrieval: string }>(
          `SELECT form, task_index, question, retrieved, ${answerColumn} AS answer, retrieval FROM read_parquet('${join(dir, 'out', glob)}') WHERE baseline = 'rag' ORDER BY form, task_index`,
        );
        expect(rows).toHaveLength(8);
        const filler = readInterTurns(data).slice(0, 6);
        for (const row of rows) {
          expect(row.retrieval).toContain('openai:test-embedder');
          const task = readTopic(data, 'travel_restaurant', row.form as 'explicit' | 'choice')[row.task_index]!;
          // The exchanges and their names, computed here from the vectors.
          const candidates =
            row.form === 'explicit'
              ? [
                  { embedded: `user: ${task.preference}`, shown: `User: ${task.preference}` },
                  { embedded: `assistant: ${row.answer}`, shown: `Assistant: ${row.answer}` },
                  ...filler.map((m) => ({ embedded: exchangeText(m), shown: exchangeText(m) })),
                ]
              : [...task.conversation!, ...filler].map((m) => ({ embedded: exchangeText(m), shown: exchangeText(m) }));
          const q = vectorOf(row.question);
          const expected = candidates
            .map((c, i) => ({ ...c, i, s: cosine(q, vectorOf(c.embedded)) }))
            .sort((a, b) => b.s - a.s || a.i - b.i)
            .slice(0, 5)
            .map((c) => c.shown);
          expect(JSON.parse(row.retrieved)).toEqual(expected);
        }
      }
    } finally {
      await db.close();
    }
  });

  it('a second make calls nothing: the answers are kept and the vectors cached', async () => {
    const before = server.requests.length;
    const again = await runCli(['make', 'all', '-p', pipeline, '--no-progress'], {});
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing to do');
    expect(server.requests.length).toBe(before);
  });

  it('rag without a retrieval source, or with explicit preferences under 2 filler turns, is refused at its line', async () => {
    const bad = join(dir, 'bad.yaml');
    const base = ['name: bad', 'benchmark: prefeval', 'prefeval:', `  data: ${data}`, '  models: [sim:default]', '  judge: sim:default', '  baselines: [rag]'];
    writeFileSync(bad, [...base, '  inter_turns: [3]', ''].join('\n'));
    const none = await runCli(['make', 'all', '-p', bad, '--dry-run']);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/bad\.yaml:7:\d+ \/prefeval\/baselines: prefeval\.baselines has rag but no prefeval\.retrieval/);
    writeFileSync(bad, [...base, '  inter_turns: [1, 3]', '  retrieval: original', ''].join('\n'));
    const few = await runCli(['make', 'all', '-p', bad, '--dry-run']);
    expect(few.code).toBe(3);
    expect(few.stderr).toMatch(/prefeval\.inter_turns 1: RAG retrieves 5 exchanges/);
  });
});
