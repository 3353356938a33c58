import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { runCliInProcess, tempDir } from '../../helpers/cli.js';
import { isolatedAwsEnv, startMockBedrock, type MockBedrockServer } from '../../helpers/mock-bedrock.js';
import {
  DIFF_TOPIC,
  IMPLICIT_WORDING,
  JUDGE_CHECKS,
  makeRagFixture,
  multisetDiff,
  originalSentOf,
  overridesOf,
  prefevalOriginalAvailable,
  prefevalOriginalMissing,
  realRagRetrieval,
  rewordImplicit,
  runOriginalPrefEval,
  runOriginalPrefEvalMcq,
  scratchCheckout,
  scriptedModelReply,
  sentKey,
  sentOf,
  type ImplicitPrefType,
  type JudgeCheck,
  type OriginalMcqRun,
  type OriginalPrefEvalRun,
  type PrefForm,
  makeDiffWarehouse,
  writeDiffPipeline,
} from '../../helpers/prefeval-original.js';

/**
 * plens's RAG baseline (`retrieval: original`: the checkout's precomputed retrievals) against the
 * original scripts, run unmodified: the classification task (run_original_mcq.py) and the generation
 * task with its judge (run_original.py), task rag, on the first records of a topic in every form.
 * Compared: every request to the model (the preference turn, the question with the 5 retrieved
 * exchanges put first, the options and the prefill) and to the judge, as multisets; per record the
 * MCQ's options, answer, letter and correct letter, the generation's answers and the judge's
 * verdicts; each cell's accuracy; and where the original stops on its assertion (fewer than 5
 * exchanges to retrieve from), that plens records a retrieval failure (implicit) or refuses the
 * pipeline (explicit). Both read a scratch checkout whose implicit files word some questions
 * otherwise than the MCQ file: the original's implicit RAG takes its records from the implicit file.
 *
 * Run twice: on SYNTHETIC retrieval files in the original's layout (make_rag_fixture.py: the real
 * ones are not in the checkout, nor in CI), and, where this machine has them, on the release's real
 * ones ($PLENS_PREFEVAL_RAG_DIR, or /tmp/rag/benchmark_dataset; never copied into this repository).
 */
const checkout = prefevalOriginalAvailable();
const TOPIC = DIFF_TOPIC;
const LIMIT = 4;
const HAIKU = 'anthropic.claude-3-haiku-20240307-v1:0';
type FormName = 'explicit' | 'choice' | 'persona';
const FORMS: Record<FormName, { pref_form: PrefForm; pref_type?: ImplicitPrefType }> = {
  explicit: { pref_form: 'explicit' },
  choice: { pref_form: 'implicit', pref_type: 'choice' },
  persona: { pref_form: 'implicit', pref_type: 'persona' },
};
/** The cells run: at 2 filler turns every form; at 0 the implicit ones (choice-based has 4 exchanges: the original asserts 5). */
const CELLS: Array<{ form: FormName; turns: number; retrievable: boolean }> = [
  { form: 'explicit', turns: 2, retrievable: true },
  { form: 'choice', turns: 2, retrievable: true },
  { form: 'persona', turns: 2, retrievable: true },
  { form: 'choice', turns: 0, retrievable: false },
  { form: 'persona', turns: 0, retrievable: true },
];
/** The final choice's reply where the scripted letter is not wanted: a capital inside a word, a tag inside the choice. */
const CHOICE_EDGES = { '0': 'Based on', '2': '<b>C</b></choice>' };
/** Judge replies by check and record (the harness's default for the others: the response follows the preference). */
const JUDGE_REPLIES: Partial<Record<JudgeCheck, Record<string, string>>> = {
  acknow: { '2': '<preference></preference><answer>No</answer>' },
  violate: { '1': '<explanation>It recommends pasta.</explanation><answer>Yes</answer>' },
  helpful: { '3': '<explanation>It apologises.</explanation><answer>No</answer>' },
};
const DEFAULT_JUDGE: Record<JudgeCheck, string> = {
  acknow: '<preference>p</preference><answer>Yes</answer>',
  violate: '<explanation>x</explanation><answer>No</answer>',
  hallucinate: '<explanation>x</explanation><answer>No</answer>',
  helpful: '<explanation>x</explanation><answer>Yes</answer>',
};
const cellKey = (form: string, turns: number) => `${form}|${turns}`;
const formOf = (form: FormName) => FORMS[form];

const real = realRagRetrieval();

