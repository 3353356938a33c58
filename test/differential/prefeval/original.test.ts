import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../../../src/db/database.js';
import { tempDir } from '../../helpers/cli.js';
import { isolatedAwsEnv, startMockBedrock, type MockBedrockServer } from '../../helpers/mock-bedrock.js';
import {
  DIFF_TOPIC,
  JUDGE_CHECKS,
  PREFEVAL_PYTHON,
  prefevalOriginalAvailable,
  prefevalOriginalMissing,
  runOriginalPrefEval,
  scriptedGenerationReply,
  type JudgeCheck,
  type OriginalPrefEvalRun,
  type PrefEvalTask,
  makeDiffWarehouse,
  writeDiffPipeline,
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
const TOPIC = DIFF_TOPIC;
/** Records per topic: 4, or PLENS_PREFEVAL_LIMIT (records past the fourth get the default judge replies). */
const LIMIT = Number(process.env['PLENS_PREFEVAL_LIMIT'] ?? 4);
const TASKS: PrefEvalTask[] = ['zero-shot', 'remind', 'cot', 'selfcritic'];
const TURNS = [0, 2, 10];
/** The implicit forms, on part of the grid (their requests differ from explicit's in the opening only). */
const IMPLICIT: Array<{ form: 'choice' | 'persona'; folder: string }> = [
  { form: 'choice', folder: 'choice-based' },
  { form: 'persona', folder: 'persona-driven' },
];
const IMPLICIT_TASKS: PrefEvalTask[] = ['zero-shot', 'remind', 'selfcritic'];
const IMPLICIT_TURNS = [0, 2];
const HAIKU = 'anthropic.claude-3-haiku-20240307-v1:0';
/** The model's calls a record takes: the explicit preference turn, the answer, and self-critic's critique and revision. */
const callsPer = (explicit: boolean, task: PrefEvalTask) => (explicit ? 1 : 0) + (task === 'selfcritic' ? 3 : 1);
const sum = (xs: number[]) => xs.reduce((n, x) => n + x, 0);

/** What run_original.py answers a check of a record REPLIES does not name (its DEFAULT_JUDGE_REPLIES). */
const DEFAULT_REPLIES: Record<JudgeCheck, string> = {
  acknow: '<preference>p</preference><answer>Yes</answer>',
  violate: '<explanation>x</explanation><answer>No</answer>',
  hallucinate: '<explanation>x</explanation><answer>No</answer>',
  helpful: '<explanation>x</explanation><answer>Yes</answer>',
};

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
  /** Each form's records' questions and preferences, by position (explicit's and the implicit files' differ a little). */
  let lists: Array<{ questions: string[]; preferences: string[] }>;

  beforeAll(async () => {
    if (!checkout) throw new Error(`PrefEval differential test: ${prefevalOriginalMissing()}`);
    const records = JSON.parse(readFileSync(join(checkout, 'benchmark_dataset', 'explicit_preference', `${TOPIC}.json`), 'utf8')) as Array<{
      preference: string;
      question: string;
    }>;
    const listOf = (rs: Array<{ preference: string; question: string }>) => ({
      questions: rs.slice(0, LIMIT).map((r) => r.question),
      preferences: rs.slice(0, LIMIT).map((r) => r.preference),
    });
    lists = [
      listOf(records),
      ...IMPLICIT.map(({ folder }) =>
        listOf(JSON.parse(readFileSync(join(checkout, 'benchmark_dataset', 'implicit_preference', folder, `${TOPIC}.json`), 'utf8'))),
      ),
    ];
    const files: Record<JudgeCheck, string> = { acknow: 'acknowledge', violate: 'violation', hallucinate: 'hallucination', helpful: 'helpful' };
    judgeOpenings = JUDGE_CHECKS.map((c) => [c, readFileSync(join(checkout, 'error_type', `check_${files[c]}.txt`), 'utf8').split('{')[0]!]);
    for (const task of TASKS)
      for (const turns of TURNS)
        original.set(`explicit|${task}|${turns}`, await runOriginalPrefEval({ topic: TOPIC, inter_turns: turns, task, limit: LIMIT, replies: REPLIES }));
    for (const { form } of IMPLICIT)
      for (const task of IMPLICIT_TASKS)
        for (const turns of IMPLICIT_TURNS)
          original.set(
            `${form}|${task}|${turns}`,
            await runOriginalPrefEval({ topic: TOPIC, inter_turns: turns, task, limit: LIMIT, replies: REPLIES, pref_form: 'implicit', pref_type: form }),
          );

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
        const found = (texts: string[]) => texts.findIndex((t) => text.includes(t));
        const index = Math.max(...lists.map((l) => found(check === 'hallucinate' ? l.preferences : l.questions)));
        return REPLIES[check][String(index)] ?? DEFAULT_REPLIES[check];
      },
    });
    dir = tempDir('plens-prefeval-diff-');
    const file = writeDiffPipeline(dir, 'prefeval-diff', [
      `data: ${checkout}`,
      `topics: [${TOPIC}]`,
      `limit: ${LIMIT}`,
      'forms: [explicit, choice, persona]',
      `baselines: [${TASKS.join(', ')}]`,
      `inter_turns: [${TURNS.join(', ')}]`,
      'prompts: original',
      `models: ["bedrock:${HAIKU}?base_url=${server.url}"]`,
      // The README leaderboard's row for the model: its published figures beside plens's.
      `published: {"bedrock:${HAIKU}?base_url=${server.url}": Claude-3-Haiku}`,
      `judge: "bedrock:claude-3-sonnet-v1?base_url=${server.url}"`,
    ]);
    await makeDiffWarehouse(file, isolatedAwsEnv(creds, 'us-east-1'));
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

  it('answers a record REPLIES does not name as run_original.py does', () => {
    const r = spawnSync(PREFEVAL_PYTHON, ['-c', 'import json, run_original; print(json.dumps(run_original.DEFAULT_JUDGE_REPLIES))'], {
      cwd: import.meta.dirname,
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', PYTHONDONTWRITEBYTECODE: '1' },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(DEFAULT_REPLIES);
  });

  it("sends the model the original's requests, request by request (preference turn or implicit conversation, filler, question with its baseline's text)", () => {
    const want = originalSent('generation_requests');
    const sent = plensSent()
      .filter((r) => r.model === HAIKU)
      .map(sortKey);
    const got = new Set(sent);
    // Explicit: 2 calls a record; implicit: 1.
    expect(want).toHaveLength(
      LIMIT *
        (TURNS.length * sum(TASKS.map((t) => callsPer(true, t))) +
          IMPLICIT.length * IMPLICIT_TURNS.length * sum(IMPLICIT_TASKS.map((t) => callsPer(false, t)))),
    );
    expect(want.map(sortKey).filter((k) => !got.has(k))).toEqual([]);
    // plens's own grid is the full product: every form at every baseline and turn count (the cache
    // off, each explicit record's preference turn is sent again in each, as the original does).
    expect(sent).toHaveLength(LIMIT * TURNS.length * (sum(TASKS.map((t) => callsPer(true, t))) + IMPLICIT.length * sum(TASKS.map((t) => callsPer(false, t)))));
  });

  it("sends the judge the original's four checks of every response, request by request", () => {
    const want = originalSent('judge_requests');
    const got = plensSent()
      .filter((r) => r.model !== HAIKU)
      .map(sortKey);
    const count = new Map<string, number>();
    for (const k of got) count.set(k, (count.get(k) ?? 0) + 1);
    for (const k of want.map(sortKey)) {
      expect(count.get(k) ?? 0, k.slice(0, 300)).toBeGreaterThan(0);
      count.set(k, count.get(k)! - 1);
    }
    expect(got).toHaveLength(TASKS.length * TURNS.length * LIMIT * 4 * (1 + IMPLICIT.length));
  });

  it("reads every check's reply as BeautifulSoup does, and counts the error types and accuracy as the original", async () => {
    const db = await Database.open(join(dir, 'w.duckdb'), { readOnly: true });
    try {
      for (const [key, run] of original) {
        const [form, task, t] = key.split('|') as [string, string, string];
        const turns = Number(t);
        const rows = await db.all<Record<string, unknown>>(
          `SELECT task_index, acknow, extract_pref, violate, violate_explanation, hallucinate, hallucinate_explanation, helpful, helpful_explanation,
               acknowledgement, hallucination, violation, unhelpful, inconsistent, hallucination_of_preference_violation, preference_unaware_violation, follows_preference
             FROM prefeval_checks WHERE form = $1 AND baseline = $2 AND inter_turns = $3 ORDER BY task_index`,
          undefined,
          [form, task, turns],
        );
        expect(rows.map((r) => r['task_index'])).toEqual(run.results.map((_, i) => i));
        run.results.forEach((rec, i) => {
          const e = rec.evaluation_error_analysis;
          expect(rows[i], `${key} record ${i}`).toMatchObject({
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
          key,
        ).toEqual(run.stats);
        const [result] = await db.all<{ accuracy: number }>(
          'SELECT accuracy FROM prefeval_results WHERE form = $1 AND baseline = $2 AND inter_turns = $3',
          undefined,
          [form, task, turns],
        );
        expect(Math.round(result!.accuracy * 10_000) / 100, key).toBe(run.accuracy);
      }
    } finally {
      await db.close();
    }
  });

  it("shows the README leaderboard's published figures beside plens's, read from the checkout", async () => {
    // The leaderboard's Claude-3-Haiku row and its header, read here on their own.
    const readme = readFileSync(join(checkout!, 'README.md'), 'utf8').split('\n');
    const cells = (l: string) =>
      l
        .replace(/^\s*\||\|\s*$/g, '')
        .split('|')
        .map((c) => c.replace(/\*\*/g, '').trim());
    const header = cells(readme.find((l) => /^\|\s*Model\s*\|/.test(l))!);
    const row = cells(readme.find((l) => cells(l)[0] === 'Claude-3-Haiku')!);
    const db = await Database.open(join(dir, 'w.duckdb'), { readOnly: true });
    try {
      const rows = await db.all<{ baseline: string; inter_turns: number; published: number | null; accuracy: number | null; n: number | null }>(
        'SELECT baseline, inter_turns, published, accuracy, n::INT AS n FROM prefeval_leaderboard ORDER BY baseline, inter_turns',
      );
      const want = header
        .map((h, i) => ({ m: /^(Zero-shot|Reminder) \((\d+) Turns\)$/.exec(h), v: row[i]! }))
        .filter((x) => x.m)
        .map((x) => ({ baseline: x.m![1] === 'Reminder' ? 'remind' : 'zero-shot', inter_turns: Number(x.m![2]), published: x.v === '-' ? null : Number(x.v) }))
        .sort((a, b) => a.baseline.localeCompare(b.baseline) || a.inter_turns - b.inter_turns);
      expect(rows.map(({ baseline, inter_turns, published }) => ({ baseline, inter_turns, published }))).toEqual(want);
      // plens ran 10 turns (not 300): its figure stands beside the published one there only, and
      // only on the leaderboard's topic (another, with PLENS_PREFEVAL_TOPIC, has no figure there).
      for (const r of rows) {
        if (r.inter_turns === 10 && TOPIC === 'travel_restaurant') expect(r).toMatchObject({ n: LIMIT, accuracy: expect.any(Number) });
        else expect(r).toMatchObject({ n: null, accuracy: null });
      }
    } finally {
      await db.close();
    }
  });
});
