import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { tempDir } from '../../helpers/cli.js';
import { isolatedAwsEnv, startMockBedrock, type MockBedrockServer } from '../../helpers/mock-bedrock.js';
import {
  DIFF_TOPIC,
  IMPLICIT_WORDING,
  multisetDiff,
  originalSentOf,
  overridesOf,
  prefevalOriginalAvailable,
  prefevalOriginalMissing,
  rewordImplicit,
  runOriginalPrefEvalMcq,
  scratchCheckout,
  scriptedModelReply,
  sentOf,
  sentKey,
  type OriginalMcqRun,
  type PrefEvalTask,
  makeDiffWarehouse,
  writeDiffPipeline,
} from '../../helpers/prefeval-original.js';

/**
 * plens's PrefEval classification (MCQ) task against the original classification script, run
 * unmodified (harness: run_original_mcq.py), on the first records of a topic, every form, baseline
 * (but RAG: rag.test.ts) and turn count of the grid: every request both send (the preference turn,
 * the question with its shuffled options and the "<choice>" prefill, self-critic's critique and
 * revision), and per record the options as shown, the correct letter, the answer as kept, the letter
 * read from it, self-critic's first answer and critique, and each cell's accuracy. plens runs with
 * `prompts: original` against a mock Bedrock that replies by the harness's rule; the final choice of
 * some records is scripted, alike on both sides, to reach extract_choice's edges (no letter, an
 * unclosed tag, a tag inside the choice, a capital inside a word, a comment, a character reference).
 * Both read a scratch checkout whose implicit files ask some records' questions in other words (the
 * release's MCQ and implicit files ask the same): the MCQ file's question is the one asked.
 */
const checkout = prefevalOriginalAvailable();
const TOPIC = DIFF_TOPIC;
const LIMIT = 4;
const FORMS = [
  { form: 'explicit', pref_form: 'explicit' },
  { form: 'choice', pref_form: 'implicit', pref_type: 'choice' },
  { form: 'persona', pref_form: 'implicit', pref_type: 'persona' },
] as const;
const TASKS: PrefEvalTask[] = ['zero-shot', 'remind', 'cot', 'selfcritic'];
const TURNS = [0, 2];
const HAIKU = 'anthropic.claude-3-haiku-20240307-v1:0';

/**
 * The final choice's reply by baseline and record (the harness's replies.choice), where the scripted
 * letter is not wanted; each reply follows the "<choice>" the request ends with. Zero-shot keeps the
 * scripted letters: its request is also self-critic's first one, which the harness does not override.
 */
const CHOICE_EDGES: Partial<Record<PrefEvalTask, Record<string, string>>> = {
  // No child (None), an unclosed tag, a tag inside (its string), a capital inside a word.
  remind: { '0': '</choice>', '1': ' D', '2': '<b>C</b></choice>', '3': 'Based on' },
  // Lower case only, a comment beside the letter (two children: None), a character reference, an upper-case end tag.
  cot: { '0': 'a</choice>', '1': '<!-- A -->B</choice>', '2': '&#66;</choice>', '3': 'C</CHOICE> or D' },
  // A CDATA section (its string), whitespace only, a processing instruction beside the letter (None), a choice inside the choice.
  selfcritic: { '0': '<![CDATA[ C ]]></choice>', '1': '\n</choice>', '2': '<?pi A?>D</choice>', '3': '<choice>D</choice></choice>' },
};

/** The model's calls a record takes: the explicit preference turn, the choice, and self-critic's critique and revised choice. */
const callsPer = (explicit: boolean, task: PrefEvalTask) => (explicit ? 1 : 0) + (task === 'selfcritic' ? 3 : 1);
const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);