describe.skipIf(!checkout && !process.env['CI'])(
  `PrefEval RAG against the original scripts, on synthetic retrieval files${checkout ? '' : ` (skipped: ${prefevalOriginalMissing()})`}`,
  () => ragSuite('fixture'),
);

describe.skipIf(!checkout || !real)(
  `PrefEval RAG against the original scripts, on the release's retrieval files${real ? '' : ' (skipped: no rag_retrieval at $PLENS_PREFEVAL_RAG_DIR or /tmp/rag/benchmark_dataset)'}`,
  () => ragSuite('real'),
);

function ragSuite(source: 'fixture' | 'real'): void {
  const mcq = new Map<string, OriginalMcqRun>();
  const generation = new Map<string, OriginalPrefEvalRun>();
  /** What the original said where it stopped: by task and cell. */
  const stopped = new Map<string, string>();
  let server: MockBedrockServer;
  let dir: string;
  let data: string;
  let judgeModel: string;
  const creds = { accessKeyId: 'AKIAPLENSPREFEVALRAG1', secretAccessKey: 'plensPrefEvalRagSecret/abcdefghijklmnopqrstuv' };
  const pipeline = (name: string, forms: FormName[], turns: number[]) =>
    writeDiffPipeline(dir, `prefeval-rag-${name}`, [
      'tasks: [generation, classification]',
      `data: ${data}`,
      `topics: [${TOPIC}]`,
      `limit: ${LIMIT}`,
      `forms: [${forms.join(', ')}]`,
      'baselines: [rag]',
      `inter_turns: [${turns.join(', ')}]`,
      'retrieval: original',
      'prompts: original',
      `models: ["bedrock:${HAIKU}?base_url=${server.url}"]`,
      `judge: "bedrock:claude-3-sonnet-v1?base_url=${server.url}"`,
    ]);

  beforeAll(async () => {
    if (!checkout) throw new Error(`PrefEval RAG differential test: ${prefevalOriginalMissing()}`);
    dir = tempDir(`plens-prefeval-rag-${source}-`);
    const ragRetrieval =
      source === 'real' ? real! : join(makeRagFixture({ out: join(dir, 'fixture'), topic: TOPIC, limit: LIMIT, checkout }).rag_dir, 'rag_retrieval');
    data = scratchCheckout(checkout, join(dir, 'checkout'), { ragRetrieval, topic: TOPIC, implicit: rewordImplicit });
    const common = { checkout: data, topic: TOPIC, task: 'rag' as const, limit: LIMIT, rag_dir: ragRetrieval };
    const stop = (what: string) => (e: Error) => {
      stopped.set(what, e.message);
      return undefined;
    };
    for (const c of [...CELLS, { form: 'explicit' as const, turns: 0, retrievable: false }]) {
      const m = await runOriginalPrefEvalMcq({ ...common, ...formOf(c.form), inter_turns: c.turns, replies: { choice: CHOICE_EDGES } }).catch(
        stop(`mcq|${cellKey(c.form, c.turns)}`),
      );
      if (m) mcq.set(cellKey(c.form, c.turns), m);
      const g = await runOriginalPrefEval({ ...common, ...formOf(c.form), inter_turns: c.turns, replies: JUDGE_REPLIES }).catch(
        stop(`generation|${cellKey(c.form, c.turns)}`),
      );
      if (g) generation.set(cellKey(c.form, c.turns), g);
    }
    const overrides = overridesOf(mcq.values());
    judgeModel = [...generation.values()][0]!.judge_requests[0]!.modelId;

    // The judge's templates by their fixed opening; the record by its question (or, hallucinate, its preference) in the text.
    const files: Record<JudgeCheck, string> = { acknow: 'acknowledge', violate: 'violation', hallucinate: 'hallucination', helpful: 'helpful' };
    const openings = JUDGE_CHECKS.map((c) => [c, readFileSync(join(data, 'error_type', `check_${files[c]}.txt`), 'utf8').split('{')[0]!] as const);
    const lists = [
      join('explicit_preference', `${TOPIC}.json`),
      join('implicit_preference', 'choice-based', `${TOPIC}.json`),
      join('implicit_preference', 'persona-driven', `${TOPIC}.json`),
    ].map((f) => (JSON.parse(readFileSync(join(data, 'benchmark_dataset', f), 'utf8')) as Array<{ question: string; preference: string }>).slice(0, LIMIT));
    server = await startMockBedrock({
      credentials: creds,
      reply: (r) => {
        const s = sentOf(r);
        const text = s.messages.at(-1)?.content ?? '';
        const check = openings.find(([, opening]) => text.startsWith(opening))?.[0];
        if (!check) return scriptedModelReply(s.messages, s.max_tokens, (key) => overrides.get(key));
        const index = Math.max(...lists.map((l) => l.findIndex((t) => text.includes(check === 'hallucinate' ? t.preference : t.question))));
        return JUDGE_REPLIES[check]?.[String(index)] ?? DEFAULT_JUDGE[check];
      },
    });
    const env = isolatedAwsEnv(creds, 'us-east-1');
    await makeDiffWarehouse(pipeline('all-forms', ['explicit', 'choice', 'persona'], [2]), env);
    // At 0 filler turns choice-based has too few exchanges: its records fail (retrieval), the others go on (-k).
    const none = await runCliInProcess(['make', 'warehouse', '-k', '-p', pipeline('no-filler', ['choice', 'persona'], [0]), '--no-progress'], { env });
    if (none.code !== 1 || !/retrieval/.test(none.stdout + none.stderr))
      throw new Error(
        `plens make (0 filler turns) exited ${none.code}, expected 1 for the retrieval failures:\n${none.stderr.slice(-3000)}${none.stdout.slice(-2000)}`,
      );
  }, 300_000);
  afterAll(async () => server?.close());

  const query = async <T>(sql: string, params: Array<string | number> = []): Promise<T[]> => {
    const db = await Database.open(join(dir, 'w.duckdb'), { readOnly: true });
    try {
      return await db.all<T>(sql, undefined, params);
    } finally {
      await db.close();
    }
  };

  it("sends the model the original's requests, request by request (MCQ and generation: the retrieved exchanges, ranked, before the question)", () => {
    const want = [...[...mcq.values()].flatMap((run) => run.requests), ...[...generation.values()].flatMap((run) => run.generation_requests)].map((q) =>
      sentKey(originalSentOf(q)),
    );
    const got = server.requests.filter((r) => r.modelId === HAIKU).map((r) => sentKey(sentOf(r)));
    // Per record and task: explicit the preference turn and the question, implicit the question; none where retrieval fails.
    const calls = CELLS.filter((c) => c.retrievable).reduce((n, c) => n + (c.form === 'explicit' ? 2 : 1), 0);
    expect(want).toHaveLength(2 * LIMIT * calls);
    const { missing, extra } = multisetDiff(want, got);
    expect(missing.map((k) => k.slice(0, 200) + ' ... ' + k.slice(-1500))).toEqual([]);
    expect(extra.map((k) => k.slice(0, 200) + ' ... ' + k.slice(-1500))).toEqual([]);
    // The implicit forms ask the implicit file's question (its records 1 and 3 reworded), in both tasks.
    expect(got.filter((k) => k.includes(IMPLICIT_WORDING))).toHaveLength(2 * 2 * CELLS.filter((c) => c.retrievable && c.form !== 'explicit').length);
  });

  it("sends the judge the original's four checks of every RAG answer", () => {
    const want = [...generation.values()].flatMap((run) => run.judge_requests.map((q) => sentKey(originalSentOf(q))));
    const got = server.requests.filter((r) => r.modelId !== HAIKU).map((r) => sentKey(sentOf(r)));
    expect(server.requests.filter((r) => r.modelId !== HAIKU).every((r) => r.modelId === judgeModel)).toBe(true);
    expect(want).toHaveLength(4 * LIMIT * CELLS.filter((c) => c.retrievable).length);
    const { missing, extra } = multisetDiff(want, got);
    expect(missing.map((k) => k.slice(-800))).toEqual([]);
    expect(extra.map((k) => k.slice(-800))).toEqual([]);
  });

  it("keeps each MCQ record's options, answer, letter and correct letter as the original, and each cell's accuracy", async () => {
    for (const [key, run] of mcq) {
      const [form, t] = key.split('|') as [string, string];
      const rows = await query<Record<string, unknown>>(
        `SELECT task_index, status, question, options, correct, response_to_pref, response_to_q, choice, is_correct, retrieval, retrieved
           FROM prefeval_mcq WHERE baseline = 'rag' AND form = $1 AND inter_turns = $2 ORDER BY task_index`,
        [form, Number(t)],
      );
      expect(rows.map((r) => r['task_index'])).toEqual(run.results.map((_, i) => i));
      run.results.forEach((rec, i) => {
        const row = rows[i]!;
        expect(JSON.parse(row['retrieved'] as string), `${key} record ${i}`).toHaveLength(5);
        expect({ ...row, options: JSON.parse(row['options'] as string), retrieved: undefined }, `${key} record ${i}`).toEqual({
          task_index: i,
          status: 'ok',
          question: rec.question,
          options: rec.shuffled_options,
          correct: rec.correct_idx,
          response_to_pref: rec.response_to_pref ?? null,
          response_to_q: rec.response_to_q,
          choice: rec.choice,
          is_correct: rec.choice === rec.correct_idx,
          retrieval: 'original',
          retrieved: undefined,
        });
      });
      const [result] = await query<{ accuracy: number; n: number; n_failed: number }>(
        "SELECT accuracy, n::INT AS n, n_failed::INT AS n_failed FROM prefeval_mcq_results WHERE baseline = 'rag' AND form = $1 AND inter_turns = $2",
        [form, Number(t)],
      );
      expect(result, key).toMatchObject({ n: LIMIT, n_failed: 0 });
      expect(Math.round(result!.accuracy * 10_000) / 100, key).toBe(run.accuracy);
    }
    // The scripted edges were reached: "Based on" reads as B, the tag inside the choice as its letter.
    const edges = await query<{ task_index: number; choice: string }>(
      "SELECT DISTINCT task_index, choice FROM prefeval_mcq WHERE status = 'ok' AND task_index IN (0, 2) ORDER BY task_index",
    );
    expect(edges).toEqual([
      { task_index: 0, choice: 'B' },
      { task_index: 2, choice: 'C' },
    ]);
  });

  it("keeps each generation answer as the original, and reads the judge's verdicts and counts the accuracy as the original", async () => {
    for (const [key, run] of generation) {
      const [form, t] = key.split('|') as [string, string];
      const responses = await query<Record<string, unknown>>(
        `SELECT task_index, status, question, response_to_pref, response_to_q, retrieval FROM prefeval_responses
           WHERE baseline = 'rag' AND form = $1 AND inter_turns = $2 ORDER BY task_index`,
        [form, Number(t)],
      );
      expect(responses, key).toEqual(
        run.results.map((rec, i) => ({
          task_index: i,
          status: 'ok',
          question: rec.question,
          response_to_pref: rec.response_to_pref ?? null,
          response_to_q: rec.response_to_q,
          retrieval: 'original',
        })),
      );
      const checks = await query<Record<string, unknown>>(
        `SELECT acknow, extract_pref, violate, violate_explanation, hallucinate, hallucinate_explanation, helpful, helpful_explanation
           FROM prefeval_checks WHERE baseline = 'rag' AND form = $1 AND inter_turns = $2 ORDER BY task_index`,
        [form, Number(t)],
      );
      expect(checks, key).toEqual(
        run.results.map((rec) => {
          const e = rec.evaluation_error_analysis;
          return {
            acknow: e.acknow.answer,
            extract_pref: e.acknow.extract_pref,
            violate: e.violate.answer,
            violate_explanation: e.violate.explanation,
            hallucinate: e.hallucinate.answer,
            hallucinate_explanation: e.hallucinate.explanation,
            helpful: e.helpful.answer,
            helpful_explanation: e.helpful.explanation,
          };
        }),
      );
      const [result] = await query<{ accuracy: number }>("SELECT accuracy FROM prefeval_results WHERE baseline = 'rag' AND form = $1 AND inter_turns = $2", [
        form,
        Number(t),
      ]);
      expect(Math.round(result!.accuracy * 10_000) / 100, key).toBe(run.accuracy);
    }
  });

  it('where the original stops on its assertion (fewer than 5 exchanges), plens records a retrieval failure (implicit) or refuses the pipeline (explicit)', async () => {
    expect([...stopped.keys()].sort()).toEqual(['generation|choice|0', 'generation|explicit|0', 'mcq|choice|0', 'mcq|explicit|0']);
    for (const message of stopped.values()) expect(message).toMatch(/AssertionError/);
    for (const table of ['prefeval_mcq', 'prefeval_responses'])
      expect(
        await query<{ status: string; error_kind: string; n: number }>(
          `SELECT status, error_kind, count(*)::INT AS n FROM ${table} WHERE baseline = 'rag' AND form = 'choice' AND inter_turns = 0 GROUP BY ALL`,
        ),
        table,
      ).toEqual([{ status: 'failed', error_kind: 'retrieval', n: LIMIT }]);
    const refused = await runCliInProcess(['make', 'all', '--dry-run', '-p', pipeline('explicit-no-filler', ['explicit'], [0]), '--no-progress'], {
      env: isolatedAwsEnv(creds, 'us-east-1'),
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr + refused.stdout).toMatch(/inter_turns 0\b[^\n]*RAG/);
  });
}
