import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { runCliInProcess, tempDir } from '../../helpers/cli.js';
import { isolatedAwsEnv, startMockBedrock, type MockBedrockServer } from '../../helpers/mock-bedrock.js';
import {
  JUDGE_CHECKS,
  prefevalOriginalAvailable,
  prefevalOriginalMissing,
  runOriginalPrefEval,
  scriptedGenerationReply,
  type JudgeCheck,
  type OriginalPrefEvalRun,
  type PrefEvalTask,
} from '../../helpers/prefeval-original.js';

/**
 * plens's PrefEval against the original scripts, run unmodified (harness: run_original.py), on the
 * first records of a topic: every request both send (the model's two turns, the judge's four
 * checks), what each check's reply is read as, and the error types and accuracy, for each baseline
 * and number of filler turns. plens runs with `prompts: original`: the wording read from the checkout.
 * Judge replies are scripted per check and record, alike on both sides, to reach the parser's and
 * the accuracy rules' edges (an entity in the quoted preference, an untagged reply, an unclosed tag,
 * "no" inside another word).
 */
const checkout = prefevalOriginalAvailable();
const TOPIC = 'travel_restaurant';
const LIMIT = 4;
const TASKS: PrefEvalTask[] = ['zero-shot', 'remind', 'cot'];
const TURNS = [0, 2, 10];
const HAIKU = 'anthropic.claude-3-haiku-20240307-v1:0';

/** Judge replies per check and record index. */
const REPLIES: Record<JudgeCheck, Record<string, string>> = {
  acknow: {
    '0': '<preference>You said you avoid gluten &amp; wheat.</preference>\n<answer>Yes</answer>',
    '1': 'Answer: Yes, it does.',
    '2': '<PREFERENCE> gluten-free </PREFERENCE><answer>No',
    '3': '<preference></preference><answer>no</answer>',
  },
  violate: {
    '0': '<explanation>It recommends pasta.</explanation><answer>Yes</answer>',
    '1': '<explanation>x</explanation><answer>Yes</answer>',
    '2': '<explanation>fine</explanation><answer>No</answer>',
    '3': '<explanation>ok</explanation>\n<answer> yes </answer>',
  },
  hallucinate: {
    '0': '<explanation>different</explanation><answer>Yes</answer>',
    '1': '<explanation>empty</explanation><answer>No</answer>',
    '2': '<explanation>same</explanation><answer>No</answer>',
    '3': '<explanation>n/a</explanation><answer>No</answer>',
  },
  helpful: {
    '0': '<explanation>gives options</explanation><answer>Yes</answer>',
    '1': '<explanation>I do not know</explanation><answer>Yes, nothing missing</answer>',
    '2': '<explanation>ok</explanation><answer>Yes</answer>',
    '3': '<explanation>ok</explanation><answer>Yes</answer>',
  },
};

interface Sent {
  model: string;
  system: string;
  messages: Array<{ role: string; content: string }>;
  temperature: number | undefined;
  max_tokens: number | undefined;
}

const sortKey = (r: Sent) => JSON.stringify(r);