describe.skipIf(!checkout && !process.env['CI'])(
  `PrefEval MCQ against the original classification script${checkout ? '' : ` (skipped: ${prefevalOriginalMissing()})`}`,
  () => {
    const original = new Map<string, OriginalMcqRun>();
    let server: MockBedrockServer;
    let dir: string;
    let data: string;

    beforeAll(async () => {
      if (!checkout) throw new Error(`PrefEval MCQ differential test: ${prefevalOriginalMissing()}`);
      dir = tempDir('plens-prefeval-mcq-diff-');
      data = scratchCheckout(checkout, join(dir, 'checkout'), { topic: TOPIC, implicit: rewordImplicit });
      for (const f of FORMS)
        for (const task of TASKS)
          for (const turns of TURNS)
            original.set(
              `${f.form}|${task}|${turns}`,
              await runOriginalPrefEvalMcq({
                checkout: data,
                topic: TOPIC,
                inter_turns: turns,
                task,
                limit: LIMIT,
                pref_form: f.pref_form,
                ...('pref_type' in f ? { pref_type: f.pref_type } : {}),
                ...(CHOICE_EDGES[task] ? { replies: { choice: CHOICE_EDGES[task] } } : {}),
              }),
            );
      const overrides = overridesOf(original.values());

      const creds = { accessKeyId: 'AKIAPLENSPREFEVALMCQ1', secretAccessKey: 'plensPrefEvalMcqSecret/abcdefghijklmnopqrstuv' };
      server = await startMockBedrock({
        credentials: creds,
        reply: (r) => {
          const s = sentOf(r);
          return scriptedModelReply(s.messages, s.max_tokens, (key) => overrides.get(key));
        },
      });
      // The original sends every request again (self-critic's first choice is zero-shot's): so does plens here (the cache off).
      const file = writeDiffPipeline(dir, 'prefeval-mcq-diff', [
        'tasks: [classification]',
        `data: ${data}`,
        `topics: [${TOPIC}]`,
        `limit: ${LIMIT}`,
        `forms: [${FORMS.map((f) => f.form).join(', ')}]`,
        `baselines: [${TASKS.join(', ')}]`,
        `inter_turns: [${TURNS.join(', ')}]`,
        'prompts: original',
        `models: ["bedrock:${HAIKU}?base_url=${server.url}"]`,
      ]);
      await makeDiffWarehouse(file, isolatedAwsEnv(creds, 'us-east-1'));
    }, 240_000);
    afterAll(async () => server?.close());

    it("sends the model the original's requests, request by request (the same multiset: preference turn or conversation, filler, question with its options and the prefill, critique, revision)", () => {
      const want = [...original.values()].flatMap((run) => run.requests.map((q) => sentKey(originalSentOf(q))));
      const got = server.requests.map((r) => {
        expect(r.modelId).toBe(HAIKU);
        return sentKey(sentOf(r));
      });
      expect(want).toHaveLength(LIMIT * TURNS.length * sum(FORMS.map((f) => sum(TASKS.map((t) => callsPer(f.form === 'explicit', t))))));
      const { missing, extra } = multisetDiff(want, got);
      expect(missing.map((k) => k.slice(-600))).toEqual([]);
      expect(extra.map((k) => k.slice(-600))).toEqual([]);
      // Every choice call ends with the prefill; the scripted edges were reached.
      const prefilled = got.filter((k) => k.endsWith('{"role":"assistant","content":"<choice>"}],"temperature":0,"max_tokens":5}'));
      expect(prefilled).toHaveLength(LIMIT * TURNS.length * FORMS.length * (TASKS.length + 1));
    });

    it('shows each record the options shuffled as the original (seed 41, in file order), and keeps its answers, letter and correct letter alike', async () => {
      const db = await Database.open(join(dir, 'w.duckdb'), { readOnly: true });
      try {
        for (const [key, run] of original) {
          const [form, task, t] = key.split('|') as [string, PrefEvalTask, string];
          const rows = await db.all<Record<string, unknown>>(
            `SELECT task_index, status, question, options, correct, response_to_pref, response_to_q, choice, is_correct, first_choice, self_critic
             FROM prefeval_mcq WHERE form = $1 AND baseline = $2 AND inter_turns = $3 ORDER BY task_index`,
            undefined,
            [form, task, Number(t)],
          );
          expect(rows.map((r) => r['task_index'])).toEqual(run.results.map((_, i) => i));
          run.results.forEach((rec, i) => {
            const row = rows[i]!;
            expect({ ...row, options: JSON.parse(row['options'] as string) }, `${key} record ${i}`).toEqual({
              task_index: i,
              status: 'ok',
              question: rec.question,
              options: rec.shuffled_options,
              correct: rec.correct_idx,
              response_to_pref: rec.response_to_pref ?? null,
              response_to_q: rec.response_to_q,
              choice: rec.choice,
              is_correct: rec.choice === rec.correct_idx,
              first_choice: rec.first_choice ?? null,
              self_critic: rec.self_critic ?? null,
            });
          });
        }
        // The edges were reached: replies with no letter, and letters read from other shapes.
        const choices = await db.all<{ baseline: string; task_index: number; choice: string | null }>(
          "SELECT DISTINCT baseline, task_index, choice FROM prefeval_mcq WHERE baseline IN ('remind', 'cot', 'selfcritic') ORDER BY baseline, task_index",
        );
        expect(choices).toEqual([
          { baseline: 'cot', task_index: 0, choice: null },
          { baseline: 'cot', task_index: 1, choice: null },
          { baseline: 'cot', task_index: 2, choice: 'B' },
          { baseline: 'cot', task_index: 3, choice: 'C' },
          { baseline: 'remind', task_index: 0, choice: null },
          { baseline: 'remind', task_index: 1, choice: 'D' },
          { baseline: 'remind', task_index: 2, choice: 'C' },
          { baseline: 'remind', task_index: 3, choice: 'B' },
          { baseline: 'selfcritic', task_index: 0, choice: 'C' },
          { baseline: 'selfcritic', task_index: 1, choice: null },
          { baseline: 'selfcritic', task_index: 2, choice: null },
          { baseline: 'selfcritic', task_index: 3, choice: 'D' },
        ]);
      } finally {
        await db.close();
      }
    });

    it("counts each cell's accuracy as the original prints it", async () => {
      const db = await Database.open(join(dir, 'w.duckdb'), { readOnly: true });
      try {
        const rows = await db.all<{ form: string; baseline: string; inter_turns: number; n: number; accuracy: number; n_failed: number }>(
          'SELECT form, baseline, inter_turns, n::INT AS n, accuracy, n_failed::INT AS n_failed FROM prefeval_mcq_results',
        );
        expect(rows).toHaveLength(original.size);
        for (const [key, run] of original) {
          const [form, task, t] = key.split('|') as [string, string, string];
          const row = rows.find((r) => r.form === form && r.baseline === task && r.inter_turns === Number(t));
          expect(row, key).toMatchObject({ n: LIMIT, n_failed: 0 });
          expect(Math.round(row!.accuracy * 10_000) / 100, key).toBe(run.accuracy);
        }
        // Not every cell scores the same: the scripted letters and the edges make the accuracies differ.
        expect(new Set(rows.map((r) => r.accuracy)).size).toBeGreaterThan(1);
      } finally {
        await db.close();
      }
    });

    it("asks the MCQ file's question in every form (implicit: the implicit file gives the conversation only), as the original", () => {
      const mcq = JSON.parse(readFileSync(join(data, 'benchmark_dataset', 'mcq_options', `${TOPIC}.json`), 'utf8')) as Array<{ question: string }>;
      for (const [key, run] of original)
        expect(
          run.results.map((r) => r.question),
          key,
        ).toEqual(mcq.slice(0, LIMIT).map((r) => r.question));
      const asked = server.requests.map((r) => JSON.stringify(r.body.messages));
      expect(asked.filter((m) => m.includes(IMPLICIT_WORDING))).toEqual([]);
    });
  },
);