describe.skipIf(!checkout && !process.env['CI'])(`PrefEval against the original scripts${checkout ? '' : ` (skipped: ${prefevalOriginalMissing()})`}`, () => {
  const original = new Map<string, OriginalPrefEvalRun>();
  let server: MockBedrockServer;
  let dir: string;
  let judgeOpenings: Array<[JudgeCheck, string]>;
  let questions: string[];
  let preferences: string[];

  beforeAll(async () => {
    if (!checkout) throw new Error(`PrefEval differential test: ${prefevalOriginalMissing()}`);
    const records = JSON.parse(readFileSync(join(checkout, 'benchmark_dataset', 'explicit_preference', `${TOPIC}.json`), 'utf8')) as Array<{
      preference: string;
      question: string;
    }>;
    questions = records.slice(0, LIMIT).map((r) => r.question);
    preferences = records.slice(0, LIMIT).map((r) => r.preference);
    const files: Record<JudgeCheck, string> = { acknow: 'acknowledge', violate: 'violation', hallucinate: 'hallucination', helpful: 'helpful' };
    judgeOpenings = JUDGE_CHECKS.map((c) => [c, readFileSync(join(checkout, 'error_type', `check_${files[c]}.txt`), 'utf8').split('{')[0]!]);
    for (const task of TASKS)
      for (const turns of TURNS)
        original.set(`${task}|${turns}`, await runOriginalPrefEval({ topic: TOPIC, inter_turns: turns, task, limit: LIMIT, replies: REPLIES }));

    // plens: the same records and grid through `plens make`, against a mock Bedrock replying alike.
    const creds = { accessKeyId: 'AKIAPLENSPREFEVAL001', secretAccessKey: 'plensPrefEvalSecret/abcdefghijklmnopqrstuvwx' };
    server = await startMockBedrock({
      credentials: creds,
      reply: (r) => {
        const text = r.body.messages
          .at(-1)!
          .content.map((c) => c.text)
          .join('');
        const check = judgeOpenings.find(([, opening]) => text.startsWith(opening))?.[0];
        if (!check) return scriptedGenerationReply(text);
        // The record: its question (acknow, violate, helpful) or its preference (hallucinate) is in the text.
        const index = check === 'hallucinate' ? preferences.findIndex((p) => text.includes(p)) : questions.findIndex((q) => text.includes(q));
        return REPLIES[check][String(index)]!;
      },
    });
    dir = tempDir('plens-prefeval-diff-');
    const file = join(dir, 'p.yaml');
    writeFileSync(
      file,
      [
        'name: prefeval-diff',
        `workspace: ${dir}/out`,
        `warehouse: ${dir}/w.duckdb`,
        'benchmark: prefeval',
        'prefeval:',
        `  data: ${checkout}`,
        `  topics: [${TOPIC}]`,
        `  limit: ${LIMIT}`,
        `  baselines: [${TASKS.join(', ')}]`,
        `  inter_turns: [${TURNS.join(', ')}]`,
        '  prompts: original',
        `  models: ["bedrock:${HAIKU}?base_url=${server.url}"]`,
        `  judge: "bedrock:claude-3-sonnet-v1?base_url=${server.url}"`,
        'limits:',
        // The original sends every request again: so does plens here, to compare them one by one.
        '  cache: off',
        '  concurrency: 4',
        'report: false',
      ].join('\n') + '\n',
    );
    const r = await runCliInProcess(['make', 'warehouse', '-p', file, '--no-progress'], { env: isolatedAwsEnv(creds, 'us-east-1') });
    if (r.code !== 0) throw new Error(`plens make exited ${r.code}:\n${r.stderr.slice(-3000)}${r.stdout.slice(-2000)}`);
  }, 240_000);
  afterAll(async () => server?.close());

  const plensSent = (): Sent[] =>
    server.requests.map((r) => ({
      model: r.modelId,
      system: (r.body.system ?? []).map((b) => b.text).join(''),
      messages: r.body.messages.map((m) => ({ role: m.role, content: m.content.map((c) => c.text).join('') })),
      temperature: r.body.inferenceConfig?.temperature,
      max_tokens: r.body.inferenceConfig?.maxTokens,
    }));
  const originalSent = (which: 'generation_requests' | 'judge_requests'): Sent[] =>
    [...original.values()].flatMap((run) =>
      run[which].map((q) => ({
        model: q.modelId,
        system: q.body.system,
        messages: q.body.messages,
        temperature: q.body.temperature,
        max_tokens: q.body.max_tokens,
      })),
    );

  it("sends the model the original's requests, request by request (preference turn, filler, question with its baseline's text)", () => {
    const want = originalSent('generation_requests');
    const got = plensSent().filter((r) => r.model === HAIKU);
    expect(want).toHaveLength(TASKS.length * TURNS.length * LIMIT * 2);
    expect(got.map(sortKey).sort()).toEqual(want.map(sortKey).sort());
  });

  it("sends the judge the original's four checks of every response, request by request", () => {
    const want = originalSent('judge_requests');
    const got = plensSent().filter((r) => r.model !== HAIKU);
    expect(want).toHaveLength(TASKS.length * TURNS.length * LIMIT * 4);
    expect(got.map(sortKey).sort()).toEqual(want.map(sortKey).sort());
  });

  it("reads every check's reply as BeautifulSoup does, and counts the error types and accuracy as the original", async () => {
    const db = await Database.open(join(dir, 'w.duckdb'), { readOnly: true });
    try {
      for (const task of TASKS)
        for (const turns of TURNS) {
          const run = original.get(`${task}|${turns}`)!;
          const rows = await db.all<Record<string, unknown>>(
            `SELECT task_index, acknow, extract_pref, violate, violate_explanation, hallucinate, hallucinate_explanation, helpful, helpful_explanation,
               acknowledgement, hallucination, violation, unhelpful, inconsistent, hallucination_of_preference_violation, preference_unaware_violation, follows_preference
             FROM prefeval_checks WHERE baseline = $1 AND inter_turns = $2 ORDER BY task_index`,
            undefined,
            [task, turns],
          );
          expect(rows.map((r) => r['task_index'])).toEqual(run.results.map((_, i) => i));
          run.results.forEach((rec, i) => {
            const e = rec.evaluation_error_analysis;
            expect(rows[i], `${task} ${turns} record ${i}`).toMatchObject({
              acknow: e.acknow.answer,
              extract_pref: e.acknow.extract_pref,
              violate: e.violate.answer,
              violate_explanation: e.violate.explanation,
              hallucinate: e.hallucinate.answer,
              hallucinate_explanation: e.hallucinate.explanation,
              helpful: e.helpful.answer,
              helpful_explanation: e.helpful.explanation,
            });
          });
          const sum = (k: string) => rows.filter((r) => r[k] === true).length;
          expect(
            {
              acknowledgement: sum('acknowledgement'),
              hallucination: sum('hallucination'),
              violation: sum('violation'),
              error_unhelpful: sum('unhelpful'),
              error_inconsistent: sum('inconsistent'),
              hallucination_of_preference_violation: sum('hallucination_of_preference_violation'),
              preference_unaware_violation: sum('preference_unaware_violation'),
              preference_adherence_accuracy: sum('follows_preference'),
            },
            `${task} ${turns}`,
          ).toEqual(run.stats);
          const [result] = await db.all<{ accuracy: number }>('SELECT accuracy FROM prefeval_results WHERE baseline = $1 AND inter_turns = $2', undefined, [
            task,
            turns,
          ]);
          expect(Math.round(result!.accuracy * 10_000) / 100, `${task} ${turns}`).toBe(run.accuracy);
        }
    } finally {
      await db.close();
    }
  });
});
